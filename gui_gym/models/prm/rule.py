"""The rule-based reference PRM: the task's expert and the env's milestones decide."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gui_gym.core.actions import ActionParseError, parse_action
from gui_gym.core.env import ExpertUnavailable
from gui_gym.models.prm.protocol import (
    check_queries,
)
from gui_gym.rewards.prm import PRMQuery

__all__ = [
    "RulePRM",
]


class RulePRM:
    """The reference judge: the task's expert and the env's milestones decide.

    An action scores ``oracle_score`` when it equals the expert's action in that state
    (canonical action strings), ``milestone_score`` when, tried on a fork of the env, it
    completes the task or reaches a milestone not reached before, and ``other_score``
    otherwise (including actions that do not parse or that the env rejects). In a state
    where the expert has no answer (:class:`~gui_gym.core.env.ExpertUnavailable`: ALFWorld's
    planner at its bound) the probe alone judges. These are the
    same rules that label the training data (:mod:`gui_gym.train.prm_data`), so a
    learned PRM is measured against them.

    Args:
        oracle_score: Score of the expert's action.
        milestone_score: Score of another action that makes env progress.
        other_score: Score of any other action.

    Raises:
        ValueError: when a score is outside [0, 1].
    """

    requires_env = True

    def __init__(
        self, oracle_score: float = 1.0, milestone_score: float = 1.0, other_score: float = 0.0
    ):
        for name, value in (
            ("oracle_score", oracle_score),
            ("milestone_score", milestone_score),
            ("other_score", other_score),
        ):
            if not 0.0 <= float(value) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value!r}")
        self.oracle_score = float(oracle_score)
        self.milestone_score = float(milestone_score)
        self.other_score = float(other_score)
        self.last_reasons: list[str] = []

    def judge(self, query: PRMQuery, env: Any) -> tuple[float, str]:
        """Score one step and say why (``"expert"``, ``"milestone"``, ``"success"``,
        ``"unparsable"``, ``"rejected"`` or ``"no progress"``).

        Raises:
            TypeError: when ``env`` is not a gui-gym env with ``oracle_action`` and ``fork``.
        """
        base = getattr(env, "unwrapped", env)
        if not (hasattr(base, "oracle_action") and hasattr(base, "fork")):
            raise TypeError(
                f"RulePRM needs a gui-gym env (oracle_action() and fork()), got {type(env).__name__}"
            )
        try:
            action = parse_action(query.action)
        except ActionParseError:
            return self.other_score, "unparsable"
        try:
            expert: Any = base.oracle_action()
        except ExpertUnavailable:
            expert = None  # no expert answer from this state: the probe alone judges
        if expert is not None and str(action) == str(expert):
            return self.oracle_score, "expert"
        probe = base.fork()
        before = set(probe.milestones)
        _, _, _, _, info = probe.step(action)
        if not info["action_valid"]:
            return self.other_score, "rejected"
        if info["success"]:
            return self.milestone_score, "success"
        if set(info["milestones"]) - before:
            return self.milestone_score, "milestone"
        return self.other_score, "no progress"

    def score(self, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None) -> np.ndarray:
        """Scores of ``queries``, each judged in its env (state before the action).

        Raises:
            ValueError: when ``envs`` is missing or not aligned with ``queries``.
        """
        queries = check_queries(queries)
        if envs is None:
            raise ValueError(
                "RulePRM judges with the env's expert and milestones: pass envs=[env, ...] "
                "(the env in the state before each action)"
            )
        envs = list(envs)
        if len(envs) != len(queries):
            raise ValueError(f"got {len(envs)} envs for {len(queries)} queries")
        results = [self.judge(q, e) for q, e in zip(queries, envs)]
        self.last_reasons = [reason for _, reason in results]
        return np.array([s for s, _ in results], dtype=np.float64)
