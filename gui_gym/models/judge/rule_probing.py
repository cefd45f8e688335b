"""Model-free probing (ProRe Eq. 1, 2 and 5): a rule-based reasoner that schedules
probing goals, the paper's fixed-prompt reasoner, and a scripted evaluator that carries a
goal out by navigating screens.

The :class:`ScriptedEvaluator` sees only :class:`~gui_gym.core.ui.UITree` screens through a
:class:`~gui_gym.models.judge.session.ProbeSession`. It opens the app the goal names from
the launcher, climbs to the app's top screen, then follows the elements whose labels match
the goal's strings and keywords, types into a search field when one is offered, and
scrolls; it never presses controls that change data (delete, save, send, toggles, ...).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UIElement, UITree
from gui_gym.models.judge.rule_reading import (
    DESTRUCTIVE_WORDS,
    MONTHS,
    QUOTED,
    SEARCH_WORDS,
    TaskAnalysis,
    analyse_task,
    compact_text,
    content_stems,
    date_phrase,
    evidence_start,
    first_words,
    is_found,
    is_launcher_icon,
    last_clause,
    launcher_labels,
    normalize,
    read_toggle,
    text_contains,
    word_stems,
)
from gui_gym.models.judge.session import ProbeSession
from gui_gym.models.judge.types import (
    MAX_GOAL_WORDS,
    MAX_SUB_GOALS,
    Claim,
    ProbePlan,
    Trace,
)

__all__ = [
    "RULE_PROMPT_GOAL",
    "RulePromptReasoner",
    "ScriptedEvaluator",
    "ScriptedReasoner",
    "goal_app",
    "policy_apps",
    "rule_expectation",
]


# --------------------------------------------------------------------------- reasoner


def _limit(goal: str) -> str:
    words = goal.split()
    if len(words) <= MAX_GOAL_WORDS:
        return goal
    cut = " ".join(words[:MAX_GOAL_WORDS])
    if cut.count('"') % 2:
        cut += '"'
    return cut.rstrip(",;:") + ("" if cut.endswith((".", "?")) else ".")


def _app_of(text: str, labels: Sequence[str]) -> str:
    key = normalize(text)
    for label in labels:
        if normalize(label) == key or word_stems(label) == word_stems(text):
            return label
    return text


def policy_apps(instruction: str, policy: Trace) -> tuple[list[str], dict[str, list[str]]]:
    """The apps a task is about and what the policy typed in each.

    Apps are launcher icons on the policy's screens that the instruction names, in the
    order it names them; when it names none, the apps the policy opened. Typed text is
    attributed to the app in the foreground when it was typed (the last app opened by
    ``OPEN_APP`` or a launcher tap).
    """
    labels = launcher_labels(policy)
    stems = word_stems(instruction)
    norm = f" {normalize(instruction)} "
    named = [label for label in labels if word_stems(label) and word_stems(label) <= stems]
    # "Simple SMS Messenger" names one app, not also a "Messenger"
    named = [a for a in named if not any(a != b and word_stems(a) < word_stems(b) for b in named)]

    def position(label: str) -> int:
        words = [w for w in normalize(label).split()]
        hits = [norm.find(f" {w}") for w in words if norm.find(f" {w}") >= 0]
        return min(hits) if hits else len(norm)

    named.sort(key=position)
    typed: dict[str, list[str]] = {}
    opened: list[str] = []
    current = ""
    for i, step in enumerate(policy.steps):
        action = step.parsed
        if not step.valid or action is None:
            continue
        if action.type is ActionType.OPEN_APP and action.text:
            current = _app_of(action.text, labels)
        elif action.type is ActionType.CLICK and action.index is not None:
            before = policy.screens[i]
            if action.index < len(before.elements) and is_launcher_icon(
                before.elements[action.index]
            ):
                current = before.elements[action.index].label
        elif action.type is ActionType.INPUT and action.text and current:
            typed.setdefault(current, []).append(action.text)
        if current and current not in opened:
            opened.append(current)
    return (named or opened[-1:]), typed


def _targets_for(app: str, targets: Sequence[str], typed: dict[str, list[str]]) -> list[str]:
    """The targets worth looking for in ``app``: all but those the policy typed only in
    other apps (a note's file name is not in the messenger that sent its text)."""
    out = []
    for t in targets:
        here = any(text_contains(x, t) or text_contains(t, x) for x in typed.get(app, []))
        elsewhere = any(
            text_contains(x, t) or text_contains(t, x)
            for other, xs in typed.items()
            if other != app
            for x in xs
        )
        if here or not elsewhere:
            out.append(t)
    return out


def _policy_date(a: TaskAnalysis, policy: Trace) -> str:
    """A day to look at: the instruction's date, else the last date the policy typed."""
    for place in a.places:
        if any(place.startswith(m) for m in MONTHS):
            return place
    for step in reversed(policy.steps):
        action = step.parsed
        if step.valid and action is not None and action.type is ActionType.INPUT:
            phrase = date_phrase(action.text or "")
            if phrase:
                return phrase
    return ""


def _quote(t: str) -> str:
    return f'"{first_words(t)}"'


def rule_expectation(instruction: str, policy: Trace) -> str:
    """What success looks like, read from the instruction by rules (ProRe Eq. 1's ``Exp``)."""
    a = analyse_task(instruction)
    apps, _ = policy_apps(instruction, policy)
    place = f" in {' and '.join(apps)}" if apps else ""
    targets = ", ".join(_quote(t) for t in a.targets[:4])
    if a.intent == "answer":
        return f"The policy answers {_quote(a.question or instruction)} exactly as asked."
    if a.intent == "toggle":
        return "Settings show " + " and ".join(f"{n} {s}" for n, s in a.toggles) + "."
    if not targets:
        return f"The device shows the state the task asks for: {last_clause(instruction)}"
    if a.intent == "delete":
        return f"Gone{place}: {targets}."
    if a.intent == "move" and a.destination:
        return f"In the {a.destination} folder, and no longer where they were: {targets}."
    if a.intent == "draft":
        return f"Filled in, but nothing saved or sent: {targets}."
    day = _policy_date(a, policy)
    return f"Stored{place}" + (f" on {day}" if day else "") + f": {targets}."


class ScriptedReasoner:
    """Rule-based probing-goal scheduler (ProRe Eq. 1 and Eq. 5) in the style of Table 7.

    Goals are phrased from the instruction's analysis and from what the policy did (which
    apps it worked in, what it typed where, which day it scheduled for): creation tasks ask
    to find the created item in the app, at the day or in the folder the task names;
    deletion tasks whether the item still exists there; moves whether the item is in the
    destination; settings tasks for the switch; questions are asked again. Each plan
    carries :func:`rule_expectation` (Eq. 1's ``Exp``). A task spanning several apps gets one
    sub-goal per app, carried out one after another on one fork (Sec. 3.3; with
    ``sub_goals=False``, ours before: one app per probe, the apps alternating across
    probes). Parallel probes get different phrasings (so scripted probes differ);
    iterative rounds put the targets the previous probe did not confirm first.

    Args:
        sub_goals: Split a several-app verification into sequential sub-goals (the paper's).
    """

    def __init__(self, sub_goals: bool = True):  # ProRe Sec. 3.3, App. E.1 item 3
        self.sub_goals = bool(sub_goals)

    def _plans(self, instruction: str, policy: Trace) -> list[ProbePlan]:
        exp = rule_expectation(instruction, policy)
        groups = self._variant_groups(instruction, policy)
        if self.sub_goals and len(groups) > 1:
            groups = groups[:MAX_SUB_GOALS]
            width = min(len(g) for g in groups)
            return [ProbePlan(tuple(_limit(g[k]) for g in groups), exp) for k in range(width)]
        flat = _interleave([g for group in groups for g in group], len(groups))
        return [ProbePlan((_limit(g),), exp) for g in flat]

    def _variant_groups(self, instruction: str, policy: Trace) -> list[list[str]]:
        """Goal phrasings, one list per app the verification visits."""
        a = analyse_task(instruction)
        apps, typed = policy_apps(instruction, policy)
        if a.intent == "answer":
            question = a.question or instruction
            app = apps[0] if apps else ""
            where = f"In {app}, " if app and not text_contains(question, app) else ""
            return [[question, f"{where}find the screen that answers: {question}"]]
        if a.intent == "toggle":
            out = []
            for name, state in a.toggles:
                out.append(f"Open Settings and check whether {name} is {state}.")
            out.append(f"In Settings, find the {a.toggles[0][0]} switch and read its state.")
            return [out]
        day = _policy_date(a, policy)
        groups: list[list[str]] = []
        for app in apps or [""]:
            t = _targets_for(app, a.targets, typed) if app else list(a.targets)
            groups.append(self._app_variants(a, instruction, app, t, day))
        return groups

    @staticmethod
    def _app_variants(
        a: TaskAnalysis, instruction: str, app: str, t: list[str], day: str
    ) -> list[str]:
        where = f"In {app}, " if app else ""
        place = f" in {app}" if app else ""
        folder = next((p for p in a.places if p != day), "")
        at = f" on {day}" if day else f" in the {folder} folder" if folder else ""
        if not t:
            clause = last_clause(instruction)
            return [
                f"{where}verify{at}: {clause}",
                f"Check{place}{at}: {clause}",
                f"{where}show{at} {clause}",
            ]
        head = _quote(t[0])
        rest = ", ".join(_quote(x) for x in t[1:3])
        also = f" and check {rest}" if rest else ""
        if a.intent == "delete":
            return [
                f"{where}check whether {head} still exists{at}.",
                f"Look{at}{place} for {head}.",
                f"{where}find {head}{at}{also}.",
            ]
        if a.intent == "move" and a.destination:
            return [
                f"{where}check if {head} is in the {a.destination} folder.",
                f"{where}open the {a.destination} folder and find {head}.",
                f"Find {head} in the {a.destination} folder{place}.",
            ]
        if a.intent == "draft":
            return [
                f"{where}check whether {head} was saved.",
                f"Look for {head}{place}.",
                f"{where}find {head}{also}.",
            ]
        if not app:
            clause = re.sub(r"^(?:then|and|finally),?\s+", "", last_clause(instruction), flags=re.I)
            clause = clause.rstrip(". ")
            clause = clause[:1].lower() + clause[1:]
            return [
                f"Find {head} and check: {clause}.",
                f"Find {head}{also}.",
                f"Check: {clause}; look for {head}.",
            ]
        return [
            f"{where}find {head}{at}{also}.",
            f"{where}open {head}{at} and show its details.",
            f"Look{at} for {head}{place}.",
        ]

    def schedule(self, instruction: str, policy: Trace, n_goals: int) -> list[ProbePlan]:
        """``n_goals`` plans (cycling through the phrasings when more are asked)."""
        plans = self._plans(instruction, policy)
        return [plans[i % len(plans)] for i in range(n_goals)]

    def revise(
        self,
        instruction: str,
        policy: Trace,
        previous_goal: str,
        previous_claims: Sequence[Claim],
        expectation: str = "",
    ) -> ProbePlan:
        """The next round's plan (Eq. 5): a different phrasing, or the same place asked
        about the targets the previous probe did not confirm. The expectation is the
        rules' own (:func:`rule_expectation`), so the one passed in is only carried along."""
        a = analyse_task(instruction)
        confirmed = {
            normalize(v) for c in previous_claims if c.kind in ("shown", "seen") for v in c.values
        }
        plans = self._plans(instruction, policy)
        exp = expectation or plans[0].expectation
        goals = [p.goal for p in plans]
        goal_targets = analyse_task(previous_goal).targets
        missing = [
            t
            for t in a.targets
            if normalize(t) not in confirmed
            and any(text_contains(t, g) or text_contains(g, t) for g in goal_targets)
        ]
        if missing and a.intent in ("create", "move") and len(missing) < len(goal_targets):
            apps, _ = policy_apps(instruction, policy)
            where = f"In {apps[0]}, " if apps else ""
            return ProbePlan((_limit(f"{where}find {_quote(missing[0])}."),), exp)
        if previous_goal in goals:
            return plans[(goals.index(previous_goal) + 1) % len(plans)]
        return plans[0]


RULE_PROMPT_GOAL = "What are the key states to verify whether the task {task} is completed?"
"""ProRe Sec. 4.3: the probing goal that replaces the reasoner's scheduling in the Table 4
ablation ("a simple rule-based strategy by prompting")."""


class RulePromptReasoner:
    """ProRe's ablation without probing-task scheduling (Table 4, Sec. 4.3): every probe's
    goal is :data:`RULE_PROMPT_GOAL` filled with the task, with no analysis (no
    expectation) and no revision beyond repeating it."""

    def schedule(self, instruction: str, policy: Trace, n_goals: int) -> list[str]:
        """``n_goals`` copies of the rule prompt's goal."""
        return [RULE_PROMPT_GOAL.format(task=instruction)] * n_goals

    def revise(
        self,
        instruction: str,
        policy: Trace,
        previous_goal: str,
        previous_claims: Sequence[Claim],
        expectation: str = "",
    ) -> str:
        """The same goal again: the rule has nothing to revise with."""
        return RULE_PROMPT_GOAL.format(task=instruction)


def _interleave(goals: list[str], groups: int) -> list[str]:
    """Goals grouped per app, reordered so consecutive goals visit different apps."""
    if groups <= 1:
        return goals
    size = len(goals) // groups
    chunks = [goals[i * size : (i + 1) * size] for i in range(groups)]
    return [g for row in zip(*chunks) for g in row]


# -------------------------------------------------------------------------- evaluator


def _destructive(e: UIElement) -> bool:
    """A control whose label says it changes data. List items and links are content (an
    event titled "Call with Alice" opens the event), so only controls count."""
    if e.role in ("listitem", "link", "text", "heading"):
        return False
    words = set(normalize(e.label).split())
    return bool(words & DESTRUCTIVE_WORDS)


_GOAL_APP = re.compile(r"^\s*(?:In|Open)\s+([^,]+?)(?:,|\s+and\b)|\bin\s+([A-Z][\w ]*?)\.?\s*$")


def goal_app(goal: str) -> str:
    """The app a goal sends the evaluator to (``"In Contacts, ..."``, ``"Open Settings and
    ..."``, ``"... in Markor."``), or "" when it names none (explore where the policy left off)."""
    m = _GOAL_APP.search(goal)
    if not m:
        return ""
    return (m.group(1) or m.group(2) or "").strip()


@dataclass
class _ProbeState:
    targets: list[str]
    keywords: set[str]
    toggles: list[tuple[str, str]]
    question: bool
    visited: set[tuple[str, str, str]] = field(default_factory=set)
    searched: set[str] = field(default_factory=set)
    scrolls: dict[str, int] = field(default_factory=dict)
    backs: int = 0
    place_reached: bool = False


class ScriptedEvaluator:
    """A model-free evaluator agent that probes by navigating screens (ProRe Eq. 2).

    It sees only the screens of its :class:`~gui_gym.models.judge.ProbeSession`. Guided by
    the goal's words it (1) when the goal names an app ("In Contacts, ..."), goes to the
    launcher, opens it and climbs to its top screen with "Navigate up" (the screen the
    policy left may be a draft; the point is to look at the stored state afresh); otherwise
    it starts where the policy left off; (2) follows the element that best matches the
    strings and keywords it still looks for, types a missing string into a search field
    when one is offered, scrolls where content continues, and goes back when a screen has
    nothing more; (3) stops once everything is found or read, or after looking through the
    place the goal names. It never taps controls that change data (delete, save, send,
    add, bookmark, switches, ...), so what it reports is the state the policy left.

    Args:
        max_scrolls: Scrolls per screen before giving up on it.
        max_backs: GOBACKs before giving up.
    """

    def __init__(self, max_scrolls: int = 6, max_backs: int = 3):
        self.max_scrolls = max_scrolls
        self.max_backs = max_backs

    # -- helpers ------------------------------------------------------------------------

    @staticmethod
    def _pending(st: _ProbeState, session: ProbeSession) -> list[str]:
        screens = session.trace.screens[evidence_start(session.trace) :]
        return [t for t in st.targets if not any(is_found(s, t, st.question) for s in screens)]

    @staticmethod
    def _toggles_read(st: _ProbeState, screen: UITree) -> bool:
        return all(read_toggle(screen, name) is not None for name, _ in st.toggles)

    @staticmethod
    def _score(e: UIElement, st: _ProbeState, pending: list[str]) -> int:
        if not (e.clickable and e.enabled) or e.editable or e.checkable or not e.label:
            return 0
        if _destructive(e) or e.label == "Navigate up" or e.selected:
            return 0
        score = 0
        for t in pending:
            if text_contains(e.label, t):
                score += 10
        if pending:
            for t in st.targets:
                if t not in pending and text_contains(e.label, t):
                    score += 6  # a found item whose details may hold what is still missing
        keyword_hits = len(word_stems(e.label) & st.keywords)
        if e.role == "link" and score == 0 and keyword_hits < 2:
            return 0  # a link sharing one word with the goal leads to other content, not a place
        score += 2 * keyword_hits
        compact = compact_text(e.label)
        for name, _ in st.toggles:
            if name.replace(" ", "") in compact:
                score += 3
        return score

    @staticmethod
    def _key(screen: UITree) -> str:
        heading = next((e.label for e in screen.elements if e.role == "heading"), "")
        return f"{screen.name}|{heading}"

    def _scroll(self, st: _ProbeState, session: ProbeSession, direction: str = "down") -> bool:
        screen = session.screen
        can = screen.can_scroll_down if direction == "down" else screen.can_scroll_up
        key = f"{self._key(screen)}|{direction}"
        if not can or st.scrolls.get(key, 0) >= self.max_scrolls:
            return False
        st.scrolls[key] = st.scrolls.get(key, 0) + 1
        session.step(Action(ActionType.SCROLL, direction=direction))
        return True

    # -- the probe ----------------------------------------------------------------------

    def probe(self, goal: str, session: ProbeSession) -> None:
        """Carry ``goal`` out on ``session`` (see the class docstring)."""
        a = analyse_task(goal)
        st = _ProbeState(
            targets=list(a.targets),
            keywords=set(a.keywords) | set(content_stems(QUOTED.sub(" ", goal))),
            toggles=list(a.toggles),
            question=a.intent == "answer",
        )
        st.keywords -= {s for t in st.targets for s in word_stems(t)}
        app = goal_app(goal)
        if app:
            self._open_app(goal, st, session)
        elif st.question:
            while self._scroll(st, session, "up"):  # read the page from its top
                pass
        while session.steps_left > 0:
            screen = session.screen
            if st.toggles and self._toggles_read(st, screen):
                return
            pending = self._pending(st, session)
            if not pending and not st.question and not st.toggles:
                return
            best = self._best(screen, st, pending)
            at_page = st.question and (
                (bool(st.targets) and not pending) or (not st.targets and best is None)
            )
            if at_page:
                if not self._scroll(st, session):  # read the answer's page to its end
                    return
                continue
            if best is not None:
                st.visited.add((screen.name, best.role, best.label))
                if self._score(best, st, []) > 0 and not any(
                    text_contains(best.label, t) for t in st.targets
                ):
                    st.place_reached = True  # went where the goal's words point
                session.step(Action(ActionType.CLICK, index=best.index))
                continue
            if not st.place_reached and self._search(st, pending, screen, session):
                continue
            if self._scroll(st, session):
                continue
            if st.place_reached:
                return  # looked where the goal said; what is missing is not there
            if st.backs < self.max_backs and session.trace.steps:
                st.backs += 1
                session.step(Action(ActionType.GOBACK))
                continue
            return

    def _best(self, screen: UITree, st: _ProbeState, pending: list[str]) -> UIElement | None:
        best: UIElement | None = None
        best_score = 0
        for e in screen.elements:
            if (screen.name, e.role, e.label) in st.visited:
                continue
            score = self._score(e, st, pending)
            if score > best_score:
                best, best_score = e, score
        return best

    def _open_app(self, goal: str, st: _ProbeState, session: ProbeSession) -> None:
        """HOME, then the launcher icon whose name the goal mentions; then climb to the
        app's top screen."""
        if session.steps_left <= 2 or not session.step(Action(ActionType.HOME)).valid:
            return
        goal_stems = word_stems(goal)
        icons = [e for e in session.screen.elements if is_launcher_icon(e)]
        named = [e for e in icons if word_stems(e.label) and word_stems(e.label) <= goal_stems]
        if not named:
            return
        icon = max(named, key=lambda e: len(e.label))
        st.visited.add((session.screen.name, icon.role, icon.label))
        st.keywords -= word_stems(icon.label)
        if not session.step(Action(ActionType.CLICK, index=icon.index)).valid:
            return
        st.place_reached = True
        for _ in range(4):
            screen = session.screen
            if session.steps_left <= 2:
                return
            up = next(
                (e for e in screen.elements if e.label == "Navigate up" and e.clickable), None
            )
            if up is None:
                return
            session.step(Action(ActionType.CLICK, index=up.index))

    @staticmethod
    def _search(st: _ProbeState, pending: list[str], screen: UITree, session: ProbeSession) -> bool:
        todo = [t for t in pending if t not in st.searched]
        if not todo:
            return False
        for e in screen.elements:
            if e.editable and e.enabled and any(w in e.label.lower() for w in SEARCH_WORDS):
                st.searched.add(todo[0])
                session.step(Action(ActionType.INPUT, index=e.index, text=todo[0]))
                return True
        for e in screen.elements:
            key = (screen.name, e.role, e.label)
            if (
                e.clickable
                and not e.editable
                and key not in st.visited
                and normalize(e.label) in SEARCH_WORDS
            ):
                st.visited.add(key)
                session.step(Action(ActionType.CLICK, index=e.index))
                return True
        return False
