"""Markor (``net.gsantner.markor``): a Markdown/text note editor over the folder
``/storage/emulated/0/Documents/Markor``.

The file browser lists folders, then notes (by name, or newest first via Sort). The + button
opens "New file": a name, a format (Markdown adds ``.md``, plain text ``.txt``, unless the
name already has an extension), then OK creates the note and opens it in the editor, or
Folder creates a folder. A long press selects entries for Rename, Move to (a folder picker)
or Delete (confirmed), as in :class:`~gui_gym.envs.androidworld.apps.files.FolderBrowserApp`.

The editor saves as it goes (Markor writes the file when it is left; here every edit is
written at once and stamps the note's modification time). Typing replaces the text; ENTER
adds a new line; a long press on the text offers Paste (the clipboard, at the end) and Copy
all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import CHAR_WIDTH, LINE_HEIGHT, Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.apps.files import (
    FolderBrowserApp,
    PathItem,
    add_parent_folders,
    basename,
    long_date,
    within,
)
from gui_gym.envs.androidworld.phone import WIDTH, AppView, Dialog, PhoneState, Screen, icon

__all__ = ["MARKOR_DIR", "MarkorApp", "MarkorData", "Note"]

MARKOR_DIR = "/storage/emulated/0/Documents/Markor"
FORMATS = {"md": ("Markdown", ".md"), "txt": ("Plain text", ".txt")}


@dataclass(frozen=True)
class Note(PathItem):
    """A note file: ``path`` relative to the Markor folder, ``modified`` is
    ``"YYYY-MM-DD HH:MM"``."""

    path: str
    content: str = ""
    modified: str = "2023-10-15 15:34"


@dataclass
class MarkorData:
    """The Markor folder: notes, folder paths, the sort order and the browser's selection."""

    notes: list[Note] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    sort: str = "name"
    selected: list[str] = field(default_factory=list)
    moving: list[str] = field(default_factory=list)

    def add(self, path: str, content: str = "", modified: str = "2023-10-15 15:34") -> Note:
        """Add a note (creating its folders)."""
        add_parent_folders(self.folders, path)
        note = Note(path, content, modified)
        self.notes.append(note)
        return note

    def get(self, path: str) -> Note | None:
        for n in self.notes:
            if n.path == path:
                return n
        return None

    def find(self, name: str, folder: str = "") -> list[Note]:
        """Notes named ``name`` anywhere inside ``folder`` (recursive)."""
        return [n for n in self.notes if n.name == name and within(n.path, folder)]


