"""Composable Gymnasium wrappers; each adds its components under its own ``info`` key."""

from gui_gym.wrappers.milestone import MilestoneVectorWrapper, MilestoneWrapper
from gui_gym.wrappers.prm import PRMVectorWrapper, PRMWrapper
from gui_gym.wrappers.probing import ProbingJudgeWrapper
from gui_gym.wrappers.progress import ProgressRewardVectorWrapper, ProgressRewardWrapper
from gui_gym.wrappers.record import RecordTrajectories

__all__ = [
    "MilestoneVectorWrapper",
    "MilestoneWrapper",
    "PRMVectorWrapper",
    "PRMWrapper",
    "ProbingJudgeWrapper",
    "ProgressRewardVectorWrapper",
    "ProgressRewardWrapper",
    "RecordTrajectories",
]
