"""ProRe's judge pipeline (seed 004, Sec. 3): traces, claims, verdicts, the component
protocols, the probe session, and :class:`ProReJudge` which runs them.

ProRe rewards a finished GUI episode in four moves (Fig. 2):

1. a **reasoner** schedules state-probing goals from the task and what the policy did
   (Eq. 1; Eq. 5 for later rounds of iterative probing);
2. an **evaluator** agent carries each goal out on a copy of the final state (Eq. 2);
3. **claims** are extracted from the policy's trace and from each probe trace (Eq. 3),
   and a **claim filter** drops those their trace does not support;
4. a **judge** reasons over the policy's and the evaluator's claims (chain of claims,
   Eq. 4) to a verdict; several probes are combined by voting (Sec. 3.5).

Each move is a small protocol here, with an LLM implementation in
:mod:`gui_gym.models.judge_llm` and a model-free one in :mod:`gui_gym.models.judge_scripted`.

The evaluator acts through a :class:`ProbeSession`: a fork of the policy's env
(``env.unwrapped.fork()``) seen only through its screens, driven outside the episode's
bookkeeping (the policy's episode has already ended; a probe is not part of it). The
session never exposes the task, its state or its success check, and the policy's env is
never touched.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from gui_gym.core.actions import Action, ActionParseError, ActionType, describe, parse_action
from gui_gym.core.env import GuiEnv
from gui_gym.core.ui import UITree
from gui_gym.rewards.probing import (
    VERDICTS,
    VOTE_RULES,
    VoteResult,
    combine_votes,
    redundant_states,
)

__all__ = [
    "AGGREGATIONS",
    "PROBE_MODES",
    "Claim",
    "ClaimExtractor",
    "ClaimFilter",
    "ClaimJudge",
    "ClaimRelation",
    "ComponentError",
    "EpisodeJudge",
    "FilterDecision",
    "JudgeReport",
    "PolicyTraceRecorder",
    "ProReJudge",
    "ProbeBudgetExhausted",
    "ProbeEvaluator",
    "ProbePlan",
    "ProbeReasoner",
    "ProbeRecord",
    "ProbeSession",
    "RawObservationJudge",
    "Trace",
    "TraceStep",
    "Verdict",
]

logger = logging.getLogger(__name__)

PROBE_MODES = ("parallel", "iterative")
"""ProRe Sec. 3.5: ``parallel`` probes run on independent forks of the final state with
goals scheduled up front; ``iterative`` probes run one after another, each goal revised from
the previous goal and the claims it produced (Eq. 5)."""

AGGREGATIONS = ("joint", "vote")
"""How several probes give one verdict. ``joint``: one chain-of-claims judgment over the
policy's claims and every probe's claims together (ProRe Sec. 3.5, parallel probing: "based
on the claims from each evaluator agent and the policy agent, the LLM reasoner formulates
the chain-of-claims"). ``vote``: one judgment per probe, combined by a vote (ProRe Sec. 3.5,
iterative probing: "aggregated via majority voting"). ``ProReJudge(aggregation=None)`` takes
the paper's per mode: ``joint`` for parallel, ``vote`` for iterative."""

MAX_SUB_GOALS = 3
"""Sequential sub-goals one probe may carry (ProRe Sec. 3.3 and App. E.1 item 3: a
verification with several key states is decomposed into a sequence of probing goals)."""

MAX_CLAIMS = 4
"""Claims per trace: ProRe's prompts ask for a handful (``{min_claims}-{max_claims}``); the
issue fixes 1 to 4."""


class ComponentError(RuntimeError):
    """A component could not do its job: an LLM whose output stayed unparseable after its
    retries, or a scripted component given input it cannot handle. The pipeline records it
    (a failed probe, or an ``invalid`` verdict) instead of inventing a result."""


class ProbeBudgetExhausted(RuntimeError):
    """Raised by :meth:`ProbeSession.step` once the probe has used its step budget."""


