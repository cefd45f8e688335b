"""ProRe's reward arithmetic: combining probe votes, mapping verdicts to rewards, judge
accuracy metrics, and the test-time-scaling model of Lemma 1 (exact and simulated).

ProRe (seed 004) judges an episode by probing the environment after the policy ends; with
several probes (parallel or iterative, Sec. 3.5) each probe yields a verdict and the verdicts
are combined by voting. This module holds only the arithmetic: pure functions without any
Gymnasium or model import, so tests can hit them with hand-made vectors.

Lemma 1 and its correction
--------------------------
The proof of Lemma 1 (Appendix B.1) describes the procedure exactly: run the policy up to
``N`` times, stop at the first trial the reward model judges positive and submit it; if no
trial is judged positive, submit the last trial. With policy success rate ``p_a`` and reward
accuracy ``p_c``, a trial is judged positive with probability
``q = p_a p_c + (1 - p_a)(1 - p_c)``.

The paper's closed form, ``(p_a p_c / q) [1 - (1 - q)^N] + p_a (1 - q)^N``, treats the
submitted last trial as an unfiltered draw that succeeds with probability ``p_a``. It is not
unfiltered: it was itself judged negative, so it succeeds with probability
``P(success | negative) = p_a (1 - p_c) / (1 - q)``, and the all-negative event has
probability ``(1 - q)^N``. Hence

    P_final = (p_a p_c / q) [1 - (1 - q)^N] + p_a (1 - p_c) (1 - q)^(N - 1).

At ``N = 1`` (no selection at all) this gives ``p_a``, as it must; the paper's form gives
``p_a p_c + p_a (1 - q)``. Subtracting, the paper's form errs at every ``N`` by exactly

    p_a (1 - p_a) (2 p_c - 1) (1 - q)^(N - 1),

so it is exact only for a coin-flip judge (``p_c = 1/2``) or a sure policy (``p_a`` 0 or
1): at ``p_a = 0.2``, ``N = 1`` it gives 0.36 with a perfect judge and 0.04 with an always
wrong one, where the truth is 0.2. :func:`test_time_scaling_success` implements the corrected form (it agrees with the
Monte Carlo simulator :func:`simulate_test_time_scaling` of the same procedure);
:func:`lemma1_paper_form` keeps the paper's expression for comparison.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "DEFAULT_REWARD_MAP",
    "VERDICTS",
    "VOTE_RULES",
    "JudgeMetrics",
    "SimulationResult",
    "VoteResult",
    "combine_votes",
    "judge_metrics",
    "lemma1_paper_form",
    "positive_rate",
    "redundant_states",
    "select_submitted_trial",
    "simulate_test_time_scaling",
    "test_time_scaling_success",
    "verdict_reward",
]

VERDICTS = ("success", "failure", "invalid")
"""What a judge can conclude. ``invalid`` means it could not conclude (an LLM's output that
stayed unparseable after retries, a crashed component); it abstains in votes."""

VOTE_RULES = ("majority", "any", "all")
"""How per-probe verdicts combine: ``majority`` (ProRe Sec. 3.5; a tie is a failure),
``any`` (success if any valid vote says success), ``all`` (success only if every valid vote
does)."""

DEFAULT_REWARD_MAP: Mapping[str, float] = {"success": 1.0, "failure": 0.0, "invalid": 0.0}
"""Terminal reward per verdict: ProRe's binary outcome reward; no verdict pays nothing."""


# ------------------------------------------------------------------------------------ votes


@dataclass(frozen=True)
class VoteResult:
    """The combined verdict of several probes.

    Attributes:
        verdict: ``success``, ``failure``, or ``invalid`` when no vote was valid.
        successes: Valid votes for success.
        failures: Valid votes for failure.
        abstained: Votes that were ``invalid`` (failed probes, unparseable judgments).
        rule: The rule that combined them.
    """

    verdict: str
    successes: int
    failures: int
    abstained: int
    rule: str

    @property
    def valid_votes(self) -> int:
        """Votes that counted."""
        return self.successes + self.failures


