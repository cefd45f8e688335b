"""Model-free claims and claim filter (ProRe Eq. 3 and Sec. 3.4).

Claims carry a machine-readable ``kind`` and ``values`` beside their words, which the
rule-based filter and judge (:mod:`~gui_gym.models.judge.rule_judges`) read.
"""

from __future__ import annotations

from collections.abc import Sequence

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.models.judge.rule_reading import (
    DESTRUCTIVE_WORDS,
    TaskAnalysis,
    analyse_task,
    count_section,
    evidence_start,
    format_values,
    in_field,
    is_displayed,
    is_found,
    is_stored,
    launcher_click,
    normalize,
    quoted_strings,
    read_toggle,
    text_contains,
    unique_elements,
    word_stems,
)
from gui_gym.models.judge.types import (
    MAX_CLAIMS,
    Claim,
    FilterDecision,
    Trace,
)

__all__ = [
    "RuleClaimExtractor",
    "RuleClaimFilter",
]


# ----------------------------------------------------------------------------- claims


def _is_choice(action: Action, screen: UITree) -> bool:
    """A tap that picks a value: an option, radio button or checkable list entry."""
    if action.type is not ActionType.CLICK or action.index is None:
        return False
    if action.index >= len(screen.elements):
        return False
    e = screen.elements[action.index]
    return bool(e.label) and (
        e.role in ("radio", "option") or (e.checkable and e.role == "listitem")
    )


