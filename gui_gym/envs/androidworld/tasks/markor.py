"""Markor tasks (AndroidWorld ``task_evals/single/markor.py``) and the Markor + SMS composite
(``task_evals/composite/markor_sms.py``).

AndroidWorld checks files under ``/storage/emulated/0/Documents/Markor`` (recursive ``find``,
``cat`` with ``\\r`` removed and stripped, fuzzy matching); here the checks read Markor's
notes. Delete and move templates also require every other starting note to keep its path and
content, so deleting everything does not pass. Starting notes are drawn into the parameters.
"""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, ClassVar

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.files import join, parent
from gui_gym.envs.androidworld.apps.markor import MarkorApp, MarkorData
from gui_gym.envs.androidworld.data import random_file_name, random_phone, random_sentence
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    StateCheck,
    fuzzy_match,
    milestone,
    reach,
    register,
    seek,
    tap,
    type_into,
)
from gui_gym.envs.androidworld.tasks.files import (
    browser_at,
    delete_expert,
    goto_folder,
    listing_order,
    move_named_expert,
    random_stamp,
)
from gui_gym.envs.androidworld.tasks.sms import noise_conversations, sent_ok, sms_send_expert
from gui_gym.envs.androidworld.tasks.sms import write_sms as write_sms_data

__all__ = ["MARKOR_FOLDERS", "note_holds", "open_note", "random_note_name", "write_notes"]

MARKOR_FOLDERS = (
    "Work",
    "Personal",
    "Ideas",
    "Archive",
    "Projects",
    "Journal",
    "Travel",
    "Recipes",
    "Meetings",
    "Drafts",
)
"""Subfolders the move template uses."""

_MARKOR = MarkorApp()


def random_note_name(rng: random.Random) -> str:
    return random_file_name(rng, rng.choice((".md", ".txt")))


