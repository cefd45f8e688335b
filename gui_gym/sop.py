"""Old import path of :mod:`gui_gym.runs.sop` (docs/semi_online.md shows it); use that.

Kept so ``from gui_gym.sop import evaluate_sop`` keeps working; it ranks with the ``runs``
layer it re-exports (``tests/test_layers.py``).
"""

from gui_gym.runs.sop import *  # noqa: F403
from gui_gym.runs.sop import __all__  # noqa: F401
