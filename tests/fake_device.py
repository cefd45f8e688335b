"""A fake uiautomator2 device for backend tests: serves realistic hierarchy XML for a launcher
and the Settings app, reacts to taps by hit-testing the XML it served, and records every call.

Behind ``shell`` sits a small ``sh``: the command line is split into words as the device's
shell would (quotes, ``&&``, ``;``, ``2>/dev/null``; an unbalanced quote is a syntax error), and
the commands the backends send are simulated on tables the tests can inspect and change:
settings (Wi-Fi, Bluetooth, airplane mode, brightness), the contacts provider (raw contacts and
their name/phone data rows), the SMS provider (``content query/insert/delete`` with
``content``'s ``Row: N col=value, ...`` output), shared storage (``find ... -exec stat -c``,
``mkdir -p``, ``rm -rf``, ``truncate -s``, ``touch -m -d``) and the clock (``date +%s%z``)."""

from __future__ import annotations

import re
import shlex
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from xml.etree import ElementTree

WIDTH, HEIGHT = 1080, 2400
STORAGE = "/storage/emulated/0"
SMS_PACKAGE = "com.simplemobiletools.smsmessenger"
_OPERATORS = ("&&", "||", ";")


def storage_path(path: str) -> str:
    """The canonical path of ``path`` (``/sdcard`` is a link to ``/storage/emulated/0``;
    doubled and trailing slashes folded)."""
    for alias in ("/sdcard", "/storage/self/primary"):
        if path == alias or path.startswith(alias + "/"):
            path = STORAGE + path[len(alias) :]
    return "/" + "/".join(p for p in path.split("/") if p)


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
    airplane: bool = False
    now_s: int = 1_709_631_700  # 2024-03-05 09:41:40 UTC
    tz: str = "+0100"
    sms: list[dict[str, Any]] = field(default_factory=list)
    """SMS provider rows: ``_id``, ``address``, ``body``, ``date`` (epoch ms), ``type``,
    ``read``."""
    files: dict[str, tuple[int, int]] = field(
        default_factory=lambda: {
            f"{STORAGE}/Download/old_notes.txt": (2048, 1_709_000_000),
            f"{STORAGE}/DCIM/IMG_0001.jpg": (350_000, 1_708_000_000),
            f"{STORAGE}/Android/data/com.example/cache/blob.bin": (4096, 1_708_000_000),
        }
    )
    """Shared storage: canonical path (``/storage/emulated/0/...``) -> (bytes, mtime)."""
    dirs: set[str] = field(
        default_factory=lambda: {
            f"{STORAGE}/{d}"
            for d in ("Alarms", "DCIM", "Documents", "Download", "Movies", "Music", "Pictures")
        }
    )
    raw_contacts: dict[int, dict[str, str]] = field(default_factory=dict)
    _next_sms: int = 1
    _next_raw: int = 1

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

    # -- adb shell --------------------------------------------------------------------------------

    def shell(self, cmd: str, timeout: int = 60) -> ShellResponse:
        """Run ``cmd`` as the device's ``sh`` would (see the module docstring)."""
        self._record("shell", cmd)
        lexer = shlex.shlex(cmd, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            words = list(lexer)
        except ValueError:
            return ShellResponse("/system/bin/sh: syntax error: unterminated quoted string", 1)
        outputs: list[str] = []
        code = 0
        argv: list[str] = []
        skip = False
        words.append(";")
        i = 0
        while i < len(words):
            word = words[i]
            if word == ">" and i + 1 < len(words):  # a redirection: 2>/dev/null
                if argv and argv[-1] == "2":
                    argv.pop()
                i += 2
                continue
            if word in _OPERATORS:
                if argv and not skip:  # && / || skip a command on the previous status
                    out, code = self._run(argv)
                    if out:
                        outputs.append(out)
                skip = (word == "&&" and code != 0) or (word == "||" and code == 0)
                argv = []
            elif word in ("|", "&", "<", "(", ")"):
                return ShellResponse(f"fake sh: {word!r} is not simulated", 2)
            else:
                argv.append(word)
            i += 1
        return ShellResponse("\n".join(outputs), code)

    def _run(self, argv: list[str]) -> tuple[str, int]:
        """One simple command: (output, exit status)."""
        name, args = argv[0], argv[1:]
        if name == "true":
            return "", 0
        if name == "settings":
            return self._settings(args)
        if name == "svc" and len(args) == 2 and args[0] in ("wifi", "bluetooth"):
            setattr(self, args[0], args[1] == "enable")
            return "", 0
        if argv[:3] == ["cmd", "connectivity", "airplane-mode"] and len(argv) == 4:
            self.airplane = argv[3] == "enable"
            return "", 0
        if name == "date" and args == ["+%s%z"]:
            return f"{self.now_s}{self.tz}", 0
        if name == "pm" and args == ["clear", "com.android.providers.contacts"]:
            self.contacts.clear()
            self.raw_contacts.clear()
            return "Success", 0
        if name == "content" and args:
            return self._content(args[0], args[1:])
        if name in ("find", "mkdir", "rm", "truncate", "touch"):
            return getattr(self, f"_{name}")(args)
        if (
            name == "monkey"
            and args[:1] == ["-p"]
            and args[2:]
            == [
                "-c",
                "android.intent.category.LAUNCHER",
                "1",
            ]
        ):
            self.app_start(args[1])  # the launcher intent brings the app up
            return "Events injected: 1", 0
        return f"/system/bin/sh: {name}: inaccessible or not found", 127

    def _settings(self, args: list[str]) -> tuple[str, int]:
        values = {
            # Android reads 3 for Wi-Fi switched on but suspended by airplane mode
            ("global", "wifi_on"): ("3" if self.airplane else "1") if self.wifi else "0",
            ("global", "bluetooth_on"): "1" if self.bluetooth else "0",
            ("global", "airplane_mode_on"): "1" if self.airplane else "0",
            ("system", "screen_brightness"): str(self.brightness),
        }
        if len(args) == 3 and args[0] == "get":
            return values.get((args[1], args[2]), "null"), 0
        if len(args) == 4 and args[:3] == ["put", "system", "screen_brightness"]:
            self.brightness = int(args[3])
            return "", 0
        return "usage: settings [--user ...] get|put namespace key [value]", 1

    # -- content providers ---------------------------------------------------------------------

    def _content(self, verb: str, args: list[str]) -> tuple[str, int]:
        options: dict[str, list[str]] = {}
        for flag, value in zip(args[::2], args[1::2], strict=False):
            options.setdefault(flag, []).append(value)
        uri = options.get("--uri", [""])[0]
        binds: dict[str, Any] = {}
        for bind in options.get("--bind", []):
            column, kind, value = bind.split(":", 2)  # the value may hold colons
            binds[column] = int(value) if kind in ("i", "l") else value
        if "--where" in options:
            return "fake content: --where is not simulated", 1
        if verb == "query":
            return self._query(uri, options.get("--projection", [""])[0])
        if verb == "insert" and uri.startswith("content://sms"):
            box = uri.removeprefix("content://sms").strip("/")
            kind = {"inbox": 1, "sent": 2, "": binds.get("type", 1)}[box]
            self.sms.append(
                {
                    "_id": self._next_sms,
                    "address": binds.get("address"),
                    "body": binds.get("body"),
                    "date": binds.get("date", self.now_s * 1000),
                    "type": kind,
                    "read": binds.get("read", 0),
                }
            )
            self._next_sms += 1
            return "", 0
        if verb == "delete" and uri == "content://sms":
            self.sms.clear()
            return "", 0
        if verb == "insert" and uri == "content://com.android.contacts/raw_contacts":
            self.raw_contacts[self._next_raw] = {}
            self._next_raw += 1
            return "", 0
        if verb == "insert" and uri == "content://com.android.contacts/data":
            raw = self.raw_contacts[binds["raw_contact_id"]]
            if binds["mimetype"] == "vnd.android.cursor.item/name":
                raw["name"] = binds["data1"]
            elif binds["mimetype"] == "vnd.android.cursor.item/phone_v2":
                self.contacts.append((raw.get("name", ""), binds["data1"]))
            return "", 0
        return f"Error while accessing provider:{uri}", 1

    def _query(self, uri: str, projection: str) -> tuple[str, int]:
        if uri == "content://contacts/phones/":
            rows = [{"display_name": name, "number": number} for name, number in self.contacts]
        elif uri == "content://com.android.contacts/raw_contacts":
            rows = [{"_id": raw_id} for raw_id in self.raw_contacts]
        elif uri in ("content://sms", "content://sms/inbox", "content://sms/sent"):
            box = {"content://sms/inbox": 1, "content://sms/sent": 2}.get(uri)
            rows = sorted(
                (r for r in self.sms if box is None or r["type"] == box),
                key=lambda r: -r["date"],  # the provider's default order: newest first
            )
        else:
            return f"Error while accessing provider:{uri}", 1
        columns = projection.split(":") if projection else list(rows[0]) if rows else []
        lines = [
            f"Row: {i} "
            + ", ".join(f"{c}={'NULL' if row.get(c) is None else row.get(c)}" for c in columns)
            for i, row in enumerate(rows)
        ]
        return "\n".join(lines) or "No result found.", 0

    def receive_sms(self, address: str, body: str, minutes_ago: float = 0.0) -> None:
        """A message arrives (what the modem does)."""
        self._add_sms(address, body, 1, minutes_ago)

    def send_sms(
        self, address: str, body: str, minutes_ago: float = 0.0, failed: bool = False
    ) -> None:
        """What Simple SMS Messenger does when the user taps Send."""
        self._add_sms(address, body, 5 if failed else 2, minutes_ago)

    def _add_sms(self, address: str, body: str, kind: int, minutes_ago: float) -> None:
        date = int((self.now_s - minutes_ago * 60) * 1000)
        self.sms.append(
            {
                "_id": self._next_sms,
                "address": address,
                "body": body,
                "date": date,
                "type": kind,
                "read": 1,
            }
        )
        self._next_sms += 1

    # -- shared storage ------------------------------------------------------------------------

    def _find(self, args: list[str]) -> tuple[str, int]:
        root = args[0]
        top = storage_path(root)
        if top not in self.dirs and top != STORAGE:
            return f"find: {root}: No such file or directory", 1
        if "-exec" not in args or args[args.index("-exec") + 1 : args.index("-exec") + 3] != [
            "stat",
            "-c",
        ]:
            return "fake find: only -type f -exec stat -c FORMAT {} + is simulated", 1
        fmt = args[args.index("-exec") + 3]
        pruned = args[args.index("-name") + 1] if "-prune" in args else None
        lines = []
        for path, (size, mtime) in sorted(self.files.items()):
            if not path.startswith(top + "/"):
                continue
            rest = path[len(top) + 1 :]
            if pruned is not None and pruned in rest.split("/")[:-1]:
                continue
            shown = root.rstrip("/") + "/" + rest
            lines.append(
                fmt.replace("%s", str(size)).replace("%Y", str(mtime)).replace("%n", shown)
            )
        return "\n".join(lines), 0

    def _parent_exists(self, path: str) -> bool:
        folder = path.rpartition("/")[0]
        return folder == STORAGE or folder in self.dirs

    def _mkdir(self, args: list[str]) -> tuple[str, int]:
        if args[:1] != ["-p"]:
            return "fake mkdir: only -p is simulated", 1
        for arg in args[1:]:
            path = storage_path(arg)
            while path.startswith(STORAGE + "/"):
                self.dirs.add(path)
                path = path.rpartition("/")[0]
        return "", 0

    def _rm(self, args: list[str]) -> tuple[str, int]:
        if args[:1] != ["-rf"]:
            return "fake rm: only -rf is simulated", 1
        for arg in args[1:]:
            path = storage_path(arg)
            if path == STORAGE or not path.startswith(STORAGE + "/"):
                return f"rm: refusing to remove {arg} in the fake", 1
            self.files = {
                p: v for p, v in self.files.items() if not p.startswith(path + "/") and p != path
            }
            self.dirs = {d for d in self.dirs if not d.startswith(path + "/") and d != path}
        return "", 0

    def _truncate(self, args: list[str]) -> tuple[str, int]:
        if len(args) != 3 or args[0] != "-s":
            return "usage: truncate -s SIZE FILE", 1
        path = storage_path(args[2])
        if not self._parent_exists(path):
            return f"truncate: {args[2]}: No such file or directory", 1
        mtime = self.files.get(path, (0, self.now_s))[1]
        self.files[path] = (int(args[1]), mtime)
        return "", 0

    def _touch(self, args: list[str]) -> tuple[str, int]:
        if len(args) != 4 or args[:2] != ["-m", "-d"]:
            return "fake touch: only -m -d DATE FILE is simulated", 1
        path = storage_path(args[3])
        if path not in self.files:
            return f"touch: {args[3]}: No such file or directory", 1
        local = datetime.strptime(args[2], "%Y-%m-%dT%H:%M:%S")
        sign = -1 if self.tz.startswith("-") else 1
        offset = sign * (int(self.tz[1:3]) * 3600 + int(self.tz[3:5]) * 60)
        epoch = int((local - datetime(1970, 1, 1) - timedelta(seconds=offset)).total_seconds())
        self.files[path] = (self.files[path][0], epoch)
        return "", 0

    def move_file(self, source: str, destination_folder: str) -> None:
        """What the Files app does on "Move here" (paths relative to storage)."""
        entry = self.files.pop(f"{STORAGE}/{source}")
        name = source.rpartition("/")[2]
        self.dirs.add(f"{STORAGE}/{destination_folder}")
        self.files[f"{STORAGE}/{destination_folder}/{name}"] = entry

    def delete_file(self, path: str) -> None:
        """What the Files app does on Delete (a path relative to storage)."""
        del self.files[f"{STORAGE}/{path}"]

    def storage(self, folder: str = "") -> dict[str, int]:
        """Files (path relative to storage -> bytes), optionally within one top folder."""
        prefix = f"{STORAGE}/{folder}/" if folder else f"{STORAGE}/"
        return {
            p[len(STORAGE) + 1 :]: size
            for p, (size, _) in self.files.items()
            if p.startswith(prefix)
        }