# ------------------------------------------------------------------------------- traces


@dataclass(frozen=True)
class TraceStep:
    """One action of a trace and what the env said about it.

    Attributes:
        action: The action as canonical grammar text (the raw text when it did not parse).
        description: Natural-language description (``info["action_description"]``).
        valid: Whether the env accepted it.
        error: Why it was refused, when it was.
        target: Label of the element it acted on, when it had one.
    """

    action: str
    description: str
    valid: bool
    error: str | None = None
    target: str = ""

    @property
    def parsed(self) -> Action | None:
        """The action as an :class:`Action`, or None when its text does not parse."""
        try:
            return parse_action(self.action)
        except ActionParseError:
            return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "description": self.description,
            "valid": self.valid,
            "error": self.error,
            "target": self.target,
        }


@dataclass
class Trace:
    """What an agent saw and did: the policy's episode, or one probe.

    Screens are numbered as claims cite them: ``screens[0]`` is the first screen, and
    ``screens[i]`` the screen after action ``i`` (``steps[i - 1]``).

    Attributes:
        role: ``policy`` or ``evaluator``.
        goal: The task instruction (policy) or the probing goal (evaluator).
        screens: ``len(steps) + 1`` UI trees.
        steps: The actions, in order.
        answer: The agent's ``ANSWER`` text, if it gave one.
        declared_done: The agent ended its run itself (``DONE`` or ``ANSWER``).
        completion_required: Policy traces only: the benchmark scores an episode the agent
            did not end itself as a failure (AndroidWorld's rule, ``score_unfinished=False``).
        segments: Evaluator traces of a probe with sequential sub-goals: ``(index of the
            first step, sub-goal)`` per sub-goal, in order (empty for a single goal).
    """

    role: str
    goal: str
    screens: list[UITree] = field(default_factory=list)
    steps: list[TraceStep] = field(default_factory=list)
    answer: str | None = None
    declared_done: bool = False
    completion_required: bool = False
    segments: list[tuple[int, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.role not in ("policy", "evaluator"):
            raise ValueError(f"role must be 'policy' or 'evaluator', got {self.role!r}")

    @property
    def last_screen(self) -> UITree | None:
        return self.screens[-1] if self.screens else None

    def step_for_screen(self, screen_index: int) -> TraceStep | None:
        """The action that led to screen ``screen_index`` (None for screen 0)."""
        if 1 <= screen_index <= len(self.steps):
            return self.steps[screen_index - 1]
        return None

    def redundant_screens(self) -> dict[int, tuple[str, int | None]]:
        """Screens left out before claims (ProRe Sec. 3.4): home screens, screens identical
        to the one before, and loops back to an earlier screen, as
        :func:`~gui_gym.rewards.probing.redundant_states` finds them. A loop in which the
        agent typed text is kept (it may have changed data the repeated screen does not
        show; the paper leaves such loops to the reasoner). The first and last screens are
        always kept."""
        typed = [False] + [
            s.valid and s.action.lstrip().upper().startswith("INPUT") for s in self.steps
        ]
        typed += [False] * (len(self.screens) - len(typed))
        return redundant_states(
            [screen.text for screen in self.screens],
            [is_home_screen(screen) for screen in self.screens],
            typed[: len(self.screens)],
        )

    def render(self, max_screen_chars: int = 4000, condense: bool = False) -> str:
        """The trace as text for an LLM: each screen followed by the action taken on it.

        Args:
            max_screen_chars: Longest screen text shown.
            condense: Leave out the screens of :meth:`redundant_screens` (one line says
                which and why); every action stays listed, and screens keep their numbers,
                so claims still cite the full trace.
        """
        lines: list[str] = []
        left_out = self.redundant_screens() if condense else {}
        starts = dict(self.segments)
        for i, screen in enumerate(self.screens):
            if i in starts:
                lines.append(f"=== Sub-goal: {starts[i]} ===")
            if i in left_out:
                reason, earlier = left_out[i]
                what = {
                    "home": "the home screen",
                    "duplicate": f"unchanged, as screen {earlier}",
                    "loop": f"inside a loop back to screen {earlier}",
                }[reason]
                lines.append(f"--- Screen {i} --- (left out: {what})")
            else:
                text = screen.text
                if len(text) > max_screen_chars:
                    text = text[:max_screen_chars] + "\n<!-- screen cut -->"
                lines.append(f"--- Screen {i} ---\n{text}")
            if i < len(self.steps):
                s = self.steps[i]
                status = "" if s.valid else f"  [refused: {s.error}]"
                lines.append(f">>> Action {i + 1}: {s.action} ({s.description}){status}")
        if self.answer is not None:
            lines.append(f">>> Answer given: {self.answer}")
        return "\n".join(lines)

    def to_dict(self, screens: bool = True) -> dict[str, Any]:
        """JSON-ready form; screens as rendered text."""
        out: dict[str, Any] = {
            "role": self.role,
            "goal": self.goal,
            "steps": [s.to_dict() for s in self.steps],
            "answer": self.answer,
            "declared_done": self.declared_done,
        }
        if self.segments:
            out["segments"] = [{"first_step": i, "goal": g} for i, g in self.segments]
        if screens:
            out["screens"] = [t.text for t in self.screens]
        return out


def is_home_screen(screen: UITree) -> bool:
    """Whether ``screen`` is the device's home screen (the launcher)."""
    return screen.name.lower() in ("launcher", "home", "home screen")


def _target_label(action: Action | None, screen: UITree | None) -> str:
    if action is None or screen is None or action.index is None:
        return ""
    if 0 <= action.index < len(screen.elements):
        e = screen.elements[action.index]
        return e.label or e.resource_id
    return ""


class PolicyTraceRecorder:
    """Builds the policy's :class:`Trace` from an env's steps (used by the wrapper and by
    :class:`~gui_gym.agents.BestOfTrialsAgent`). It reads screens and the public info keys
    only (``action``, ``action_description``, ``action_valid``, ``action_error``)."""

    def __init__(self) -> None:
        self.trace: Trace | None = None

    def start(self, env: GuiEnv, instruction: str) -> Trace:
        """Begin a trace at the env's current (first) screen."""
        self.trace = Trace(
            role="policy",
            goal=instruction,
            screens=[env.ui_tree],
            completion_required=not bool(getattr(env, "score_unfinished", True)),
        )
        return self.trace

    def record(self, env: GuiEnv, info: dict[str, Any], terminated: bool) -> None:
        """Append the step just taken (``info`` from ``env.step``)."""
        trace = self.trace
        if trace is None:
            raise RuntimeError("PolicyTraceRecorder.record() before start()")
        action_text = str(info.get("action", ""))
        valid = bool(info.get("action_valid", False))
        step = TraceStep(
            action=action_text,
            description=str(info.get("action_description", "")),
            valid=valid,
            error=info.get("action_error"),
        )
        parsed = step.parsed if valid else None
        step = TraceStep(
            step.action,
            step.description,
            step.valid,
            step.error,
            _target_label(parsed, trace.screens[-1]),
        )
        trace.steps.append(step)
        trace.screens.append(env.ui_tree)
        if parsed is not None and parsed.type is ActionType.ANSWER:
            trace.answer = parsed.text or ""
        trace.declared_done = bool(terminated and parsed is not None and parsed.is_terminal)


# ------------------------------------------------------------------------- probe session


class ProbeSession:
    """The evaluator's handle on one fork of the final state: screens in, actions out.

    It exposes the current :class:`UITree` and a :meth:`step` that acts on the fork and
    records the step in :attr:`trace`; nothing about the task, its state or its success
    check is reachable from here (the scripted evaluator relies on this to see only the UI).

    The fork is driven through the backend hooks every :class:`GuiEnv` implements
    (``_validate``, ``_execute``, ``_screen``) rather than ``step()``: the policy's episode
    has ended, and a probe must not count as episode steps, reach milestones, end the
    episode on success (WikiHow ends episodes when the goal holds) or be scored.
    ``DONE``/``ANSWER`` end the probe and are not sent to the app.

    Args:
        env: A fork (``env.unwrapped.fork()``) of the policy's env at its final state.
        goal: The probing goal this session serves.
        max_steps: Step budget of the probe.
    """

    def __init__(self, env: GuiEnv, goal: str, max_steps: int):
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps!r}")
        self._env = env
        self.max_steps = int(max_steps)
        self.trace = Trace(role="evaluator", goal=goal, screens=[self._read_screen()])
        self.finished = False

    def _read_screen(self) -> UITree:
        return self._env.ui_tree  # apply_action refreshes it after every applied action

    @property
    def goal(self) -> str:
        return self.trace.goal

    def begin(self, sub_goal: str) -> None:
        """Start the next sequential sub-goal of this probe (ProRe Sec. 3.3): the evaluator
        goes on from the current screen with the budget left; an earlier ``DONE`` or
        ``ANSWER`` ended only the earlier sub-goal."""
        self.trace.segments.append((len(self.trace.steps), sub_goal))
        self.finished = False

    @property
    def screen(self) -> UITree:
        """The screen the evaluator sees now."""
        return self.trace.screens[-1]

    @property
    def steps_left(self) -> int:
        return 0 if self.finished else self.max_steps - len(self.trace.steps)

    def step(self, action: str | Action) -> TraceStep:
        """Perform ``action`` on the fork and record it.

        A malformed or impossible action is recorded as refused and changes nothing, as in
        ``GuiEnv.step``. ``DONE()`` and ``ANSWER(text)`` end the probe (the answer is kept in
        ``trace.answer``).

        Raises:
            ProbeBudgetExhausted: when the probe has no steps left or has ended.
        """
        if self.steps_left <= 0:
            raise ProbeBudgetExhausted(f"the probe has used its {self.max_steps} steps")
        screen = self.screen
        env = self._env
        error: str | None = None
        parsed: Action | None = None
        try:
            parsed = parse_action(action)
        except ActionParseError as err:
            error = str(err)
        if parsed is not None:
            error = env.apply_action(parsed)
        if parsed is not None:
            text = str(parsed)
            description = describe(parsed, screen)
        else:
            text = action if isinstance(action, str) else repr(action)
            description = "invalid action"
        record = TraceStep(text, description, error is None, error, _target_label(parsed, screen))
        self.trace.steps.append(record)
        self.trace.screens.append(self._read_screen() if error is None else screen)
        if error is None and parsed is not None and parsed.is_terminal:
            self.finished = True
            self.trace.declared_done = True
            if parsed.type is ActionType.ANSWER:
                self.trace.answer = parsed.text or ""
        return record


# ------------------------------------------------------------------------ probe plans


@dataclass(frozen=True)
class ProbePlan:
    """What one probe is to do: its sequential sub-goals, and the reasoner's expectation.

    ProRe Eq. 1: the reasoner first analyses what the user expects (``Exp``), then writes
    the probing goal conditioned on it; a verification with several key states becomes a
    sequence of goals the evaluator carries out one after another (Sec. 3.3, App. E.1).
    The expectation goes on to the judge (Eq. 4) and to iterative revision (Eq. 5).

    Attributes:
        goals: 1 to :data:`MAX_SUB_GOALS` sub-goals, carried out in order on one fork.
        expectation: The reasoner's analysis of what success looks like ("" if none).
    """

    goals: tuple[str, ...]
    expectation: str = ""

    def __post_init__(self) -> None:
        if not 1 <= len(self.goals) <= MAX_SUB_GOALS or not all(
            isinstance(g, str) and g.strip() for g in self.goals
        ):
            raise ValueError(
                f"a probe plan needs 1 to {MAX_SUB_GOALS} non-empty goals, got {self.goals!r}"
            )

    @property
    def goal(self) -> str:
        """The sub-goals as one line (``"A; then B"``)."""
        return "; then ".join(self.goals)

    @classmethod
    def of(cls, value: str | ProbePlan) -> ProbePlan:
        """A plan from a reasoner's output: a plan, or a single goal string.

        Raises:
            TypeError: for anything else; ValueError: for an empty goal.
        """
        if isinstance(value, ProbePlan):
            return value
        if isinstance(value, str):
            return cls((value,))
        raise TypeError(f"a reasoner must return goal strings or ProbePlans, got {value!r}")


# ------------------------------------------------------------------- claims and verdicts


@dataclass(frozen=True)
class Claim:
    """A short, checkable statement about a trace (ProRe Eq. 3).

    Attributes:
        source: ``policy`` or ``probe <i>`` (0-based probe index).
        text: The claim in words.
        steps: Screen numbers (see :class:`Trace`) that support it.
        reasoning: Why the trace justifies it.
        kind: Rule-based claims only: a machine-readable kind (``shown``, ``absent``,
            ``entered``, ``declared_done``, ...; see :mod:`gui_gym.models.judge_scripted`).
        values: Rule-based claims only: the strings the claim is about.
    """

    source: str
    text: str
    steps: tuple[int, ...] = ()
    reasoning: str = ""
    kind: str = ""
    values: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "source": self.source,
            "claim": self.text,
            "steps": list(self.steps),
            "reasoning": self.reasoning,
        }
        if self.kind:
            out["kind"] = self.kind
            out["values"] = list(self.values)
        return out


