"""ProRe's pipeline (seed 004, Sec. 3): :class:`ProReJudge` probes the final state, extracts
and filters claims, and judges.

ProRe rewards a finished GUI episode in four moves (Fig. 2):

1. a **reasoner** schedules state-probing goals from the task and what the policy did
   (Eq. 1; Eq. 5 for later rounds of iterative probing);
2. an **evaluator** agent carries each goal out on a copy of the final state (Eq. 2),
   through a :class:`~gui_gym.models.judge.session.ProbeSession`;
3. **claims** are extracted from the policy's trace and from each probe trace (Eq. 3),
   and a **claim filter** drops those their trace does not support;
4. a **judge** reasons over the policy's and the evaluator's claims (chain of claims,
   Eq. 4) to a verdict; several probes are combined by voting (Sec. 3.5).

Each move is a protocol of :mod:`gui_gym.models.judge.protocols`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence

from gui_gym.core.env import GuiEnv
from gui_gym.models.judge.llm import components_read_screenshots
from gui_gym.models.judge.protocols import (
    ClaimExtractor,
    ClaimFilter,
    ClaimJudge,
    ProbeEvaluator,
    ProbeReasoner,
    RawObservationJudge,
)
from gui_gym.models.judge.session import ProbeSession
from gui_gym.models.judge.types import (
    AGGREGATIONS,
    MAX_CLAIMS,
    PROBE_MODES,
    Claim,
    ComponentError,
    FilterDecision,
    JudgeReport,
    ProbeBudgetExhausted,
    ProbePlan,
    ProbeRecord,
    Trace,
    Verdict,
    kept_claims,
)
from gui_gym.models.llm.base import ModelUnavailable
from gui_gym.rewards.probing import VOTE_RULES, combine_votes

__all__ = ["ProReJudge"]

logger = logging.getLogger(__name__)


def _describe_error(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


class ProReJudge:
    """ProRe: probe the final state, extract and filter claims, judge (Sec. 3).

    With ``n_probes=0`` it is the trajectory-only judge (LLM-as-a-judge over the policy's
    claims, no probing), the baseline ProRe is compared with.

    Defaults are the paper's; each departure is a named option:

    * ``aggregation=None``: parallel probes are judged jointly (one chain of claims over the
      policy's and every probe's claims), iterative rounds are judged one by one and
      combined by ``vote`` (Sec. 3.5). ``"joint"`` or ``"vote"`` forces one for both modes.
    * ``filter_policy_claims=False``: the claim filter examines the evaluator's claims
      (App. E.3 Stage 1); ``True`` (ours) also filters the policy's claims.
    * the reasoner's expectation (Eq. 1) reaches the judge (Eq. 4) and revision (Eq. 5);
      a probe plan's sub-goals are carried out one after another on one fork (Sec. 3.3).
    * ``raw_judge`` (Table 4's ablation "without chain-of-claims"): no claims; the given
      :class:`RawObservationJudge` judges from the policy's and the probes' traces.

    Args:
        reasoner: Schedules probing goals or plans.
        evaluator: Carries each goal out on a fork.
        claim_extractor: Claims from the policy trace and from each probe trace.
        claim_filter: Drops claims that are not evidence of the policy's outcome.
        judge: Chain-of-claims verdict.
        n_probes: Probes per episode (0: judge the policy's trace alone).
        mode: ``parallel`` or ``iterative`` (see :data:`PROBE_MODES`).
        vote: How per-probe verdicts combine under ``vote`` aggregation (see
            :data:`~gui_gym.rewards.probing.VOTE_RULES`).
        probe_steps: Cap on each probe's step budget. The budget is
            ``max(probe_steps_min, min(probe_steps, policy length))``. ProRe's (Sec. 4.1:
            "no greater than the length of the policy trajectories") is the default,
            ``probe_steps=None, probe_steps_min=1``: the policy's length. Ours, as an option:
            ``probe_steps=15, probe_steps_min=8``, so that a very short policy episode still
            leaves room to look and a long one does not make probing slow. Sub-goals of one
            probe share its budget.
        probe_steps_min: Floor of the budget (at least 1).
        aggregation: ``joint``, ``vote``, or None for the paper's per mode.
        filter_policy_claims: Also filter the policy's claims (ours; the paper filters the
            evaluator's).
        raw_judge: Judge from raw traces instead of claims (the Table 4 ablation); None
            (the paper's method) uses claims and ``judge``.

    Raises:
        ValueError: for a negative ``n_probes``, an unknown mode, vote rule or aggregation,
            or a budget below 1.
        TypeError: when ``raw_judge`` has no ``judge_raw`` method.
    """

    def __init__(
        self,
        reasoner: ProbeReasoner,
        evaluator: ProbeEvaluator,
        claim_extractor: ClaimExtractor,
        claim_filter: ClaimFilter,
        judge: ClaimJudge,
        n_probes: int = 1,
        mode: str = "parallel",
        vote: str = "majority",
        probe_steps: int | None = None,  # ProRe Sec. 4.1: the policy trajectory's length
        probe_steps_min: int = 1,
        aggregation: str | None = None,  # ProRe Sec. 3.5: joint (parallel), vote (iterative)
        filter_policy_claims: bool = False,  # ProRe App. E.3 Stage 1: evaluator claims only
        raw_judge: RawObservationJudge | None = None,
    ):
        if isinstance(n_probes, bool) or not isinstance(n_probes, int) or n_probes < 0:
            raise ValueError(f"n_probes must be an int >= 0, got {n_probes!r}")
        if mode not in PROBE_MODES:
            raise ValueError(f"mode must be one of {PROBE_MODES}, got {mode!r}")
        if vote not in VOTE_RULES:
            raise ValueError(f"vote must be one of {VOTE_RULES}, got {vote!r}")
        if aggregation is not None and aggregation not in AGGREGATIONS:
            raise ValueError(
                f"aggregation must be one of {AGGREGATIONS} or None (the paper's per mode), "
                f"got {aggregation!r}"
            )
        if (probe_steps is not None and probe_steps < 1) or probe_steps_min < 1:
            raise ValueError(
                f"probe_steps and probe_steps_min must be >= 1, got {probe_steps!r}, {probe_steps_min!r}"
            )
        if raw_judge is not None and not callable(getattr(raw_judge, "judge_raw", None)):
            raise TypeError(
                f"raw_judge must have judge_raw(instruction, policy, probes, expectation); "
                f"got {type(raw_judge).__name__}"
            )
        self.reasoner = reasoner
        self.evaluator = evaluator
        self.claim_extractor = claim_extractor
        self.claim_filter = claim_filter
        self.judge = judge
        self.n_probes = n_probes
        self.mode = mode
        self.vote = vote
        self.probe_steps = None if probe_steps is None else int(probe_steps)
        self.probe_steps_min = int(probe_steps_min)
        self.aggregation = aggregation
        self.filter_policy_claims = bool(filter_policy_claims)
        self.raw_judge = raw_judge
        # traces keep screenshots only for a component that may show them (memory: a phone
        # screenshot is megabytes; the scripted components read UI trees)
        self.reads_screenshots = components_read_screenshots(
            [reasoner, evaluator, claim_extractor, claim_filter, judge, raw_judge]
        )

    @property
    def effective_aggregation(self) -> str:
        """``joint`` or ``vote``: the option, or the paper's for the mode."""
        if self.aggregation is not None:
            return self.aggregation
        return "joint" if self.mode == "parallel" else "vote"

    def probe_budget(self, policy: Trace) -> int:
        """Steps each probe may take for this policy trace."""
        cap = len(policy.steps) if self.probe_steps is None else self.probe_steps
        return max(self.probe_steps_min, min(cap, len(policy.steps)))

    # -- one probe ----------------------------------------------------------------------

    def _run_probe(
        self, env: GuiEnv, instruction: str, policy: Trace, plan: ProbePlan, index: int
    ) -> ProbeRecord:
        """Fork, carry the plan's sub-goals out in order, extract and filter claims. Any
        exception fails this probe only."""
        record = ProbeRecord(
            index=index, goal=plan.goal, sub_goals=plan.goals, expectation=plan.expectation
        )
        try:
            fork = env.fork()
            session = ProbeSession(
                fork, plan.goal, self.probe_budget(policy), screenshots=self.reads_screenshots
            )
            record.trace = session.trace
            for sub_goal in plan.goals:
                if len(plan.goals) > 1:
                    session.begin(sub_goal)
                if session.steps_left <= 0:
                    break  # the sub-goals share the probe's budget
                # an evaluator that runs out of steps has simply finished
                with contextlib.suppress(ProbeBudgetExhausted):
                    self.evaluator.probe(sub_goal, session)
            if self.raw_judge is None:
                claims = self.claim_extractor.extract(instruction, session.trace)
                record.claims = [_as_source(c, f"probe {index}") for c in claims[:MAX_CLAIMS]]
                record.decisions = list(
                    self.claim_filter.filter(instruction, session.trace, record.claims)
                )
        except ModelUnavailable:  # an outage is infrastructure, not a verdict
            raise
        except Exception as err:  # a probe's crash fails that probe, never the episode
            record.error = _describe_error(err)
            logger.warning("ProRe probe %d failed: %s", index, record.error)
        return record

    def _judgment(
        self,
        instruction: str,
        policy: Trace,
        policy_kept: list[Claim],
        probes: Sequence[ProbeRecord],
        expectation: str,
    ) -> Verdict:
        """One judgment over the policy and the given probes (none: the policy alone)."""
        if self.raw_judge is not None:
            traces = [p.trace for p in probes if p.trace is not None]
            return self.raw_judge.judge_raw(instruction, policy, traces, expectation=expectation)
        evaluator_claims = [c for p in probes for c in p.kept_claims]
        return self.judge.judge(
            instruction, policy_kept, evaluator_claims, policy, expectation=expectation
        )

    # -- an episode ---------------------------------------------------------------------

    def judge_episode(self, env: GuiEnv, policy: Trace) -> JudgeReport:
        """Judge the episode whose final state ``env`` holds and whose trace is ``policy``.

        ``env`` is only forked, never stepped. Failures of single probes are recorded in
        their :class:`ProbeRecord` and the judgment proceeds with the rest; when no probe
        succeeds, the verdict comes from the policy's claims alone and a note says so.

        Args:
            env: The policy's env (``GuiEnv``, e.g. ``env.unwrapped``) at its final state.
            policy: The policy's trace.

        Returns:
            The :class:`JudgeReport`.

        Raises:
            ModelUnavailable: when a component's model server gave no answer (unreachable,
                timed out, 5xx after its retries): the episode has no verdict, and that is
                infrastructure, never ``invalid`` (which stays for replies that did not
                parse) and never a failure.
        """
        instruction = policy.goal
        mode = self.mode if self.n_probes > 0 else "trajectory"
        report = JudgeReport(verdict="invalid", mode=mode)
        if self.raw_judge is None:
            try:
                report.policy_claims = [
                    _as_source(c, "policy")
                    for c in self.claim_extractor.extract(instruction, policy)[:MAX_CLAIMS]
                ]
                if self.filter_policy_claims:
                    report.policy_decisions = list(
                        self.claim_filter.filter(instruction, policy, report.policy_claims)
                    )
                else:  # App. E.3 Stage 1 examines the evaluator's claims only
                    report.policy_decisions = [
                        FilterDecision(i, True, "policy claims are not filtered")
                        for i in range(len(report.policy_claims))
                    ]
            except ModelUnavailable:  # an outage is infrastructure, not a verdict
                raise
            except Exception as err:  # nothing to judge with; say so rather than guess
                report.notes.append(f"claims about the policy trace failed: {_describe_error(err)}")
                logger.warning("ProRe policy claims failed: %s", report.notes[-1])
                return report
        policy_kept = kept_claims(report.policy_claims, report.policy_decisions)

        if self.n_probes > 0:
            aggregation = self.effective_aggregation
            report.aggregation = aggregation
            self._probe(env, instruction, policy, report)
            if aggregation == "vote":
                self._vote(instruction, policy, policy_kept, report)
                if report.verdict != "invalid":
                    return report
            else:
                usable = [p for p in report.probes if p.error is None]
                failed = [p for p in report.probes if p.error is not None]
                if failed:
                    report.notes.append(
                        f"{len(failed)} of {len(report.probes)} probes failed ("
                        + "; ".join(f"probe {p.index}: {p.error}" for p in failed)
                        + ")"
                        + ("; judged on the rest" if usable else "")
                    )
                if usable:
                    return self._conclude(report, instruction, policy, policy_kept, usable)
            report.notes.append("no probe gave a usable result; judged on the policy trace alone")
        return self._conclude(report, instruction, policy, policy_kept, [])

    def _conclude(
        self,
        report: JudgeReport,
        instruction: str,
        policy: Trace,
        policy_kept: list[Claim],
        probes: Sequence[ProbeRecord],
    ) -> JudgeReport:
        """``report`` with the verdict of one judgment over the policy and ``probes``; a judge
        that fails leaves it ``invalid`` with a note saying why."""
        try:
            final = self._judgment(instruction, policy, policy_kept, probes, report.expectation)
        except ModelUnavailable:  # an outage is infrastructure, not a verdict
            raise
        except Exception as err:
            report.notes.append(f"judge failed: {_describe_error(err)}")
            logger.warning("ProRe judge failed: %s", report.notes[-1])
            return report
        report.final = final
        report.verdict = final.verdict
        return report

    def _vote(
        self, instruction: str, policy: Trace, policy_kept: list[Claim], report: JudgeReport
    ) -> None:
        """One judgment per probe, combined by ``self.vote`` (Sec. 3.5)."""
        for record in report.probes:
            if record.error is not None:
                continue
            try:
                record.verdict = self._judgment(
                    instruction,
                    policy,
                    policy_kept,
                    [record],
                    report.expectation,  # Eq. 4's Exp is Eq. 1's, not a revision's analysis
                )
            except ModelUnavailable:  # an outage is infrastructure, not a verdict
                raise
            except Exception as err:  # recorded as this probe's failure; the vote goes on
                record.error = f"judge failed: {_describe_error(err)}"
                logger.warning("ProRe judge failed on probe %d: %s", record.index, record.error)
        report.vote = combine_votes([p.vote for p in report.probes], self.vote)
        failed = [p for p in report.probes if p.vote == "invalid"]
        if failed:
            report.notes.append(
                f"{len(failed)} of {len(report.probes)} probes gave no vote ("
                + "; ".join(f"probe {p.index}: {p.error or 'no verdict'}" for p in failed)
                + "); the vote proceeded with the rest"
            )
        if report.vote.verdict != "invalid":
            report.verdict = report.vote.verdict
            decisive = [p for p in report.probes if p.vote == report.verdict]
            report.final = decisive[0].verdict if decisive else None

    def _probe(self, env: GuiEnv, instruction: str, policy: Trace, report: JudgeReport) -> None:
        if self.mode == "parallel":
            try:
                plans = [
                    ProbePlan.of(g)
                    for g in self.reasoner.schedule(instruction, policy, self.n_probes)
                ]
            except ModelUnavailable:  # an outage is infrastructure, not a verdict
                raise
            except Exception as err:
                report.notes.append(f"goal scheduling failed: {_describe_error(err)}")
                report.probes = [
                    ProbeRecord(i, "", error="no goal: scheduling failed")
                    for i in range(self.n_probes)
                ]
                return
            plans = (plans + plans[-1:] * self.n_probes)[: self.n_probes] if plans else []
            if not plans:
                report.notes.append("the reasoner scheduled no goal")
                report.probes = [
                    ProbeRecord(i, "", error="no goal scheduled") for i in range(self.n_probes)
                ]
                return
            report.expectation = next((p.expectation for p in plans if p.expectation), "")
            report.goals = [p.goal for p in plans]
            for i, plan in enumerate(plans):
                report.probes.append(self._run_probe(env, instruction, policy, plan, i))
            return
        # iterative (Eq. 5): each round's goal is revised from the expectation, the previous
        # goal and the claims that probe produced
        previous: ProbeRecord | None = None
        for i in range(self.n_probes):
            try:
                if previous is None:
                    scheduled = list(self.reasoner.schedule(instruction, policy, 1))
                    if not scheduled:
                        raise ComponentError("the reasoner scheduled no goal")
                    plan = ProbePlan.of(scheduled[0])
                    if not report.expectation:
                        report.expectation = plan.expectation
                else:
                    plan = ProbePlan.of(
                        self.reasoner.revise(
                            instruction,
                            policy,
                            previous.goal,
                            previous.kept_claims,
                            expectation=report.expectation,
                        )
                    )
            except ModelUnavailable:  # an outage is infrastructure, not a verdict
                raise
            except Exception as err:
                record = ProbeRecord(i, "", error=f"no goal: {_describe_error(err)}")
                report.probes.append(record)
                continue
            report.goals.append(plan.goal)
            record = self._run_probe(env, instruction, policy, plan, i)
            report.probes.append(record)
            if record.error is None:
                previous = record


def _as_source(claim: Claim, source: str) -> Claim:
    if claim.source == source:
        return claim
    return Claim(source, claim.text, claim.steps, claim.reasoning, claim.kind, claim.values)