def combine_votes(votes: Sequence[str], rule: str = "majority") -> VoteResult:
    """Combine per-probe verdicts into one (ProRe Sec. 3.5, majority voting).

    ``invalid`` votes abstain: the vote proceeds with the rest. A majority tie counts as a
    failure, because a reward system should not pay for an outcome it could not establish.

    Args:
        votes: One verdict per probe, each in :data:`VERDICTS`.
        rule: One of :data:`VOTE_RULES`.

    Returns:
        The combined :class:`VoteResult`; its verdict is ``invalid`` when no vote was valid.

    Raises:
        ValueError: for an unknown rule or verdict.
    """
    if rule not in VOTE_RULES:
        raise ValueError(f"vote rule must be one of {VOTE_RULES}, got {rule!r}")
    for v in votes:
        if v not in VERDICTS:
            raise ValueError(f"a vote must be one of {VERDICTS}, got {v!r}")
    successes = sum(v == "success" for v in votes)
    failures = sum(v == "failure" for v in votes)
    abstained = len(votes) - successes - failures
    if successes + failures == 0:
        verdict = "invalid"
    elif rule == "majority":
        verdict = "success" if successes > failures else "failure"
    elif rule == "any":
        verdict = "success" if successes > 0 else "failure"
    else:  # all
        verdict = "success" if failures == 0 else "failure"
    return VoteResult(verdict, successes, failures, abstained, rule)


def verdict_reward(verdict: str, reward_map: Mapping[str, float] | None = None) -> float:
    """The terminal reward for a verdict.

    Args:
        verdict: One of :data:`VERDICTS`.
        reward_map: Reward per verdict; missing keys fall back to :data:`DEFAULT_REWARD_MAP`.

    Raises:
        ValueError: for an unknown verdict.
    """
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
    if reward_map is not None and verdict in reward_map:
        return float(reward_map[verdict])
    return float(DEFAULT_REWARD_MAP[verdict])


# ------------------------------------------------------------------------ trace condensing

REDUNDANT_REASONS = ("home", "duplicate", "loop")
"""Why a state is left out of a trace before claims (ProRe Sec. 3.4, "Minimizing Overhead")."""


def redundant_states(
    keys: Sequence[Hashable], home: Sequence[bool], protected: Sequence[bool] | None = None
) -> dict[int, tuple[str, int | None]]:
    """The states of a trace ProRe leaves out before claims (Sec. 3.4): home-screen states,
    consecutive identical states (an action that changed nothing), and the states of a loop
    (the trace comes back to a state it already showed; the states in between and the
    return are a loop). The first and the last state are always kept: the last is the
    outcome.

    Linear time: each state is pushed on and popped off the path of kept states once.

    Args:
        keys: One hashable per state; equal keys mean identical screens.
        home: Whether each state is the home screen (launcher).
        protected: States that must not be dropped as part of a loop (a loop that entered
            text may have changed data the repeated screen does not show; the paper leaves
            such loops to the reasoner's judgment, we keep them). None protects none.

    Returns:
        ``{state index: (reason, the earlier state it repeats or None)}`` for every state
        left out; reasons are in :data:`REDUNDANT_REASONS`.

    Raises:
        ValueError: when the sequences differ in length.
    """
    n = len(keys)
    if len(home) != n or (protected is not None and len(protected) != n):
        raise ValueError(f"{n} state keys, {len(home)} home flags, protected: {protected!r}")
    guard = list(protected) if protected is not None else [False] * n
    dropped: dict[int, tuple[str, int | None]] = {}
    path: list[int] = []  # kept, non-home states in order
    where: dict[Hashable, int] = {}  # key -> position in path
    guarded: list[int] = []  # positions in path of protected states, increasing
    for i in range(n):
        last = i == n - 1
        if home[i] and i > 0 and not last:
            dropped[i] = ("home", None)
            continue
        if path and keys[path[-1]] == keys[i] and not last:
            dropped[i] = ("duplicate", path[-1])
            continue
        back = where.get(keys[i])
        if back is not None and not guard[i] and (not guarded or guarded[-1] <= back):
            anchor = path[back]
            for j in path[back + 1 :]:
                dropped[j] = ("loop", anchor)
                del where[keys[j]]
            del path[back + 1 :]
            if not last:
                dropped[i] = ("loop", anchor)
                continue
        if not home[i]:
            where[keys[i]] = len(path)
            if guard[i]:
                guarded.append(len(path))
            path.append(i)
    return dropped


# ---------------------------------------------------------------------------------- metrics


