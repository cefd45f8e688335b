"""Task state over ``adb shell``: the device clock, the SMS provider, the contacts provider and
shared storage, read into the simulator's app data and written from a template's starting data.

Everything here speaks through an object with ``shell(command) -> str`` (the real-device
backends' channels). Commands are single strings run by the device's ``sh``; every value that
comes from a template (message bodies, names, paths) goes through :func:`shlex.quote`.

* **Clock**: ``date +%s%z`` gives the device's epoch seconds and UTC offset. Template stamps
  (``"YYYY-MM-DD HH:MM"`` around the simulator's ``DEVICE_TIME``) are moved onto the device's
  clock keeping their distance from "now", so "12 minutes ago" stays 12 minutes ago; device
  epochs read back as local stamps with the offset read at the same time.
* **SMS**: ``content query --uri content://sms --projection _id:address:body:date:type``
  (type 1 inbox, 2 sent, 5 failed; ``date`` in epoch milliseconds) becomes
  :class:`~gui_gym.envs.androidworld.apps.sms.SmsData`; a template's messages are written with
  ``content delete`` then one ``content insert`` per message.
* **Contacts**: ``content://contacts/phones/`` is read; writing clears the provider
  (``pm clear com.android.providers.contacts``, as AndroidWorld does) and inserts a raw contact
  with a name row and a phone row per contact.
* **Files**: ``find`` + ``stat`` under ``/sdcard`` (app-private ``Android/`` skipped) become
  :class:`~gui_gym.envs.androidworld.apps.files.FilesData` with paths relative to the storage
  root (``"Download/a.pdf"``, the simulator's convention); writing empties the task's folders and
  creates each file at its size (``truncate``, a sparse file) and modification time.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from gui_gym.envs.androidworld.apps.contacts import Contact, ContactsData
from gui_gym.envs.androidworld.apps.files import FilesData, StoredFile, parent
from gui_gym.envs.androidworld.apps.sms import Message, SmsData, clean_address
from gui_gym.envs.androidworld.phone import DEVICE_TIME

__all__ = [
    "CONTACTS_URI",
    "DEVICE_STORAGE",
    "SMS_COLUMNS",
    "DeviceClock",
    "DeviceError",
    "ShellChannel",
    "content_insert",
    "content_rows",
    "device_path",
    "parse_clock",
    "parse_file_listing",
    "parse_sms",
    "push_contacts",
    "push_files",
    "push_sms",
    "read_clock",
    "read_contacts",
    "read_files",
    "read_sms",
    "sim_path",
]


class DeviceError(RuntimeError):
    """The device did not answer (unplugged, adb down, a call timed out), answered something
    unreadable, or did not take the starting state written to it."""


class ShellChannel(Protocol):
    """What the readers and writers need: ``adb shell <command>``'s output (stripped)."""

    def shell(self, command: str) -> str: ...


_STAMP = "%Y-%m-%d %H:%M"
_SIM_NOW = datetime.strptime(DEVICE_TIME, _STAMP)
_EPOCH = datetime(1970, 1, 1)


# -- the clock -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceClock:
    """The device's time when it was read: epoch milliseconds and its UTC offset.

    Conversions use this one offset, so stamps across a daylight-saving change in the device's
    zone are an hour off; templates' starting data spans days, not seasons.
    """

    epoch_ms: int
    utc_offset_s: int = 0

    def local(self, epoch_ms: int) -> datetime:
        """Naive device-local time of an epoch in milliseconds."""
        return _EPOCH + timedelta(milliseconds=epoch_ms + self.utc_offset_s * 1000)

    def stamp(self, epoch_ms: int) -> str:
        """``"YYYY-MM-DD HH:MM"`` on the device's clock."""
        return self.local(epoch_ms).strftime(_STAMP)

    @property
    def now(self) -> str:
        """The device's current time as a stamp (``SystemState.now``)."""
        return self.stamp(self.epoch_ms)

    def from_sim(self, stamp: str) -> int:
        """Epoch milliseconds for a template stamp: as far before the device's now as
        ``stamp`` is before the simulator's ``DEVICE_TIME``."""
        ago = _SIM_NOW - datetime.strptime(stamp, _STAMP)
        return self.epoch_ms - int(ago.total_seconds() * 1000)

    def local_from_sim(self, stamp: str) -> datetime:
        """Device-local time for a template stamp (see :meth:`from_sim`)."""
        return self.local(self.from_sim(stamp))


