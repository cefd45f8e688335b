"""Finding Chromium and ChromeDriver, and cleaning up after them.

``miniwob`` drives Chrome through Selenium. Selenium's own driver manager downloads a
driver, which fails offline, so we always hand ``miniwob`` explicit binaries (through the
``MINIWOB_CHROME_BINARY``/``MINIWOB_CHROMEDRIVER`` variables it reads): the env's kwargs
first, then those variables, then ``GUI_GYM_CHROME``/``GUI_GYM_CHROMEDRIVER``, then the
usual names on ``PATH`` (Debian's ``chromium`` and ``chromedriver``).

ChromeDriver starts in a process group of its own, which Chromium's processes inherit, and a
watchdog process in that group kills the whole group when the env's process dies, even by
SIGKILL (which runs no cleanup): nothing of the browser outlives the process that owns it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym

__all__ = [
    "BrowserNotFound",
    "adopt_browser_orphans",
    "close_chromium",
    "descendants",
    "find_browser",
    "kill_group",
    "kill_tree",
    "open_chromium",
    "own_process_group",
    "reap_browser_processes",
    "start_watchdog",
]

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


def _children(pid: int) -> list[int]:
    """Direct children of ``pid``: ``/proc`` lists them per thread, so read every thread."""
    out: list[int] = []
    try:
        threads = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for thread in threads:
        try:
            out.extend(int(p) for p in (thread / "children").read_text().split())
        except OSError:
            continue
    return out


def descendants(pid: int) -> list[int]:
    """Process ids of every descendant of ``pid`` (Linux ``/proc``; empty elsewhere)."""
    out: list[int] = []
    frontier = [pid]
    while frontier:
        kids = _children(frontier.pop())
        out.extend(kids)
        frontier.extend(kids)
    return out


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and its descendants, ignoring ones already gone."""
    for victim in [*descendants(pid), pid]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(victim, signal.SIGKILL)


def _proc_state(pid: int) -> tuple[str, str] | None:
    """``(name, state letter)`` of a process, or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    return name, stat[stat.rindex(")") + 2]


_ADOPTING = False


def adopt_browser_orphans() -> None:
    """Make this process the reaper of its orphaned descendants (Linux ``prctl``).

    Chromium daemonises its crash handler and leaves renderer processes to exit after the
    browser; they are re-parented to PID 1, and where PID 1 does not reap (minimal
    containers) they stay as zombies. As a subreaper this process adopts them instead, and
    :func:`reap_browser_processes` collects them. ``GUI_GYM_ADOPT_BROWSER_ORPHANS=0`` turns
    this off.
    """
    global _ADOPTING
    if _ADOPTING or os.environ.get("GUI_GYM_ADOPT_BROWSER_ORPHANS", "1") == "0":
        return
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_child_subreaper = 36
        if libc.prctl(pr_set_child_subreaper, 1, 0, 0, 0) == 0:
            _ADOPTING = True
    except (OSError, AttributeError):
        return


def _is_browser(name: str) -> bool:
    return "chrom" in name or "crashpad" in name


def reap_browser_processes(family: list[int], timeout_s: float = 3.0) -> None:
    """Wait (up to ``timeout_s``) until every pid in ``family`` is gone, reaping the ones
    that became our children, then reap any other exited browser process we adopted."""
    deadline = time.monotonic() + timeout_s
    pending = set(family)
    me = os.getpid()
    while True:
        for pid in list(pending):
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)
            if _proc_state(pid) is None:
                pending.discard(pid)
        for pid in _children(me):
            info = _proc_state(pid)
            if info is not None and info[1] == "Z" and _is_browser(info[0]):
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)
        if not pending or time.monotonic() > deadline:
            return
        time.sleep(0.02)


_LAUNCH_LOCK = threading.Lock()


@contextlib.contextmanager
def own_process_group(chrome: str | None = None, driver: str | None = None) -> Iterator[None]:
    """While active, ChromeDriver services that ``miniwob`` creates start in a process group
    of their own (Chromium inherits it): terminal signals then reach the env's process only,
    and :func:`start_watchdog` can end the whole browser at once (POSIX only). With
    ``chrome`` and ``driver``, ``miniwob`` also gets those binaries (it reads them from
    ``MINIWOB_CHROME_BINARY``/``MINIWOB_CHROMEDRIVER``, set here and restored after).

    One launch at a time in the process: the patch and the two variables are process-wide,
    so a second thread launching a browser waits rather than reading them mid-change (it
    used to set them outside the lock, and a launch could then find them already restored
    and fall back to Selenium Manager, which searches the network for a driver).
    """
    import functools

    keys = ("MINIWOB_CHROME_BINARY", "MINIWOB_CHROMEDRIVER")
    with _LAUNCH_LOCK:
        saved = {k: os.environ.get(k) for k in keys}
        if chrome is not None and driver is not None:
            os.environ.update(dict(zip(keys, (chrome, driver))))
        original = None
        if os.name == "posix":
            from miniwob import selenium_instance

            original = selenium_instance.ChromeService
            selenium_instance.ChromeService = functools.partial(  # type: ignore[misc]
                original, popen_kw={"process_group": 0}
            )
        try:
            yield
        finally:
            if original is not None:
                selenium_instance.ChromeService = original  # type: ignore[misc]
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


# The watchdog: a tiny Python in the browser's process group. It asks the kernel for SIGUSR1
# when its parent thread exits (Linux PR_SET_PDEATHSIG), so it wakes at once, but it acts
# only when its parent *process* is gone (its ppid changes: PDEATHSIG also fires when the
# thread that started it ends, which must not kill a live env's browser); it polls the ppid
# too, for systems without prctl. Then it SIGKILLs the group, itself included.
_WATCHDOG = """
import os, signal, sys, time
pgid, parent = int(sys.argv[1]), int(sys.argv[2])
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGUSR1, lambda *_: None)
try:
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGUSR1, 0, 0, 0)
except Exception:
    pass
