"""Shared test helpers.

In CI (``CI=true``) a test that would skip because an optional dependency is missing fails
instead, so every part is exercised on every run. Only tests marked ``gpu`` may skip there.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# dtype="auto" means bf16 on a CPU with AMX-BF16/AVX512-BF16 (gui_gym.models.llm.precision):
# the suite computes in fp32 on every machine, so its tolerances do not depend on the CPU it
# runs on; the bf16 tests set GUI_GYM_NATIVE_BF16=1 themselves (tests/test_bf16.py).
os.environ.setdefault("GUI_GYM_NATIVE_BF16", "0")


def unavailable(message: str) -> NoReturn:
    """A dependency the test needs is missing: fail in CI (where it must be there), skip
    elsewhere, saying ``message``."""
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or skip (locally) / fail (in CI) naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        unavailable(f"{module} is missing ({err}); install gui-gym[{extra}]")


def require_browser() -> None:
    """Chromium and ChromeDriver for MiniWoB++ and the viewer's browser tests, or
    :func:`unavailable`."""
    from gui_gym.envs.miniwob.browser import BrowserNotFound, find_browser

    try:
        find_browser()
    except BrowserNotFound as err:
        unavailable(str(err))
