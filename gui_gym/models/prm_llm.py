"""ADMIRE's LLM step-judge PRM, kept at its old import path.

It lives in :mod:`gui_gym.models.prm.llm` now; import it from :mod:`gui_gym.models.prm`.
"""

from gui_gym.models.prm.llm import (
    ADMIRE_PROCESS_REWARD_WEIGHT,
    STEP_JUDGE_PROMPT,
    LLMStepJudgePRM,
    parse_step_verdict,
)

__all__ = [
    "ADMIRE_PROCESS_REWARD_WEIGHT",
    "STEP_JUDGE_PROMPT",
    "LLMStepJudgePRM",
    "parse_step_verdict",
]
