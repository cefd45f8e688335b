"""Old import path of :mod:`gui_gym.runs.rollout` (docs/agents_training.md shows it); use that.

Kept so ``from gui_gym.train.rollout import EpisodeSpec, RolloutEngine`` keeps working;
``train`` may import ``runs``, so this re-export keeps the layer order.
"""

from gui_gym.runs.rollout import (
    AgentFactory,
    EnvFailure,
    EpisodeSpec,
    RolloutEngine,
    RolloutGroup,
    RolloutStats,
    WorkerDied,
    as_batch_agent,
    fork_env,
    sanitize_prompt,
)

__all__ = [
    "AgentFactory",
    "EnvFailure",
    "EpisodeSpec",
    "RolloutEngine",
    "RolloutGroup",
    "RolloutStats",
    "WorkerDied",
    "as_batch_agent",
    "fork_env",
    "sanitize_prompt",
]
