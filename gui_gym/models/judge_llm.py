"""The LLM-backed ProRe components, kept at their old import path.

They live in :mod:`gui_gym.models.judge` now (``llm`` and ``llm_parsing``); import them
from there.
"""

from gui_gym.models.judge import (
    FILTER_CRITERIA,
    MAX_GOAL_WORDS,
    TRAJECTORY_STYLES,
    LLMClaimExtractor,
    LLMClaimFilter,
    LLMEvaluator,
    LLMJudge,
    LLMRawJudge,
    LLMReasoner,
    LLMTrajectoryJudge,
    TextGenerator,
    llm_components,
    parse_claims,
    parse_decisions,
    parse_goal,
    parse_plan,
    parse_status,
    parse_yes_no,
)

__all__ = [
    "FILTER_CRITERIA",
    "MAX_GOAL_WORDS",
    "TRAJECTORY_STYLES",
    "LLMClaimExtractor",
    "LLMClaimFilter",
    "LLMEvaluator",
    "LLMJudge",
    "LLMRawJudge",
    "LLMReasoner",
    "LLMTrajectoryJudge",
    "TextGenerator",
    "llm_components",
    "parse_claims",
    "parse_decisions",
    "parse_goal",
    "parse_plan",
    "parse_status",
    "parse_yes_no",
]
