"""Shared pieces of the real-device backends: the accessibility XML parser, guarded device
calls with timeouts, and reading task-relevant phone state over adb.

The task templates score a :class:`~gui_gym.envs.androidworld.phone.PhoneState`. On a real
device we rebuild the parts of that state the supported families read (system settings,
contacts, the foreground app) from ``adb shell`` queries, so the same ``score`` code runs on
the simulator and on a phone.
"""

from __future__ import annotations

import concurrent.futures
import re
from collections.abc import Callable
from typing import Any, TypeVar
from xml.etree import ElementTree

from gui_gym.core.env import GuiEnv
from gui_gym.core.ui import UIElement, UITree
from gui_gym.envs.androidworld.apps.contacts import Contact, ContactsData
from gui_gym.envs.androidworld.phone import PhoneState, Screen, SystemState

__all__ = [
    "DEVICE_TASKS",
    "DeviceEnv",
    "DeviceError",
    "GuardedDevice",
    "hierarchy_to_tree",
    "read_phone_state",
    "swipe_path",
]

T = TypeVar("T")

DEVICE_TASKS = frozenset(
    {
        "SystemWifiTurnOn",
        "SystemWifiTurnOff",
        "SystemWifiTurnOnVerify",
        "SystemWifiTurnOffVerify",
        "SystemBluetoothTurnOn",
        "SystemBluetoothTurnOff",
        "SystemBluetoothTurnOnVerify",
        "SystemBluetoothTurnOffVerify",
        "SystemBrightnessMax",
        "SystemBrightnessMin",
        "SystemBrightnessMaxVerify",
        "SystemBrightnessMinVerify",
        "OpenAppTaskEval",
        "TurnOnWifiAndOpenApp",
        "TurnOffWifiAndTurnOnBluetooth",
        "ContactsAddContact",
    }
)
"""Templates whose checks can be read over adb (settings, the contacts provider, the
foreground package). Others need app databases a device backend cannot read yet."""


class DeviceError(RuntimeError):
    """The device did not answer (unplugged, adb down, a call timed out)."""


