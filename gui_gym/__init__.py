"""gui-gym: GUI-agent benchmarks as Gymnasium environments.

Importing the package registers every environment id; nothing heavy is imported here (no
torch, transformers, selenium or ray), so ``import gui_gym`` stays fast::

    import gymnasium as gym
    import gui_gym  # noqa: F401  (registers GuiGym/*)

    env = gym.make("GuiGym/WikiHow-v0", split="test")
"""

from gui_gym._registration import (
    ALFWORLD_ENV_IDS,
    ENV_IDS,
    MINIWOB_ENV_IDS,
    REPLAY_ENV_IDS,
    register_envs,
)

__version__ = "0.1.0"
__all__ = [
    "ALFWORLD_ENV_IDS",
    "ENV_IDS",
    "MINIWOB_ENV_IDS",
    "REPLAY_ENV_IDS",
    "__version__",
    "register_envs",
]

register_envs()
