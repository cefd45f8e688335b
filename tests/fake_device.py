"""A fake uiautomator2 device for backend tests: serves realistic hierarchy XML for a launcher
and the Settings app, keeps Wi-Fi/Bluetooth/brightness/contacts state behind adb shell
commands, reacts to taps by hit-testing the XML it served, and records every call."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any
from xml.etree import ElementTree

WIDTH, HEIGHT = 1080, 2400


def _node(
    klass: str,
    bounds: tuple[int, int, int, int],
    text: str = "",
    desc: str = "",
    rid: str = "",
    clickable: bool = False,
    checkable: bool = False,
    checked: bool = False,
    scrollable: bool = False,
    children: str = "",
) -> str:
    x0, y0, x1, y1 = bounds
    return (
        f'<node index="0" text="{text}" resource-id="{rid}" class="{klass}" package="pkg" '
        f'content-desc="{desc}" checkable="{str(checkable).lower()}" checked="{str(checked).lower()}" '
        f'clickable="{str(clickable).lower()}" enabled="true" focusable="{str(clickable).lower()}" focused="false" '
        f'scrollable="{str(scrollable).lower()}" long-clickable="false" password="false" selected="false" '
        f'bounds="[{x0},{y0}][{x1},{y1}]">{children}</node>'
    )


@dataclass
class ShellResponse:
    output: str
    exit_code: int = 0


@dataclass
class FakeDevice:
    """Behaves like ``uiautomator2.Device`` for the methods the backend uses."""

    wifi: bool = True
    bluetooth: bool = False
    brightness: int = 102
    contacts: list[tuple[str, str]] = field(
        default_factory=lambda: [("Ada Lovelace", "+1 555 010 9999")]
    )
    screen: str = "launcher"
    package: str = "com.google.android.apps.nexuslauncher"
    calls: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)
    dead: bool = False
    hang_s: float = 0.0
    typed: list[str] = field(default_factory=list)

    def _record(self, name: str, *args: Any) -> None:
        if self.hang_s:
            time.sleep(self.hang_s)
        if self.dead:
            raise ConnectionError("adb: device 'emulator-5554' not found")
        self.calls.append((name, args))

    # -- the screen ------------------------------------------------------------------------------

    def _xml(self) -> str:
        status = _node(
            "android.widget.TextView",
            (0, 0, WIDTH, 84),
            text="15:34",
            rid="com.android.systemui:id/clock",
        )
        if self.screen == "launcher":
            icons = "".join(
                _node(
                    "android.widget.TextView",
                    (40 + 260 * i, 400, 260 + 260 * i, 640),
                    text=label,
                    desc=label,
                    clickable=True,
                )
                for i, label in enumerate(("Contacts", "Settings", "Clock", "Camera"))
            )
            body = _node("android.widget.FrameLayout", (0, 84, WIDTH, HEIGHT), children=icons)
        elif self.screen == "settings":
            rows = "".join(
                _node(
                    "android.widget.LinearLayout",
                    (0, 300 + 200 * i, WIDTH, 480 + 200 * i),
                    clickable=True,
                    children=_node(
                        "android.widget.TextView",
                        (60, 320 + 200 * i, 1000, 400 + 200 * i),
                        text=label,
                    ),
                )
                for i, label in enumerate(
                    ("Network &amp; internet", "Connected devices", "Display")
                )
            )
            body = _node(
                "androidx.recyclerview.widget.RecyclerView",
                (0, 240, WIDTH, HEIGHT),
                scrollable=True,
                rid="com.android.settings:id/recycler_view",
                children=rows,
            )
        elif self.screen == "network":
            body = _node(
                "android.widget.LinearLayout",
                (0, 300, WIDTH, 480),
                clickable=True,
                children=_node("android.widget.TextView", (60, 320, 700, 400), text="Wi-Fi")
                + _node(
                    "android.widget.Switch",
                    (880, 330, 1020, 430),
                    rid="android:id/switch_widget",
                    checkable=True,
                    checked=self.wifi,
                ),
            )
        elif self.screen == "contacts_edit":
            body = (
                _node(
                    "android.widget.EditText",
                    (40, 300, 1040, 420),
                    text="First name",
                    clickable=True,
                    rid="first",
                )
                + _node(
                    "android.widget.EditText",
                    (40, 460, 1040, 580),
                    text="Phone",
                    clickable=True,
                    rid="phone",
                )
                + _node(
                    "android.widget.ImageButton",
                    (900, 100, 1040, 220),
                    desc="Save",
                    clickable=True,
                    rid="save",
                )
            )
        else:
            body = ""
        return f'<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">{status}{body}</hierarchy>'

    def dump_hierarchy(
        self, compressed: bool = False, pretty: bool = False, max_depth: int | None = None
    ) -> str:
        self._record("dump_hierarchy")
        return self._xml()

    def window_size(self) -> tuple[int, int]:
        self._record("window_size")
        return (WIDTH, HEIGHT)

    def app_current(self) -> dict[str, str]:
        self._record("app_current")
        return {"package": self.package, "activity": ".Main"}

    def screenshot(self, filename: str | None = None, format: str = "pillow") -> Any:
        self._record("screenshot")
        from PIL import Image

        return Image.new("RGB", (WIDTH, HEIGHT), (200, 200, 200))

    # -- input -----------------------------------------------------------------------------------

    def _hit(self, x: float, y: float) -> dict[str, str] | None:
        hit = None
        for node in ElementTree.fromstring(self._xml()).iter("node"):
            x0, y0, x1, y1 = (int(v) for v in re.findall(r"-?\d+", node.attrib["bounds"]))
            if x0 <= x < x1 and y0 <= y < y1:
                hit = node.attrib | {
                    "inner": "".join(c.attrib.get("text", "") for c in node.iter("node"))
                }
        return hit

    def click(self, x: float, y: float) -> None:
        self._record("click", x, y)
        hit = self._hit(x, y) or {}
        label = hit.get("text") or hit.get("inner") or hit.get("content-desc", "")
        if self.screen == "launcher" and label == "Settings":
            self.app_start("com.android.settings")
        elif self.screen == "settings" and "Network" in label:
            self.screen = "network"
        elif self.screen == "network" and (
            "Wi-Fi" in label or hit.get("class", "").endswith("Switch")
        ):
            self.wifi = not self.wifi

    def long_click(self, x: float, y: float, duration: float = 0.5) -> None:
        self._record("long_click", x, y)

    def double_click(self, x: float, y: float, duration: float = 0.1) -> None:
        self._record("double_click", x, y)

    def swipe(
        self, fx: float, fy: float, tx: float, ty: float, duration: float | None = None
    ) -> None:
        self._record("swipe", fx, fy, tx, ty)

    def send_keys(self, text: str, clear: bool = False) -> None:
        self._record("send_keys", text, clear)
        self.typed.append(text)

    def press(self, key: str) -> None:
        self._record("press", key)
        if key == "home":
            self.screen, self.package = "launcher", "com.google.android.apps.nexuslauncher"
        elif key == "back":
            if self.screen == "network":
                self.screen = "settings"
            elif self.screen != "launcher":
                self.screen, self.package = "launcher", "com.google.android.apps.nexuslauncher"

    def app_start(
        self, package_name: str, activity: str | None = None, wait: bool = False, stop: bool = False
    ) -> None:
        self._record("app_start", package_name)
        self.package = package_name
        self.screen = {
            "com.android.settings": "settings",
            "com.simplemobiletools.contacts.pro": "contacts_edit",
        }.get(package_name, "other")

    def shell(self, cmd: str, timeout: int = 60) -> ShellResponse:
        self._record("shell", cmd)
        if cmd == "settings get global wifi_on":
            return ShellResponse("1" if self.wifi else "0")
        if cmd == "settings get global bluetooth_on":
            return ShellResponse("1" if self.bluetooth else "0")
        if cmd == "settings get global airplane_mode_on":
            return ShellResponse("0")
        if cmd == "settings get system screen_brightness":
            return ShellResponse(str(self.brightness))
        if cmd.startswith("settings put system screen_brightness "):
            self.brightness = int(cmd.rsplit(" ", 1)[1])
            return ShellResponse("")
        if cmd.startswith("svc wifi "):
            self.wifi = cmd.endswith("enable")
            return ShellResponse("")
        if cmd.startswith("svc bluetooth "):
            self.bluetooth = cmd.endswith("enable")
            return ShellResponse("")
        if cmd.startswith("content query --uri content://contacts/phones/"):
            rows = [
                f"Row: {i} display_name={name}, number={number}"
                for i, (name, number) in enumerate(self.contacts)
            ]
            return ShellResponse("\n".join(rows) or "No result found.")
        return ShellResponse(f"/system/bin/sh: {cmd.split()[0]}: inaccessible or not found", 127)
