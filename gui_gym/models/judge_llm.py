"""The LLM-backed ProRe components, kept at their old import path.

They live in :mod:`gui_gym.models.judge` now (``llm`` and ``llm_parsing``); import them
from there.
"""

from gui_gym.models.judge.llm import *  # noqa: F403
from gui_gym.models.judge.llm_parsing import *  # noqa: F403
from gui_gym.models.judge.types import MAX_GOAL_WORDS as MAX_GOAL_WORDS
