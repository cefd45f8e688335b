"""Files (``com.google.android.documentsui``): a browser over the phone's shared storage
(``/storage/emulated/0``, shown as ``sdk_gphone_x86_64``), and the folder-browser machinery
Markor reuses.

:class:`FolderBrowserApp` is a folder tree of items with a ``path`` (``"Download/a.pdf"``):
tapping a folder opens it, a long press starts selection mode (tap to toggle, "Select all"),
and the selection can be deleted (after a confirm dialog), renamed (one item) or moved with a
folder picker ("Move here"). Deleting a folder deletes what it holds. Paths are relative to the
browser's root and use ``/``; names never contain ``/`` or a newline.

Files shows the standard folders of an emulator's storage (AndroidWorld's
``EMULATOR_DIRECTORIES``); tapping a file opens its details with Rename, Move to and Delete.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.apps.rows import ImmutableRow
from gui_gym.envs.androidworld.phone import (
    AppView,
    PhoneApp,
    PhoneState,
    Screen,
    bring_to_front,
    icon,
)

__all__ = [
    "EMULATOR_DIRECTORIES",
    "STORAGE",
    "FilesApp",
    "FilesData",
    "FolderBrowserApp",
    "PathItem",
    "StoredFile",
    "add_parent_folders",
    "basename",
    "join",
    "long_date",
    "parent",
    "within",
]

STORAGE = "sdk_gphone_x86_64"
"""The emulator's storage volume label (AndroidWorld's instructions name it)."""

EMULATOR_DIRECTORIES: dict[str, tuple[str, ...]] = {
    "Alarms": (
        "morning_chime.mp3",
        "gentle_rise.mp3",
        "rooster_call.ogg",
        "early_bird.mp3",
        "wake_up_melody.mp3",
        "sunrise_bells.ogg",
        "loud_buzzer.mp3",
        "soft_piano_alarm.mp3",
    ),
    "Audiobooks": (
        "the_long_road_ch01.m4b",
        "mystery_manor_part2.mp3",
        "history_of_tea.m4b",
        "ocean_tales_ch05.mp3",
        "space_saga_book1.m4b",
        "garden_secrets.mp3",
        "city_of_glass_ch03.m4b",
        "quiet_mind_intro.mp3",
    ),
    "DCIM": (
        "IMG_20230912_101522.jpg",
        "IMG_20231001_184405.jpg",
        "VID_20230821_143010.mp4",
        "IMG_20230704_090112.jpg",
        "PXL_20231010_120455.jpg",
        "IMG_20230615_200830.jpg",
        "VID_20231003_081245.mp4",
        "IMG_20230930_171717.jpg",
    ),
    "Documents": (
        "tax_return_2022.pdf",
        "lease_agreement.pdf",
        "meeting_minutes.docx",
        "project_plan.xlsx",
        "resume_final.pdf",
        "travel_itinerary.pdf",
        "insurance_policy.pdf",
        "reading_list.txt",
        "budget_2023.xlsx",
    ),
    "Download": (
        "setup_guide.pdf",
        "wallpaper_pack.zip",
        "boarding_pass.pdf",
        "invoice_10482.pdf",
        "concert_ticket.pdf",
        "app_release.apk",
        "recipe_book.epub",
        "map_offline.zip",
        "receipt_scan.jpg",
    ),
    "Movies": (
        "holiday_trip.mp4",
        "birthday_party.mp4",
        "drone_flight.mp4",
        "school_play.mkv",
        "cooking_demo.mp4",
        "hiking_timelapse.mp4",
        "wedding_highlights.mp4",
        "concert_clip.mkv",
    ),
    "Music": (
        "summer_breeze.mp3",
        "night_drive.mp3",
        "acoustic_morning.flac",
        "city_lights.mp3",
        "rainy_day_jazz.mp3",
        "mountain_echo.ogg",
        "retro_wave.mp3",
        "lullaby_piano.mp3",
    ),
    "Notifications": (
        "ding.ogg",
        "soft_pop.ogg",
        "chime_short.mp3",
        "bubble.ogg",
        "notify_bell.ogg",
        "tap_tone.mp3",
        "glass_ping.ogg",
        "bird_tweet.mp3",
    ),
    "Pictures": (
        "screenshot_20231002.png",
        "family_portrait.jpg",
        "sunset_beach.jpg",
        "whiteboard_notes.png",
        "cat_on_sofa.jpg",
        "mountain_view.jpg",
        "receipt_grocery.png",
        "diagram_sketch.png",
        "profile_photo.jpg",
    ),
    "Podcasts": (
        "tech_talk_ep42.mp3",
        "daily_news_1013.mp3",
        "history_hour_ep7.mp3",
        "science_weekly_ep88.mp3",
        "cooking_show_ep3.mp3",
        "startup_stories_ep15.mp3",
        "mindful_minutes_ep20.mp3",
        "sports_recap_ep51.mp3",
    ),
    "Recordings": (
        "voice_memo_01.m4a",
        "lecture_notes.m4a",
        "interview_take2.m4a",
        "song_idea.m4a",
        "meeting_audio.m4a",
        "call_reminder.m4a",
        "grocery_list.m4a",
        "practice_speech.m4a",
    ),
    "Ringtones": (
        "classic_ring.ogg",
        "marimba_loop.mp3",
        "old_phone.ogg",
        "synth_pulse.mp3",
        "guitar_riff.mp3",
        "xylophone.ogg",
        "retro_beep.ogg",
        "harp_glissando.mp3",
    ),
}
"""Top-level folders of the emulator's storage, each with typical file names."""