class RuleClaimExtractor:
    """Rule-based claims (ProRe Eq. 3): at most four per trace, each with its kind, values
    and supporting screen numbers.

    Policy trace (the actor's report): how it ended (``declared_done`` / ``answered`` /
    ``unfinished``), what the last screens show (``final_shown``, ``final_draft``,
    ``final_absent``, ``toggle``), what it typed (``entered``), which committing controls it
    tapped (``committed``). Probe trace (the detective's report on the state the policy
    left): strings it found stored (``shown``), strings it looked for where the goal said and
    did not find (``absent``), strings it saw only in an input field (``draft``), setting
    states (``toggle``), counts for "how many" questions (``count``), and what it read for
    other questions (``read``).
    """

    def extract(self, instruction: str, trace: Trace) -> list[Claim]:
        """Claims about ``trace`` (see the class docstring); never more than four."""
        if trace.role == "policy":
            claims = self._policy(instruction, trace)
        else:
            claims = self._probe(instruction, trace)
        return claims[:MAX_CLAIMS]

    def _policy(self, instruction: str, trace: Trace) -> list[Claim]:
        a = analyse_task(instruction)
        src = "policy"
        n = len(trace.steps)
        claims: list[Claim] = []
        if trace.answer is not None:
            claims.append(
                Claim(
                    src,
                    f'The policy answered "{trace.answer}".',
                    (n,),
                    "its last action was ANSWER",
                    "answered",
                    (trace.answer,),
                )
            )
        elif trace.declared_done:
            claims.append(
                Claim(
                    src,
                    "The policy declared the task complete.",
                    (n,),
                    "it ended with DONE",
                    "declared_done",
                )
            )
        else:
            claims.append(
                Claim(
                    src,
                    "The policy stopped without declaring the task complete.",
                    (n,),
                    "its last action was not DONE or ANSWER",
                    "unfinished",
                )
            )
        last = len(trace.screens) - 1
        tail = [i for i in (last - 1, last) if i >= 1] or [last]
        if a.toggles:
            states = []
            for name, _ in a.toggles:
                state = read_toggle(trace.screens[last], name)
                if state is not None:
                    states.append(f"{name}={state}")
            if states:
                claims.append(
                    Claim(
                        src,
                        "The last screen shows "
                        + ", ".join(s.replace("=", " ") for s in states)
                        + ".",
                        (last,),
                        "read from a switch, slider or status text",
                        "toggle",
                        tuple(states),
                    )
                )
        shown = [t for t in a.targets if any(is_displayed(trace.screens[i], t) for i in tail)]
        drafts = [
            t
            for t in a.targets
            if t not in shown and any(in_field(trace.screens[i], t) for i in tail)
        ]
        if shown:
            claims.append(
                Claim(
                    src,
                    f"The last screens show {format_values(shown)}.",
                    tuple(tail),
                    "displayed, not in an input field",
                    "final_shown",
                    tuple(shown),
                )
            )
        if drafts:
            claims.append(
                Claim(
                    src,
                    f"{format_values(drafts)} appear only in input fields on the last screens.",
                    tuple(tail),
                    "typed text that no saved view shows",
                    "final_draft",
                    tuple(drafts),
                )
            )
        if a.intent == "delete":
            gone = [t for t in a.targets if t not in shown and t not in drafts]
            if gone:
                claims.append(
                    Claim(
                        src,
                        f"The last screen no longer shows {format_values(gone)}.",
                        (last,),
                        "absent from the final screen",
                        "final_absent",
                        tuple(gone),
                    )
                )
        typed: list[str] = []
        typed_steps: list[int] = []
        committed: list[str] = []
        committed_steps: list[int] = []
        for i, step in enumerate(trace.steps, start=1):
            action = step.parsed
            if not step.valid or action is None:
                continue
            if action.type is ActionType.INPUT and action.text:
                typed.append(action.text)
                typed_steps.append(i)
            elif _is_choice(action, trace.screens[i - 1]):
                typed.append(step.target)  # picking "Food" from a category list enters it
                typed_steps.append(i)
            elif (
                action.type in (ActionType.CLICK, ActionType.LONG_CLICK)
                and step.target
                and (
                    set(normalize(step.target).split()) & DESTRUCTIVE_WORDS
                    or word_stems(step.target) & set(a.keywords)
                )
            ):
                committed.append(step.target)
                committed_steps.append(i)
        if typed:
            claims.append(
                Claim(
                    src,
                    f"The policy entered {format_values(typed)}.",
                    tuple(typed_steps),
                    "its INPUT actions and the options it picked",
                    "entered",
                    tuple(typed),
                )
            )
        if committed:
            claims.append(
                Claim(
                    src,
                    f"The policy tapped {format_values(committed[-3:])}.",
                    tuple(committed_steps[-3:]),
                    "its last committing taps",
                    "committed",
                    tuple(committed[-3:]),
                )
            )
        return claims

    def _probe(self, instruction: str, trace: Trace) -> list[Claim]:
        goal = analyse_task(trace.goal)
        task = analyse_task(instruction)
        src = "probe"
        targets = list(goal.targets)
        for t in task.targets:
            if len(targets) < 8 and not any(normalize(t) == normalize(x) for x in targets):
                targets.append(t)
        every = list(range(evidence_start(trace), len(trace.screens)))
        own = [i for i in every if i > 0] or every
        claims: list[Claim] = []
        shown: list[str] = []
        shown_steps: set[int] = set()
        for t in targets:
            hits = [i for i in every if is_stored(trace, i, t)]
            if hits:
                shown.append(t)
                shown_steps.update(hits[:2])
        if shown:
            # After reopening the app from the launcher the probe sees stored state
            # ("shown"); without one it sees pages that exist whatever the policy did
            # ("seen": it found them, which proves less).
            verified = evidence_start(trace) > 0
            claims.append(
                Claim(
                    src,
                    f"{format_values(shown)} are stored: the probe found them displayed."
                    if verified
                    else f"The probe found {format_values(shown)} displayed.",
                    tuple(sorted(shown_steps)),
                    "seen outside input fields after reopening the app"
                    if verified
                    else "seen outside input fields",
                    "shown" if verified else "seen",
                    tuple(shown),
                )
            )
        if goal.toggles or task.toggles:
            states: list[str] = []
            steps: list[int] = []
            for name, _ in goal.toggles or task.toggles:
                for i in reversed(every):
                    state = read_toggle(trace.screens[i], name)
                    if state is not None:
                        states.append(f"{name}={state}")
                        steps.append(i)
                        break
            if states:
                claims.append(
                    Claim(
                        src,
                        "The probe found " + ", ".join(v.replace("=", " ") for v in states) + ".",
                        tuple(steps),
                        "read from a switch, slider or status text",
                        "toggle",
                        tuple(states),
                    )
                )
        if (goal.intent == "answer" or task.intent == "answer") and trace.steps:
            what = goal.count_of or task.count_of
            if what and what != "view":
                count = count_section(trace.screens, what)
                if count is not None:
                    claims.append(
                        Claim(
                            src,
                            f"The page lists {count} {what} item(s).",
                            tuple(own[-2:]),
                            f"items under the {what} section",
                            "count",
                            (str(count),),
                        )
                    )
            read, steps = self._read(trace, goal if goal.intent == "answer" else task)
            if read:
                claims.append(
                    Claim(
                        src,
                        f"The probe read: {format_values(read[:4])}{' ...' if len(read) > 4 else ''}.",
                        steps,
                        "content the question is about, on the probe's last page",
                        "read",
                        tuple(read),
                    )
                )
        drafts = [
            t
            for t in goal.targets
            if t not in shown and any(in_field(s, t) for s in trace.screens[1:])
        ]
        explored = any(s.valid for s in trace.steps)
        absent = [t for t in goal.targets if t not in shown]
        if absent and explored and goal.intent != "answer":
            claims.append(
                Claim(
                    src,
                    f"{format_values(absent)} did not appear on any screen the probe looked at.",
                    tuple(own),
                    "looked where the goal says and did not find them",
                    "absent",
                    tuple(absent),
                )
            )
        if drafts:
            claims.append(
                Claim(
                    src,
                    f"{format_values(drafts)} appear only in an unsaved input field.",
                    tuple(i for i in own if any(in_field(trace.screens[i], t) for t in drafts))[:3],
                    "typed text that no saved view shows",
                    "draft",
                    tuple(drafts),
                )
            )
        return claims

    @staticmethod
    def _read(trace: Trace, question: TaskAnalysis) -> tuple[list[str], tuple[int, ...]]:
        """Content labels (not controls) on the probe's last page, those sharing a word with
        the question first; the page starts where the question's subject was last found."""
        start = 0
        for i, screen in enumerate(trace.screens):
            if question.targets and any(is_found(screen, t, True) for t in question.targets):
                start = i
                break
        else:
            start = max(0, len(trace.screens) - 3)
        steps = tuple(range(start, len(trace.screens)))
        content = [
            e.label
            for e in unique_elements(trace.screens[i] for i in steps)
            if e.role in ("text", "heading", "listitem", "link") and not e.editable
        ]
        focus = set(question.keywords) - {"answer", "first", "title"}
        focused = [c for c in content if word_stems(c) & focus]
        return focused + [c for c in content if c not in focused], steps