@dataclass(frozen=True)
class FilterDecision:
    """Whether a claim survives the claim filter (ProRe Sec. 3.4), and why."""

    claim: int
    keep: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"claim": self.claim, "keep": self.keep, "reason": self.reason}


RELATIONS = ("confirmed", "contradicted", "complementary", "unsupported")
"""How an evaluator claim bears on a policy claim (ProRe App. E.3, Stage 2)."""


@dataclass(frozen=True)
class ClaimRelation:
    """One link of the chain of claims: policy claim ``policy`` and evaluator claim
    ``evaluator`` (None when no evaluator claim addresses it) stand in ``relation``."""

    policy: int
    evaluator: int | None
    relation: str
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "evaluator": self.evaluator,
            "relation": self.relation,
            "note": self.note,
        }


@dataclass(frozen=True)
class Verdict:
    """A judge's conclusion.

    Attributes:
        verdict: ``success``, ``failure``, or ``invalid`` (no conclusion could be reached:
            an LLM's output stayed unparseable after retries, or a component failed).
        reasoning: The judge's analysis.
        relations: The chain of claims it reasoned over, when it reports one.
        raw: The raw model output, for LLM judges.
    """

    verdict: str
    reasoning: str = ""
    relations: tuple[ClaimRelation, ...] = ()
    raw: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "verdict": self.verdict,
            "reasoning": self.reasoning,
            "relations": [r.to_dict() for r in self.relations],
        }
        if self.raw:
            out["raw"] = self.raw
        return out


