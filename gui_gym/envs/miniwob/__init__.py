"""MiniWoB++ in a real headless Chromium (the ``miniwob`` package's own tasks).

The env classes load on first use, so registering the ids (which reads only the task list)
keeps ``import gui_gym`` cheap.
"""

from __future__ import annotations

from typing import Any

from gui_gym.envs.miniwob.catalog import MINIWOB_TASKS, NONDETERMINISTIC_TASKS, env_id

__all__ = [
    "MINIWOB_TASKS",
    "NONDETERMINISTIC_TASKS",
    "REWARD_MODES",
    "MiniWoBEnv",
    "MiniWoBState",
    "MiniWoBTask",
    "env_id",
]

_LAZY = {"REWARD_MODES", "MiniWoBEnv", "MiniWoBState", "MiniWoBTask"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from gui_gym.envs.miniwob import env

        return getattr(env, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
