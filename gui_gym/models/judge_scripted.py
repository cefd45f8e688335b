"""The model-free ProRe components, kept at their old import path.

They live in :mod:`gui_gym.models.judge` now (``rule_reading``, ``rule_probing``,
``rule_claims``, ``rule_judges``); import them from there.
"""

from gui_gym.models.judge.rule_claims import *  # noqa: F403
from gui_gym.models.judge.rule_judges import *  # noqa: F403
from gui_gym.models.judge.rule_probing import *  # noqa: F403
from gui_gym.models.judge.rule_reading import TaskAnalysis as TaskAnalysis
from gui_gym.models.judge.rule_reading import analyse_task as analyse_task
from gui_gym.models.judge.rule_reading import normalize as normalize
from gui_gym.models.judge.rule_reading import text_contains as text_contains
from gui_gym.models.judge.types import MAX_GOAL_WORDS as MAX_GOAL_WORDS
