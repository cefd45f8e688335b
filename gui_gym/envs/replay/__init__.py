"""Semi-online replay of expert trajectories (UI-S1): datasets, converter and the env.

``GuiGym/SemiOnlineReplay-v0`` is :class:`SemiOnlineReplayEnv`; it needs a ``dataset``
(a folder written by ``gui-gym record`` or ``gui-gym convert``). :data:`SAMPLE_DATASET` is
a small WikiHow dataset shipped with the package::

    import gymnasium as gym
    import gui_gym
    from gui_gym.envs.replay import SAMPLE_DATASET

    env = gym.make("GuiGym/SemiOnlineReplay-v0", dataset=SAMPLE_DATASET)
"""

from pathlib import Path

from gui_gym.envs.replay.dataset import (
    DatasetError,
    ExpertDataset,
    ExpertDatasetWriter,
    ExpertStep,
    ExpertTrajectory,
)
from gui_gym.envs.replay.env import PATCH_MODES, HistoryEntry, SemiOnlineReplayEnv

SAMPLE_DATASET = Path(__file__).parent / "data" / "wikihow_sample"
"""Eight oracle trajectories of WikiHow test tasks (UI trees, no image files), made by
``scripts/make_replay_sample.py``."""

__all__ = [
    "PATCH_MODES",
    "SAMPLE_DATASET",
    "DatasetError",
    "ExpertDataset",
    "ExpertDatasetWriter",
    "ExpertStep",
    "ExpertTrajectory",
    "HistoryEntry",
    "SemiOnlineReplayEnv",
]
