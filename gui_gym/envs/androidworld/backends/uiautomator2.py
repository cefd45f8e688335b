"""``backend="uiautomator2"``: AndroidWorld tasks on a real phone or emulator over uiautomator2.

The screen is ``dump_hierarchy()`` parsed into a :class:`~gui_gym.core.ui.UITree`; actions
become taps, long presses, text entry, swipes, key presses and app starts; task checks read
device state over adb (:func:`~gui_gym.envs.androidworld.backends.device.read_phone_state`).
Every device call has a timeout, so an unplugged device gives a :class:`DeviceError` on the
next ``step``/``reset`` instead of a hang.
"""

from __future__ import annotations

import random
import time
from typing import Any

import numpy as np

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.env import GuiEnv
from gui_gym.core.task import Task, TaskSuite
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps import default_apps
from gui_gym.envs.androidworld.backends.device import (
    DEVICE_TASKS,
    GuardedDevice,
    hierarchy_to_tree,
    read_phone_state,
)
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks import TASKS, AndroidWorldTask

__all__ = ["Uiautomator2Env"]

_KEYS = {
    "enter": "enter",
    "back": "back",
    "home": "home",
    "tab": "tab",
    "delete": "delete",
    "search": "search",
}


class Uiautomator2Env(GuiEnv):
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
        if task is not None and task not in DEVICE_TASKS:
            raise ValueError(
                f"task {task!r} cannot be checked on a real device yet; the uiautomator2 backend "
                f"supports: {', '.join(sorted(DEVICE_TASKS))}"
            )
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
        supported = [t for t in suite if t.task_id in DEVICE_TASKS]
        super().__init__(
            TaskSuite(supported, name="androidworld-device"),
            task=task,
            split="all",
            screenshot=screenshot,
            max_steps=max_steps,
            render_mode=render_mode,
        )
        self.wait_s = wait_s
        apps = default_apps()
        self._packages = {app.package: app.key for app in apps}
        self._app_names: dict[str, str] = {}
        for app in apps:
            for name in (app.key, app.title, *app.aliases):
                self._app_names[name.lower()] = app.package
        self._opened: list[str] = []

    # -- GuiEnv hooks ------------------------------------------------------------------------------

    def _instantiate(self, task: Task, rng: np.random.Generator) -> Task:
        return TASKS[task.task_id].create(random.Random(int(rng.integers(2**31))))

    def _start(self, task: Task, rng: np.random.Generator) -> None:
        assert isinstance(task, AndroidWorldTask)
        self._opened = []
        self.device.call("press", "home")
        # Let the template decide the starting state, then push what a device can take over
        # adb (system settings). App data the template seeds (noise rows) stays on the
        # simulator: tasks supported here do not depend on it.
        wanted = PhoneState(apps={app.key: app.initial_data() for app in default_apps()})
        task.initialize_task(wanted, random.Random(int(rng.integers(2**31))))
        self._apply_system(wanted)
        self._settle()

    def _apply_system(self, wanted: PhoneState) -> None:
        current = read_phone_state(self.device, self._packages).system
        s = wanted.system
        if s.wifi != current.wifi:
            self.device.shell(f"svc wifi {'enable' if s.wifi else 'disable'}")
        if s.bluetooth != current.bluetooth:
            self.device.shell(f"svc bluetooth {'enable' if s.bluetooth else 'disable'}")
        if s.brightness != current.brightness:
            self.device.shell(f"settings put system screen_brightness {int(s.brightness)}")

    def _screen(self) -> UITree:
        width, height = self._window_size()
        xml = self.device.call("dump_hierarchy")
        return hierarchy_to_tree(str(xml), width, height, name=self._foreground_package())

    def _predicate_state(self) -> PhoneState:
        state = read_phone_state(self.device, self._packages)
        if state.foreground != "launcher" and (
            not self._opened or self._opened[-1] != state.foreground
        ):
            self._opened.append(state.foreground)
        state.opened = list(self._opened)
        return state

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
            x0, y0, x1, y1 = target.bounds if target is not None else (0, 0, width, height)
            cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
            dx, dy = (x1 - x0) // 3, (y1 - y0) // 3
            # Content moves opposite to the finger: scrolling down drags upward.
            fx, fy, tx, ty = {
                "down": (cx, cy + dy, cx, cy - dy),
                "up": (cx, cy - dy, cx, cy + dy),
                "right": (cx + dx, cy, cx - dx, cy),
                "left": (cx - dx, cy, cx + dx, cy),
            }[action.direction or "down"]
            d.call("swipe", fx, fy, tx, ty, 0.3)
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
            name = (action.text or "").strip()
            package = self._app_names.get(name.lower(), name if "." in name else None)
            if package is None:
                return f"unknown app {name!r}; give a package name or one of: {', '.join(sorted(self._app_names))}"
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

    def fork(self) -> GuiEnv:
        raise NotImplementedError(
            "fork() on a real device needs a second device to replay the episode on; "
            "use backend='sim' for probing and best-of-N"
        )

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
