"""Running agents over envs: the one rollout engine and what is built on it.

* :mod:`gui_gym.runs.rollout`: the rollout engine (batched local generation, async server
  requests, GRPO and fork groups, ``infra_error``) that ``gui-gym eval``, ``gui-gym
  record``, SFT data, every RL trainer and the benchmarks share, and
  :func:`~gui_gym.runs.rollout.as_batch_agent` (any agent a caller holds, as the engine
  takes it).
* :mod:`gui_gym.runs.slots`: where the engine's envs live (in this process, or one worker
  process each; the OpenEnv server's sessions use the same workers) and ``fork_env``.
* :mod:`gui_gym.runs.deadline`: the one step deadline (timeouts, ``EnvHung``, its wording)
  that the engine, the OpenEnv server and the Ray pool share.
* :mod:`gui_gym.runs.evaluate`: ``gui-gym eval`` (resumable, per-category summaries).
* :mod:`gui_gym.runs.record`: ``gui-gym record`` (expert datasets from a live env).
* :mod:`gui_gym.runs.sop`: UI-S1's Semi-Online Performance and the offline step metrics.
* :mod:`gui_gym.runs.probe`: oracle-solvable short task sets and greedy success (what the
  learning benchmarks measure).

Layer: above ``agents`` and below ``train``/``distributed``/``integrations``; modules here
import ``core``, ``rewards``, ``models``, ``envs``, ``wrappers``, ``agents`` and each other,
never ``train`` or anything above it (``tests/test_layers.py``). Nothing here is imported by
``import gui_gym``.
"""
