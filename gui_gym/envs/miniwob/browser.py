"""Finding Chromium and ChromeDriver, and cleaning up after them.

``miniwob`` drives Chrome through Selenium. Selenium's own driver manager downloads a
driver, which fails offline, so we always hand ``miniwob`` explicit binaries (through the
``MINIWOB_CHROME_BINARY``/``MINIWOB_CHROMEDRIVER`` variables it reads): the env's kwargs
first, then those variables, then ``GUI_GYM_CHROME``/``GUI_GYM_CHROMEDRIVER``, then the
usual names on ``PATH`` (Debian's ``chromium`` and ``chromedriver``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
from pathlib import Path

import gymnasium as gym

__all__ = ["BrowserNotFound", "descendants", "find_browser", "kill_tree"]

_CHROME_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
_DRIVER_NAMES = ("chromedriver", "chromium-driver")

INSTALL_HINT = (
    "install them with `apt-get install -y chromium chromium-driver` (Debian/Ubuntu; "
    "`make test` does this when run as root), or point gui-gym at your own binaries with "
    "chrome_binary=/chromedriver= kwargs or the MINIWOB_CHROME_BINARY and MINIWOB_CHROMEDRIVER "
    "environment variables"
)


class BrowserNotFound(gym.error.DependencyNotInstalled):
    """Chromium or ChromeDriver is missing; the message says what to install."""


def _first(candidates: list[str | None]) -> str | None:
    for candidate in candidates:
        if not candidate:
            continue
        path = shutil.which(candidate) if os.sep not in candidate else candidate
        if path and Path(path).is_file() and os.access(path, os.X_OK):
            return path
    return None


def find_browser(
    chrome_binary: str | None = None, chromedriver: str | None = None
) -> tuple[str, str]:
    """Paths of the Chrome/Chromium binary and of a matching ChromeDriver.

    Raises:
        BrowserNotFound: when either is missing (or a given path is not an executable file),
            naming what was tried and how to install them.
    """
    chrome = _first(
        [chrome_binary]
        if chrome_binary
        else [
            os.environ.get("MINIWOB_CHROME_BINARY"),
            os.environ.get("GUI_GYM_CHROME"),
            *_CHROME_NAMES,
        ]
    )
    driver = _first(
        [chromedriver]
        if chromedriver
        else [
            os.environ.get("MINIWOB_CHROMEDRIVER"),
            os.environ.get("GUI_GYM_CHROMEDRIVER"),
            *_DRIVER_NAMES,
        ]
    )
    missing = [
        what
        for what, found, given in (
            ("Chromium", chrome, chrome_binary),
            ("ChromeDriver", driver, chromedriver),
        )
        if found is None
    ]
    if missing:
        tried = []
        if chrome is None:
            tried.append(f"chrome_binary={chrome_binary!r}" if chrome_binary else "chromium")
        if driver is None:
            tried.append(f"chromedriver={chromedriver!r}" if chromedriver else "chromedriver")
        raise BrowserNotFound(
            f"MiniWoB++ needs {' and '.join(missing)}, which were not found "
            f"(looked for {', '.join(tried)}); {INSTALL_HINT}"
        )
    assert chrome is not None and driver is not None
    return chrome, driver


def descendants(pid: int) -> list[int]:
    """Process ids of every descendant of ``pid`` (Linux ``/proc``; empty elsewhere)."""
    out: list[int] = []
    frontier = [pid]
    while frontier:
        current = frontier.pop()
        try:
            text = Path(f"/proc/{current}/task/{current}/children").read_text()
        except OSError:
            continue
        kids = [int(p) for p in text.split()]
        out.extend(kids)
        frontier.extend(kids)
    return out


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and its descendants, ignoring ones already gone."""
    for victim in [*descendants(pid), pid]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(victim, signal.SIGKILL)
