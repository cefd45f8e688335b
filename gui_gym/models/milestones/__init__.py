"""ADMIRE's milestones (Adaptive Milestone Reward for GUI Agents): write them, match actions
against them, and follow episodes through them.

* :mod:`~gui_gym.models.milestones.generators`: the :class:`MilestoneGenerator` protocol and
  its two generators, :class:`LLMMilestoneGenerator` (the paper's prompts, strictly parsed)
  and :class:`TrajectoryMilestoneGenerator` (key steps of successes, no LLM);
* :mod:`~gui_gym.models.milestones.matchers`: the :class:`MilestoneMatcher` protocol,
  :class:`CosineMatcher` (MiniLM cosine, Eq. 8), :class:`LLMJudgeMatcher` (the yes/no judge)
  and :func:`score_pairs` (one batched call);
* :mod:`~gui_gym.models.milestones.tracker`: :class:`MilestoneTracker`, the engine the
  milestone wrappers and trainers run (matching, store updates, re-matching, credit).

The formulas are the pure functions of :mod:`gui_gym.rewards.milestones` and the store is
:mod:`gui_gym.rewards.milestone_store`. Every public name is importable from here.
"""

from gui_gym.models.milestones.generators import (
    LLMMilestoneGenerator,
    MilestoneGenerationError,
    MilestoneGenerator,
    TrajectoryMilestoneGenerator,
    parse_milestone_list,
    trajectory_screenshots,
)
from gui_gym.models.milestones.matchers import (
    CosineMatcher,
    LLMJudgeMatcher,
    MilestoneMatcher,
    score_pairs,
)
from gui_gym.models.milestones.tracker import FORMAT_PENALTIES, MilestoneEpisode, MilestoneTracker

__all__ = [
    "FORMAT_PENALTIES",
    "CosineMatcher",
    "LLMJudgeMatcher",
    "LLMMilestoneGenerator",
    "MilestoneEpisode",
    "MilestoneGenerationError",
    "MilestoneGenerator",
    "MilestoneMatcher",
    "MilestoneTracker",
    "TrajectoryMilestoneGenerator",
    "parse_milestone_list",
    "score_pairs",
    "trajectory_screenshots",
]