# -- paths ------------------------------------------------------------------------------------


def parent(path: str) -> str:
    """The folder holding ``path`` ("" for the root)."""
    return path.rpartition("/")[0]


def basename(path: str) -> str:
    return path.rpartition("/")[2]


def join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies (at any depth) inside it; "" is the root."""
    return not folder or path == folder or path.startswith(folder + "/")


def add_parent_folders(folders: list[str], path: str) -> None:
    """Append to ``folders`` every folder above ``path`` it lacks, innermost first."""
    folder = parent(path)
    while folder and folder not in folders:
        folders.append(folder)
        folder = parent(folder)


class PathItem(ImmutableRow):
    """Mixin of a folder-browser item (a frozen dataclass with a ``path`` field): its name
    and folder."""

    __slots__ = ()
    path: str

    @property
    def name(self) -> str:
        return basename(self.path)

    @property
    def folder(self) -> str:
        return parent(self.path)


def _rebase(path: str, old: str, new: str) -> str:
    """``path`` with its leading ``old`` replaced by ``new`` (``path`` within ``old``)."""
    return new + path[len(old) :]


_BROWSER_SCREENS = ("main", "folder")
_ROW_BLOCKS: dict[tuple[str, Any, bool, bool], Block] = {}


class FolderBrowserApp(PhoneApp):
    """A folder tree of items (frozen dataclasses with a ``path``) with selection, delete,
    rename and move. The data object has ``folders``, ``selected`` and ``moving`` lists;
    subclasses say where the items live (:meth:`entries`) and how rows look."""

    item_screen: ClassVar[str] = "item"
    """Screen that opens an item (its arg is the item's path)."""
    root_label: ClassVar[str] = ""
    """First breadcrumb (the root folder's name)."""

    # -- hooks ---------------------------------------------------------------------------------

    def entries(self, data: Any) -> list[Any]:
        """The app's item list (mutated in place)."""
        raise NotImplementedError

    row_resource_id: ClassVar[str] = "item_row"
    """Resource id of an item's row."""

    def row_description(self, item: Any) -> str:
        """Second line of an item's row (size and date, modification date, ...)."""
        raise NotImplementedError

    def item_block(self, item: Any, selecting: bool, selected: bool) -> Block:
        """An item's row; rows are immutable, so they are cached per (app, item, flags)."""
        cache_key = (self.key, item, selecting, selected)
        block = _ROW_BLOCKS.get(cache_key)
        if block is None:
            if len(_ROW_BLOCKS) > 4096:
                _ROW_BLOCKS.clear()
            block = Block(
                "listitem",
                basename(item.path),
                description=self.row_description(item),
                resource_id=self.row_resource_id,
                clickable=True,
                long_clickable=True,
                checkable=selecting,
                checked=selected,
                selected=selected,
                handler=f"{self.key}.entry",
                handler_arg=item.path,
                gap=2,
            )
            _ROW_BLOCKS[cache_key] = block
        return block

    def ordered(self, data: Any, items: list[Any]) -> list[Any]:
        return sorted(items, key=lambda i: basename(i.path).lower())

    def browser_actions(self, phone: PhoneState, folder: str) -> list[Block]:
        return []

    def browser_fab(self, phone: PhoneState, folder: str) -> Block | None:
        return None

    def open_item(self, phone: PhoneState, path: str) -> None:
        self.push(phone, self.item_screen, path)

    # -- queries -------------------------------------------------------------------------------

    @staticmethod
    def browsed_folder(screen: Screen) -> str | None:
        """The folder a browser screen shows (None for other screens)."""
        if screen.name == "main":
            return ""
        if screen.name == "folder":
            return screen.arg
        return None

    def is_folder(self, data: Any, path: str) -> bool:
        return path in data.folders

    def item(self, data: Any, path: str) -> Any:
        for it in self.entries(data):
            if it.path == path:
                return it
        return None

    def exists(self, data: Any, path: str) -> bool:
        return path == "" or path in data.folders or self.item(data, path) is not None

    def listing(self, data: Any, folder: str) -> tuple[list[str], list[Any]]:
        """(subfolders, items) directly in ``folder``, in display order."""
        subs = sorted((f for f in data.folders if parent(f) == folder), key=str.lower)
        items = self.ordered(data, [i for i in self.entries(data) if parent(i.path) == folder])
        return subs, items

    def breadcrumbs(self, folder: str) -> str:
        return " > ".join([self.root_label, *folder.split("/")]) if folder else self.root_label

    # -- navigation ----------------------------------------------------------------------------

    def push(
        self, phone: PhoneState, name: str, arg: str = "", form: dict[str, str] | None = None
    ) -> None:
        self.data(phone).selected = []
        super().push(phone, name, arg, form)

    def pop(self, phone: PhoneState) -> None:
        data = self.data(phone)
        stack = phone.stacks.get(self.key, [])
        if data.selected and stack and stack[-1].name in _BROWSER_SCREENS:
            data.selected = []  # back leaves selection mode first
            phone.focus = ""
            return
        if stack and stack[-1].name == "move" and (len(stack) < 2 or stack[-2].name != "move"):
            data.moving = []
        super().pop(phone)

    def _drop_move_screens(self, phone: PhoneState) -> None:
        stack = phone.stacks[self.key]
        while len(stack) > 1 and stack[-1].name == "move":
            stack.pop()
        self.data(phone).moving = []
        phone.focus = ""

    def _prune(self, phone: PhoneState) -> None:
        """Close screens showing folders or items that no longer exist."""
        data = self.data(phone)
        stack = phone.stacks.get(self.key, [])
        kept = [
            s
            for s in stack[1:]
            if s.name not in ("folder", self.item_screen, "rename") or self.exists(data, s.arg)
        ]
        stack[1:] = kept

    def _follow(self, phone: PhoneState, old: str, new: str) -> None:
        """Screens showing ``old`` (or something inside it) now show ``new``."""
        for s in phone.stacks.get(self.key, []):
            if s.name in ("folder", self.item_screen) and within(s.arg, old) and s.arg:
                s.arg = _rebase(s.arg, old, new)

    # -- views ---------------------------------------------------------------------------------

    def browser_view(self, phone: PhoneState, screen: Screen, title: str) -> AppView:
        data = self.data(phone)
        folder = self.browsed_folder(screen) or ""
        subs, items = self.listing(data, folder)
        chosen = set(data.selected)
        selecting = bool(chosen)
        key = self.key
        content = [Block("text", self.breadcrumbs(folder), resource_id="breadcrumbs")]
        for f in subs:
            content.append(
                Block(
                    "listitem",
                    basename(f),
                    description="Folder",
                    resource_id="folder_row",
                    clickable=True,
                    long_clickable=True,
                    checkable=selecting,
                    checked=f in chosen,
                    selected=f in chosen,
                    handler=f"{key}.entry",
                    handler_arg=f,
                    gap=2,
                )
            )
        content.extend(self.item_block(i, selecting, i.path in chosen) for i in items)
        if not subs and not items:
            content.append(Block("text", "This folder is empty", resource_id="empty"))
        if selecting:
            actions = [icon("Select all", f"{key}.select_all", "select_all")]
            if len(chosen) == 1:
                actions.append(icon("Rename", f"{key}.rename", "rename"))
            actions += [
                icon("Move to", f"{key}.move", "move"),
                icon("Delete", f"{key}.delete", "delete"),
            ]
            return AppView(f"{len(chosen)} selected", content, actions=actions, back=True)
        return AppView(
            title,
            content,
            actions=self.browser_actions(phone, folder),
            fab=self.browser_fab(phone, folder),
        )

    def picker_view(self, phone: PhoneState, screen: Screen) -> AppView:
        data = self.data(phone)
        folder = screen.arg
        moving = data.moving
        subs = [
            f
            for f in sorted((f for f in data.folders if parent(f) == folder), key=str.lower)
            if not any(within(f, m) for m in moving)
        ]
        names = ", ".join(basename(m) for m in moving)
        content = [
            Block("text", f"Move {names} to:", resource_id="moving"),
            Block("text", self.breadcrumbs(folder), resource_id="breadcrumbs"),
        ]
        content += [
            Block(
                "listitem",
                basename(f),
                description="Folder",
                resource_id="folder_row",
                clickable=True,
                handler=f"{self.key}.pick",
                handler_arg=f,
                gap=2,
            )
            for f in subs
        ]
        if not subs:
            content.append(Block("text", "No folders here", resource_id="empty"))
        return AppView(
            "Move to",
            content,
            bottom=[
                self.button("Cancel", "cancel_move", resource_id="cancel"),
                self.button("Move here", "move_here", folder, resource_id="move_here"),
            ],
        )

    def rename_view(self, phone: PhoneState, screen: Screen) -> AppView:
        text = f"Rename {basename(screen.arg)}"
        return self._name_form(phone, "Rename", text, "Name", "apply_rename", screen.arg)

    def folder_form_view(self, phone: PhoneState, screen: Screen) -> AppView:
        text = f"In {self.breadcrumbs(screen.arg)}"
        return self._name_form(phone, "New folder", text, "Folder name", "make_folder", screen.arg)

    def _name_form(
        self, phone: PhoneState, title: str, text: str, hint: str, handler: str, arg: str
    ) -> AppView:
        """A form asking for one name: ``text``, the ``name`` field, Cancel, and OK calling
        ``handler`` with ``arg``."""
        return AppView(
            title,
            [
                Block("text", text),
                self.field("name", hint, phone),
                self.button("Cancel", "back", resource_id="cancel"),
                self.button("OK", handler, arg, resource_id="ok"),
            ],
        )

    # -- changes -------------------------------------------------------------------------------

    def check_name(self, data: Any, folder: str, name: str, allow: str = "") -> str:
        """A valid new name in ``folder`` (``allow``: a path that may already hold it)."""
        name = name.strip()
        if not name or name in (".", "..") or "/" in name or "\n" in name:
            raise InvalidAction(f"{name!r} is not a valid name")
        path = join(folder, name)
        if path != allow and self.exists(data, path):
            raise InvalidAction(f"{name!r} already exists in {self.breadcrumbs(folder)}")
        return path

    def add_folder(self, data: Any, folder: str, name: str) -> str:
        path = self.check_name(data, folder, name)
        data.folders.append(path)
        return path

    def delete_paths(self, data: Any, paths: list[str]) -> None:
        folders = [p for p in paths if p in data.folders]
        gone = set(paths)

        def dead(path: str) -> bool:
            return path in gone or any(within(path, f) for f in folders)

        data.folders[:] = [f for f in data.folders if not dead(f)]
        items = self.entries(data)
        items[:] = [i for i in items if not dead(i.path)]

    def move_path(self, data: Any, old: str, new: str) -> None:
        """Rename/move ``old`` (an item or a folder with its contents) to ``new``."""
        if old in data.folders:
            data.folders[:] = [_rebase(f, old, new) if within(f, old) else f for f in data.folders]
            items = self.entries(data)
            items[:] = [
                replace(i, path=_rebase(i.path, old, new)) if within(i.path, old) else i
                for i in items
            ]
        else:
            items = self.entries(data)
            items[:] = [replace(i, path=new) if i.path == old else i for i in items]

    def _targets(self, phone: PhoneState, arg: str) -> list[str]:
        data = self.data(phone)
        targets = [arg] if arg else list(data.selected)
        if not targets or not all(self.exists(data, t) for t in targets):
            raise InvalidAction("nothing is selected")
        return targets

    # -- handlers ------------------------------------------------------------------------------

    def on_click_entry(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data = self.data(phone)
        path = element.handler_arg
        if data.selected:
            if path in data.selected:
                data.selected.remove(path)
            else:
                data.selected.append(path)
        elif self.is_folder(data, path):
            self.push(phone, "folder", path)
        else:
            self.open_item(phone, path)

    def on_long_click_entry(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data = self.data(phone)
        path = element.handler_arg
        if path in data.selected:
            data.selected.remove(path)
        else:
            data.selected.append(path)

    def on_click_select_all(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data = self.data(phone)
        screen = phone.stacks[self.key][-1]
        subs, items = self.listing(data, self.browsed_folder(screen) or "")
        data.selected = subs + [i.path for i in items]

    def on_click_delete(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        targets = self._targets(phone, element.handler_arg)
        what = basename(targets[0]) if len(targets) == 1 else f"{len(targets)} items"
        self.ask_delete(
            phone, f"Delete {what}?", "Deleted items can't be restored.", "\n".join(targets)
        )

    def on_click_confirm_delete(
        self, phone: PhoneState, element: UIElement, action: Action
    ) -> None:
        data = self.data(phone)
        targets = element.handler_arg.split("\n")
        self.delete_paths(data, targets)
        data.selected = []
        phone.dialog = None
        self._prune(phone)
        phone.toast = f"Deleted {len(targets)} item{'s' if len(targets) > 1 else ''}"

    def on_click_rename(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        targets = self._targets(phone, element.handler_arg)
        if len(targets) != 1:
            raise InvalidAction("select exactly one item to rename")
        self.push(phone, "rename", targets[0], form={"name": basename(targets[0])})

    def on_click_apply_rename(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data = self.data(phone)
        old = element.handler_arg
        if not self.exists(data, old):
            raise InvalidAction("this item no longer exists")
        new = self.check_name(data, parent(old), self.form(phone).get("name", ""), allow=old)
        phone.forms[self.key] = {}
        self.pop(phone)
        if new != old:
            self.move_path(data, old, new)
            self._follow(phone, old, new)
        phone.toast = "Renamed"

    def on_click_move(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        targets = self._targets(phone, element.handler_arg)
        self.push(phone, "move", "")
        self.data(phone).moving = targets

    def on_click_pick(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "move", element.handler_arg)

    def on_click_cancel_move(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self._drop_move_screens(phone)

    def on_click_move_here(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data = self.data(phone)
        dest = element.handler_arg
        moving = [m for m in data.moving if self.exists(data, m)]
        if not moving:
            raise InvalidAction("nothing to move")
        if all(parent(m) == dest for m in moving):
            raise InvalidAction("already in this folder; pick another one")
        plan = []
        for m in moving:
            if within(dest, m):
                raise InvalidAction(f"cannot move {basename(m)!r} into itself")
            if parent(m) != dest:
                plan.append((m, self.check_name(data, dest, basename(m))))
        for old, new in plan:
            self.move_path(data, old, new)
            self._follow(phone, old, new)
        self._drop_move_screens(phone)
        phone.toast = f"Moved {len(moving)} item{'s' if len(moving) > 1 else ''}"

    def on_click_new_folder(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "mkdir", element.handler_arg, form={"name": ""})

    def on_click_make_folder(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data = self.data(phone)
        self.add_folder(data, element.handler_arg, self.form(phone).get("name", ""))
        phone.forms[self.key] = {}
        self.pop(phone)
        phone.toast = "Folder created"


# -- the Files app ------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredFile(PathItem):
    """A file on the shared storage; ``modified`` is ``"YYYY-MM-DD HH:MM"``."""

    path: str
    size_kb: int = 1
    modified: str = "2023-10-15 15:34"


@dataclass
class FilesData:
    """The storage: folder paths, files, and the browser's selection/move state."""

    folders: list[str] = field(default_factory=lambda: sorted(EMULATOR_DIRECTORIES))
    files: list[StoredFile] = field(default_factory=list)
    selected: list[str] = field(default_factory=list)
    moving: list[str] = field(default_factory=list)

    def add(self, path: str, size_kb: int = 1, modified: str = "2023-10-15 15:34") -> StoredFile:
        """Add a file (creating its folders)."""
        add_parent_folders(self.folders, path)
        stored = StoredFile(path, size_kb, modified)
        self.files.append(stored)
        return stored

    def find(self, name: str, folder: str = "") -> list[StoredFile]:
        """Files named ``name`` anywhere inside ``folder`` (recursive, as ``find`` does)."""
        return [f for f in self.files if f.name == name and within(f.path, folder)]


def size_text(size_kb: int) -> str:
    return f"{size_kb / 1024:.1f} MB" if size_kb >= 1024 else f"{size_kb} kB"


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def short_date(stamp: str) -> str:
    """``"2023-10-12 09:15"`` -> ``"Oct 12, 2023"``; today's stamps show the time."""
    day, _, clock = stamp.partition(" ")
    if day == "2023-10-15" and clock:
        return clock
    year, month, dom = day.split("-")
    return f"{_MONTHS[int(month) - 1]} {int(dom)}, {year}"


def long_date(stamp: str) -> str:
    """``"2023-10-12 09:15"`` -> ``"Oct 12, 2023, 09:15"``."""
    day, _, clock = stamp.partition(" ")
    year, month, dom = day.split("-")
    when = f"{_MONTHS[int(month) - 1]} {int(dom)}, {year}"
    return f"{when}, {clock}" if clock else when


class FilesApp(FolderBrowserApp):
    key = "files"
    title = "Files"
    package = "com.google.android.documentsui"
    aliases = ("files app", "file manager", "documentsui", "my files", "file browser")
    launcher_order = 72
    root_label = STORAGE

    def initial_data(self) -> FilesData:
        return FilesData()

    def entries(self, data: FilesData) -> list[StoredFile]:
        return data.files

    row_resource_id = "file_row"

    def row_description(self, item: StoredFile) -> str:
        return f"{size_text(item.size_kb)}, {short_date(item.modified)}"

    def browser_actions(self, phone: PhoneState, folder: str) -> list[Block]:
        return [icon("New folder", "files.new_folder", "new_folder", folder)]

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        if screen.name == "move":
            return self.picker_view(phone, screen)
        if screen.name == "rename":
            return self.rename_view(phone, screen)
        if screen.name == "mkdir":
            return self.folder_form_view(phone, screen)
        if screen.name == "item":
            return self._details(phone, screen)
        folder = self.browsed_folder(screen) or ""
        return self.browser_view(phone, screen, basename(folder) if folder else STORAGE)

    def _details(self, phone: PhoneState, screen: Screen) -> AppView:
        f: StoredFile | None = self.item(self.data(phone), screen.arg)
        if f is None:
            return AppView("File", [Block("text", "This file no longer exists.")])
        return AppView(
            f.name,
            [
                Block("heading", f.name, resource_id="file_name"),
                Block("text", f"Location: {self.breadcrumbs(f.folder)}", resource_id="location"),
                Block("text", f"Size: {size_text(f.size_kb)}", resource_id="size"),
                Block("text", f"Modified: {f.modified}", resource_id="modified"),
                self.button("Rename", "rename", f.path, resource_id="rename"),
                self.button("Move to", "move", f.path, resource_id="move"),
                self.button("Delete", "delete", f.path, resource_id="delete"),
                *(
                    [self.button("Open with Chrome", "open_with", f.path, resource_id="open")]
                    if f.name.endswith(".html") and "chrome" in phone.apps
                    else []
                ),
            ],
        )

    def on_click_open_with(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        """Hand an HTML file to Chrome (the "open with" prompt AndroidWorld's browser tasks
        mention), which shows it as a page."""
        bring_to_front(phone, "chrome")
        phone.stacks["chrome"].append(Screen("page", element.handler_arg))
