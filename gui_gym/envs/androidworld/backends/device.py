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

from gui_gym.core.ui import UIElement, UITree
from gui_gym.envs.androidworld.apps.contacts import Contact, ContactsData
from gui_gym.envs.androidworld.phone import PhoneState, Screen, SystemState

__all__ = [
    "DEVICE_TASKS",
    "DeviceError",
    "GuardedDevice",
    "hierarchy_to_tree",
    "read_phone_state",
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
