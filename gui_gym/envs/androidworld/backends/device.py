"""Shared pieces of the real-device backends: the accessibility XML parser, guarded device
calls with timeouts, and reading and writing task-relevant phone state over adb.

The task templates score a :class:`~gui_gym.envs.androidworld.phone.PhoneState`. On a real
device we rebuild the parts of that state a template reads (system settings and the foreground
app always; contacts, SMS messages, shared-storage files and the clock per template, see
:data:`DEVICE_TASKS`) from ``adb shell`` queries, so the same ``score`` code runs on the
simulator and on a phone. At reset the template's starting data is written the same way
(:mod:`~gui_gym.envs.androidworld.backends.adb_state`).
"""

from __future__ import annotations

import concurrent.futures
import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from types import MappingProxyType
from typing import Any, Protocol, TypeVar
from xml.etree import ElementTree

from gui_gym.core.env import GuiEnv
from gui_gym.core.ui import UIElement, UITree, android_role
from gui_gym.envs.androidworld.apps.contacts import digits
from gui_gym.envs.androidworld.apps.files import EMULATOR_DIRECTORIES
from gui_gym.envs.androidworld.backends.adb_state import (
    DeviceClock,
    DeviceError,
    ShellChannel,
    push_contacts,
    push_files,
    push_sms,
    read_clock,
    read_contacts,
    read_files,
    read_sms,
)
from gui_gym.envs.androidworld.phone import PhoneState, Screen, SystemState

__all__ = [
    "CONTACTS",
    "DEVICE_TASKS",
    "FILES",
    "SMS",
    "DeviceEnv",
    "DeviceError",
    "GuardedDevice",
    "hierarchy_to_tree",
    "read_phone_state",
    "swipe_path",
]

T = TypeVar("T")

CONTACTS, SMS, FILES = "contacts", "sms", "files"
"""State families beyond settings and the foreground app (which are always read)."""

_NONE: frozenset[str] = frozenset()
_SMS_FAMILIES = frozenset({SMS, CONTACTS})

DEVICE_TASKS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "SystemWifiTurnOn": _NONE,
        "SystemWifiTurnOff": _NONE,
        "SystemWifiTurnOnVerify": _NONE,
        "SystemWifiTurnOffVerify": _NONE,
        "SystemBluetoothTurnOn": _NONE,
        "SystemBluetoothTurnOff": _NONE,
        "SystemBluetoothTurnOnVerify": _NONE,
        "SystemBluetoothTurnOffVerify": _NONE,
        "SystemBrightnessMax": _NONE,
        "SystemBrightnessMin": _NONE,
        "SystemBrightnessMaxVerify": _NONE,
        "SystemBrightnessMinVerify": _NONE,
        "OpenAppTaskEval": _NONE,
        "TurnOnWifiAndOpenApp": _NONE,
        "TurnOffWifiAndTurnOnBluetooth": _NONE,
        "ContactsAddContact": frozenset({CONTACTS}),
        "SimpleSmsSend": _SMS_FAMILIES,
        "SimpleSmsReply": _SMS_FAMILIES,
        "SimpleSmsReplyMostRecent": _SMS_FAMILIES,
        "SimpleSmsSendReceivedAddress": _SMS_FAMILIES,
        "SimpleSmsResend": _SMS_FAMILIES,
        "FilesDeleteFile": frozenset({FILES}),
        "FilesMoveFile": frozenset({FILES}),
        "SimpleDrawProCreateDrawing": frozenset({FILES}),
    }
)
"""Templates whose checks can be read over adb, each with the state families it starts from
and is checked on: those are written at reset and read at every check; settings and the
foreground package are always read. Others need app databases (or, for
``SimpleSmsSendClipboardContent``, the clipboard) a device backend cannot read or set.
``SimpleDrawProCreateDrawing`` is checked as AndroidWorld does on a device (the file exists
under ``Pictures``): the strokes of a drawing are simulator state."""


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
                        role=android_role(klass, flag["clickable"]),
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


class DeviceChannel(ShellChannel, Protocol):
    """A backend's channel: ``shell(cmd)`` and ``call("app_current")`` (a dict with
    ``package``), as :class:`GuardedDevice` and android_env's adb channel provide."""

    def call(self, method: str, *args: Any) -> Any: ...


def _to_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return 0  # an unreadable setting reads as "off"/"lowest"


def read_phone_state(
    device: DeviceChannel,
    packages: dict[str, str],
    families: Collection[str] = (),
    clock: DeviceClock | None = None,
) -> PhoneState:
    """The parts of a :class:`PhoneState` a template reads: system settings and the foreground
    app always, and each of ``families`` (``contacts``, ``sms``, ``files``; see
    :data:`DEVICE_TASKS`). Reading ``sms`` or ``files`` also reads the device clock (into
    ``system.now``) unless ``clock`` is given.

    Args:
        device: The guarded device or adb channel (``shell(cmd)`` and ``call("app_current")``).
        packages: Package name -> simulated app key, to name the foreground app.
        families: State families to read beyond settings and the foreground app.
        clock: The device clock, when the caller has just read it.
    """

    def setting(namespace: str, key: str) -> str:
        return device.shell(f"settings get {namespace} {key}")

    # wifi_on: 0 off, 1 on, 2 on in airplane mode, 3 switched on but suspended by airplane
    # mode. The simulator's (wifi, airplane) pair gives SystemState.wifi_on back: 2 becomes
    # wifi with airplane mode off (the radio is on), 3 wifi with airplane mode on.
    wifi_on = setting("global", "wifi_on")
    system = SystemState(
        wifi=wifi_on in ("1", "2", "3"),
        bluetooth=setting("global", "bluetooth_on") == "1",
        airplane=setting("global", "airplane_mode_on") == "1" and wifi_on != "2",
        brightness=_to_int(setting("system", "screen_brightness")),
    )
    apps: dict[str, Any] = {}
    if SMS in families or FILES in families:
        clock = clock or read_clock(device)
        system.now = clock.now
    if CONTACTS in families:
        apps["contacts"] = read_contacts(device)
    if SMS in families:
        assert clock is not None
        apps["sms"] = read_sms(device, clock)
    if FILES in families:
        assert clock is not None
        apps["files"] = read_files(device, clock)
    current = device.call("app_current")
    package = current.get("package", "") if isinstance(current, dict) else ""
    foreground = packages.get(package, package or "launcher")
    state = PhoneState(system=system, apps=apps, foreground=foreground)
    if foreground != "launcher":
        state.stacks[foreground] = [Screen("main")]
        state.opened.append(foreground)
    return state