def _text_height(text: str) -> int:
    chars = max(1, (WIDTH - 16 - 8) // CHAR_WIDTH)
    lines = sum(max(1, math.ceil(len(line) / chars)) for line in text.split("\n"))
    return max(200, lines * LINE_HEIGHT + 16)


class MarkorApp(FolderBrowserApp):
    key = "markor"
    title = "Markor"
    package = "net.gsantner.markor"
    aliases = ("markor app", "markor notes", "markdown editor")
    launcher_order = 50
    item_screen = "edit"
    root_label = "Markor"

    def initial_data(self) -> MarkorData:
        return MarkorData()

    def entries(self, data: MarkorData) -> list[Note]:
        return data.notes

    def ordered(self, data: MarkorData, items: list[Note]) -> list[Note]:
        if data.sort == "date":
            return sorted(items, key=lambda n: (n.modified, n.name.lower()), reverse=True)
        return sorted(items, key=lambda n: n.name.lower())

    row_resource_id = "note_row"

    def row_description(self, item: Note) -> str:
        return f"Modified {long_date(item.modified)}"

    def browser_actions(self, phone: PhoneState, folder: str) -> list[Block]:
        return [icon("Sort by", "markor.sort", "sort")]

    def browser_fab(self, phone: PhoneState, folder: str) -> Block | None:
        return icon("Create a new file or folder", "markor.new", "fab", folder)

    # -- views ---------------------------------------------------------------------------------

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        name = screen.name
        if name == "edit":
            return self._editor(phone, screen)
        if name == "create":
            return self._create(phone, screen)
        if name == "move":
            return self.picker_view(phone, screen)
        if name == "rename":
            return self.rename_view(phone, screen)
        folder = self.browsed_folder(screen) or ""
        return self.browser_view(phone, screen, basename(folder) if folder else "Markor")

    def _create(self, phone: PhoneState, screen: Screen) -> AppView:
        kind = self.form(phone).get("type", "md")
        content = [
            Block("text", f"In {self.breadcrumbs(screen.arg)}", resource_id="location"),
            self.field("name", "Name", phone),
        ]
        for fmt, (label, ext) in FORMATS.items():
            content.append(
                Block(
                    "radio",
                    f"{label} ({ext})",
                    resource_id="format",
                    clickable=True,
                    checkable=True,
                    checked=kind == fmt,
                    handler="markor.set_type",
                    handler_arg=fmt,
                    height=28,
                )
            )
        content += [
            self.button("OK", "create_note", screen.arg, resource_id="ok"),
            self.button("Folder", "create_folder", screen.arg, resource_id="folder"),
            self.button("Cancel", "back", resource_id="cancel"),
        ]
        return AppView("New file", content)

    def _editor(self, phone: PhoneState, screen: Screen) -> AppView:
        note = self.data(phone).get(screen.arg)
        if note is None:
            return AppView("Markor", [Block("text", "This file no longer exists.")])
        text = note.content
        return AppView(
            note.name,
            [
                Block(
                    "input",
                    text,
                    description="Start writing…" if not text else f"Content of {note.name}",
                    resource_id="note_content",
                    editable=True,
                    clickable=True,
                    long_clickable=True,
                    focused=phone.focus == "markor.content",
                    handler="markor.content",
                    handler_arg="content",
                    height=_text_height(text),
                )
            ],
            actions=[icon("Save", "markor.save", "save", note.path)],
        )

    # -- handlers ------------------------------------------------------------------------------

    def on_click_sort(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.dialog = Dialog(
            "Sort by",
            buttons=[
                ("Name", "markor.set_sort", "name"),
                ("Date modified", "markor.set_sort", "date"),
                ("Cancel", "markor.cancel", ""),
            ],
        )

    def on_click_set_sort(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.data(phone).sort = element.handler_arg
        phone.dialog = None

    def on_click_new(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "create", element.handler_arg, form={"name": "", "type": "md"})

    def on_click_set_type(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.form(phone)["type"] = element.handler_arg

    def on_click_create_note(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: MarkorData = self.data(phone)
        form = self.form(phone)
        name = form.get("name", "").strip()
        if name and "." not in name.lstrip("."):
            name += FORMATS.get(form.get("type", "md"), FORMATS["md"])[1]
        path = self.check_name(data, element.handler_arg, name)
        data.notes.append(Note(path, "", phone.system.now))
        phone.forms[self.key] = {}
        self.pop(phone)
        self.push(phone, "edit", path)

    def on_click_create_folder(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: MarkorData = self.data(phone)
        self.add_folder(data, element.handler_arg, self.form(phone).get("name", ""))
        phone.forms[self.key] = {}
        self.pop(phone)
        phone.toast = "Folder created"

    def _write(self, phone: PhoneState, path: str, text: str) -> None:
        data: MarkorData = self.data(phone)
        now = phone.system.now
        data.notes[:] = [
            replace(n, content=text, modified=now) if n.path == path else n for n in data.notes
        ]

    def _open_note(self, phone: PhoneState) -> Note:
        screen = phone.stacks[self.key][-1]
        note = self.data(phone).get(screen.arg) if screen.name == "edit" else None
        if note is None:
            raise InvalidAction("no note is open")
        return note

    def on_click_content(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self._open_note(phone)
        phone.focus = "markor.content"

    def on_input_content(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        note = self._open_note(phone)
        self._write(phone, note.path, (action.text or "").replace("\r", ""))
        phone.focus = "markor.content"

    def on_long_click_content(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        note = self._open_note(phone)
        buttons = []
        if phone.system.clipboard:
            buttons.append(("Paste", "markor.paste", note.path))
        if note.content:
            buttons.append(("Copy all", "markor.copy_all", note.path))
        buttons.append(("Cancel", "markor.cancel", ""))
        phone.dialog = Dialog("Text", buttons=buttons)

    def on_click_paste(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        note = self._open_note(phone)
        self._write(phone, note.path, note.content + phone.system.clipboard)
        phone.dialog = None
        phone.focus = "markor.content"

    def on_click_copy_all(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.system.clipboard = self._open_note(phone).content
        phone.dialog = None
        phone.toast = "Copied to clipboard"

    def on_click_save(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self._open_note(phone)
        phone.focus = ""
        phone.toast = "Saved"

    def on_enter(self, phone: PhoneState, field_name: str) -> None:
        if field_name == "content":
            note = self._open_note(phone)
            self._write(phone, note.path, note.content + "\n")
            return
        super().on_enter(phone, field_name)