# ---------------------------------------------------------------------------- protocols


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


# ------------------------------------------------------------------------------ reports


@dataclass
class ProbeRecord:
    """Everything about one probe: its goal, trace, claims, filter decisions and vote."""

    index: int
    goal: str
    trace: Trace | None = None
    error: str | None = None
    sub_goals: tuple[str, ...] = ()
    expectation: str = ""
    claims: list[Claim] = field(default_factory=list)
    decisions: list[FilterDecision] = field(default_factory=list)
    verdict: Verdict | None = None

    @property
    def kept_claims(self) -> list[Claim]:
        keep = {d.claim for d in self.decisions if d.keep}
        return [c for i, c in enumerate(self.claims) if i in keep]

    @property
    def vote(self) -> str:
        """This probe's vote: its verdict, or ``invalid`` when the probe failed."""
        if self.error is not None or self.verdict is None:
            return "invalid"
        return self.verdict.verdict

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "goal": self.goal,
            "sub_goals": list(self.sub_goals or (self.goal,)),
            "expectation": self.expectation,
            "ok": self.error is None,
            "error": self.error,
            "trace": None if self.trace is None else self.trace.to_dict(),
            "claims": [c.to_dict() for c in self.claims],
            "filter": [d.to_dict() for d in self.decisions],
            "verdict": None if self.verdict is None else self.verdict.to_dict(),
            "vote": self.vote if self.verdict is not None or self.error is not None else None,
        }


