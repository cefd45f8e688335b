"""Atomic writes: the one place gui-gym writes a file or a folder that must never be seen half
written (trajectories' manifests, milestone stores, reports, checkpoints, saved models).

A file is written to a temporary sibling, flushed to disk and renamed over the target; a
folder is built in a temporary sibling and swapped in by renames. Readers see the old
version or the new one, never a mix, and a process killed mid-write leaves the previous
version in place.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "OutputInUseError",
    "atomic_write_bytes",
    "atomic_write_text",
    "lock_output",
    "new_file_mode",
    "recover_folder",
    "replace_folder",
    "write_folder_atomically",
]


def _umask() -> int:
    """The process's umask (read by setting and restoring it: there is no getter)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_file_mode(path: str | Path, *, folder: bool = False) -> int:
    """The permission bits a file (or folder) written at ``path`` should get: those of the one
    it replaces, else what ``open``/``mkdir`` would give under the umask (``0o666``/``0o777``
    less the umask). ``tempfile`` creates its files 0600 and folders 0700, which an atomic
    write would otherwise leave on every result, report and saved model."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return (0o777 if folder else 0o666) & ~_umask()


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same folder, fsync, rename.
    The file keeps the mode of the one it replaces (a new one: ``0o666`` less the umask)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = new_file_mode(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: temp file in the same folder, fsync,
    rename."""
    atomic_write_bytes(path, text.encode("utf-8"))


def write_folder_atomically(path: str | Path, write: Callable[[Path], Any]) -> Path:
    """Build a folder with ``write(tmp_folder)`` beside ``path``, then rename it into place
    (replacing a previous folder), so readers see the old folder or the new one.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    recover_folder(path)
    mode = new_file_mode(path, folder=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        os.chmod(tmp, mode)
        write(tmp)
        replace_folder(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def replace_folder(new: Path, target: Path) -> None:
    """Put the folder ``new`` at ``target``, replacing any folder there, by renames.

    The swap is two renames (``target`` -> ``.NAME.old.*``, then ``new`` -> ``target``); a
    process killed between them leaves no ``target`` but a complete ``.NAME.old.*``, which
    :func:`recover_folder` (called by every writer and reader of such folders) promotes back.
    """
    if not target.exists():
        os.replace(new, target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
    old.rmdir()
    os.replace(target, old)
    try:
        os.replace(new, target)
    except BaseException:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def recover_folder(target: str | Path) -> Path:
    """Finish an interrupted :func:`replace_folder` / :func:`write_folder_atomically` at
    ``target`` and remove its stale temporaries; returns ``target``.

    A kill between the swap's two renames leaves no ``target`` and a complete
    ``.NAME.old.*`` beside it: that (the last complete version) is renamed back. Every other
    ``.NAME.*`` folder beside it is a half-written or superseded temporary (possibly many GB)
    and is removed. Call it only while no other process writes ``target`` (the run's output
    lock, :func:`lock_output`).
    """
    target = Path(target)
    parent = target.parent
    if not parent.is_dir():
        return target
    prefix = f".{target.name}."
    olds = sorted(
        (p for p in parent.iterdir() if p.name.startswith(prefix + "old.") and p.is_dir()),
        key=lambda p: p.stat().st_mtime,
    )
    if not target.exists() and olds:
        os.replace(olds.pop(), target)  # the newest complete version
    for stale in parent.iterdir():
        if stale.name.startswith(prefix) and stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)
    return target


class OutputInUseError(RuntimeError):
    """Another process holds the output's lock (:func:`lock_output`)."""


# path -> (open lock file, depth): a process may take its own lock again (the CLI takes it,
# then the library code it calls).
_HELD: dict[str, list[Any]] = {}


def _lock_file(path: Path) -> Path:
    return path.parent / f".{path.name}.lock"


@contextlib.contextmanager
def lock_output(path: str | Path, what: str | None = None) -> Iterator[Path]:
    """Hold an exclusive lock on the output ``path`` (a file or folder) for the block.

    The lock is ``.NAME.lock`` beside ``path`` (holding the PID), taken without waiting:
    a second process writing the same output gets :class:`OutputInUseError` naming the
    holder's PID. The same process may take it again (re-entrant). The lock file is
    removed on release.
    """
    import fcntl

    path = Path(os.path.abspath(path))
    key = str(path)
    if key in _HELD:
        _HELD[key][1] += 1
        yield from _holding(key, path)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = _lock_file(path)
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
            finally:
                os.close(fd)
            raise OutputInUseError(
                f"{what + ' ' if what else ''}{path} is in use by another gui-gym run "
                f"(PID {holder}); wait for it to finish or choose another output"
            ) from None
        try:  # the holder before us may have removed the file after we opened it: retry
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode("ascii"))
    _HELD[key] = [fd, 1]
    yield from _holding(key, path)


def _holding(key: str, path: Path) -> Iterator[Path]:
    """The block of :func:`lock_output` at one depth of the lock ``key``: yields ``path``,
    then gives up that depth, releasing the lock when it was the last."""
    try:
        yield path
    finally:
        _HELD[key][1] -= 1
        if _HELD[key][1] == 0:
            _release(key)


def _release(key: str) -> None:
    fd = _HELD.pop(key)[0]
    with contextlib.suppress(OSError):
        os.unlink(_lock_file(Path(key)))  # while still locked: no one else holds this inode
    os.close(fd)
