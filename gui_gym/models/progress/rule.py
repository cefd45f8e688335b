"""MilestoneProgress: progress as the fraction of the task's env milestones reached, the
ground truth of ProgRM-Env (Sec. 3.3). No model, no torch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gui_gym.core.task import TaskSuite
from gui_gym.models.progress.protocol import ProgressQuery

__all__ = ["MilestoneProgress"]


class MilestoneProgress:
    """Progress as the fraction of the task's env milestones reached.

    ``Prog = |milestones reached| / K`` with ``K`` the task's milestone count: the even
    progress over milestones that ProgRM takes as ground truth (Sec. 3.3). Needs no model.

    Args:
        totals: ``K`` per task id. A query's own ``milestone_total`` (which the single-env
            wrapper fills from the env's task) takes precedence.

    Raises:
        ValueError: if a total is below 1.
    """

    def __init__(self, totals: Mapping[str, int] | None = None):
        self.totals = dict(totals or {})
        for task_id, total in self.totals.items():
            if int(total) < 1:
                raise ValueError(f"task {task_id!r}: milestone total must be >= 1, got {total!r}")

    @classmethod
    def from_suite(cls, suite: TaskSuite) -> MilestoneProgress:
        """Totals from every task of a suite (``env.unwrapped.suite``)."""
        return cls({task.task_id: len(task.milestones) for task in suite if task.milestones})

    @classmethod
    def from_env_id(cls, env_id: str, **kwargs: Any) -> MilestoneProgress:
        """Totals from the suite of a registered id (made once with ``gym.make``)."""
        import gymnasium as gym

        # the ids are registered already: importing this module ran gui_gym/__init__.py
        env = gym.make(env_id, **kwargs)
        try:
            return cls.from_suite(env.unwrapped.suite)
        finally:
            env.close()

    def predict(self, queries: Sequence[ProgressQuery]) -> list[float]:
        """``min(1, |milestones| / K)`` per query.

        Raises:
            ValueError: for a task whose total is unknown.
        """
        score = self.milestone_progress
        return [score(len(q.milestones), q.milestone_total, q.task_id) for q in queries]

    def milestone_progress(self, reached: int, total: int | None, task_id: str) -> float:
        """Progress from a milestone count alone: ``min(1, reached / K)``.

        ``ProgressRewardWrapper`` calls this directly when a model has it, so the rule-based
        reward costs a division per step rather than a query (see the speed benchmark).

        Args:
            reached: Milestones reached so far.
            total: The task's milestone count if the caller knows it, else None.
            task_id: The task, to look the total up.

        Raises:
            ValueError: for a task whose total is unknown.
        """
        if total or (total := self.totals.get(task_id)):
            return 1.0 if reached >= total else reached / total
        raise ValueError(
            f"MilestoneProgress does not know how many milestones task {task_id!r} has; "
            f"build it with MilestoneProgress.from_suite(...) or from_env_id(...), or pass totals"
        )