@dataclass
class JudgeReport:
    """The outcome of judging one episode.

    Attributes:
        verdict: ``success``, ``failure`` or ``invalid``.
        mode: ``parallel``, ``iterative``, or ``trajectory`` (no probing).
        aggregation: ``joint`` or ``vote`` (see :data:`AGGREGATIONS`); None without probes.
        expectation: The reasoner's expectation (Eq. 1's ``Exp``) the judge was given.
        goals: Probing goals, in probe order.
        policy_claims: Claims about the policy's trace.
        policy_decisions: The filter's decisions on them.
        probes: One record per probe.
        vote: How the probes' verdicts combined (None without probes).
        final: The verdict that decided (the single judgment, or the fallback one).
        notes: What went wrong or what the verdict rests on, in words.
    """

    verdict: str
    mode: str
    aggregation: str | None = None
    expectation: str = ""
    goals: list[str] = field(default_factory=list)
    policy_claims: list[Claim] = field(default_factory=list)
    policy_decisions: list[FilterDecision] = field(default_factory=list)
    probes: list[ProbeRecord] = field(default_factory=list)
    vote: VoteResult | None = None
    final: Verdict | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return self.verdict == "success"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``info["judge"]`` is built on it)."""
        return {
            "verdict": self.verdict,
            "mode": self.mode,
            "aggregation": self.aggregation,
            "expectation": self.expectation,
            "goals": list(self.goals),
            "policy_claims": [c.to_dict() for c in self.policy_claims],
            "policy_filter": [d.to_dict() for d in self.policy_decisions],
            "probes": [p.to_dict() for p in self.probes],
            "vote": None
            if self.vote is None
            else {
                "rule": self.vote.rule,
                "successes": self.vote.successes,
                "failures": self.vote.failures,
                "abstained": self.vote.abstained,
                "verdict": self.vote.verdict,
            },
            "final": None if self.final is None else self.final.to_dict(),
            "notes": list(self.notes),
        }


def _kept(claims: Sequence[Claim], decisions: Sequence[FilterDecision]) -> list[Claim]:
    keep = {d.claim for d in decisions if d.keep}
    return [c for i, c in enumerate(claims) if i in keep]


def _describe_error(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


# ---------------------------------------------------------------------------- pipeline


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
            session = ProbeSession(fork, plan.goal, self.probe_budget(policy))
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
        except Exception as err:  # a probe's crash must not end the episode (issue #10)
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
            except Exception as err:  # nothing to judge with; say so rather than guess
                report.notes.append(f"claims about the policy trace failed: {_describe_error(err)}")
                logger.warning("ProRe policy claims failed: %s", report.notes[-1])
                return report
        policy_kept = _kept(report.policy_claims, report.policy_decisions)

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
                    try:
                        final = self._judgment(
                            instruction, policy, policy_kept, usable, report.expectation
                        )
                    except Exception as err:
                        report.notes.append(f"judge failed: {_describe_error(err)}")
                        logger.warning("ProRe judge failed: %s", report.notes[-1])
                        return report
                    report.final = final
                    report.verdict = final.verdict
                    return report
            report.notes.append("no probe gave a usable result; judged on the policy trace alone")

        try:
            final = self._judgment(instruction, policy, policy_kept, [], report.expectation)
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