# ------------------------------------------------------------------------------ filter


class RuleClaimFilter:
    """Drops claims their trace does not support (ProRe Sec. 3.4, claim filter).

    A claim is kept when the screens it cites exist and show what it says: ``shown``/
    ``final_shown``/``draft`` values appear on the cited screens, ``entered``/``committed``
    values in the cited actions, ``absent`` values on none of the probe's screens after a
    probe that actually explored (a list or link was on screen), ``toggle`` states read
    back. Claims without a kind (an LLM's) are kept when every quoted string in them appears
    on a cited screen or action. Evaluator claims citing screens after the probe changed
    data itself (typed outside a search field) are dropped, as ProRe's Stage 1 discards
    evaluator-caused outcomes.

    Args:
        criterion: ``paper`` (default, App. E.3 Stage 1): drop what the evaluator caused
            and what is misleading as evidence (an absence the probe never looked for, a
            claim citing no screen of the trace); ``grounded`` (ours): also check that the
            cited screens or actions show each claimed value.

    Raises:
        ValueError: for an unknown criterion.
    """

    def __init__(self, criterion: str = "paper"):  # ProRe App. E.3 Stage 1
        if criterion not in ("paper", "grounded"):
            raise ValueError(f"criterion must be 'paper' or 'grounded', got {criterion!r}")
        self.criterion = criterion

    def filter(
        self, instruction: str, trace: Trace, claims: Sequence[Claim]
    ) -> list[FilterDecision]:
        """One decision per claim, in order."""
        first_change = self._first_own_change(trace) if trace.role == "evaluator" else None
        return [self._decide(i, c, trace, first_change) for i, c in enumerate(claims)]

    @staticmethod
    def _first_own_change(trace: Trace) -> int | None:
        for i, step in enumerate(trace.steps, start=1):
            action = step.parsed
            if not step.valid or action is None:
                continue
            if action.type is ActionType.INPUT and "search" not in step.target.lower():
                return i
        return None

    def _decide(
        self, index: int, claim: Claim, trace: Trace, first_change: int | None
    ) -> FilterDecision:
        n = len(trace.screens)
        bad = [s for s in claim.steps if not 0 <= s < n]
        if bad or not claim.steps:
            return FilterDecision(index, False, f"cites screens {bad or '[]'} outside 0..{n - 1}")
        if first_change is not None and max(claim.steps) >= first_change and claim.kind != "absent":
            return FilterDecision(
                index,
                False,
                f"rests on screens after the probe changed data itself (step {first_change})",
            )
        screens = [trace.screens[s] for s in claim.steps]
        kind = claim.kind
        if self.criterion == "paper" and kind != "absent":
            return FilterDecision(index, True, "evidence about the outcome the policy left")
        if kind in ("shown", "seen", "final_shown"):
            if trace.role == "evaluator":
                missing = [
                    v for v in claim.values if not any(is_stored(trace, s, v) for s in claim.steps)
                ]
            else:
                missing = [v for v in claim.values if not any(is_displayed(s, v) for s in screens)]
            return self._values(index, missing, "not displayed on the cited screens")
        if kind in ("draft", "final_draft"):
            missing = [v for v in claim.values if not any(in_field(s, v) for s in screens)]
            return self._values(index, missing, "in no input field on the cited screens")
        if kind in ("entered", "committed"):
            acted = " ".join(
                f"{st.action} {st.target}"
                for s in claim.steps
                if (st := trace.step_for_screen(s)) is not None
            )
            missing = [v for v in claim.values if not text_contains(acted, v)]
            return self._values(index, missing, "in none of the cited actions")
        if kind == "absent":
            if not any(
                e.role in ("listitem", "link") for s in trace.screens[1:] for e in s.elements
            ):
                return FilterDecision(
                    index, False, "the probe never reached a list, so absence proves nothing"
                )
            goal = analyse_task(trace.goal)
            headings = " | ".join(
                e.label for s in trace.screens[1:] for e in s.elements if e.role == "heading"
            )
            unvisited = [p for p in goal.places if not text_contains(headings, p)]
            if unvisited:
                return FilterDecision(
                    index,
                    False,
                    f"the probe never reached {format_values(unvisited)}, where the goal says to look",
                )
            opened_app = launcher_click(trace) is not None
            if not opened_app and not (word_stems(headings) & set(goal.keywords)):
                return FilterDecision(
                    index, False, "the probe never reached the app or page the goal names"
                )
            seen = [v for v in claim.values if any(is_stored(trace, i, v) for i in range(1, n))]
            return self._values(index, seen, "appears on a probe screen after all")
        if kind == "toggle":
            wrong = []
            for value in claim.values:
                name, _, state = value.partition("=")
                if not any(read_toggle(s, name) == state for s in screens):
                    wrong.append(value)
            return self._values(index, wrong, "not what the cited screens show")
        if kind == "final_absent":
            seen = [v for v in claim.values if any(is_displayed(s, v) for s in screens)]
            return self._values(index, seen, "still displayed on the cited screen")
        if kind in ("declared_done", "answered", "unfinished", "count", "read"):
            return FilterDecision(index, True, "follows from the trace")
        quotes = quoted_strings(claim.text)
        evidence = (
            " ".join(s.all_text for s in screens)
            + " "
            + " ".join(
                f"{st.action}" for s in claim.steps if (st := trace.step_for_screen(s)) is not None
            )
        )
        unsupported = [q for q in quotes if not text_contains(evidence, q)]
        return self._values(index, unsupported, "quoted but not on the cited screens or actions")

    @staticmethod
    def _values(index: int, problems: list[str], why: str) -> FilterDecision:
        if problems:
            return FilterDecision(index, False, f"{format_values(problems)} {why}")
        return FilterDecision(index, True, "supported by the cited screens")
