"""Files tasks (AndroidWorld ``task_evals/single/files.py``), and the expert helpers every
folder-browser app (Files, Markor) shares.

AndroidWorld checks with a recursive ``find`` under ``/storage/emulated/0/<folder>``; here the
checks read the Files app's file list. Both templates also require every other starting file
to stay where it was, so deleting or moving everything does not pass.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.files import (
    EMULATOR_DIRECTORIES,
    STORAGE,
    FilesApp,
    FilesData,
    FolderBrowserApp,
    join,
    parent,
    within,
)
from gui_gym.envs.androidworld.data import random_file_name
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    milestone,
    open_app,
    register,
    seek,
    tap,
)

__all__ = [
    "browser_at",
    "delete_expert",
    "goto_folder",
    "listing_order",
    "move_expert",
    "move_named_expert",
    "random_stamp",
]


# -- expert helpers shared by folder-browser apps ----------------------------------------------


def random_stamp(rng: random.Random, days: int = 40) -> str:
    """A modification time in the ``days`` before the device date (``YYYY-MM-DD HH:MM``)."""
    from datetime import datetime, timedelta

    moment = datetime(2023, 10, 15, 15, 34) - timedelta(minutes=rng.randint(30, days * 24 * 60))
    return moment.strftime("%Y-%m-%d %H:%M")


def browser_at(phone: PhoneState, key: str) -> str | None:
    """The folder app ``key`` shows when it is in front on a browser screen, else None."""
    if phone.foreground != key or phone.screen is None:
        return None
    return FolderBrowserApp.browsed_folder(phone.screen)


def listing_order(phone: PhoneState, app: FolderBrowserApp, folder: str) -> list[str]:
    """The paths ``app`` lists in ``folder``, top to bottom (subfolders first)."""
    subs, items = app.listing(phone.apps[app.key], folder)
    return subs + [i.path for i in items]


def goto_folder(
    phone: PhoneState, screen: UITree, app: FolderBrowserApp, folder: str
) -> Action | None:
    """Expert path to ``app``'s browser showing ``folder`` with nothing selected and no
    dialog or keyboard; None once there."""
    action = open_app(phone, app.key, app.title)
    if action is not None:
        return action
    if phone.dialog is not None or phone.focus:
        return Action(ActionType.GOBACK)
    current = browser_at(phone, app.key)
    if current is None or phone.apps[app.key].selected:
        return Action(ActionType.GOBACK)
    if current == folder:
        return None
    if within(folder, current):
        rest = folder[len(current) + 1 :] if current else folder
        child = join(current, rest.split("/")[0])
        return seek(screen, f"{app.key}.entry", child, listing_order(phone, app, current))
    return Action(ActionType.GOBACK)


def delete_expert(
    phone: PhoneState,
    screen: UITree,
    app: FolderBrowserApp,
    targets: Sequence[str],
    select_all: bool = False,
) -> Action:
    """Expert that selects ``targets`` (existing paths in one folder), taps Delete and
    confirms. With nothing left to delete it gives up (DONE)."""
    if not targets:
        return Action(ActionType.DONE)
    want = set(targets)
    folder = parent(targets[0])
    data = phone.apps[app.key]
    if phone.dialog is not None:
        for _label, handler, arg in phone.dialog.buttons:
            if handler == f"{app.key}.confirm_delete" and set(arg.split("\n")) == want:
                return tap(screen, handler=handler) or Action(ActionType.GOBACK)
        return Action(ActionType.GOBACK)
    chosen = set(data.selected)
    order = listing_order(phone, app, folder)
    if browser_at(phone, app.key) == folder and chosen and not phone.focus:
        if chosen == want:
            return tap(screen, handler=f"{app.key}.delete") or Action(ActionType.GOBACK)
        if chosen < want:
            if select_all and set(order) == want:
                return tap(screen, handler=f"{app.key}.select_all") or Action(ActionType.GOBACK)
            missing = next(t for t in order if t in want and t not in chosen)
            return seek(screen, f"{app.key}.entry", missing, order)
    action = goto_folder(phone, screen, app, folder)
    if action is not None:
        return action
    first = next(t for t in order if t in want)
    return seek(screen, f"{app.key}.entry", first, order, long=True)


def move_expert(
    phone: PhoneState, screen: UITree, app: FolderBrowserApp, path: str, destination: str
) -> Action:
    """Expert that moves ``path`` into ``destination`` with selection + the folder picker."""
    data = phone.apps[app.key]
    if phone.dialog is not None:
        return Action(ActionType.GOBACK)
    top = phone.screen
    if phone.foreground == app.key and top is not None and top.name == "move":
        if data.moving != [path]:
            return Action(ActionType.GOBACK)
        if top.arg == destination:
            return tap(screen, handler=f"{app.key}.move_here") or Action(ActionType.GOBACK)
        if within(destination, top.arg):
            rest = destination[len(top.arg) + 1 :] if top.arg else destination
            child = join(top.arg, rest.split("/")[0])
            subs = sorted((f for f in data.folders if parent(f) == top.arg), key=str.lower)
            return seek(screen, f"{app.key}.pick", child, subs)
        return Action(ActionType.GOBACK)
    source = parent(path)
    if browser_at(phone, app.key) == source and data.selected == [path] and not phone.focus:
        return tap(screen, handler=f"{app.key}.move") or Action(ActionType.GOBACK)
    action = goto_folder(phone, screen, app, source)
    if action is not None:
        return action
    return seek(screen, f"{app.key}.entry", path, listing_order(phone, app, source), long=True)


def move_named_expert(
    phone: PhoneState,
    screen: UITree,
    app: FolderBrowserApp,
    name: str,
    source: str,
    destination: str,
) -> Action:
    """Expert that moves the item ``name`` from ``source`` into ``destination``; an item of
    that name moved somewhere else meanwhile is brought over from there."""
    data = phone.apps[app.key]
    found = data.find(name, source)
    if not found:
        found = [i for i in data.find(name) if not within(i.path, destination)]
    if not found:
        return Action(ActionType.DONE)
    return move_expert(phone, screen, app, found[0].path, destination)


# -- templates -------------------------------------------------------------------------------

_FILES_APP = FilesApp()


def _extension(folder: str) -> str:
    name = EMULATOR_DIRECTORIES[folder][0]
    return name[name.rindex(".") :]


def _noise_files(
    rng: random.Random, folder: str, avoid: set[str], low: int, high: int
) -> list[dict[str, Any]]:
    """Files in ``folder``: mostly the folder's typical names, some random ones."""
    out: list[dict[str, Any]] = []
    names = set(avoid)
    for _ in range(rng.randint(low, high)):
        if rng.random() < 0.85:
            name = rng.choice(EMULATOR_DIRECTORIES[folder])
        else:
            name = random_file_name(rng, _extension(folder))
        if name in names:
            continue
        names.add(name)
        out.append(
            {
                "path": join(folder, name),
                "size_kb": rng.randint(12, 48_000),
                "modified": random_stamp(rng),
            }
        )
    return out


