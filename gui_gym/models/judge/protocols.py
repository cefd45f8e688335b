"""The five component protocols of ProRe's pipeline (seed 004, Fig. 2), plus the raw
ablation judge and any whole-episode judge.

Each component has a model-free implementation (``rule_*`` modules) and an LLM-backed one
(:mod:`gui_gym.models.judge.llm`); :class:`~gui_gym.models.judge.pipeline.ProReJudge`
takes any object that has the method.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from gui_gym.core.env import GuiEnv
from gui_gym.models.judge.session import ProbeSession
from gui_gym.models.judge.types import Claim, FilterDecision, JudgeReport, ProbePlan, Trace, Verdict

__all__ = [
    "ClaimExtractor",
    "ClaimFilter",
    "ClaimJudge",
    "EpisodeJudge",
    "ProbeEvaluator",
    "ProbeReasoner",
    "RawObservationJudge",
]


@runtime_checkable
class ProbeReasoner(Protocol):
    """Schedules probing goals (ProRe Eq. 1 and Eq. 5), each at most 20 words.

    Each probe's goal is a string or a :class:`ProbePlan` (sequential sub-goals and the
    reasoner's expectation, Eq. 1).
    """

    def schedule(self, instruction: str, policy: Trace, n_goals: int) -> Sequence[str | ProbePlan]:
        """``n_goals`` goals for parallel probes of the policy's final state."""
        ...

    def revise(
        self,
        instruction: str,
        policy: Trace,
        previous_goal: str,
        previous_claims: Sequence[Claim],
        expectation: str = "",
    ) -> str | ProbePlan:
        """The next goal of iterative probing (Eq. 5), from the expectation, the previous
        goal and the claims it produced."""
        ...


@runtime_checkable
class ProbeEvaluator(Protocol):
    """Carries a probing goal out through a :class:`ProbeSession` (ProRe Eq. 2)."""

    def probe(self, goal: str, session: ProbeSession) -> None: ...


@runtime_checkable
class ClaimExtractor(Protocol):
    """Summarises a trace into 1 to 4 claims (ProRe Eq. 3, App. E.2)."""

    def extract(self, instruction: str, trace: Trace) -> list[Claim]: ...


@runtime_checkable
class ClaimFilter(Protocol):
    """Decides, per claim, whether its trace supports it (ProRe Sec. 3.4, App. E.3 Stage 1)."""

    def filter(
        self, instruction: str, trace: Trace, claims: Sequence[Claim]
    ) -> list[FilterDecision]: ...


@runtime_checkable
class ClaimJudge(Protocol):
    """Chain-of-claims judgment (ProRe Eq. 4, App. E.3 Stage 2).

    ``evaluator_claims`` is empty for a judgment on the policy's trace alone, and holds
    every probe's claims (sources ``probe <i>``) in a joint judgment. ``expectation`` is the
    reasoner's analysis of what success looks like (Eq. 4's ``Exp``; "" without one).
    """

    def judge(
        self,
        instruction: str,
        policy_claims: Sequence[Claim],
        evaluator_claims: Sequence[Claim],
        policy: Trace,
        expectation: str = "",
    ) -> Verdict: ...


@runtime_checkable
class RawObservationJudge(Protocol):
    """Judges from the traces themselves, without claims: ProRe's ablation "without
    chain-of-claims" (Table 4: the reasoner receives the raw observations of the policy and
    the evaluator agents). ``probes`` is empty for a judgment on the policy's trace alone."""

    def judge_raw(
        self,
        instruction: str,
        policy: Trace,
        probes: Sequence[Trace],
        expectation: str = "",
    ) -> Verdict: ...


@runtime_checkable
class EpisodeJudge(Protocol):
    """Anything that judges a finished episode from its env and policy trace
    (:class:`ProReJudge`; :class:`~gui_gym.agents.BestOfTrialsAgent` accepts any)."""

    def judge_episode(self, env: GuiEnv, policy: Trace) -> JudgeReport: ...
