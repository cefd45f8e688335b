"""Joplin (``net.cozic.joplin``): notes and to-dos in notebooks.

The first screen lists the notebooks with their note counts; a notebook lists its notes by
title, to-dos with a check box (``☐`` open, ``☑`` completed), as Joplin's list does. A note
opens on its title, its to-do state (a check box that completes or reopens it) and its body.
The data mirrors the ``notes`` table AndroidWorld seeds: folder, title, body, ``is_todo`` and
``todo_completed``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any

from gui_gym.core.actions import Action
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.apps.rows import ImmutableRow, RowTable
from gui_gym.envs.androidworld.phone import AppView, PhoneApp, PhoneState, Screen

__all__ = ["JoplinApp", "JoplinData", "JoplinNote"]


@dataclass(frozen=True)
class JoplinNote(ImmutableRow):
    """One row of Joplin's ``notes`` table."""

    id: int
    folder: str
    title: str
    body: str = ""
    is_todo: bool = False
    todo_completed: bool = False


@dataclass
class JoplinData(RowTable[JoplinNote]):
    """The notes; notebooks are the folders that hold at least one note."""

    rows_attr = "notes"
    row_type = JoplinNote

    notes: list[JoplinNote] = field(default_factory=list)
    next_id: int = 1

    def __deepcopy__(self, memo: dict[int, Any]) -> JoplinData:
        # rows are immutable: a fork copies the list only (fork stays under a millisecond)
        return JoplinData(list(self.notes), self.next_id)

    def folders(self) -> list[str]:
        return sorted({n.folder for n in self.notes}, key=str.lower)

    def in_folder(self, folder: str) -> list[JoplinNote]:
        """The notebook's notes in list order (by title, then id)."""
        return sorted(
            (n for n in self.notes if n.folder == folder), key=lambda n: (n.title.lower(), n.id)
        )


@functools.lru_cache(maxsize=4096)
def _note_row(note: JoplinNote) -> Block:
    mark = ("☑ " if note.todo_completed else "☐ ") if note.is_todo else ""
    kind = ("To-do, completed" if note.todo_completed else "To-do") if note.is_todo else "Note"
    return Block(
        "listitem",
        f"{mark}{note.title}",
        description=kind,
        resource_id="note_row",
        clickable=True,
        handler="joplin.note",
        handler_arg=str(note.id),
        gap=2,
    )


class JoplinApp(PhoneApp):
    key = "joplin"
    title = "Joplin"
    package = "net.cozic.joplin"
    aliases = ("joplin app", "joplin notes")
    launcher_order = 60

    def initial_data(self) -> JoplinData:
        return JoplinData()

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        data: JoplinData = self.data(phone)
        if screen.name == "folder":
            notes = data.in_folder(screen.arg)
            content = [_note_row(n) for n in notes] or [Block("text", "No notes in here.")]
            return AppView(screen.arg, content)
        if screen.name == "note":
            return self._note_view(data, int(screen.arg))
        rows = [Block("heading", "Notebooks", resource_id="notebooks")]
        for folder in data.folders():
            count = len(data.in_folder(folder))
            rows.append(self.row(f"{folder} ({count})", "folder", folder, resource_id="folder"))
        return AppView("Joplin", rows)

    def _note_view(self, data: JoplinData, note_id: int) -> AppView:
        note = data.get(note_id)
        if note is None:
            return AppView("Note", [Block("text", "This note was deleted.")])
        content = [Block("heading", note.title, resource_id="note_title")]
        if note.is_todo:
            content.append(
                Block(
                    "checkbox",
                    "To-do completed" if note.todo_completed else "To-do",
                    resource_id="todo_checkbox",
                    clickable=True,
                    checkable=True,
                    checked=note.todo_completed,
                    handler="joplin.toggle_todo",
                    handler_arg=str(note.id),
                    height=40,
                )
            )
        content.append(Block("text", note.body, resource_id="note_body"))
        return AppView(note.folder, content)

    def on_click_folder(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "folder", element.handler_arg)

    def on_click_note(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "note", element.handler_arg)

    def on_click_toggle_todo(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: JoplinData = self.data(phone)
        note_id = int(element.handler_arg)
        data.notes = [
            replace(n, todo_completed=not n.todo_completed) if n.id == note_id else n
            for n in data.notes
        ]
