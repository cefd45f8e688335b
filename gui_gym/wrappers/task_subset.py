"""``TaskSubset``: episodes drawn from a chosen list of tasks (a small training set)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

__all__ = ["TaskSubset"]


class TaskSubset(
    gym.Wrapper[dict[str, Any], Any, dict[str, Any], Any], gym.utils.RecordConstructorArgs
):
    """Reset to a task drawn uniformly from ``task_ids`` (seeded like the env).

    ``reset(options={"task": id})`` still runs the task asked for. Libraries that reset envs
    themselves (SB3, vector envs) can then train on a handful of tasks, e.g. the first eight
    WikiHow train tasks, and be evaluated on others.

    Args:
        env: A gui-gym env (its ``unwrapped.task_ids`` or suite must know every id).
        task_ids: The tasks to draw from (at least one).

    Raises:
        ValueError: for an empty list or an id the env's suite does not have.
    """

    def __init__(self, env: gym.Env, task_ids: Sequence[str]):
        task_ids = [str(t) for t in task_ids]
        if not task_ids:
            raise ValueError("task_ids is empty; pass at least one task id")
        suite = getattr(env.unwrapped, "suite", None)
        if suite is not None:
            unknown = [t for t in task_ids if t not in suite]
            if unknown:
                raise ValueError(
                    f"unknown task id(s) {unknown[:5]} for {type(env.unwrapped).__name__}; "
                    f"e.g. {suite.task_ids[:3]}"
                )
        gym.utils.RecordConstructorArgs.__init__(self, task_ids=task_ids)
        gym.Wrapper.__init__(self, env)
        self.task_ids = task_ids
        self._rng = np.random.default_rng()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        options = dict(options or {})
        if options.get("task") is None:
            options["task"] = self.task_ids[int(self._rng.integers(len(self.task_ids)))]
        return self.env.reset(seed=seed, options=options)