_CLOCK = re.compile(r"(\d+)(?:([+-])(\d\d):?(\d\d))?")


def parse_clock(output: str) -> DeviceClock:
    """``date +%s%z`` output (``1697384040+0200``) as a :class:`DeviceClock`.

    Raises:
        DeviceError: for anything else.
    """
    match = _CLOCK.fullmatch(output.strip())
    if match is None:
        raise DeviceError(f"unreadable device clock {output.strip()[:80]!r} from `date +%s%z`")
    seconds, sign, hours, minutes = match.groups()
    offset = 0
    if sign:
        offset = (int(hours) * 3600 + int(minutes) * 60) * (-1 if sign == "-" else 1)
    return DeviceClock(int(seconds) * 1000, offset)


def read_clock(device: ShellChannel) -> DeviceClock:
    """The device's clock (one ``date`` call)."""
    return parse_clock(device.shell("date +%s%z"))


# -- content provider rows -----------------------------------------------------------------------

_ROW_START = re.compile(r"Row: \d+ ")


def content_rows(
    output: str, columns: Sequence[str], free: str | None = None
) -> list[dict[str, str]]:
    """Rows of ``content query --projection a:b:c`` output (``Row: 0 a=1, b=x, c=2``).

    Values are cut at the known column names in projection order rather than at every ", ":
    ``free`` names the one column whose value may hold ", ", "=" or line breaks (a message
    body); columns before it are cut from the left and those after it from the right, so a
    body like ``"hi, date=3"`` stays whole. A line that does not start a row continues the
    previous row's value (a line break inside a body). Values other than ``free`` are stripped;
    rows that do not fit the projection are skipped, as is ``No result found.``.
    """
    records: list[str] = []
    for line in output.splitlines():
        match = _ROW_START.match(line)
        if match:
            records.append(line[match.end() :])
        elif records:
            records[-1] += "\n" + line
    rows = []
    for record in records:
        row = _split_record(record, list(columns), free)
        if row is not None:
            rows.append(row)
    return rows


def _split_record(record: str, columns: list[str], free: str | None) -> dict[str, str] | None:
    pivot = columns.index(free) if free in columns else len(columns) - 1
    row: dict[str, str] = {}
    rest = record
    for i in range(pivot):
        name, following = columns[i], columns[i + 1]
        if not rest.startswith(name + "="):
            return None
        end = rest.find(f", {following}=")
        if end < 0:
            return None
        row[name] = rest[len(name) + 1 : end].strip()
        rest = rest[end + 2 :]
    for j in range(len(columns) - 1, pivot, -1):
        name = columns[j]
        cut = rest.rfind(f", {name}=")
        if cut < 0:
            return None
        row[name] = rest[cut + len(name) + 3 :].strip()
        rest = rest[:cut]
    name = columns[pivot]
    if not rest.startswith(name + "="):
        return None
    value = rest[len(name) + 1 :]
    row[name] = value if name == free else value.strip()
    return row


def _int(text: str, default: int = 0) -> int:
    try:
        return int(text)
    except ValueError:
        return default


def _text(value: str) -> str:
    """A column value, with ``content``'s ``NULL`` read as empty."""
    return "" if value == "NULL" else value


def content_insert(uri: str, binds: Sequence[tuple[str, str, object]]) -> str:
    """``content insert`` command binding ``(column, type, value)`` triples; ``type`` is
    ``content``'s letter (``s`` string, ``i`` int, ``l`` long). Each binding is one quoted
    shell word, so values may hold spaces, quotes, ``;`` or ``$``."""
    words = ["content", "insert", "--uri", shlex.quote(uri)]
    for column, kind, value in binds:
        words += ["--bind", shlex.quote(f"{column}:{kind}:{value}")]
    return " ".join(words)


