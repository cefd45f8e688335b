"""AndroidWorld on a simulated phone (``GuiGym/AndroidWorld-v0``)."""

from gui_gym.envs.androidworld.env import AndroidWorldEnv, make_env

__all__ = ["AndroidWorldEnv", "make_env"]
