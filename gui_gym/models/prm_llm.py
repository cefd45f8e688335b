"""ADMIRE's LLM step-judge PRM, kept at its old import path.

It lives in :mod:`gui_gym.models.prm.llm` now; import it from :mod:`gui_gym.models.prm`.
"""

from gui_gym.models.prm.llm import *  # noqa: F403