# -- SMS -------------------------------------------------------------------------------------------

SMS_COLUMNS = ("_id", "address", "body", "date", "type")
"""The projection read from ``content://sms``."""

_SMS_STATUS = {1: "received", 2: "sent", 3: "draft", 4: "sending", 5: "failed", 6: "sending"}
"""``Telephony.Sms`` message types as the simulator's ``Message.status``."""


def parse_sms(output: str, clock: DeviceClock) -> SmsData:
    """``content query --uri content://sms --projection _id:address:body:date:type`` output as
    the SMS app's data, stamped on the device's clock."""
    data = SmsData()
    for row in content_rows(output, SMS_COLUMNS, free="body"):
        kind = _int(row["type"], 1)
        data.messages.append(
            Message(
                id=_int(row["_id"]),
                address=clean_address(_text(row["address"])),
                body=_text(row["body"]),
                time=clock.stamp(_int(row["date"])),
                outgoing=kind != 1,
                status=_SMS_STATUS.get(kind, "sending"),
            )
        )
    data.messages.sort(key=lambda m: m.id)
    data.next_id = max((m.id for m in data.messages), default=0) + 1
    return data


def read_sms(device: ShellChannel, clock: DeviceClock) -> SmsData:
    """Every message in the SMS provider."""
    projection = ":".join(SMS_COLUMNS)
    return parse_sms(
        device.shell(f"content query --uri content://sms --projection {projection}"), clock
    )


def push_sms(device: ShellChannel, data: SmsData, clock: DeviceClock) -> None:
    """Empty the SMS provider and insert ``data``'s messages (oldest first), received ones
    into the inbox, sent ones into the sent box and failed ones with type 5."""
    device.shell("content delete --uri content://sms")
    for m in sorted(data.messages, key=lambda m: (m.time, m.id)):
        kind = 1 if not m.outgoing else 5 if m.status == "failed" else 2
        uri = {1: "content://sms/inbox", 2: "content://sms/sent"}.get(kind, "content://sms")
        device.shell(
            content_insert(
                uri,
                [
                    ("address", "s", m.address),
                    ("body", "s", m.body),
                    ("date", "l", clock.from_sim(m.time)),
                    ("type", "i", kind),
                    ("read", "i", 1),
                ],
            )
        )


# -- contacts --------------------------------------------------------------------------------------

CONTACTS_URI = "content://com.android.contacts"


def read_contacts(device: ShellChannel) -> ContactsData:
    """Contacts with their phone numbers (one entry per number, as the provider lists them)."""
    output = device.shell(
        "content query --uri content://contacts/phones/ --projection display_name:number"
    )
    contacts = ContactsData()
    for row in content_rows(output, ("display_name", "number"), free="display_name"):
        first, _, last = _text(row["display_name"]).partition(" ")
        contacts.contacts.append(Contact(first, last, _text(row["number"])))
    return contacts


def push_contacts(device: ShellChannel, data: ContactsData) -> None:
    """Clear the contacts provider and add ``data``'s contacts (a raw contact, then its name
    and mobile number rows).

    Raises:
        DeviceError: when the provider does not report the raw contact just inserted.
    """
    device.shell("pm clear com.android.providers.contacts")
    for contact in data.contacts:
        device.shell(content_insert(f"{CONTACTS_URI}/raw_contacts", [("starred", "i", 0)]))
        ids = content_rows(
            device.shell(f"content query --uri {CONTACTS_URI}/raw_contacts --projection _id"),
            ("_id",),
        )
        known = [int(r["_id"]) for r in ids if r["_id"].isdigit()]
        if not known:
            raise DeviceError("the contacts provider did not take a new raw contact")
        raw_id = max(known)
        device.shell(
            content_insert(
                f"{CONTACTS_URI}/data",
                [
                    ("raw_contact_id", "i", raw_id),
                    ("mimetype", "s", "vnd.android.cursor.item/name"),
                    ("data1", "s", contact.name),
                    ("data2", "s", contact.first),
                    ("data3", "s", contact.last),
                ],
            )
        )
        if contact.phone:
            device.shell(
                content_insert(
                    f"{CONTACTS_URI}/data",
                    [
                        ("raw_contact_id", "i", raw_id),
                        ("mimetype", "s", "vnd.android.cursor.item/phone_v2"),
                        ("data1", "s", contact.phone),
                        ("data2", "i", 2),  # TYPE_MOBILE
                    ],
                )
            )