class GuardedDevice:
    """Calls a device object's methods with a timeout each, turning hangs and transport errors
    into :class:`DeviceError` that says what to check.

    Args:
        device: A ``uiautomator2.Device`` (or any object with the same methods).
        timeout_s: Seconds any single call may take.
        name: How to name the device in messages (its serial).
    """

    def __init__(self, device: Any, timeout_s: float = 10.0, name: str = "device"):
        self.device = device
        self.timeout_s = timeout_s
        self.name = name
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="gui-gym-device"
        )

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``device.<method>(*args, **kwargs)`` with the timeout.

        Raises:
            DeviceError: on a timeout or any exception from the device layer.
        """
        fn: Callable[..., Any] = getattr(self.device, method)
        future = self._pool.submit(fn, *args, **kwargs)
        try:
            return future.result(timeout=self.timeout_s)
        except concurrent.futures.TimeoutError:
            # The stuck call keeps its thread; later calls get a fresh one.
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="gui-gym-device"
            )
            raise DeviceError(
                f"{self.name}: {method}() did not answer within {self.timeout_s:g} s; "
                "is the device connected (adb devices) and the uiautomator service running?"
            ) from None
        except DeviceError:
            raise
        except Exception as err:  # transport errors come in many types; report them all alike
            raise DeviceError(
                f"{self.name}: {method}() failed: {type(err).__name__}: {err}"
            ) from err

    def shell(self, command: str) -> str:
        """Output of ``adb shell <command>`` (stripped)."""
        result = self.call("shell", command)
        output = getattr(result, "output", result)
        return str(output).strip()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


# -- accessibility XML --------------------------------------------------------------------------

_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_ROLE_BY_CLASS = (
    ("EditText", "input"),
    ("AutoCompleteTextView", "input"),
    ("CheckBox", "checkbox"),
    ("Switch", "switch"),
    ("ToggleButton", "switch"),
    ("RadioButton", "radio"),
    ("SeekBar", "slider"),
    ("ImageButton", "button"),
    ("Button", "button"),
    ("ImageView", "image"),
    ("RecyclerView", "list"),
    ("ListView", "list"),
    ("ScrollView", "list"),
    ("TextView", "text"),
    ("Spinner", "select"),
    ("TabWidget", "tab"),
)


def _role(class_name: str, clickable: bool) -> str:
    short = class_name.rsplit(".", 1)[-1]
    for suffix, role in _ROLE_BY_CLASS:
        if short.endswith(suffix):
            return role
    return "button" if clickable else "container"


def hierarchy_to_tree(xml: str, width: int, height: int, name: str = "") -> UITree:
    """Convert uiautomator's ``dump_hierarchy()`` XML into a :class:`UITree`.

    Nodes worth keeping (with text, a description or an accepted action) become elements in
    document order; ``parent``/``children`` link kept nodes. Documents with a DTD are refused
    (no entity expansion from a device we do not control).

    Raises:
        DeviceError: for XML that is not a uiautomator hierarchy.
    """
    if "<!DOCTYPE" in xml or "<!ENTITY" in xml:
        raise DeviceError("refusing a hierarchy dump with a DTD")
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as err:
        raise DeviceError(f"unreadable hierarchy dump: {err}") from None
    elements: list[UIElement] = []
    children: dict[int, list[int]] = {}

    def visit(node: ElementTree.Element, parent: int) -> None:
        attrs = node.attrib
        index = parent
        if node.tag == "node":
            flag = {
                k: attrs.get(k) == "true"
                for k in (
                    "clickable",
                    "long-clickable",
                    "scrollable",
                    "checkable",
                    "checked",
                    "selected",
                    "focused",
                    "enabled",
                    "password",
                )
            }
            text = attrs.get("text", "")
            description = attrs.get("content-desc", "")
            if not text and not description and attrs.get("clickable") == "true":
                # A tappable row reads as its texts, as TalkBack announces it.
                inner = [n.attrib.get("text", "") for n in node.iter("node") if n is not node]
                description = " ".join(t for t in inner if t)[:120]
            klass = attrs.get("class", "")
            editable = klass.endswith("EditText") or klass.endswith("AutoCompleteTextView")
            interactive = (
                flag["clickable"]
                or flag["long-clickable"]
                or flag["scrollable"]
                or flag["checkable"]
                or editable
            )
            match = _BOUNDS.fullmatch(attrs.get("bounds", ""))
            bounds = tuple(int(v) for v in match.groups()) if match else (0, 0, 0, 0)
            if text or description or interactive:
                index = len(elements)
                elements.append(
                    UIElement(
                        index=index,
                        role=_role(klass, flag["clickable"]),
                        text=text,
                        description=description,
                        resource_id=attrs.get("resource-id", ""),
                        bounds=bounds,  # type: ignore[arg-type]
                        clickable=flag["clickable"],
                        long_clickable=flag["long-clickable"],
                        editable=editable,
                        scrollable=flag["scrollable"],
                        checkable=flag["checkable"],
                        checked=flag["checked"],
                        selected=flag["selected"],
                        focused=flag["focused"],
                        enabled=flag["enabled"] if "enabled" in attrs else True,
                        parent=parent,
                    )
                )
                if parent >= 0:
                    children.setdefault(parent, []).append(index)
        for child in node:
            visit(child, index)

    visit(root, -1)
    if children:
        elements = [
            UIElement(**{**_fields(e), "children": tuple(children.get(e.index, ()))})
            if e.index in children
            else e
            for e in elements
        ]
    return UITree(tuple(elements), width=width, height=height, name=name)


def _fields(e: UIElement) -> dict[str, Any]:
    return {name: getattr(e, name) for name in UIElement.__dataclass_fields__}


# -- state over adb -------------------------------------------------------------------------------

_ROW = re.compile(r"Row: \d+ (.*)")


def _parse_content_rows(output: str) -> list[dict[str, str]]:
    """Rows of ``adb shell content query`` output: ``Row: 0 key=value, key=value``."""
    rows = []
    for line in output.splitlines():
        match = _ROW.match(line.strip())
        if not match:
            continue
        row: dict[str, str] = {}
        for part in re.split(r", (?=[a-z_]+=)", match.group(1)):
            key, _, value = part.partition("=")
            row[key.strip()] = value.strip()
        rows.append(row)
    return rows


def _to_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return 0  # an unreadable setting reads as "off"/"lowest"


def read_phone_state(device: GuardedDevice, packages: dict[str, str]) -> PhoneState:
    """The parts of a :class:`PhoneState` the device-supported task families read.

    Args:
        device: The guarded device.
        packages: Package name -> simulated app key, to name the foreground app.
    """

    def setting(namespace: str, key: str) -> str:
        return device.shell(f"settings get {namespace} {key}")

    wifi = setting("global", "wifi_on") in ("1", "2")
    system = SystemState(
        wifi=wifi,
        bluetooth=setting("global", "bluetooth_on") == "1",
        airplane=setting("global", "airplane_mode_on") == "1",
        brightness=_to_int(setting("system", "screen_brightness")),
    )
    contacts = ContactsData()
    output = device.shell(
        "content query --uri content://contacts/phones/ --projection display_name:number"
    )
    for row in _parse_content_rows(output):
        first, _, last = row.get("display_name", "").partition(" ")
        contacts.contacts.append(Contact(first, last, row.get("number", "")))
    current = device.call("app_current")
    package = current.get("package", "") if isinstance(current, dict) else ""
    foreground = packages.get(package, package or "launcher")
    state = PhoneState(system=system, apps={"contacts": contacts}, foreground=foreground)
    if foreground != "launcher":
        state.stacks[foreground] = [Screen("main")]
        state.opened.append(foreground)
    return state


def swipe_path(
    bounds: tuple[int, int, int, int], direction: str
) -> tuple[float, float, float, float]:
    """Finger path ``(fx, fy, tx, ty)`` scrolling ``direction`` inside ``bounds``: content moves
    opposite to the finger, so scrolling down drags upward (AndroidWorld's ``scroll``)."""
    x0, y0, x1, y1 = bounds
    cx, cy, dx, dy = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 3, (y1 - y0) / 3
    return {
        "down": (cx, cy + dy, cx, cy - dy),
        "up": (cx, cy - dy, cx, cy + dy),
        "right": (cx + dx, cy, cx - dx, cy),
        "left": (cx - dx, cy, cx + dx, cy),
    }[direction]


class DeviceEnv(GuiEnv):
    """What the real-device backends share: the supported-task suite, parameter sampling, the
    starting settings pushed over adb, task state read over adb, and app-name resolution.

    Subclasses set ``self.channel`` (an object with ``shell(cmd)`` and ``call("app_current")``)
    before calling :meth:`_setup_device_env`, and implement ``_screen``, ``_execute`` and
    ``_screenshot``.
    """

    end_on_success = False
    score_unfinished = False  # AndroidWorld: an episode the agent did not end scores 0
    channel: Any

    def _setup_device_env(self, suite: Any, task: str | None, **kwargs: Any) -> None:
        from gui_gym.core.task import TaskSuite

        if task is not None and task not in DEVICE_TASKS:
            raise ValueError(
                f"task {task!r} cannot be checked on a real device yet; this backend supports: "
                f"{', '.join(sorted(DEVICE_TASKS))}"
            )
        supported = TaskSuite(
            [t for t in suite if t.task_id in DEVICE_TASKS], name="androidworld-device"
        )
        GuiEnv.__init__(self, supported, task=task, split="all", **kwargs)
        from gui_gym.envs.androidworld.apps import default_apps

        apps = default_apps()
        self._packages = {app.package: app.key for app in apps}
        self._app_packages = {
            name.lower(): app.package for app in apps for name in (app.key, app.title, *app.aliases)
        }
        self._opened: list[str] = []

    def _instantiate(self, task: Any, rng: Any) -> Any:
        import random

        from gui_gym.envs.androidworld.tasks import TASKS

        return TASKS[task.task_id].create(random.Random(int(rng.integers(2**31))))

    def _push_initial_state(self, task: Any, rng: Any) -> None:
        """Let the template decide the starting state, then push what a device takes over adb
        (system settings). App rows a template seeds (noise) stay on the simulator: the
        supported tasks do not depend on them."""
        import random

        from gui_gym.envs.androidworld.apps import default_apps

        self._opened = []
        wanted = PhoneState(apps={app.key: app.initial_data() for app in default_apps()})
        task.initialize_task(wanted, random.Random(int(rng.integers(2**31))))
        current = read_phone_state(self.channel, self._packages).system
        s = wanted.system
        if s.wifi != current.wifi:
            self.channel.shell(f"svc wifi {'enable' if s.wifi else 'disable'}")
        if s.bluetooth != current.bluetooth:
            self.channel.shell(f"svc bluetooth {'enable' if s.bluetooth else 'disable'}")
        if s.brightness != current.brightness:
            self.channel.shell(f"settings put system screen_brightness {int(s.brightness)}")

    def _predicate_state(self) -> PhoneState:
        state = read_phone_state(self.channel, self._packages)
        if state.foreground != "launcher" and (
            not self._opened or self._opened[-1] != state.foreground
        ):
            self._opened.append(state.foreground)
        state.opened = list(self._opened)
        return state

    def _package_for(self, name: str) -> str | None:
        """Package for an app label/alias, or the name itself when it looks like a package."""
        name = name.strip()
        return self._app_packages.get(name.lower(), name if "." in name else None)

    def _unknown_app(self, name: str) -> str:
        return f"unknown app {name!r}; give a package name or one of: {', '.join(sorted(self._app_packages))}"

    def fork(self) -> GuiEnv:
        raise NotImplementedError(
            "fork() on a real device needs a second device to replay the episode on; "
            "use backend='sim' for probing and best-of-N"
        )
