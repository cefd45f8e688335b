"""WebShop on a generated catalog (``GuiGym/WebShop-v0``, ``GuiGym/WebShop-Text-v0``)."""

from gui_gym.envs.webshop.env import WebShopEnv, WebShopTextEnv

__all__ = ["WebShopEnv", "WebShopTextEnv"]