def _random_string(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def _noise_notes(
    rng: random.Random,
    low: int,
    high: int,
    avoid: Sequence[str] = (),
    folders: Sequence[str] = ("",),
) -> list[dict[str, str]]:
    """Notes with random names and sentences, spread over ``folders`` ("" is the root)."""
    notes: list[dict[str, str]] = []
    names = set(avoid)
    for _ in range(rng.randint(low, high)):
        name = random_note_name(rng)
        if name in names:
            continue
        names.add(name)
        notes.append(
            {
                "path": join(rng.choice(list(folders)), name),
                "content": random_sentence(rng),
                "modified": random_stamp(rng),
            }
        )
    return notes


def _two_note_names(rng: random.Random) -> tuple[str, str]:
    """Two different random note names (a note's name before and after a rename)."""
    first = random_note_name(rng)
    second = random_note_name(rng)
    while second == first:
        second = random_note_name(rng)
    return first, second


def _two_or_more_notes(rng: random.Random) -> list[dict[str, str]]:
    """2-6 noise notes at the root (redrawn one by one while fewer than two)."""
    notes = _noise_notes(rng, 2, 6)
    while len(notes) < 2:
        notes += _noise_notes(rng, 1, 1, avoid=[n["path"] for n in notes])
    return notes


def write_notes(
    phone: PhoneState, notes: Sequence[dict[str, str]], folders: Sequence[str] = ()
) -> None:
    """Create ``folders`` and ``notes`` (``{"path", "content", "modified"}``) in Markor."""
    data: MarkorData = phone.apps["markor"]
    for f in folders:
        if f not in data.folders:
            data.folders.append(f)
    for n in notes:
        data.add(n["path"], n["content"], n["modified"])


def _intact(phone: PhoneState, notes: Sequence[dict[str, str]], skip: Sequence[str]) -> bool:
    """Every starting note but ``skip`` still has its path and content."""
    present = {(n.path, n.content) for n in phone.apps["markor"].notes}
    return all((n["path"], n["content"]) in present for n in notes if n["path"] not in skip)


def _content_ok(text: str, want: str) -> bool:
    return fuzzy_match(text.replace("\r", "").strip(), want.strip())


def note_holds(phone: PhoneState, name: str, text: str) -> bool:
    """Whether a note named ``name`` (in any folder) holds ``text``."""
    return any(_content_ok(n.content, text) for n in phone.apps["markor"].find(name))


def _note_path(phone: PhoneState, name: str) -> str | None:
    found = phone.apps["markor"].find(name)
    return found[0].path if found else None


# -- expert steps -------------------------------------------------------------------------------


def _editing(phone: PhoneState, path: str, under_dialog: bool = False) -> bool:
    """Whether Markor's editor shows note ``path`` (with no dialog over it, unless
    ``under_dialog``)."""
    top = phone.screen
    return (
        phone.foreground == "markor"
        and top is not None
        and top.name == "edit"
        and top.arg == path
        and (under_dialog or phone.dialog is None)
    )


def open_note(phone: PhoneState, screen: UITree, path: str) -> Action | None:
    """Expert path to the editor of ``path``; None once it is open."""
    if _editing(phone, path):
        return None
    action = goto_folder(phone, screen, _MARKOR, parent(path))
    if action is not None:
        return action
    return seek(screen, "markor.entry", path, listing_order(phone, _MARKOR, parent(path)))


def write_note(phone: PhoneState, screen: UITree, path: str, text: str) -> Action:
    """Expert that replaces the text of note ``path`` with ``text``."""
    action = open_note(phone, screen, path)
    if action is not None:
        return action
    return _on_text_box(screen, ActionType.INPUT, text)


def _on_text_box(screen: UITree, kind: ActionType, text: str | None = None) -> Action:
    """``kind`` on the editor's text box, scrolling up to it when it is out of view."""
    box = screen.find_one(handler="markor.content")
    if box is None:
        return Action(ActionType.SCROLL, direction="up")
    return Action(kind, index=box.index, text=text)


def _name_form_step(
    phone: PhoneState, screen: UITree, form: str, arg: str, name: str, handler: str
) -> Action | None:
    """On Markor's ``form`` screen (``create``/``rename``) for ``arg``: type ``name``, then
    tap ``handler``; GOBACK from that form for another ``arg``; None elsewhere."""
    top = phone.screen
    if phone.foreground != "markor" or top is None or top.name != form:
        return None
    if top.arg != arg or phone.dialog is not None:
        return Action(ActionType.GOBACK)
    action = type_into(screen, "name", name, phone.forms.get("markor", {}))
    if action is not None:
        return action
    return reach(screen, handler=handler)


def create_entry(phone: PhoneState, screen: UITree, folder: str, name: str, handler: str) -> Action:
    """Expert that opens "New file" in ``folder``, types ``name`` and taps ``handler``
    (``markor.create_note`` or ``markor.create_folder``)."""
    action = _name_form_step(phone, screen, "create", folder, name, handler)
    if action is not None:
        return action
    action = goto_folder(phone, screen, _MARKOR, folder)
    if action is not None:
        return action
    return tap(screen, handler="markor.new") or Action(ActionType.GOBACK)


def rename_entry(phone: PhoneState, screen: UITree, path: str, new_name: str) -> Action:
    """Expert that renames ``path`` to ``new_name`` (select, Rename, type, OK)."""
    action = _name_form_step(phone, screen, "rename", path, new_name, "markor.apply_rename")
    if action is not None:
        return action
    data: MarkorData = phone.apps["markor"]
    folder = parent(path)
    at_folder = browser_at(phone, "markor") == folder
    if at_folder and data.selected == [path] and not phone.focus and phone.dialog is None:
        return tap(screen, handler="markor.rename") or Action(ActionType.GOBACK)
    action = goto_folder(phone, screen, _MARKOR, folder)
    if action is not None:
        return action
    return seek(screen, "markor.entry", path, listing_order(phone, _MARKOR, folder), long=True)


def create_note_with(phone: PhoneState, screen: UITree, name: str, text: str) -> Action:
    """Expert that creates note ``name`` at the Markor root holding ``text``."""
    path = _note_path(phone, name)
    if path is None:
        return create_entry(phone, screen, "", name, "markor.create_note")
    return write_note(phone, screen, path, text)


# -- templates ---------------------------------------------------------------------------------


class _MarkorTask(AndroidWorldTask):
    """Writes ``params["notes"]`` (and ``params["folders"]``) into Markor at the start."""

    app = "markor"

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        write_notes(phone, self.params.get("notes", ()), self.params.get("folders", ()))

    def _note_created(self) -> tuple[str, StateCheck]:
        """Milestone: a note named ``params["file_name"]`` exists (in any folder)."""
        name = self.params["file_name"]
        return milestone("note_created", lambda p: bool(p.apps["markor"].find(name)))


@register
class MarkorCreateNote(_MarkorTask):
    """Create a note with a name and text."""

    name = "MarkorCreateNote"
    complexity = 1.6
    template = "Create a new note in Markor named {file_name} with the following text: {text}"

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        file_name = random_note_name(rng)
        return {
            "file_name": file_name,
            "text": random_sentence(rng),
            "notes": _noise_notes(rng, 0, 4, avoid=[file_name]),
        }

    def score(self, phone: PhoneState) -> float:
        return float(note_holds(phone, self.params["file_name"], self.params["text"]))

    def milestone_checks(self):
        return [self.opened_milestone(), self._note_created(), self.done_milestone("text_saved")]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        return create_note_with(phone, screen, self.params["file_name"], self.params["text"])


@register
class MarkorCreateFolder(_MarkorTask):
    """Create a folder."""

    name = "MarkorCreateFolder"
    complexity = 1.0
    template = "Create a new folder in Markor named {folder_name}."

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        moment = datetime(2023, 1, 1) + timedelta(seconds=rng.randrange(287 * 24 * 3600))
        return {
            "folder_name": f"folder_{moment:%Y%m%d_%H%M%S}",
            "folders": sorted(rng.sample(MARKOR_FOLDERS, rng.randint(0, 3))),
            "notes": _noise_notes(rng, 0, 3),
        }

    def score(self, phone: PhoneState) -> float:
        name = self.params["folder_name"]
        return float(any(f.rpartition("/")[2] == name for f in phone.apps["markor"].folders))

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("create_dialog_opened", lambda p: p.screen_name == "markor/create"),
            self.done_milestone("folder_created"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        return create_entry(phone, screen, "", self.params["folder_name"], "markor.create_folder")


class _MarkorDeleteTask(_MarkorTask):
    """Delete ``_targets()`` from the root; every other note must stay."""

    select_all: ClassVar[bool] = False

    def _targets(self, phone: PhoneState) -> list[str]:
        raise NotImplementedError

    def _asked(self, phone: PhoneState) -> bool:
        dialog = phone.dialog
        return dialog is not None and any(
            h == "markor.confirm_delete" for _, h, _a in dialog.buttons
        )

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("delete_confirmation", self._asked),
            self.done_milestone("notes_deleted"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        return delete_expert(
            phone, screen, _MARKOR, self._targets(phone), select_all=self.select_all
        )


@register
class MarkorDeleteNote(_MarkorDeleteTask):
    """Delete one note by name."""

    name = "MarkorDeleteNote"
    complexity = 1.0
    template = "Delete the note in Markor named {file_name}."

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        file_name = random_file_name(rng)
        notes = _noise_notes(rng, 2, 6, avoid=[file_name])
        target = {"path": file_name, "content": random_sentence(rng), "modified": random_stamp(rng)}
        notes.insert(rng.randint(0, len(notes)), target)
        return {"file_name": file_name, "notes": notes}

    def _targets(self, phone: PhoneState) -> list[str]:
        found = phone.apps["markor"].find(self.params["file_name"])
        return [n.path for n in found if n.folder == found[0].folder]

    def score(self, phone: PhoneState) -> float:
        gone = not phone.apps["markor"].find(self.params["file_name"])
        return float(gone and _intact(phone, self.params["notes"], [self.params["file_name"]]))


@register
class MarkorDeleteNewestNote(_MarkorDeleteTask):
    """Delete the most recently modified note (and nothing else)."""

    name = "MarkorDeleteNewestNote"
    complexity = 1.0
    template = "Delete the newest note in Markor."

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        notes = _two_or_more_notes(rng)
        ago = sorted(rng.sample(range(20, 20 * 24 * 60), len(notes)))
        stamps = [
            (datetime(2023, 10, 15, 15, 34) - timedelta(minutes=m)).strftime("%Y-%m-%d %H:%M")
            for m in ago
        ]
        if len(set(stamps)) != len(stamps):  # distinct minutes: one clear newest
            stamps = [
                (datetime(2023, 10, 15, 15, 34) - timedelta(minutes=30 + 97 * i)).strftime(
                    "%Y-%m-%d %H:%M"
                )
                for i in range(len(notes))
            ]
        rng.shuffle(stamps)
        for note, stamp in zip(notes, stamps):
            note["modified"] = stamp
        return {"notes": notes}

    @property
    def _newest(self) -> str:
        return max(self.params["notes"], key=lambda n: n["modified"])["path"]

    def _targets(self, phone: PhoneState) -> list[str]:
        newest = max(self.params["notes"], key=lambda n: n["modified"])
        for n in phone.apps["markor"].notes:  # wherever it is now
            if (n.content, n.modified) == (newest["content"], newest["modified"]):
                return [n.path]
        return []

    def score(self, phone: PhoneState) -> float:
        now = sorted((n.path, n.content, n.modified) for n in phone.apps["markor"].notes)
        want = sorted(
            (n["path"], n["content"], n["modified"])
            for n in self.params["notes"]
            if n["path"] != self._newest
        )
        return float(now == want)


@register
class MarkorDeleteAllNotes(_MarkorDeleteTask):
    """Empty the Markor folder."""

    name = "MarkorDeleteAllNotes"
    complexity = 1.4
    template = "Delete all my notes in Markor."
    select_all = True

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        notes = _two_or_more_notes(rng)
        return {"notes": notes}

    def _targets(self, phone: PhoneState) -> list[str]:
        return listing_order(phone, _MARKOR, "")

    def score(self, phone: PhoneState) -> float:
        data: MarkorData = phone.apps["markor"]
        return float(not data.notes and not data.folders)


_EDITS = {
    "header": "Add to the top of the note {text}",
    "footer": "Add to the bottom of the note {text}",
    "replace": "Replace the text with {text}",
}


@register
class MarkorEditNote(_MarkorTask):
    """Add a header or footer to a note, or replace its text."""

    name = "MarkorEditNote"
    complexity = 1.2
    template = "Edit {file_name} in Markor. {edit}"

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        file_name = f"note_{_random_string(rng, 5)}{rng.choice(('.md', '.txt'))}"
        edit_type = rng.choice(sorted(_EDITS))
        original = random_sentence(rng)
        if edit_type == "replace":
            text = " ".join(random_sentence(rng) for _ in range(3))
        else:
            text = random_sentence(rng)
            while text == original:
                text = random_sentence(rng)
        notes = _noise_notes(rng, 1, 4, avoid=[file_name])
        notes.append({"path": file_name, "content": original, "modified": random_stamp(rng)})
        return {
            "file_name": file_name,
            "text": text,
            "edit_type": edit_type,
            "edit": _EDITS[edit_type].format(text=text),
            "original": original,
            "notes": notes,
        }

    @property
    def _expected(self) -> str:
        p = self.params
        if p["edit_type"] == "header":
            return f"{p['text']}\n{p['original']}"
        if p["edit_type"] == "footer":
            return f"{p['original']}\n{p['text']}"
        return p["text"]

    def score(self, phone: PhoneState) -> float:
        return float(note_holds(phone, self.params["file_name"], self._expected))

    def milestone_checks(self):
        path = self.params["file_name"]
        return [
            self.opened_milestone(),
            milestone("note_opened", lambda p: _editing(p, path)),
            self.done_milestone("note_edited"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        return create_note_with(phone, screen, self.params["file_name"], self._expected)


class _MarkorRewriteTask(_MarkorTask):
    """Change a note's text and rename it (``original_name`` -> ``new_name``)."""

    def _text_ok(self, text: str) -> bool:
        raise NotImplementedError

    @property
    def _new_text(self) -> str:
        raise NotImplementedError

    def score(self, phone: PhoneState) -> float:
        data: MarkorData = phone.apps["markor"]
        if data.find(self.params["original_name"]):
            return 0.0
        return float(any(self._text_ok(n.content) for n in data.find(self.params["new_name"])))

    def _rewritten(self, phone: PhoneState) -> bool:
        data: MarkorData = phone.apps["markor"]
        names = (self.params["original_name"], self.params["new_name"])
        return any(self._text_ok(n.content) for name in names for n in data.find(name))

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("text_changed", self._rewritten),
            self.done_milestone("note_renamed"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        data: MarkorData = phone.apps["markor"]
        for name in (self.params["original_name"], self.params["new_name"]):
            for note in data.find(name):
                if not self._text_ok(note.content):
                    return write_note(phone, screen, note.path, self._new_text)
        old = _note_path(phone, self.params["original_name"])
        if old is None:  # pragma: no cover - the score is then 1 and the oracle says DONE
            return Action(ActionType.GOBACK)
        return rename_entry(phone, screen, old, self.params["new_name"])


@register
class MarkorAddNoteHeader(_MarkorRewriteTask):
    """Put a header and a blank line above a note's text, and rename the note. The text
    must then be exactly header, blank line, original text (trailing newlines aside)."""

    name = "MarkorAddNoteHeader"
    complexity = 1.2
    template = (
        "Update the Markor note '{original_name}' by adding the following text, along with a "
        'new blank line before the existing content: "{header}", and rename it to '
        "'{new_name}'."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        original_name, new_name = _two_note_names(rng)
        original_content = random_sentence(rng)
        notes = _noise_notes(rng, 1, 4, avoid=[original_name, new_name])
        notes.insert(
            rng.randint(0, len(notes)),
            {
                "path": original_name,
                "content": original_content + "\n",
                "modified": random_stamp(rng),
            },
        )
        return {
            "original_name": original_name,
            "header": _random_string(rng, 20),
            "new_name": new_name,
            "original_content": original_content,
            "notes": notes,
        }

    @property
    def _new_text(self) -> str:
        return f"{self.params['header']}\n\n{self.params['original_content']}\n"

    def _text_ok(self, text: str) -> bool:
        return text.replace("\r", "").rstrip("\n") == self._new_text.rstrip("\n")


@register
class MarkorChangeNoteContent(_MarkorRewriteTask):
    """Replace a note's text and rename the note."""

    name = "MarkorChangeNoteContent"
    complexity = 1.2
    template = (
        "Update the content of {original_name} to '{updated_content}' in Markor and change its "
        "name to {new_name}."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        original_name, new_name = _two_note_names(rng)
        notes = _noise_notes(rng, 1, 4, avoid=[original_name, new_name])
        notes.insert(
            rng.randint(0, len(notes)),
            {
                "path": original_name,
                "content": random_sentence(rng),
                "modified": random_stamp(rng),
            },
        )
        return {
            "original_name": original_name,
            "updated_content": _random_string(rng, 20),
            "new_name": new_name,
            "notes": notes,
        }

    @property
    def _new_text(self) -> str:
        return self.params["updated_content"]

    def _text_ok(self, text: str) -> bool:
        return _content_ok(text, self.params["updated_content"])


@register
class MarkorMoveNote(_MarkorTask):
    """Move a note between Markor folders; other notes must stay put."""

    name = "MarkorMoveNote"
    complexity = 1.4
    template = "In Markor, move the note {file_name} from {source_folder} to {destination_folder}."

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        source, destination = rng.sample(MARKOR_FOLDERS, 2)
        file_name = random_note_name(rng)
        notes = _noise_notes(
            rng, 3, 8, avoid=[file_name], folders=("", source, destination, *MARKOR_FOLDERS[:3])
        )
        target = {
            "path": join(source, file_name),
            "content": random_sentence(rng),
            "modified": random_stamp(rng),
        }
        notes.insert(rng.randint(0, len(notes)), target)
        return {
            "file_name": file_name,
            "source_folder": source,
            "destination_folder": destination,
            "folders": list(MARKOR_FOLDERS),
            "notes": notes,
        }

    @property
    def _path(self) -> str:
        return join(self.params["source_folder"], self.params["file_name"])

    def score(self, phone: PhoneState) -> float:
        data: MarkorData = phone.apps["markor"]
        name = self.params["file_name"]
        content = next(n["content"] for n in self.params["notes"] if n["path"] == self._path)
        left = not data.find(name, self.params["source_folder"])
        arrived = any(
            n.content == content for n in data.find(name, self.params["destination_folder"])
        )
        return float(left and arrived and _intact(phone, self.params["notes"], [self._path]))

    def milestone_checks(self):
        source = self.params["source_folder"]

        def picking(p: PhoneState) -> bool:
            return p.screen_name == "markor/move" and p.apps["markor"].moving == [self._path]

        return [
            self.opened_milestone(),
            milestone("source_opened", lambda p: browser_at(p, "markor") == source),
            milestone("picker_opened", picking),
            self.done_milestone("note_moved"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        p = self.params
        return move_named_expert(
            phone, screen, _MARKOR, p["file_name"], p["source_folder"], p["destination_folder"]
        )


@register
class MarkorCreateNoteFromClipboard(_MarkorTask):
    """Create a note and paste the clipboard into it."""

    name = "MarkorCreateNoteFromClipboard"
    complexity = 1.4
    template = (
        "Create a note in Markor named {file_name}. Perform a paste operation in the note and "
        "save the note."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        file_name = random_note_name(rng)
        return {
            "file_name": file_name,
            "file_content": _random_string(rng, 10),
            "notes": _noise_notes(rng, 0, 3, avoid=[file_name]),
        }

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        super().initialize_task(phone, rng)
        phone.system.clipboard = self.params["file_content"]

    def score(self, phone: PhoneState) -> float:
        return float(note_holds(phone, self.params["file_name"], self.params["file_content"]))

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            self._note_created(),
            self.done_milestone("clipboard_pasted"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        content = self.params["file_content"]
        path = _note_path(phone, self.params["file_name"])
        if path is None:
            return create_entry(phone, screen, "", self.params["file_name"], "markor.create_note")
        note = phone.apps["markor"].get(path)
        if phone.system.clipboard != content or note.content:
            return write_note(phone, screen, path, content)  # no clean paste possible: type it
        if phone.dialog is not None and _editing(phone, path, under_dialog=True):
            return tap(screen, handler="markor.paste") or Action(ActionType.GOBACK)
        action = open_note(phone, screen, path)
        if action is not None:
            return action
        return _on_text_box(screen, ActionType.LONG_CLICK)


@register
class MarkorMergeNotes(_MarkorTask):
    """Write three notes' texts, blank-line separated, into a new note. The new note may
    carry Markor's default ``.md``/``.txt`` extension after the requested name."""

    name = "MarkorMergeNotes"
    complexity = 7.8
    template = (
        "Merge the contents of Markor notes {file1_name}, {file2_name} and {file3_name} (in the "
        "same order) into a new Markor note named {new_file_name} and save it. Add a new line "
        "between the content of each note."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        names: list[str] = []
        while len(names) < 3:
            name = random_note_name(rng)
            if name not in names:
                names.append(name)
        contents = [_random_string(rng, 20) for _ in range(3)]
        notes = _noise_notes(rng, 0, 3, avoid=names)
        for name, content in zip(names, contents):
            notes.insert(
                rng.randint(0, len(notes)),
                {"path": name, "content": content, "modified": random_stamp(rng)},
            )
        params: dict[str, Any] = {f"file{i + 1}_name": names[i] for i in range(3)}
        params["new_file_name"] = _random_string(rng, 8)
        params.update({f"file{i + 1}_content": contents[i] for i in range(3)})
        params["notes"] = notes
        return params

    @property
    def _merged(self) -> str:
        p = self.params
        return f"{p['file1_content']}\n\n{p['file2_content']}\n\n{p['file3_content']}\n"

    def _candidates(self, phone: PhoneState) -> list[Any]:
        base = self.params["new_file_name"]
        data: MarkorData = phone.apps["markor"]
        return [n for name in (base, base + ".md", base + ".txt") for n in data.find(name)]

    def score(self, phone: PhoneState) -> float:
        for note in self._candidates(phone):
            text = note.content.replace("\r", "")
            lines = text.strip().split("\n")
            if (
                _content_ok(text, self._merged)
                and len(lines) == 5
                and not lines[1].strip()
                and not lines[3].strip()
            ):
                return 1.0
        return 0.0

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("note_created", lambda p: bool(self._candidates(p))),
            self.done_milestone("notes_merged"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        found = self._candidates(phone)
        if found:
            return write_note(phone, screen, found[0].path, self._merged)
        return create_entry(phone, screen, "", self.params["new_file_name"], "markor.create_note")


@register
class MarkorCreateNoteAndSms(_MarkorTask):
    """Composite: create a note, then text its content; each half is worth 0.5."""

    name = "MarkorCreateNoteAndSms"
    complexity = 1.8
    template = (
        "Create a new note in Markor named {file_name} with the following text: {text}. Share "
        "the entire content of the note with the phone number {number} via SMS using Simple "
        "SMS Messenger"
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        file_name = random_note_name(rng)
        text = random_sentence(rng)
        number = random_phone(rng)
        contacts, messages = noise_conversations(rng, rng.randint(1, 4), avoid=[number])
        return {
            "file_name": file_name,
            "text": text,
            "number": number,
            "notes": _noise_notes(rng, 0, 3, avoid=[file_name]),
            "contacts": contacts,
            "messages": messages,
        }

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        super().initialize_task(phone, rng)
        write_sms_data(phone, self.params["contacts"], self.params["messages"])

    def _note_ok(self, phone: PhoneState) -> bool:
        return note_holds(phone, self.params["file_name"], self.params["text"])

    def _sms_ok(self, phone: PhoneState) -> bool:
        return phone.foreground == "sms" and sent_ok(
            phone, self.params["number"], self.params["text"]
        )

    def score(self, phone: PhoneState) -> float:
        return (float(self._note_ok(phone)) + float(self._sms_ok(phone))) / 2

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("note_saved", self._note_ok),
            milestone("sms_opened", lambda p: "sms" in p.opened),
            milestone("sms_sent", self._sms_ok),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if not self._note_ok(phone):
            return create_note_with(phone, screen, self.params["file_name"], self.params["text"])
        return sms_send_expert(phone, screen, self.params["number"], self.params["text"])