def _starting_differences(
    wanted: PhoneState, got: PhoneState, families: Collection[str]
) -> list[str]:
    """What of ``wanted``'s data for ``families`` the device does not hold after the writes."""
    problems = []
    if CONTACTS in families:
        want = Counter(  # the phones listing holds contacts with a number only
            (c.name, digits(c.phone)) for c in wanted.apps["contacts"].contacts if c.phone
        )
        have = Counter((c.name, digits(c.phone)) for c in got.apps["contacts"].contacts)
        if want != have:
            problems.append(
                f"contacts: wrote {sorted(want.elements())}, read {sorted(have.elements())}"
            )
    if SMS in families:
        want = Counter((m.address, m.body, m.status) for m in wanted.apps["sms"].messages)
        have = Counter((m.address, m.body, m.status) for m in got.apps["sms"].messages)
        if want != have:
            missing = sorted((want - have).elements())
            extra = sorted((have - want).elements())
            problems.append(f"SMS: missing {missing[:3]}, unexpected {extra[:3]}")
    if FILES in families:
        have_files = {(f.path, f.size_kb) for f in got.apps["files"].files}
        missing_files = [
            (f.path, f.size_kb)
            for f in wanted.apps["files"].files
            if (f.path, f.size_kb) not in have_files
        ]
        if missing_files:
            problems.append(f"files: missing {missing_files[:3]}")
    return problems


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
    starting state written over adb, task state read over adb, and app-name resolution.

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
        self._families: frozenset[str] = _NONE

    def _instantiate(self, task: Any, rng: Any) -> Any:
        import random

        from gui_gym.envs.androidworld.tasks import TASKS

        return TASKS[task.task_id].create(random.Random(int(rng.integers(2**31))))

    def _push_initial_state(self, task: Any, rng: Any) -> None:
        """Let the template decide the starting state, then write what a device takes over
        adb: system settings (Wi-Fi, Bluetooth, airplane mode, brightness) for every template,
        and the template's contacts, SMS messages and files for the families it lists in
        :data:`DEVICE_TASKS` (the provider or folders are emptied first). What was written is
        read back; notifications and screens a template sets up stay on the simulator.

        Raises:
            DeviceError: when the device does not hold the written data afterwards (a
                provider that refuses writes from the shell user, a read-only storage).
        """
        import random

        from gui_gym.envs.androidworld.apps import default_apps

        self._opened = []
        self._families = DEVICE_TASKS.get(task.task_id, _NONE)
        families = self._families
        wanted = PhoneState(apps={app.key: app.initial_data() for app in default_apps()})
        task.initialize_task(wanted, random.Random(int(rng.integers(2**31))))
        current = read_phone_state(self.channel, self._packages).system
        s = wanted.system
        if s.wifi != current.wifi:
            self.channel.shell(f"svc wifi {'enable' if s.wifi else 'disable'}")
        if s.bluetooth != current.bluetooth:
            self.channel.shell(f"svc bluetooth {'enable' if s.bluetooth else 'disable'}")
        if s.airplane != current.airplane:
            state = "enable" if s.airplane else "disable"
            self.channel.shell(f"cmd connectivity airplane-mode {state}")
        if s.brightness != current.brightness:
            self.channel.shell(f"settings put system screen_brightness {int(s.brightness)}")
        if not families:
            return
        clock = read_clock(self.channel) if SMS in families or FILES in families else None
        if CONTACTS in families:
            push_contacts(self.channel, wanted.apps["contacts"])
        if SMS in families:
            assert clock is not None
            push_sms(self.channel, wanted.apps["sms"], clock)
        if FILES in families:
            assert clock is not None
            push_files(self.channel, wanted.apps["files"], self._task_folders(task, wanted), clock)
        got = read_phone_state(self.channel, self._packages, families, clock)
        problems = _starting_differences(wanted, got, families)
        if problems:
            raise DeviceError(
                f"{task.task_id}: the device did not take the starting state: "
                + "; ".join(problems)
            )

    @staticmethod
    def _task_folders(task: Any, wanted: PhoneState) -> set[str]:
        """Top-level storage folders a Files template works in: those holding its starting
        files and those its parameters name (a move's destination), emptied at reset."""
        folders = {f.path.split("/")[0] for f in wanted.apps["files"].files}
        params = getattr(task, "params", {}) or {}
        folders |= {v for v in params.values() if isinstance(v, str) and v in EMULATOR_DIRECTORIES}
        return folders

    def _predicate_state(self) -> PhoneState:
        state = read_phone_state(self.channel, self._packages, self._families)
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
