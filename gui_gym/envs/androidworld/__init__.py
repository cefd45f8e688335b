"""AndroidWorld on a simulated phone (``GuiGym/AndroidWorld-v0``)."""

from gui_gym.envs.androidworld.env import AndroidWorldEnv

__all__ = ["AndroidWorldEnv"]
