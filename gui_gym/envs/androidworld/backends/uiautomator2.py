"""``backend="uiautomator2"``: AndroidWorld tasks on a real phone or emulator over uiautomator2.

The screen is ``dump_hierarchy()`` parsed into a :class:`~gui_gym.core.ui.UITree`; actions
become taps, long presses, text entry, swipes, key presses and app starts; task checks read
device state over adb (:func:`~gui_gym.envs.androidworld.backends.device.read_phone_state`).
Every device call has a timeout, so an unplugged device gives a :class:`DeviceError` on the
next ``step``/``reset`` instead of a hang.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.task import Task
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.backends.device import (
    DeviceEnv,
    GuardedDevice,
    hierarchy_to_tree,
    swipe_path,
)

__all__ = ["Uiautomator2Env"]

_KEYS = {
    "enter": "enter",
    "back": "back",
    "home": "home",
    "tab": "tab",
    "delete": "delete",
    "search": "search",
}


class Uiautomator2Env(DeviceEnv):
    """AndroidWorld tasks on a device driven by uiautomator2 (see the module docstring).

    Args:
        suite: The AndroidWorld template suite.
        serial: adb serial of the device (None: the only connected device).
        device: An already connected device object (tests pass a fake one).
        call_timeout_s: Timeout of every device call.
        wait_s: Seconds ``WAIT()`` sleeps and actions settle for.
        Other arguments as :class:`~gui_gym.core.env.GuiEnv`.

    Raises:
        ValueError: at construction, for a task the device backend cannot check.
        gymnasium.error.DependencyNotInstalled: without the ``android`` extra.
    """

    end_on_success = False

    def __init__(
        self,
        suite: Any,
        *,
        task: str | None = None,
        serial: str | None = None,
        device: Any = None,
        call_timeout_s: float = 10.0,
        wait_s: float = 1.0,
        screenshot: bool = False,
        max_steps: int = 20,
        render_mode: str | None = None,
    ):
        if device is None:
            try:
                import uiautomator2
            except ImportError as err:
                from gymnasium.error import DependencyNotInstalled

                raise DependencyNotInstalled(
                    "uiautomator2 is not installed; run `pip install gui-gym[android]`"
                ) from err
            device = uiautomator2.connect(serial)
        self.serial = serial or "device"
        self.device = GuardedDevice(device, timeout_s=call_timeout_s, name=self.serial)
        self._size: tuple[int, int] | None = None
        self.screen_size = self._window_size()  # observation shapes follow the real screen
        self.channel = self.device
        self.wait_s = wait_s
        self._setup_device_env(
            suite, task, screenshot=screenshot, max_steps=max_steps, render_mode=render_mode
        )

    # -- GuiEnv hooks ------------------------------------------------------------------------------

    def _start(self, task: Task, rng: np.random.Generator) -> None:
        self.device.call("press", "home")
        self._push_initial_state(task, rng)
        self._settle()

    def _screen(self) -> UITree:
        width, height = self._window_size()
        xml = self.device.call("dump_hierarchy")
        return hierarchy_to_tree(str(xml), width, height, name=self._foreground_package())

    def _execute(self, action: Action, screen: UITree) -> str | None:
        d = self.device
        t = action.type
        target = None
        if action.index is not None:
            target = screen.elements[action.index]
        elif action.label is not None:
            target = screen.find_one(text=action.label) or screen.find_one(description=action.label)
            if target is None:
                return f"no element labelled {action.label!r} on this screen"
        point = (
            (action.x, action.y)
            if action.has_point
            else (target.center if target is not None else None)
        )
        if t in (ActionType.CLICK, ActionType.LONG_CLICK, ActionType.DOUBLE_CLICK):
            if point is None:
                return f"{t.value} needs an element index or coordinates"
            method = {
                ActionType.CLICK: "click",
                ActionType.LONG_CLICK: "long_click",
                ActionType.DOUBLE_CLICK: "double_click",
            }[t]
            d.call(method, *point)
        elif t is ActionType.INPUT:
            if point is not None:
                d.call("click", *point)
            d.call("send_keys", action.text or "", clear=True)
        elif t is ActionType.SCROLL:
            width, height = self._window_size()
            bounds = target.bounds if target is not None else (0, 0, width, height)
            d.call("swipe", *swipe_path(bounds, action.direction or "down"), 0.3)
        elif t is ActionType.GOBACK:
            d.call("press", "back")
        elif t is ActionType.HOME:
            d.call("press", "home")
        elif t is ActionType.ENTER:
            d.call("press", "enter")
        elif t is ActionType.KEY:
            key = (action.text or "").strip().lower()
            if key not in _KEYS:
                return f"unknown key {action.text!r}; supported: {', '.join(sorted(_KEYS))}"
            d.call("press", _KEYS[key])
        elif t is ActionType.OPEN_APP:
            package = self._package_for(action.text or "")
            if package is None:
                return self._unknown_app(action.text or "")
            d.call("app_start", package)
        elif t is ActionType.SEARCH:
            return "SEARCH is not a phone action; type into a search box with INPUT"
        elif t is ActionType.WAIT:
            time.sleep(self.wait_s)
        # ANSWER, DONE and DO_NOTHING do not touch the device.
        if t not in (ActionType.ANSWER, ActionType.DONE, ActionType.DO_NOTHING, ActionType.WAIT):
            self._settle()
        return None

    def _screenshot(self, screen: UITree) -> np.ndarray:
        image = self.device.call("screenshot")
        array = np.asarray(
            image.convert("RGB") if hasattr(image, "convert") else image, dtype=np.uint8
        )
        width, height = self.screen_size
        if array.shape[:2] != (height, width):
            from PIL import Image

            array = np.asarray(Image.fromarray(array).resize((width, height)), dtype=np.uint8)
        return array

    def close(self) -> None:
        self.device.close()
        super().close()

    # -- helpers -----------------------------------------------------------------------------------

    def _settle(self) -> None:
        if self.wait_s:
            time.sleep(min(self.wait_s, 0.5))

    def _window_size(self) -> tuple[int, int]:
        if self._size is None:
            size = self.device.call("window_size")
            self._size = (int(size[0]), int(size[1]))
        return self._size

    def _foreground_package(self) -> str:
        current = self.device.call("app_current")
        return current.get("package", "") if isinstance(current, dict) else ""