@dataclass(frozen=True)
class JudgeMetrics:
    """Confusion counts and the usual rates of a binary judge against ground truth.

    Rates with an empty denominator are ``nan`` (never a made-up 0 or 1).
    """

    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def total(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    @property
    def accuracy(self) -> float:
        return _ratio(self.tp + self.tn, self.total)

    @property
    def precision(self) -> float:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float:
        """True-positive rate: judged success among true successes."""
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def specificity(self) -> float:
        """True-negative rate: judged failure among true failures."""
        return _ratio(self.tn, self.tn + self.fp)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        if math.isnan(p) or math.isnan(r) or p + r == 0:
            return math.nan
        return 2 * p * r / (p + r)

    def as_dict(self) -> dict[str, float]:
        """All counts and rates, JSON-ready (``nan`` stays ``nan``)."""
        return {
            "n": self.total,
            "tp": self.tp,
            "fp": self.fp,
            "tn": self.tn,
            "fn": self.fn,
            "accuracy": self.accuracy,
            "precision": self.precision,
            "recall": self.recall,
            "specificity": self.specificity,
            "f1": self.f1,
        }


def _ratio(a: int, b: int) -> float:
    return a / b if b else math.nan


def judge_metrics(predicted: Sequence[bool], actual: Sequence[bool]) -> JudgeMetrics:
    """Confusion counts of judged outcomes against true outcomes (ProRe Table 2 metrics).

    Args:
        predicted: The judge's verdicts (True = success).
        actual: The true task outcomes.

    Raises:
        ValueError: when the sequences differ in length.
    """
    if len(predicted) != len(actual):
        raise ValueError(f"{len(predicted)} predictions for {len(actual)} outcomes")
    tp = fp = tn = fn = 0
    for p, a in zip(predicted, actual):
        if p and a:
            tp += 1
        elif p:
            fp += 1
        elif a:
            fn += 1
        else:
            tn += 1
    return JudgeMetrics(tp, fp, tn, fn)


# ----------------------------------------------------------------------- test-time scaling


def select_submitted_trial(verdicts: Sequence[bool]) -> int:
    """Index of the trial the test-time-scaling procedure submits (ProRe App. B.1): the first
    trial judged positive, else the last one.

    Raises:
        ValueError: for an empty sequence.
    """
    if not verdicts:
        raise ValueError("at least one trial is needed")
    for i, positive in enumerate(verdicts):
        if positive:
            return i
    return len(verdicts) - 1


def _check_probability(name: str, value: float) -> float:
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return value


def _check_trials(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"the trial budget n must be a positive int, got {n!r}")
    return int(n)


def positive_rate(p_a: float, p_c: float, p_c_negative: float | None = None) -> float:
    """``q``, the probability that one trial is judged positive (ProRe App. B.1):
    ``p_a * tpr + (1 - p_a) * (1 - tnr)``; with a symmetric judge ``tpr = tnr = p_c``.

    Args:
        p_a: Policy success rate.
        p_c: Judge accuracy on successful trials (its true-positive rate).
        p_c_negative: Judge accuracy on failed trials (true-negative rate); ``p_c`` if None.
    """
    p_a = _check_probability("p_a", p_a)
    tpr = _check_probability("p_c", p_c)
    tnr = tpr if p_c_negative is None else _check_probability("p_c_negative", p_c_negative)
    return p_a * tpr + (1.0 - p_a) * (1.0 - tnr)


def test_time_scaling_success(
    p_a: float, p_c: float, n: int, p_c_negative: float | None = None
) -> float:
    """Exact success probability of ProRe's test-time-scaling procedure (Lemma 1, corrected).

    The procedure (App. B.1): run the policy up to ``n`` times; stop at the first trial the
    judge calls positive and submit it; if none is positive, submit the last trial. Summing
    over where the first positive falls,

        P = p_a tpr sum_{k=1..n} (1 - q)^(k-1) + p_a (1 - tpr) (1 - q)^(n-1)
          = (p_a tpr / q) [1 - (1 - q)^n] + p_a (1 - tpr) (1 - q)^(n-1),

    with ``q`` from :func:`positive_rate`. The second term is the all-negative case: the
    first ``n - 1`` trials were judged negative and the submitted last one is a success
    the judge called negative. The paper writes ``p_a (1 - q)^n`` there, as if the last
    trial were unfiltered; that disagrees with simulation (see the module docstring and
    :func:`lemma1_paper_form`). With ``tpr = tnr = p_c`` this is the corrected Lemma 1.

    Edge cases need no special rule in this form: when ``q = 0`` (no trial is ever judged
    positive) the geometric sum is ``n`` but ``p_a tpr = 0``, so ``P = p_a (1 - tpr)``;
    when ``q = 1`` the first trial is always submitted and ``P = p_a tpr``.

    Args:
        p_a: Policy success rate per trial.
        p_c: Judge accuracy (true-positive rate when ``p_c_negative`` is given).
        n: Trial budget ``N``.
        p_c_negative: Judge true-negative rate, for an asymmetric judge; ``p_c`` if None.

    Returns:
        The probability that the submitted trial is a success.

    Raises:
        ValueError: for probabilities outside [0, 1] or a budget below 1.
    """
    n = _check_trials(n)
    q = positive_rate(p_a, p_c, p_c_negative)
    tpr = float(p_c)
    miss = 1.0 - q
    # sum_{k<n} miss^k, computed stably for q near 0
    if q == 0.0:
        geometric = float(n)
    elif q < 1.0:
        geometric = -math.expm1(n * math.log1p(-q)) / q
    else:
        geometric = 1.0
    return p_a * tpr * geometric + p_a * (1.0 - tpr) * miss ** (n - 1)


# The name is the issue's; keep pytest from collecting it when a test module imports it.
test_time_scaling_success.__test__ = False  # type: ignore[attr-defined]


def lemma1_paper_form(p_a: float, p_c: float, n: int) -> float:
    """Lemma 1 exactly as printed in ProRe (Sec. 3.1 and App. B.1), kept for comparison.

    ``(p_a p_c / q) [1 - (1 - q)^n] + p_a (1 - q)^n``. It assumes the trial submitted when no
    trial is judged positive succeeds with probability ``p_a``; that trial was judged
    negative, so it succeeds with ``p_a (1 - p_c) / (1 - q)`` instead. The printed form
    therefore exceeds :func:`test_time_scaling_success` by
    ``p_a (1 - p_a) (2 p_c - 1) (1 - q)^(n - 1)`` at every ``n``: it is exact only at
    ``p_c = 1/2`` (or ``p_a`` 0 or 1), and at ``n = 1`` it is not ``p_a`` (0.36 and 0.04 at
    ``p_a = 0.2`` with ``p_c`` 1 and 0). Use :func:`test_time_scaling_success` for
    predictions.

    Raises:
        ValueError: for probabilities outside [0, 1] or a budget below 1.
    """
    n = _check_trials(n)
    q = positive_rate(p_a, p_c)
    if q == 0.0:
        return p_a
    return (p_a * p_c / q) * (1.0 - (1.0 - q) ** n) + p_a * (1.0 - q) ** n


@dataclass(frozen=True)
class SimulationResult:
    """A Monte Carlo estimate with its standard error.

    Attributes:
        mean: Fraction of simulated runs whose submitted trial succeeded.
        stderr: Binomial standard error of ``mean``.
        runs: Number of simulated runs.
        mean_trials: Average number of trials used per run.
    """

    mean: float
    stderr: float
    runs: int
    mean_trials: float


def simulate_test_time_scaling(
    p_a: float,
    p_c: float,
    n: int,
    runs: int = 100_000,
    seed: int | None = 0,
    p_c_negative: float | None = None,
    chunk: int = 250_000,
) -> SimulationResult:
    """Simulate the test-time-scaling procedure of ProRe App. B.1 trial by trial.

    Each run draws up to ``n`` independent trials; a trial succeeds with probability
    ``p_a``, and the judge calls it positive with probability ``tpr`` if it succeeded and
    ``1 - tnr`` if it failed (both drawn from one uniform per trial over the four outcome
    cells). The run submits the first positive trial, else the last; the estimate is the
    fraction of runs whose submitted trial succeeded. Nothing here uses the closed form.

    Args:
        p_a: Policy success rate per trial.
        p_c: Judge accuracy (true-positive rate when ``p_c_negative`` is given).
        n: Trial budget.
        runs: Number of simulated runs (ProRe App. B.2 uses 50,000).
        seed: Seed of the generator (None for fresh entropy).
        p_c_negative: Judge true-negative rate; ``p_c`` if None.
        chunk: Runs simulated per vectorised batch (bounds memory).

    Returns:
        The estimate, its standard error and the mean number of trials used.

    Raises:
        ValueError: for probabilities outside [0, 1], a budget below 1 or ``runs < 1``.
    """
    n = _check_trials(n)
    p_a = _check_probability("p_a", p_a)
    tpr = _check_probability("p_c", p_c)
    tnr = tpr if p_c_negative is None else _check_probability("p_c_negative", p_c_negative)
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs!r}")
    # Cells of one trial, in order: success judged positive, success judged negative,
    # failure judged positive, failure judged negative.
    c1 = p_a * tpr
    c2 = p_a
    c3 = p_a + (1.0 - p_a) * (1.0 - tnr)
    rng = np.random.default_rng(seed)
    successes = 0
    trials_used = 0
    done = 0
    while done < runs:
        size = min(chunk, runs - done)
        u = rng.random((size, n), dtype=np.float32)  # 2^-24 resolution is plenty here
        success = u < c2
        positive = (u < c1) | ((u >= c2) & (u < c3))
        any_positive = positive.any(axis=1)
        first = np.where(any_positive, positive.argmax(axis=1), n - 1)
        successes += int(success[np.arange(size), first].sum())
        trials_used += int((first + 1).sum())
        done += size
    mean = successes / runs
    stderr = math.sqrt(max(mean * (1.0 - mean), 0.0) / runs)
    return SimulationResult(mean, stderr, runs, trials_used / runs)