def _write_files(phone: PhoneState, rows: Sequence[dict[str, Any]]) -> None:
    data: FilesData = phone.apps["files"]
    for row in rows:
        data.add(row["path"], row["size_kb"], row["modified"])


def _others_intact(phone: PhoneState, rows: Sequence[dict[str, Any]], skip: str) -> bool:
    present = {(f.path, f.size_kb) for f in phone.apps["files"].files}
    return all((r["path"], r["size_kb"]) in present for r in rows if r["path"] != skip)


class _FilesTask(AndroidWorldTask):
    app = "files"

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        _write_files(phone, self.params["files"])

    def _browsing(self, folder: str):
        return lambda p: browser_at(p, "files") == folder


@register
class FilesDeleteFile(_FilesTask):
    """Delete one file from a storage folder; every other file must stay."""

    name = "FilesDeleteFile"
    complexity = 2.2
    template = (
        "Delete the file {file_name} from the Android filesystem located in the {subfolder} "
        "folder within the " + STORAGE + " storage area."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        subfolder = rng.choice(sorted(EMULATOR_DIRECTORIES))
        file_name = random_file_name(rng, _extension(subfolder))
        target = {
            "path": join(subfolder, file_name),
            "size_kb": rng.randint(12, 48_000),
            "modified": random_stamp(rng),
        }
        rows = _noise_files(rng, subfolder, {file_name}, 3, 14)
        for other in rng.sample(sorted(set(EMULATOR_DIRECTORIES) - {subfolder}), 3):
            rows += _noise_files(rng, other, {file_name}, 1, 4)
        rows.insert(rng.randint(0, len(rows)), target)
        return {"file_name": file_name, "subfolder": subfolder, "files": rows}

    @property
    def _path(self) -> str:
        return join(self.params["subfolder"], self.params["file_name"])

    def _dialog_open(self, phone: PhoneState) -> bool:
        dialog = phone.dialog
        return dialog is not None and any(
            h == "files.confirm_delete" and self._path in a.split("\n")
            for _, h, a in dialog.buttons
        )

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("folder_opened", self._browsing(self.params["subfolder"])),
            milestone("delete_confirmation", self._dialog_open),
            self.done_milestone("file_deleted"),
        ]

    def score(self, phone: PhoneState) -> float:
        data: FilesData = phone.apps["files"]
        gone = not data.find(self.params["file_name"], self.params["subfolder"])
        return float(gone and _others_intact(phone, self.params["files"], self._path))

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        found = phone.apps["files"].find(self.params["file_name"], self.params["subfolder"])
        return delete_expert(phone, screen, _FILES_APP, [found[0].path] if found else [])


