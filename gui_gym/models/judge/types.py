"""ProRe's vocabulary (seed 004, Sec. 3): traces, probe plans, claims, verdicts and
reports, the pipeline's limits and its errors.

Every other module of :mod:`gui_gym.models.judge` speaks these types; they hold data only
(no component, no env).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gui_gym.core.actions import Action, ActionParseError, parse_action
from gui_gym.core.ui import UITree
from gui_gym.rewards.probing import VERDICTS, VoteResult, redundant_states

__all__ = [
    "AGGREGATIONS",
    "MAX_CLAIMS",
    "MAX_GOAL_WORDS",
    "MAX_SUB_GOALS",
    "PROBE_MODES",
    "RELATIONS",
    "Claim",
    "ClaimRelation",
    "ComponentError",
    "FilterDecision",
    "JudgeReport",
    "ProbeBudgetExhausted",
    "ProbePlan",
    "ProbeRecord",
    "Trace",
    "TraceStep",
    "Verdict",
    "is_home_screen",
    "kept_claims",
]

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
"""Claims per trace: ProRe's prompts ask for a handful (``{min_claims}-{max_claims}``); we
fix 1 to 4."""

MAX_GOAL_WORDS = 20
"""ProRe App. E.1: a probing goal is at most 20 words."""


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
        screenshots: One HxWx3 uint8 screenshot per screen, in step with ``screens``, when
            the env makes them (``screenshot=True``); empty otherwise. Vision-language LLM
            components show them (:mod:`gui_gym.models.llm.vision_prompts`); never serialised.
    """

    role: str
    goal: str
    screens: list[UITree] = field(default_factory=list)
    steps: list[TraceStep] = field(default_factory=list)
    answer: str | None = None
    declared_done: bool = False
    completion_required: bool = False
    segments: list[tuple[int, str]] = field(default_factory=list)
    screenshots: list[Any] = field(default_factory=list, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.role not in ("policy", "evaluator"):
            raise ValueError(f"role must be 'policy' or 'evaluator', got {self.role!r}")

    @property
    def has_screenshots(self) -> bool:
        """Whether every screen has its screenshot."""
        return bool(self.screens) and len(self.screenshots) == len(self.screens)

    def add_screen(self, screen: UITree, screenshot: Any = None) -> None:
        """Append the next screen and, when the trace keeps screenshots, its screenshot
        (a trace whose first screen had none keeps none)."""
        keep = self.has_screenshots or not self.screens
        self.screens.append(screen)
        if keep and screenshot is not None:
            self.screenshots.append(screenshot)
        elif self.screenshots:
            self.screenshots.clear()  # one screen without: the trace has none, not some

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
            ``entered``, ``declared_done``, ...; see :mod:`gui_gym.models.judge.rule_claims`).
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


def kept_claims(claims: Sequence[Claim], decisions: Sequence[FilterDecision]) -> list[Claim]:
    """The claims whose filter decision says keep, in their order (ProRe Sec. 3.4)."""
    keep = {d.claim for d in decisions if d.keep}
    return [c for i, c in enumerate(claims) if i in keep]


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
        """The claims the filter kept."""
        return kept_claims(self.claims, self.decisions)

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
