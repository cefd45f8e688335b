"""ADMIRE's milestone memory (Algorithm 1's ``M``) as a JSON file that many writers share.

One file holds every task's milestones with the full history of refinements::

    {"format": "gui-gym/milestones", "version": 1,
     "tasks": {"<task_id>": {"instruction": "...",
                             "versions": [{"version": 1, "kind": "init",
                                           "milestones": ["Open <App>", ...],
                                           "generator": "llm", "created": "...Z",
                                           "meta": {...}},
                                          {"version": 2, "kind": "refine", ...}]}}}

The current milestones of a task are its last version. Milestone strings are stored as they
are given, placeholders such as ``<Name>`` included.

Crash and concurrency safety:

* every write goes to a temporary file in the same folder and is renamed into place
  (:func:`gui_gym.core.trajectory.atomic_write_text`), so a writer killed mid-write leaves the
  previous file intact;
* every read-modify-write holds an inter-process file lock (``filelock``, next to the file
  as ``<name>.lock``; the operating system releases it when a holder dies) and re-reads the
  file under the lock, so concurrent writers never lose each other's versions;
* :meth:`MilestoneStore.commit` takes the version the caller generated from, so a slow
  generator (an LLM call, made outside the lock) cannot overwrite a newer refinement.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gui_gym.core.trajectory import atomic_write_text
from gui_gym.core.untrusted_text import load_json

__all__ = ["MilestoneStore", "MilestoneVersion", "StaleMilestonesError"]

FORMAT = "gui-gym/milestones"
FORMAT_VERSION = 1
_RACY_SECONDS = 1.0  # see MilestoneStore._load
_LOCK_POLL = 0.005  # seconds between attempts on a held lock (filelock polls)


class StaleMilestonesError(RuntimeError):
    """A commit was based on a version that another writer has since replaced."""


@dataclass(frozen=True)
class MilestoneVersion:
    """One version of a task's milestones.

    Attributes:
        version: 1 for the first milestones of a task, then +1 per refinement.
        milestones: The ordered milestone strings.
        kind: ``"init"`` (Eq. 6), ``"refine"`` (Eq. 7) or ``"set"`` (given by hand).
        generator: Name of what produced them.
        created: UTC time of the commit (ISO 8601).
        meta: Free JSON-safe facts (source trajectory, seed, step count, ...).
    """

    version: int
    milestones: tuple[str, ...]
    kind: str
    generator: str = ""
    created: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "kind": self.kind,
            "milestones": list(self.milestones),
            "generator": self.generator,
            "created": self.created,
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> MilestoneVersion:
        try:
            version = data["version"]
            milestones = data["milestones"]
            kind = data["kind"]
        except (KeyError, TypeError) as err:
            raise ValueError(f"{where}: a version record needs {err}") from None
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise ValueError(f"{where}.version must be a positive int, got {version!r}")
        meta = data.get("meta") or {}
        if not isinstance(meta, Mapping):
            raise ValueError(f"{where}.meta must be an object, got {type(meta).__name__}")
        return cls(
            version=version,
            milestones=tuple(_clean_milestones(milestones, f"{where}.milestones")),
            kind=str(kind),
            generator=str(data.get("generator", "")),
            created=str(data.get("created", "")),
            meta=dict(meta),
        )


def _clean_milestones(milestones: Any, where: str = "milestones") -> list[str]:
    if isinstance(milestones, str) or not isinstance(milestones, Sequence):
        raise ValueError(f"{where} must be a list of strings, got {type(milestones).__name__}")
    out = []
    for i, m in enumerate(milestones):
        if not isinstance(m, str) or not m.strip():
            raise ValueError(f"{where}[{i}] must be a non-empty string, got {m!r}")
        out.append(m.strip())
    return out


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class MilestoneStore:
    """Per-task milestones with versioned history in one JSON file, safe for many writers.

    Reads are cheap: the parsed file is cached and re-read only when the file on disk
    changed (another process committed). Writes lock, re-read, change and rename.

    Args:
        path: The JSON file (created on the first commit; its folder too).
        lock_timeout: Seconds to wait for the file lock before raising ``filelock.Timeout``.

    Raises:
        gymnasium.error.DependencyNotInstalled: without the ``filelock`` package.
        ValueError: (on any read) when the file is not a milestone store; it is never
            silently replaced.
    """

    def __init__(self, path: str | Path, lock_timeout: float = 60.0):
        try:
            from filelock import FileLock
        except ImportError as err:
            import gymnasium as gym

            raise gym.error.DependencyNotInstalled(
                f"MilestoneStore needs filelock ({err}); pip install filelock"
            ) from err
        self.path = Path(path)
        self.lock_timeout = float(lock_timeout)
        self._file_lock = FileLock(str(self.path) + ".lock", timeout=self.lock_timeout)
        self._mutex = threading.RLock()
        self._data: dict[str, Any] = {"format": FORMAT, "version": FORMAT_VERSION, "tasks": {}}
        self._stamp: tuple[int, int, int] | None = None

    def __repr__(self) -> str:
        return f"MilestoneStore({str(self.path)!r})"

    # ------------------------------------------------------------------------------ reading

    def _file_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _load(self) -> dict[str, Any]:
        """The file's content, re-parsed only when it changed on disk.

        The stamp (inode, mtime, size) cannot tell two versions apart when a writer replaced
        the file within one tick of the file system's clock and the new file reused an old
        inode and has the same size, so, as git does with "racily clean" index entries, a
        file modified less than :data:`_RACY_SECONDS` ago is re-read every time.
        """
        with self._mutex:
            stamp = self._file_stamp()
            if stamp is None:
                self._data = {"format": FORMAT, "version": FORMAT_VERSION, "tasks": {}}
            elif stamp != self._stamp:
                self._data = self._parse(self._read_bytes())
            racy = stamp is not None and time.time_ns() - stamp[1] < _RACY_SECONDS * 1e9
            self._stamp = None if racy else stamp
            return self._data

    def _read_bytes(self) -> bytes:
        try:
            return self.path.read_bytes()
        except OSError as err:
            raise ValueError(f"{self.path}: cannot read the milestone store ({err})") from None

    def _parse(self, raw: bytes) -> dict[str, Any]:
        try:
            data = load_json(raw)
        except ValueError as err:
            raise ValueError(f"{self.path} is not valid JSON ({err})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"{self.path} is not a milestone store (format != {FORMAT!r})")
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(
                f"{self.path}: unsupported store version {data.get('version')!r} "
                f"(this gui-gym reads {FORMAT_VERSION})"
            )
        tasks = data.get("tasks")
        if not isinstance(tasks, dict):
            raise ValueError(f"{self.path}: 'tasks' must be an object")
        for task_id, entry in tasks.items():
            where = f"{self.path}: tasks[{task_id!r}]"
            if not isinstance(entry, dict) or not isinstance(entry.get("versions"), list):
                raise ValueError(f"{where} needs a 'versions' list")
            for i, record in enumerate(entry["versions"]):
                MilestoneVersion.from_dict(record, f"{where}.versions[{i}]")
            if not isinstance(entry.get("instruction", ""), str):
                raise ValueError(f"{where}.instruction must be a string")
        return data

    def task_ids(self) -> list[str]:
        """Ids of the tasks that have milestones."""
        return sorted(self._load()["tasks"])

    def get(self, task_id: str) -> MilestoneVersion | None:
        """The current milestones of ``task_id``, or None when it has none yet."""
        entry = self._load()["tasks"].get(task_id)
        if not entry or not entry["versions"]:
            return None
        return MilestoneVersion.from_dict(entry["versions"][-1], task_id)

    def milestones(self, task_id: str) -> list[str]:
        """The current milestone strings of ``task_id`` (empty when none)."""
        current = self.get(task_id)
        return list(current.milestones) if current else []

    def version(self, task_id: str) -> int:
        """The current version number of ``task_id`` (0 when it has no milestones)."""
        current = self.get(task_id)
        return current.version if current else 0

    def history(self, task_id: str) -> list[MilestoneVersion]:
        """Every version of ``task_id``'s milestones, oldest first."""
        entry = self._load()["tasks"].get(task_id)
        if not entry:
            return []
        return [
            MilestoneVersion.from_dict(r, f"{task_id}.versions[{i}]")
            for i, r in enumerate(entry["versions"])
        ]

    def instruction(self, task_id: str) -> str:
        """The instruction recorded with ``task_id`` ("" if none)."""
        entry = self._load()["tasks"].get(task_id)
        return str(entry.get("instruction", "")) if entry else ""

    def __contains__(self, task_id: object) -> bool:
        return isinstance(task_id, str) and self.get(task_id) is not None

    def __len__(self) -> int:
        return len(self._load()["tasks"])

    # ------------------------------------------------------------------------------ writing

    def update(
        self,
        task_id: str,
        change: Callable[[MilestoneVersion | None], Sequence[str] | None],
        *,
        kind: str | None = None,
        generator: str = "",
        instruction: str = "",
        meta: Mapping[str, Any] | None = None,
    ) -> MilestoneVersion | None:
        """Atomically read, change and write one task's milestones under the file lock.

        ``change`` gets the current version (None if there is none) and returns the new
        milestone list, or None to leave the store as it is. A list equal to the current one
        adds no version. Use this when computing the change is quick; for slow generators
        compute outside and :meth:`commit` with the version you started from.

        Args:
            task_id: The task.
            change: Current version -> new milestones (or None).
            kind: Recorded kind; None is ``"init"`` for a first version, else ``"refine"``.
            generator: Recorded producer name.
            instruction: The task's instruction, stored with the task.
            meta: JSON-safe facts stored with the version.

        Returns:
            The new version, or None when nothing was written.
        """
        if not isinstance(task_id, str) or not task_id:
            raise ValueError(f"task_id must be a non-empty string, got {task_id!r}")
        with self._mutex, self._file_lock.acquire(poll_interval=_LOCK_POLL):
            self._stamp = None  # re-read under the lock: another process may have written
            data = self._load()
            entry = data["tasks"].get(task_id)
            current = (
                MilestoneVersion.from_dict(entry["versions"][-1], task_id)
                if entry and entry["versions"]
                else None
            )
            proposed = change(current)
            if proposed is None:
                return None
            milestones = _clean_milestones(proposed)
            if not milestones:
                raise ValueError("milestones must not be empty; return None to keep the store")
            if current is not None and tuple(milestones) == current.milestones:
                return None
            record = MilestoneVersion(
                version=(current.version if current else 0) + 1,
                milestones=tuple(milestones),
                kind=kind or ("init" if current is None else "refine"),
                generator=generator,
                created=_now(),
                meta=dict(meta or {}),
            )
            new_data = json.loads(json.dumps(data))  # a private copy: the cache stays valid
            new_entry = new_data["tasks"].setdefault(task_id, {"instruction": "", "versions": []})
            if instruction:
                new_entry["instruction"] = instruction
            new_entry["versions"].append(record.to_dict())
            text = json.dumps(new_data, ensure_ascii=False, indent=1, allow_nan=False)
            atomic_write_text(self.path, text + "\n")
            self._data = new_data
            self._stamp = self._file_stamp()
            return record

    def commit(
        self,
        task_id: str,
        milestones: Sequence[str],
        *,
        expected_version: int | None = None,
        kind: str | None = None,
        generator: str = "",
        instruction: str = "",
        meta: Mapping[str, Any] | None = None,
    ) -> MilestoneVersion | None:
        """Write new milestones for ``task_id`` as its next version.

        Args:
            task_id: The task.
            milestones: The new ordered milestones (non-empty strings).
            expected_version: The version the milestones were generated from (0 for none);
                None skips the check.
            kind, generator, instruction, meta: As in :meth:`update`.

        Returns:
            The new version, or None when ``milestones`` equal the current ones.

        Raises:
            StaleMilestonesError: when the task's current version is not
                ``expected_version`` (someone refined it meanwhile; regenerate and retry).
            ValueError: for an empty list or a non-string milestone.
        """
        new = _clean_milestones(milestones)
        if not new:
            raise ValueError("milestones must not be empty")

        def change(current: MilestoneVersion | None) -> list[str]:
            found = current.version if current else 0
            if expected_version is not None and found != expected_version:
                raise StaleMilestonesError(
                    f"{task_id!r} is at version {found}, not {expected_version}: "
                    "another writer refined it; regenerate from the current version"
                )
            return new

        return self.update(
            task_id, change, kind=kind, generator=generator, instruction=instruction, meta=meta
        )