while os.getppid() == parent:
    time.sleep(0.5)
os.killpg(pgid, signal.SIGKILL)
"""


def start_watchdog(pgid: int) -> subprocess.Popen[Any] | None:
    """Start the process that kills process group ``pgid`` (the browser) when this process
    dies; None where process groups are not available. Kill the group to end it."""
    if os.name != "posix":
        return None
    return subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _WATCHDOG, str(pgid), str(os.getpid())],
        process_group=pgid,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        close_fds=True,
    )


def kill_group(pgid: int) -> None:
    """SIGKILL every process of group ``pgid`` (ignoring a group already gone)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def open_chromium(width: int = 1280, height: int = 900) -> Any:
    """A Selenium driver for a new headless Chromium (the binaries of :func:`find_browser`,
    the flags ``miniwob`` uses: headless, no GPU, no sandbox) that keeps the page's console
    messages (``driver.get_log("browser")``). Close it with :func:`close_chromium`.

    Raises:
        BrowserNotFound: when Chromium or ChromeDriver is missing.
    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chrome, driver = find_browser()
    adopt_browser_orphans()
    options = webdriver.ChromeOptions()
    for flag in ("headless", "disable-gpu", "no-sandbox", "disable-dev-shm-usage"):
        options.add_argument(flag)
    options.add_argument(f"window-size={width},{height}")
    options.binary_location = chrome
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


def close_chromium(driver: Any) -> None:
    """Quit a driver from :func:`open_chromium` and reap its processes (never raises)."""
    process = getattr(getattr(driver, "service", None), "process", None)
    family = descendants(process.pid) if process is not None else []
    # a dead browser fails to quit in many ways; it is killed below
    with contextlib.suppress(Exception):
        driver.quit()
    if process is not None and process.poll() is None:
        kill_tree(process.pid)
    if process is not None:
        with contextlib.suppress(Exception):
            process.wait(timeout=5)
    reap_browser_processes(family)