# -- files -----------------------------------------------------------------------------------------

DEVICE_STORAGE = "/sdcard"
"""Where the simulator's storage root (``STORAGE``) lives on the device."""

_STORAGE_ROOTS = ("/sdcard", "/storage/emulated/0", "/storage/self/primary", "/mnt/sdcard")
_FILE_LINE = re.compile(r"(\d+)\|(-?\d+)\|(/.*)")


def device_path(path: str) -> str:
    """Device path of a simulator path (``"Download/a.pdf"`` -> ``/sdcard/Download/a.pdf``)."""
    return f"{DEVICE_STORAGE}/{path}" if path else DEVICE_STORAGE


def sim_path(path: str) -> str | None:
    """Simulator path of a device path under shared storage (any of its aliases; doubled or
    trailing slashes folded), or None for paths elsewhere and for the root itself."""
    for root in _STORAGE_ROOTS:
        if path == root or path.startswith(root + "/"):
            parts = [p for p in path[len(root) :].split("/") if p]
            return "/".join(parts) or None
    return None


def _safe_folder(folder: str) -> str:
    """``folder`` if it names a folder strictly inside the storage root, else ValueError (a
    starting state must never empty the whole storage)."""
    parts = folder.split("/")
    if not folder or folder.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"refusing to clear {folder!r}: not a folder inside the storage root")
    return folder


def parse_file_listing(output: str, clock: DeviceClock) -> FilesData:
    """``stat -c '%s|%Y|%n'`` lines (size in bytes, modification epoch, path) as the Files
    app's data; sizes round up to whole kB. Lines that are not such a triple (``find`` errors
    merged into the output, names with a line break) and paths outside storage are skipped."""
    data = FilesData()
    found: list[StoredFile] = []
    for line in output.splitlines():
        match = _FILE_LINE.fullmatch(line)
        if match is None:
            continue
        size, mtime, path = match.groups()
        relative = sim_path(path)
        if relative is None:
            continue
        found.append(StoredFile(relative, -(-int(size) // 1024), clock.stamp(int(mtime) * 1000)))
    for stored in sorted(found, key=lambda f: f.path):
        data.add(stored.path, stored.size_kb, stored.modified)
    return data


def read_files(device: ShellChannel, clock: DeviceClock) -> FilesData:
    """Every file on shared storage but the app-private ``Android/`` folder. The command
    always exits 0 (unreadable folders are expected) so adb channels that fail on a non-zero
    exit still get the listing."""
    command = (
        f"find {DEVICE_STORAGE}/ -name Android -prune -o -type f "
        "-exec stat -c '%s|%Y|%n' {} + 2>/dev/null; true"
    )
    return parse_file_listing(device.shell(command), clock)


def push_files(
    device: ShellChannel, data: FilesData, folders: Iterable[str], clock: DeviceClock
) -> None:
    """Empty ``folders`` (paths relative to storage) and create ``data``'s files with their
    sizes and modification times.

    Raises:
        ValueError: for a folder that is not strictly inside storage.
    """
    for folder in sorted(set(folders)):
        quoted = shlex.quote(device_path(_safe_folder(folder)))
        device.shell(f"rm -rf {quoted} && mkdir -p {quoted}")
    for stored in data.files:
        path = shlex.quote(device_path(stored.path))
        folder = shlex.quote(device_path(parent(stored.path)))
        when = clock.local_from_sim(stored.modified).strftime("%Y-%m-%dT%H:%M:%S")
        device.shell(
            f"mkdir -p {folder} && truncate -s {int(stored.size_kb) * 1024} {path} "
            f"&& touch -m -d {when} {path}"
        )
