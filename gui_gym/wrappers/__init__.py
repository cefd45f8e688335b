"""Composable Gymnasium wrappers; each adds its components under its own ``info`` key."""

from gui_gym.wrappers.milestone import MilestoneVectorWrapper, MilestoneWrapper
from gui_gym.wrappers.prm import FormatRewardWrapper, PRMVectorWrapper, PRMWrapper
from gui_gym.wrappers.probing import ProbingJudgeWrapper
from gui_gym.wrappers.progress import (
    OutcomeModelWrapper,
    ProgressRewardVectorWrapper,
    ProgressRewardWrapper,
)
from gui_gym.wrappers.record import RecordTrajectories
from gui_gym.wrappers.sb3 import CandidateActions, FeaturizedObservation, make_sb3_env
from gui_gym.wrappers.semi_online import SemiOnlineReplayEnv
from gui_gym.wrappers.task_subset import TaskSubset

__all__ = [
    "CandidateActions",
    "FeaturizedObservation",
    "FormatRewardWrapper",
    "MilestoneVectorWrapper",
    "MilestoneWrapper",
    "OutcomeModelWrapper",
    "PRMVectorWrapper",
    "PRMWrapper",
    "ProbingJudgeWrapper",
    "ProgressRewardVectorWrapper",
    "ProgressRewardWrapper",
    "RecordTrajectories",
    "SemiOnlineReplayEnv",
    "TaskSubset",
    "make_sb3_env",
]
