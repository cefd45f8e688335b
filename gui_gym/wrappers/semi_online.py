"""UI-S1's semi-online rollout, at the path the design contract names.

:class:`SemiOnlineReplayEnv` is an environment rather than a wrapper (it has no inner env: the
expert dataset plays the environment), so it lives in :mod:`gui_gym.envs.replay` beside its
dataset code; it is re-exported here so ``from gui_gym.wrappers.semi_online import
SemiOnlineReplayEnv`` works as the contract says. The reward math is in
:mod:`gui_gym.rewards.semi_online` and the action matchers in
:mod:`gui_gym.rewards.action_match`.
"""

from gui_gym.envs.replay import SAMPLE_DATASET, SemiOnlineReplayEnv

__all__ = ["SAMPLE_DATASET", "SemiOnlineReplayEnv"]
