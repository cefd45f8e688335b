"""AndroidWorld on a simulated phone (``GuiGym/AndroidWorld-v0``) and AndroidWorld+
(``GuiGym/AndroidWorldPlus-v0``)."""

from gui_gym.envs.androidworld.env import (
    AndroidWorldEnv,
    AndroidWorldPlusEnv,
    make_env,
    make_plus_env,
)

__all__ = ["AndroidWorldEnv", "AndroidWorldPlusEnv", "make_env", "make_plus_env"]
