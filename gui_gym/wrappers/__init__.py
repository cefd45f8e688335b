"""Composable Gymnasium wrappers; each adds its components under its own ``info`` key."""

from gui_gym.wrappers.milestone import MilestoneVectorWrapper, MilestoneWrapper
from gui_gym.wrappers.prm import PRMVectorWrapper, PRMWrapper
from gui_gym.wrappers.probing import ProbingJudgeWrapper
from gui_gym.wrappers.progress import ProgressRewardVectorWrapper, ProgressRewardWrapper
from gui_gym.wrappers.record import RecordTrajectories
from gui_gym.wrappers.semi_online import SemiOnlineReplayEnv

__all__ = [
    "MilestoneVectorWrapper",
    "MilestoneWrapper",
    "PRMVectorWrapper",
    "PRMWrapper",
    "ProbingJudgeWrapper",
    "ProgressRewardVectorWrapper",
    "ProgressRewardWrapper",
    "RecordTrajectories",
    "SemiOnlineReplayEnv",
]
