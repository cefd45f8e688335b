"""AndroidWorld task templates. Every module in this package is imported, which registers
its templates in ``TASKS`` through the ``@register`` decorator."""

from __future__ import annotations

import importlib
import pkgutil

from gui_gym.envs.androidworld.tasks.base import TASKS, AndroidWorldTask, check_answer

__all__ = ["TASKS", "AndroidWorldTask", "check_answer"]

for _module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _module.name != "base":
        importlib.import_module(f"{__name__}.{_module.name}")
