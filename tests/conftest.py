"""Shared test helpers.

In CI (``CI=true``) a test that would skip because an optional dependency is missing fails
instead, so every part is exercised on every run. Only tests marked ``gpu`` may skip there.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or skip (locally) / fail (in CI) naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        message = f"{module} is missing ({err}); install gui-gym[{extra}]"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
