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
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["atomic_write_bytes", "atomic_write_text", "replace_folder", "write_folder_atomically"]


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same folder, fsync, rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
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
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        write(tmp)
        replace_folder(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def replace_folder(new: Path, target: Path) -> None:
    """Put the folder ``new`` at ``target``, replacing any folder there, by renames."""
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