@register
class FilesMoveFile(_FilesTask):
    """Move one file between storage folders; every other file must stay."""

    name = "FilesMoveFile"
    complexity = 2.0
    template = (
        "Move the file {file_name} from {source_folder} within the " + STORAGE + " storage "
        "area to the {destination_folder} within the same " + STORAGE + " storage area in the "
        "Android filesystem."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        source, destination = rng.sample(sorted(EMULATOR_DIRECTORIES), 2)
        file_name = random_file_name(rng, _extension(source))
        target = {
            "path": join(source, file_name),
            "size_kb": rng.randint(12, 48_000),
            "modified": random_stamp(rng),
        }
        rows = _noise_files(rng, source, {file_name}, 2, 10)
        rows += _noise_files(rng, destination, {file_name}, 1, 6)
        rows.insert(rng.randint(0, len(rows)), target)
        return {
            "file_name": file_name,
            "source_folder": source,
            "destination_folder": destination,
            "files": rows,
        }

    @property
    def _path(self) -> str:
        return join(self.params["source_folder"], self.params["file_name"])

    def _picking(self, phone: PhoneState) -> bool:
        return phone.screen_name == "files/move" and phone.apps["files"].moving == [self._path]

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("source_opened", self._browsing(self.params["source_folder"])),
            milestone("picker_opened", self._picking),
            self.done_milestone("file_moved"),
        ]

    def score(self, phone: PhoneState) -> float:
        data: FilesData = phone.apps["files"]
        name = self.params["file_name"]
        size = next(r["size_kb"] for r in self.params["files"] if r["path"] == self._path)
        left = not data.find(name, self.params["source_folder"])
        arrived = any(f.size_kb == size for f in data.find(name, self.params["destination_folder"]))
        return float(left and arrived and _others_intact(phone, self.params["files"], self._path))

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        p = self.params
        return move_named_expert(
            phone, screen, _FILES_APP, p["file_name"], p["source_folder"], p["destination_folder"]
        )
