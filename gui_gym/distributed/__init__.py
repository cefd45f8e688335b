"""Env workers as Ray actors: a Gymnasium ``VectorEnv`` and a crash-proof episode collector.

* :class:`RayVectorEnv`: ``SyncVectorEnv`` semantics, sub-envs in Ray actors (local Ray by
  default, ``address=`` for a cluster); dead or hung workers are restarted.
* :func:`collect_episodes`: exactly ``n`` finished episodes, each rerun from its seed when
  its worker fails; episodes lost for good carry ``infra_error`` and no score.

* :class:`~gui_gym.distributed.sb3.RaySB3VecEnv` (``from gui_gym.distributed.sb3 import``):
  Stable-Baselines3's ``VecEnv`` over the pool, so SB3/MaskablePPO train with envs on Ray.

Importing this package does not import Ray; creating a pool does (``gui-gym[distributed]``).
"""

from gui_gym.distributed.calls import WorkerFailure, WorkerRestartWarning
from gui_gym.distributed.collect import BatchPolicy, Episode, collect_episodes, episode_stats
from gui_gym.distributed.pool import RayVectorEnv, ensure_ray

__all__ = [
    "BatchPolicy",
    "Episode",
    "RayVectorEnv",
    "WorkerFailure",
    "WorkerRestartWarning",
    "collect_episodes",
    "ensure_ray",
    "episode_stats",
]
