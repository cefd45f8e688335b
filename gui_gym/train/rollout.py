"""Old import path of :mod:`gui_gym.runs.rollout` (docs/agents_training.md shows it); use that.

Kept so ``from gui_gym.train.rollout import EpisodeSpec, RolloutEngine`` keeps working;
``train`` may import ``runs``, so this re-export keeps the layer order.
"""

from gui_gym.runs.rollout import *  # noqa: F403
from gui_gym.runs.rollout import __all__  # noqa: F401
