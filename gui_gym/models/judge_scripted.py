"""The model-free ProRe components, kept at their old import path.

They live in :mod:`gui_gym.models.judge` now (``rule_reading``, ``rule_probing``,
``rule_claims``, ``rule_judges``); import them from there.
"""

from gui_gym.models.judge import (
    MAX_GOAL_WORDS,
    RULE_PROMPT_GOAL,
    RuleClaimExtractor,
    RuleClaimFilter,
    RuleJudge,
    RulePromptReasoner,
    RuleRawJudge,
    RuleTrajectoryJudge,
    ScriptedEvaluator,
    ScriptedReasoner,
    TaskAnalysis,
    analyse_task,
    normalize,
    rule_expectation,
    scripted_components,
    text_contains,
)

__all__ = [
    "MAX_GOAL_WORDS",
    "RULE_PROMPT_GOAL",
    "RuleClaimExtractor",
    "RuleClaimFilter",
    "RuleJudge",
    "RulePromptReasoner",
    "RuleRawJudge",
    "RuleTrajectoryJudge",
    "ScriptedEvaluator",
    "ScriptedReasoner",
    "TaskAnalysis",
    "analyse_task",
    "normalize",
    "rule_expectation",
    "scripted_components",
    "text_contains",
]
