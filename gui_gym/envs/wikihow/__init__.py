"""The simulated WikiHow benchmark (``GuiGym/WikiHow-v0``)."""

from gui_gym.envs.wikihow.env import WikiHowEnv

__all__ = ["WikiHowEnv"]
