"""UI-S1 semi-online RL: step rewards, discounted returns, dual-level advantages, SOP.

Pure functions over plain numbers (no Gymnasium, no numpy objects in the results), so a
trainer can call them on whatever its rollouts produced and tests can hit them with hand
vectors. The paper is *UI-S1: Advancing GUI Automation via Semi-online Reinforcement
Learning*; equation numbers below are its own.

* :func:`step_reward`: Eq. 8, ``r_t = 0.1 f + 0.4 [f=1] r_type + 0.5 [f r_type = 1] r_acc``;
  :func:`step_reward_code` is the variant in the public code (0.1 format + 0.9 x an action
  score of 1.0 / 0.5 / 0.1).
* :func:`discounted_returns`: Eq. 9, ``R_t = sum_{k=t}^{t_end} gamma^(k-t) r_k`` where the
  sum stops at the first mismatch at or after ``t`` (``t_end``), or, with
  ``truncate="rollout"``, at the end of the rollout (the Table 8 ablation).
* :func:`step_level_advantages` (Eq. 10), :func:`episode_level_advantages` (Eq. 11) and
  :func:`dual_level_advantages` (Eq. 12, ``A = A^E + omega A^S``) over one group: the N
  rollouts of one expert trajectory. Step-level statistics are taken per step index across
  the rollouts that reached that step.
* :func:`passes_dynamic_sampling` / :func:`dynamic_sampling`: keep a group only when the
  standard deviation of its advantages (or of its episode returns) exceeds ``eta`` (0.3).
* :func:`sop_metrics`: Appendix C, PG, TSR and Score = (PG + TSR) / 2.

Indices are 0-based here (the paper counts steps from 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

__all__ = [
    "DEFAULT_ETA",
    "DEFAULT_GAMMA",
    "DEFAULT_OMEGA",
    "STEP_REWARD_WEIGHTS",
    "DualAdvantages",
    "Rollout",
    "SOPMetrics",
    "discounted_returns",
    "dual_level_advantages",
    "dynamic_sampling",
    "episode_level_advantages",
    "episode_return",
    "group_std",
    "passes_dynamic_sampling",
    "sop_metrics",
    "step_level_advantages",
    "step_reward",
    "step_reward_code",
]

STEP_REWARD_WEIGHTS = (0.1, 0.4, 0.5)
"""Weights of format, type and exact match in UI-S1 Eq. 8."""
DEFAULT_GAMMA = 0.5
"""Future-reward discount; UI-S1 Table 9 and the Fig. 6 ablation (best of 0, 0.5, 0.9)."""
DEFAULT_OMEGA = 1.0
"""Weight of the step-level advantage in Eq. 12 (Table 9)."""
DEFAULT_ETA = 0.3
"""Dynamic-sampling threshold on the advantage standard deviation (Table 9)."""

Truncation = Literal["segment", "rollout"]
EpisodeReturn = Literal["sum", "mean", "first"]
T = TypeVar("T")


def _flag(value: bool | float, name: str) -> float:
    number = float(value)
    if number not in (0.0, 1.0):
        raise ValueError(f"{name} must be 0 or 1 (a binary score), got {value!r}")
    return number


def step_reward(
    format_ok: bool | float,
    type_ok: bool | float,
    exact_ok: bool | float,
    *,
    weights: tuple[float, float, float] = STEP_REWARD_WEIGHTS,
) -> float:
    """UI-S1 Eq. 8: ``w_f f + w_t [f=1] r_type + w_a [f r_type = 1] r_acc``.

    With the default weights a well-formed action of the right type and arguments earns 1.0,
    the right type with wrong arguments 0.5, the wrong type 0.1, and a malformed one 0.

    Args:
        format_ok: ``r_format``: the response is well formed (0 or 1).
        type_ok: ``r_type``: the action type matches the expert's (0 or 1).
        exact_ok: ``r_acc``: the whole action matches the expert's (0 or 1).
        weights: ``(w_f, w_t, w_a)``, the paper's ``(0.1, 0.4, 0.5)`` by default.

    Returns:
        The step reward.

    Raises:
        ValueError: when a score is not binary.
    """
    f = _flag(format_ok, "format_ok")
    ty = _flag(type_ok, "type_ok")
    acc = _flag(exact_ok, "exact_ok")
    w_format, w_type, w_exact = weights
    type_term = ty if f == 1.0 else 0.0
    exact_term = acc if f * ty == 1.0 else 0.0
    return w_format * f + w_type * type_term + w_exact * exact_term


def step_reward_code(
    format_ok: bool | float,
    type_ok: bool | float,
    exact_ok: bool | float,
    *,
    format_weight: float = 0.1,
    type_only_score: float = 0.5,
    wrong_type_score: float = 0.1,
) -> float:
    """The step reward of UI-S1's public code: ``0.1 f + 0.9 f * score``.

    ``score`` is 1.0 for the right type and arguments, ``type_only_score`` (0.5) for the right
    type only, and ``wrong_type_score`` (0.1) for a wrong type. A malformed response has no
    action to score, so the action part is gated by the format (our reading).

    Raises:
        ValueError: when a score is not binary.
    """
    f = _flag(format_ok, "format_ok")
    ty = _flag(type_ok, "type_ok")
    acc = _flag(exact_ok, "exact_ok")
    if ty and acc:
        score = 1.0
    elif ty:
        score = type_only_score
    else:
        score = wrong_type_score
    return format_weight * f + (1.0 - format_weight) * f * score


def discounted_returns(
    rewards: Sequence[float],
    matched: Sequence[bool],
    *,
    gamma: float = DEFAULT_GAMMA,
    truncate: Truncation = "segment",
) -> list[float]:
    """UI-S1 Eq. 9: discounted future returns of one rollout.

    ``R_t = sum_{k=t}^{t_end} gamma^(k-t) r_k`` with ``t_end = min(max{k >= t : steps t..k all
    match} + 1, T)``: the sum runs over the unbroken run of matching steps that starts at
    ``t`` and includes the first mismatching (patched) step after it, and never past the last
    step ``T`` of the rollout. A step that itself mismatches gets its own reward only. With
    ``truncate="rollout"`` the sum runs to ``T`` regardless (the ``t_end = T`` row of the
    paper's Table 8).

    Computed backwards in O(T): ``R_t = r_t + gamma R_{t+1}`` when step ``t`` matched (the
    segment goes on), else ``R_t = r_t``.

    Args:
        rewards: ``r_0..r_T`` of the rollout (patched steps included).
        matched: Whether each step's own action matched the expert's.
        gamma: Discount in [0, 1] (0.5 in UI-S1).
        truncate: ``"segment"`` (Eq. 9, default) or ``"rollout"``.

    Returns:
        ``R_0..R_T``.

    Raises:
        ValueError: for lengths that differ, gamma outside [0, 1], or an unknown truncation.
    """
    if len(rewards) != len(matched):
        raise ValueError(f"rewards ({len(rewards)}) and matched ({len(matched)}) differ in length")
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {gamma!r}")
    if truncate not in ("segment", "rollout"):
        raise ValueError(f"truncate must be 'segment' or 'rollout', got {truncate!r}")
    returns = [0.0] * len(rewards)
    following = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        carry = truncate == "rollout" or bool(matched[t])
        returns[t] = float(rewards[t]) + (gamma * following if carry else 0.0)
        following = returns[t]
    return returns


def episode_return(
    rewards: Sequence[float], returns: Sequence[float], how: EpisodeReturn = "sum"
) -> float:
    """``R(tau)`` of Eq. 11, the return an episode-level advantage compares.

    The paper calls it the total trajectory return; the public code pools the per-step
    scores of a rollout. ``"sum"`` (default) is the total of the step rewards; ``"mean"`` their
    average (long and short rollouts weigh alike); ``"first"`` the discounted return from the
    first step, ``R_0``.

    Raises:
        ValueError: for an unknown ``how`` or an empty rollout.
    """
    if not rewards:
        raise ValueError("an episode needs at least one step")
    if how == "sum":
        return float(sum(rewards))
    if how == "mean":
        return float(sum(rewards)) / len(rewards)
    if how == "first":
        return float(returns[0])
    raise ValueError(f"episode return must be 'sum', 'mean' or 'first', got {how!r}")


def group_std(values: Sequence[float]) -> float:
    """Population standard deviation (0.0 for fewer than two values)."""
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / n)


def _standardise(values: Sequence[float], eps: float) -> list[float]:
    n = len(values)
    if n == 0:
        return []
    mean = sum(values) / n
    std = group_std(values)
    return [(v - mean) / (std + eps) for v in values]


def step_level_advantages(
    returns: Sequence[Sequence[float]], *, eps: float = 1e-6
) -> list[list[float]]:
    """UI-S1 Eq. 10: ``A^S(a_t^i) = (R_t^i - mu_t) / sigma_t``.

    ``mu_t`` and ``sigma_t`` are taken over the rollouts of the group that reached step ``t``
    (rollouts end at different steps). A step index only one rollout reached, or where all
    returns agree, gets advantage 0.

    Args:
        returns: ``returns[i][t]`` = ``R_t^i`` of rollout ``i``.
        eps: Added to ``sigma_t``.

    Returns:
        Advantages shaped like ``returns``.
    """
    out = [[0.0] * len(r) for r in returns]
    longest = max((len(r) for r in returns), default=0)
    for t in range(longest):
        members = [i for i, r in enumerate(returns) if len(r) > t]
        normalised = _standardise([float(returns[i][t]) for i in members], eps)
        for i, value in zip(members, normalised):
            out[i][t] = value
    return out


def episode_level_advantages(episode_returns: Sequence[float], *, eps: float = 1e-6) -> list[float]:
    """UI-S1 Eq. 11: ``A^E(tau^i) = (R(tau^i) - mu_tau) / sigma_tau`` over the group."""
    return _standardise([float(v) for v in episode_returns], eps)


@dataclass(frozen=True)
class Rollout:
    """One semi-online rollout of an expert trajectory, as the trainer saw it.

    Attributes:
        rewards: Step rewards ``r_t`` (Eq. 8), patched steps included.
        matched: Whether each step's own action matched the expert's (Eq. 7).
        patched: Whether each step was patched with the expert action (Sec. 3.3).
    """

    rewards: tuple[float, ...]
    matched: tuple[bool, ...]
    patched: tuple[bool, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "rewards", tuple(float(r) for r in self.rewards))
        object.__setattr__(self, "matched", tuple(bool(m) for m in self.matched))
        patched = tuple(bool(p) for p in self.patched) or (False,) * len(self.rewards)
        object.__setattr__(self, "patched", patched)
        if not len(self.rewards) == len(self.matched) == len(self.patched):
            raise ValueError(
                f"rollout fields differ in length: rewards {len(self.rewards)}, "
                f"matched {len(self.matched)}, patched {len(self.patched)}"
            )
        if not self.rewards:
            raise ValueError("a rollout needs at least one step")

    @classmethod
    def from_info(cls, info: dict) -> Rollout:
        """The rollout from a final ``info`` of ``SemiOnlineReplayEnv`` (``info["semi_online"]
        ["rollout"]``)."""
        data = info["semi_online"]["rollout"] if "semi_online" in info else info
        return cls(tuple(data["rewards"]), tuple(data["matched"]), tuple(data["patched"]))


@dataclass(frozen=True)
class DualAdvantages:
    """Everything Eq. 9-12 compute for one group of rollouts.

    Attributes:
        returns: ``R_t^i`` (Eq. 9).
        episode_returns: ``R(tau^i)``.
        episode: ``A^E(tau^i)`` (Eq. 11).
        step: ``A^S(a_t^i)`` (Eq. 10).
        combined: ``A(a_t^i) = A^E(tau^i) + omega A^S(a_t^i)`` (Eq. 12), what each step's
            tokens are weighted by in the clipped objective (Eq. 13).
    """

    returns: list[list[float]]
    episode_returns: list[float]
    episode: list[float]
    step: list[list[float]]
    combined: list[list[float]]

    @property
    def std(self) -> float:
        """Standard deviation of all combined advantages (the dynamic-sampling statistic)."""
        return group_std([a for row in self.combined for a in row])


def dual_level_advantages(
    group: Sequence[Rollout],
    *,
    gamma: float = DEFAULT_GAMMA,
    omega: float = DEFAULT_OMEGA,
    truncate: Truncation = "segment",
    episode_return_how: EpisodeReturn = "sum",
    eps: float = 1e-6,
) -> DualAdvantages:
    """UI-S1 Eq. 9-12 over one group: the rollouts of one expert trajectory.

    Args:
        group: The N rollouts (any lengths).
        gamma: Discount of Eq. 9 (0.5).
        omega: Weight of the step-level advantage in Eq. 12 (1.0).
        truncate: Return truncation, see :func:`discounted_returns`.
        episode_return_how: What ``R(tau)`` is, see :func:`episode_return`.
        eps: Added to standard deviations.

    Returns:
        Returns, both advantage levels and their combination.

    Raises:
        ValueError: for an empty group.
    """
    if not group:
        raise ValueError("a group needs at least one rollout")
    returns = [
        discounted_returns(r.rewards, r.matched, gamma=gamma, truncate=truncate) for r in group
    ]
    totals = [episode_return(r.rewards, ret, episode_return_how) for r, ret in zip(group, returns)]
    episode = episode_level_advantages(totals, eps=eps)
    step = step_level_advantages(returns, eps=eps)
    combined = [[episode[i] + omega * a for a in row] for i, row in enumerate(step)]
    return DualAdvantages(returns, totals, episode, step, combined)


def passes_dynamic_sampling(values: Sequence[float], eta: float = DEFAULT_ETA) -> bool:
    """Whether a group is diverse enough to learn from: ``std(values) > eta``.

    UI-S1 (Sec. 3.4) enforces ``sigma({A(a_t^i)}) > eta`` with eta = 0.3, resampling until it
    holds (DAPO-style dynamic sampling).
    """
    if eta < 0:
        raise ValueError(f"eta must be non-negative, got {eta!r}")
    return group_std(values) > eta


def dynamic_sampling(
    groups: Sequence[Sequence[Rollout]],
    *,
    eta: float = DEFAULT_ETA,
    statistic: Literal["advantage", "return"] = "advantage",
    **advantage_kwargs: float | str,
) -> tuple[list[int], list[int]]:
    """Split groups into those kept and those dropped by dynamic sampling.

    Args:
        groups: Groups of rollouts (one group per expert trajectory).
        eta: Threshold; a group is kept when its statistic's std is strictly above it.
        statistic: ``"advantage"``: std of the group's combined advantages (the paper's
            ``sigma({A})``); ``"return"``: std of its episode returns (the reward-std reading
            of DAPO).
        **advantage_kwargs: Passed to :func:`dual_level_advantages`.

    Returns:
        ``(kept, dropped)``: indices into ``groups``.
    """
    pick: Callable[[Sequence[Rollout]], list[float]]
    if statistic == "advantage":

        def pick(g: Sequence[Rollout]) -> list[float]:
            adv = dual_level_advantages(g, **advantage_kwargs)  # type: ignore[arg-type]
            return [a for row in adv.combined for a in row]

    elif statistic == "return":

        def pick(g: Sequence[Rollout]) -> list[float]:
            return dual_level_advantages(g, **advantage_kwargs).episode_returns  # type: ignore[arg-type]

    else:
        raise ValueError(f"statistic must be 'advantage' or 'return', got {statistic!r}")
    kept: list[int] = []
    dropped: list[int] = []
    for index, group in enumerate(groups):
        (kept if passes_dynamic_sampling(pick(group), eta) else dropped).append(index)
    return kept, dropped


@dataclass(frozen=True)
class SOPMetrics:
    """Semi-Online Performance (UI-S1 Appendix C).

    Attributes:
        pg: Progress, the mean of ``s_i / t_i``.
        tsr: Task success rate, the fraction with ``s_i = t_i``.
        score: ``(pg + tsr) / 2``.
        tasks: ``N``, the number of tasks.
    """

    pg: float
    tsr: float
    score: float
    tasks: int

    def to_dict(self) -> dict[str, float | int]:
        return {"pg": self.pg, "tsr": self.tsr, "score": self.score, "tasks": self.tasks}


def sop_metrics(successful_steps: Sequence[int], total_steps: Sequence[int]) -> SOPMetrics:
    """UI-S1 Appendix C: ``PG = mean(s_i / t_i)``, ``TSR = mean([s_i = t_i])``,
    ``Score = (PG + TSR) / 2``.

    Args:
        successful_steps: ``s_i``: steps matched before the first mismatch of task ``i``.
        total_steps: ``t_i``: steps of task ``i``'s expert trajectory.

    Raises:
        ValueError: for lengths that differ, no tasks, ``t_i < 1`` or ``s_i`` outside
            ``[0, t_i]``.
    """
    if len(successful_steps) != len(total_steps):
        raise ValueError(
            f"successful_steps ({len(successful_steps)}) and total_steps ({len(total_steps)}) "
            "differ in length"
        )
    if not total_steps:
        raise ValueError("SOP needs at least one task")
    progress = 0.0
    complete = 0
    for i, (s, t) in enumerate(zip(successful_steps, total_steps)):
        if t < 1 or not 0 <= s <= t:
            raise ValueError(f"task {i}: need 0 <= s_i <= t_i and t_i >= 1, got s={s}, t={t}")
        progress += s / t
        complete += s == t
    n = len(total_steps)
    pg, tsr = progress / n, complete / n
    return SOPMetrics(pg=pg, tsr=tsr, score=(pg + tsr) / 2, tasks=n)
