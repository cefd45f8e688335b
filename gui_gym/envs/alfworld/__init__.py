"""``GuiGym/ALFWorld-v0``: ALFWorld on its own engine (needs the ``alfworld`` extra)."""

from gui_gym.envs.alfworld.env import ALFWorldEnv

__all__ = ["ALFWorldEnv"]
