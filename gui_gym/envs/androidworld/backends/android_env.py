"""``backend="android_env"``: AndroidWorld tasks through DeepMind's ``android_env``.

``android_env`` speaks touch events: every step is ``{"action_type": TOUCH|LIFT|REPEAT,
"touch_position": [x, y] in [0, 1]}``, and observations are pixels. This backend turns the
gui-gym grammar into those events (a tap is TOUCH then LIFT; a scroll is a drag of TOUCH steps
then LIFT; a long press holds TOUCH), and uses ``android_env``'s adb channel
(``execute_adb_call``) for keys, text, app starts and the state reads task checks need.

``android_env`` gives no accessibility tree, so the screen text is empty and index-based
actions fail with a clear message unless a ``ui_device`` (anything with uiautomator2's
``dump_hierarchy``, e.g. a uiautomator2 connection to the same emulator) is given; coordinate
actions (``CLICK_XY``) always work. In tests, ``android_env``'s own ``FakeSimulator`` stands in
for the emulator.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from typing import Any

import numpy as np

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.task import Task, TaskSuite
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.backends.device import (
    DeviceEnv,
    DeviceError,
    GuardedDevice,
    hierarchy_to_tree,
    swipe_path,
)

__all__ = ["AndroidEnvEnv", "fake_android_env"]

TOUCH, LIFT, REPEAT = 0, 1, 2


def _import_android_env() -> Any:
    try:
        import android_env
        from android_env import loader
        from android_env.components import config_classes
        from android_env.proto import adb_pb2
    except ImportError as err:
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(
            "android_env is not installed; run `pip install gui-gym[android]`"
        ) from err
    return android_env, loader, config_classes, adb_pb2


def fake_android_env(width: int = 1080, height: int = 2400) -> Any:
    """An ``android_env`` environment on its ``FakeSimulator`` (random pixels, fake adb)."""
    _, loader, config_classes, _ = _import_android_env()
    from android_env.proto import task_pb2
    from google.protobuf import text_format

    folder = tempfile.mkdtemp(prefix="gui-gym-android-env-")
    path = os.path.join(folder, "task.textproto")
    with open(path, "w") as f:
        f.write(text_format.MessageToString(task_pb2.Task(id="gui_gym", name="gui-gym")))
    config = config_classes.AndroidEnvConfig(
        task=config_classes.FilesystemTaskConfig(path=path),
        simulator=config_classes.FakeSimulatorConfig(screen_dimensions=(height, width)),
    )
    return loader.load(config)


class _AdbChannel:
    """``shell``/``call`` over ``android_env.execute_adb_call`` (the interface
    :func:`read_phone_state` expects)."""

    def __init__(self, env: Any, adb_pb2: Any):
        self.env = env
        self.adb = adb_pb2

    def request(self, **kwargs: Any) -> Any:
        response = self.env.execute_adb_call(self.adb.AdbRequest(**kwargs))
        if response.status != self.adb.AdbResponse.Status.OK:
            raise DeviceError(
                f"adb request {list(kwargs)} failed: {response.error_message or response.status}"
            )
        return response

    def shell(self, command: str) -> str:
        """Output of ``adb shell <command>``: the command goes as one argument, which adb hands
        to the device's ``sh`` unchanged, so quoted words (message bodies, paths with spaces)
        keep their spacing."""
        generic = self.adb.AdbRequest.GenericRequest(args=["shell", command])
        output = self.request(generic=generic).generic.output
        if isinstance(output, bytes):
            output = output.decode("utf-8", errors="replace")
        return str(output).strip()

    def call(self, method: str, *args: Any) -> Any:
        if method != "app_current":
            raise AttributeError(method)
        activity = self.request(get_current_activity=self.adb.AdbRequest.GetCurrentActivity())
        full = activity.get_current_activity.full_activity
        return {"package": full.split("/", 1)[0] if "/" in full else "", "activity": full}


class AndroidEnvEnv(DeviceEnv):
    """AndroidWorld tasks on an ``android_env`` environment (see the module docstring).

    Args:
        suite: The AndroidWorld template suite.
        android_env: An ``android_env`` environment (default: one on the FakeSimulator when
            ``fake=True``, else built from ``android_env_config``).
        android_env_config: An ``AndroidEnvConfig`` for ``android_env.loader.load`` (emulator
            launcher settings and task live there).
        fake: Build the environment on ``FakeSimulator`` (tests, demos).
        ui_device: Optional object with ``dump_hierarchy()`` giving the accessibility tree.
        hold_steps: TOUCH repeats for a long press; drag_steps: TOUCH points per scroll.
        Other arguments as :class:`~gui_gym.core.env.GuiEnv`.
    """

    end_on_success = False

    def __init__(
        self,
        suite: TaskSuite,
        *,
        task: str | None = None,
        android_env: Any = None,
        android_env_config: Any = None,
        fake: bool = False,
        ui_device: Any = None,
        hold_steps: int = 6,
        drag_steps: int = 5,
        screenshot: bool = False,
        max_steps: int = 20,
        render_mode: str | None = None,
    ):
        _, loader, _, adb_pb2 = _import_android_env()
        if android_env is None:
            if fake:
                android_env = fake_android_env()
            elif android_env_config is not None:
                android_env = loader.load(android_env_config)
            else:
                raise ValueError(
                    "pass android_env=<env>, android_env_config=<AndroidEnvConfig> or fake=True"
                )
        self.android_env = android_env
        self.adb = _AdbChannel(android_env, adb_pb2)
        self._adb_pb2 = adb_pb2
        self.ui_device = (
            GuardedDevice(ui_device, name="ui_device") if ui_device is not None else None
        )
        self.hold_steps = hold_steps
        self.drag_steps = drag_steps
        timestep = android_env.reset()
        self._pixels = np.asarray(timestep.observation["pixels"], dtype=np.uint8)
        height, width = self._pixels.shape[:2]
        self.screen_size = (width, height)
        self.channel = self.adb
        self._setup_device_env(
            suite, task, screenshot=screenshot, max_steps=max_steps, render_mode=render_mode
        )
        self.touch_log: list[tuple[int, float, float]] = []

    # -- touch events --------------------------------------------------------------------------------

    def _touch(self, kind: int, x: float = 0.0, y: float = 0.0) -> None:
        width, height = self.screen_size
        position = np.array(
            [min(1.0, max(0.0, x / width)), min(1.0, max(0.0, y / height))], dtype=np.float32
        )
        timestep = self.android_env.step(
            {"action_type": np.array(kind, dtype=np.int32), "touch_position": position}
        )
        self._pixels = np.asarray(timestep.observation["pixels"], dtype=np.uint8)
        self.touch_log.append((kind, float(position[0]), float(position[1])))

    def _tap(self, x: float, y: float, hold: int = 1) -> None:
        for _ in range(hold):
            self._touch(TOUCH, x, y)
        self._touch(LIFT, x, y)

    def _drag(self, fx: float, fy: float, tx: float, ty: float) -> None:
        for i in range(self.drag_steps + 1):
            f = i / self.drag_steps
            self._touch(TOUCH, fx + (tx - fx) * f, fy + (ty - fy) * f)
        self._touch(LIFT, tx, ty)

    # -- GuiEnv hooks ------------------------------------------------------------------------------------

    def _start(self, task: Task, rng: np.random.Generator) -> None:
        self._press("HOME")
        self._push_initial_state(task, rng)

    def _press(self, button: str) -> None:
        press = self._adb_pb2.AdbRequest.PressButton
        self.adb.request(press_button=press(button=getattr(press, button)))

    def _screen(self) -> UITree:
        width, height = self.screen_size
        if self.ui_device is None:
            return UITree((), width=width, height=height, name="android_env")
        return hierarchy_to_tree(
            str(self.ui_device.call("dump_hierarchy")), width, height, name="android_env"
        )

    def _execute(self, action: Action, screen: UITree) -> str | None:
        t = action.type
        target = screen.elements[action.index] if action.index is not None else None
        if action.label is not None:
            return "android_env sees pixels only: target elements by coordinates (CLICK_XY)"
        if target is None and action.index is not None:
            return f"no element {action.index}"
        point = (
            (action.x, action.y)
            if action.has_point
            else (target.center if target is not None else None)
        )
        needs_point = t in (ActionType.CLICK, ActionType.LONG_CLICK, ActionType.DOUBLE_CLICK)
        if needs_point and point is None:
            return (
                f"{t.value} needs coordinates here (no accessibility tree): use {t.value}_XY(x, y)"
            )
        if t is ActionType.CLICK:
            self._tap(*point)  # type: ignore[misc]
        elif t is ActionType.DOUBLE_CLICK:
            self._tap(*point)  # type: ignore[misc]
            self._tap(*point)  # type: ignore[misc]
        elif t is ActionType.LONG_CLICK:
            self._tap(*point, hold=self.hold_steps)  # type: ignore[misc]
        elif t is ActionType.INPUT:
            if point is not None:
                self._tap(*point)
            self.adb.request(input_text=self._adb_pb2.AdbRequest.InputText(text=action.text or ""))
        elif t is ActionType.SCROLL:
            width, height = self.screen_size
            bounds = target.bounds if target is not None else (0, 0, width, height)
            self._drag(*swipe_path(bounds, action.direction or "down"))
        elif t is ActionType.GOBACK:
            self._press("BACK")
        elif t is ActionType.HOME:
            self._press("HOME")
        elif t is ActionType.ENTER:
            self._press("ENTER")
        elif t is ActionType.OPEN_APP:
            package = self._package_for(action.text or "")
            if package is None:
                return self._unknown_app(action.text or "")
            # Launch through the package's LAUNCHER intent, as uiautomator2's app_start does:
            # main activities are not always ".MainActivity" (Simple SMS Messenger's is
            # ".activities.MainActivity").
            self.adb.shell(
                f"monkey -p {shlex.quote(package)} -c android.intent.category.LAUNCHER 1"
            )
        elif t in (ActionType.KEY, ActionType.SEARCH):
            return f"{t.value} is not available through android_env"
        elif t in (ActionType.WAIT, ActionType.DO_NOTHING):
            self._touch(REPEAT)  # let the simulator advance one interaction step
        return None

    def _screenshot(self, screen: UITree) -> np.ndarray:
        return self._pixels.copy()

    def close(self) -> None:
        self.android_env.close()
        super().close()
