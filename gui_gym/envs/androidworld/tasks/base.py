"""Task templates for the simulated phone, after AndroidWorld's ``TaskEval``.

A template is a :class:`AndroidWorldTask` subclass registered with :func:`register`. Per
episode the env calls :meth:`AndroidWorldTask.create` with a seeded RNG: the template draws
its parameters (``generate_random_params``), formats its instruction, and builds ordered
milestones. :meth:`initialize_task` writes the task's starting data into the phone state;
:meth:`score` reads the phone state (never the screen) and returns a value in [0, 1].
Information-retrieval templates set ``answer_mode`` and are scored on the ANSWER text with
AndroidWorld's matching (see :func:`check_answer`).

:meth:`expert` is the scripted oracle: from any state it returns the next action toward the
goal, using the helpers below (``open_app``, ``tap``, ``type_into``...).
"""

from __future__ import annotations

import difflib
import random
import re
from collections.abc import Callable, Sequence
from datetime import date, datetime
from typing import Any, ClassVar

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import Predicate, PredicateContext
from gui_gym.core.task import Milestone, Task
from gui_gym.core.ui import UIElement, UITree
from gui_gym.envs.androidworld.phone import PhoneState

__all__ = [
    "TASKS",
    "AndroidWorldTask",
    "StateCheck",
    "check_answer",
    "fuzzy_match",
    "milestone",
    "register",
]

TASKS: dict[str, type[AndroidWorldTask]] = {}
"""Every registered template by AndroidWorld task name."""


def register(cls: type[AndroidWorldTask]) -> type[AndroidWorldTask]:
    """Class decorator adding a template to :data:`TASKS` (names must be unique)."""
    if not cls.name or cls.name in TASKS:
        raise ValueError(f"task template name {cls.name!r} is empty or already registered")
    TASKS[cls.name] = cls
    return cls


def fuzzy_match(a: str, b: str, threshold: float = 0.9) -> bool:
    """AndroidWorld's ``fuzzy_match``: case-insensitive difflib ratio >= 0.9."""
    return difflib.SequenceMatcher(None, str(a).lower(), str(b).lower()).ratio() >= threshold


class StateCheck(Predicate):
    """A milestone predicate computed by template code from the phone state.

    Only templates shipped in the package use it; task *files* stay declarative.
    """

    __slots__ = ("fn",)

    def __init__(self, name: str, fn: Callable[[PhoneState], bool]):
        super().__init__({"check": name})
        self.fn = fn

    def evaluate(self, ctx: PredicateContext) -> bool:
        return bool(self.fn(ctx.state))


def milestone(name: str, fn: Callable[[PhoneState], bool]) -> tuple[str, StateCheck]:
    """A ``(name, predicate)`` milestone pair whose check ``fn`` reads the phone state."""
    return (name, StateCheck(name, fn))


# -- answers -------------------------------------------------------------------------------

_DATE_FORMATS = (
    "%B %d %Y",
    "%B %d, %Y",
    "%Y-%m-%d",
    "%b %d %Y",
    "%b %d, %Y",
    "%d %B %Y",
    "%m/%d/%Y",
)


def _parse_date(text: str) -> date | None:
    text = text.strip().rstrip(".")
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    return None


def _parse_number(text: str) -> float | None:
    cleaned = text.strip().rstrip(".").replace(",", "")
    try:
        return float(cleaned)
    except ValueError:
        match = re.fullmatch(r"[-+]?\d+(?:\.\d+)?\s*[a-zA-Z%]*", cleaned)
        return float(re.match(r"[-+]?\d+(?:\.\d+)?", cleaned).group(0)) if match else None  # type: ignore[union-attr]


def check_answer(
    answer: str, expected: Sequence[str], mode: str, tolerance: float | None = None
) -> bool:
    """AndroidWorld's information-retrieval check (``proto_utils.check_agent_answer``).

    The answer is split on commas; it must have as many items as ``expected`` and every item
    must match some expected value. ``mode`` is ``string`` (fuzzy, ratio >= 0.9, case
    insensitive), ``number`` (equal, or within ``tolerance``), ``date`` (same calendar day in
    any common format) or ``time`` (``HH:MM``, 24 h, also ``3:30pm``).
    """
    items = (
        [a.strip() for a in answer.split(",")]
        if expected and len(expected) > 1
        else [answer.strip()]
    )
    if mode == "string" and len(expected) == 1:
        items = [answer.strip()]
    if len(items) != len(expected):
        return False

    def matches(item: str, want: str) -> bool:
        if mode == "string":
            return fuzzy_match(item, want)
        if mode == "number":
            got, target = _parse_number(item), _parse_number(want)
            if got is None or target is None:
                return False
            return abs(got - target) < tolerance if tolerance else got == target
        if mode == "date":
            got_date, want_date = _parse_date(item), _parse_date(want)
            return got_date is not None and got_date == want_date
        if mode == "time":
            return _parse_time(item) is not None and _parse_time(item) == _parse_time(want)
        raise ValueError(f"unknown answer mode {mode!r}")

    return all(any(matches(item, want) for want in expected) for item in items)


def _parse_time(text: str) -> tuple[int, int] | None:
    text = text.strip().lower().replace(" ", "")
    for fmt in ("%H:%M", "%I:%M%p", "%I%p"):
        try:
            t = datetime.strptime(text, fmt)
            return (t.hour, t.minute)
        except ValueError:
            continue
    return None


# -- templates -------------------------------------------------------------------------------


class AndroidWorldTask(Task):
    """Base of every template; subclasses set the class attributes and override the hooks.

    Class attributes:
        name: AndroidWorld's task class name (``ContactsAddContact``).
        app: Key of the app the task is about (``contacts``).
        complexity: AndroidWorld's ``complexity`` (its step budget is ``10 * complexity``).
        template: Instruction with ``{param}`` slots.
        answer_mode: For information-retrieval tasks: ``string``/``number``/``date``/``time``.
        solved_at_start: The goal already holds at reset (AndroidWorld's seven *Verify*
            templates test that the agent notices and stops); ``info["solved_at_start"]``
            carries it and ``exclude_solved_at_start=True`` leaves such templates out of
            sampling.
        needs_vision: What the task needs is shown only in pixels (a receipt, a video
            frame): a text-only agent cannot solve it (``gui-gym list`` names these).
    """

    name: ClassVar[str] = ""
    app: ClassVar[str] = ""
    complexity: ClassVar[float] = 1.0
    template: ClassVar[str] = ""
    answer_mode: ClassVar[str | None] = None
    answer_tolerance: ClassVar[float | None] = None
    solved_at_start: ClassVar[bool] = False
    needs_vision: ClassVar[bool] = False

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def placeholder(cls) -> AndroidWorldTask:
        """The unparameterised template as a suite entry."""
        return cls(task_id=cls.name, instruction=cls.template, category=cls.app, split="train")

    @classmethod
    def create(cls, rng: random.Random) -> AndroidWorldTask:
        """An episode's task: parameters drawn from ``rng``, instruction formatted."""
        return cls.from_params(cls.generate_params(rng))

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> AndroidWorldTask:
        """The task for given parameters (used by :meth:`create` and when unpickling)."""
        task = cls(
            task_id=cls.name,
            instruction=cls.template.format(**params),
            category=cls.app,
            split="train",
            params=params,
        )
        task.milestones = tuple(Milestone(name, check) for name, check in task.milestone_checks())
        return task

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        """AndroidWorld's ``generate_random_params``; JSON-safe values only."""
        return {}

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        """Write the task's starting data (noise rows, preconditions) into ``phone``."""

    def setup(self, state: Any, rng: Any) -> Any:
        seed = int(rng.integers(2**31)) if hasattr(rng, "integers") else rng.randrange(2**31)
        self.initialize_task(state, random.Random(seed))
        return state

    # -- checks ---------------------------------------------------------------------------------

    def score(self, phone: PhoneState) -> float:
        """State-changing tasks: success in [0, 1] read from the phone state."""
        raise NotImplementedError

    def expected_answer(self) -> list[str]:
        """Information-retrieval tasks: the accepted answer items."""
        raise NotImplementedError

    def is_successful(self, ctx: PredicateContext) -> float:
        if self.answer_mode is not None:
            if ctx.answer is None:
                return 0.0
            return float(
                check_answer(
                    ctx.answer, self.expected_answer(), self.answer_mode, self.answer_tolerance
                )
            )
        return float(self.score(ctx.state))

    def milestone_checks(self) -> list[tuple[str, Predicate]]:
        """Ordered ``(name, predicate)`` pairs; by default: the app is opened, then done."""
        checks: list[tuple[str, Predicate]] = [self.opened_milestone()]
        if self.answer_mode is None:
            checks.append(self.done_milestone("task_complete"))
        return checks

    def opened_milestone(self) -> tuple[str, StateCheck]:
        """The milestone ``<app>_opened``: the task's app has been opened this episode."""
        app = self.app
        return milestone(f"{app}_opened", lambda p: app in p.opened)

    def done_milestone(self, name: str) -> tuple[str, StateCheck]:
        """The milestone ``name`` reached once the task scores 1 (the goal state)."""
        return milestone(name, lambda p: self.score(p) >= 1.0)

    # -- oracle -----------------------------------------------------------------------------------

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        """The scripted expert's next action."""
        raise NotImplementedError

    def oracle(self, ctx: PredicateContext) -> Action:
        phone: PhoneState = ctx.state
        if phone.shade or (phone.dialog is not None and not self.uses_dialogs):
            return Action(ActionType.GOBACK)
        if self.answer_mode is None and self.score(phone) >= 1.0:
            return Action(ActionType.DONE)
        return self.expert(phone, ctx.screen)

    uses_dialogs: ClassVar[bool] = True
    """Whether the expert handles dialogs itself (else the oracle dismisses them)."""


def mix_with_noise(
    rng: random.Random,
    seeded: Sequence[dict[str, Any]],
    n_noise: int,
    make: Callable[[random.Random], dict[str, Any]],
    excluded: Callable[[dict[str, Any]], bool],
) -> list[dict[str, Any]]:
    """The ``seeded`` rows and ``n_noise`` rows from ``make`` (redrawn while ``excluded``
    holds for them), shuffled: an information-retrieval proto's starting rows."""
    noise: list[dict[str, Any]] = []
    while len(noise) < n_noise:
        row = make(rng)
        if not excluded(row):
            noise.append(row)
    rows = [*seeded, *noise]
    rng.shuffle(rows)
    return rows


# -- expert helpers -------------------------------------------------------------------------


def open_app(phone: PhoneState, key: str, title: str) -> Action | None:
    """OPEN_APP when ``key`` is not in the foreground (closing the shade first)."""
    if phone.shade:
        return Action(ActionType.GOBACK)
    if phone.foreground != key:
        return Action(ActionType.OPEN_APP, text=title)
    return None


def find(screen: UITree, **criteria: Any) -> UIElement | None:
    return screen.find_one(**criteria)


def tap(screen: UITree, **criteria: Any) -> Action | None:
    """CLICK the first element matching ``criteria`` if it is on screen."""
    element = screen.find_one(**criteria)
    return None if element is None else Action(ActionType.CLICK, index=element.index)


def reach(screen: UITree, **criteria: Any) -> Action:
    """CLICK the element if it is on screen, else scroll toward more content."""
    action = tap(screen, **criteria)
    if action is not None:
        return action
    if screen.can_scroll_down:
        return Action(ActionType.SCROLL, direction="down")
    if screen.can_scroll_up:
        return Action(ActionType.SCROLL, direction="up")
    return Action(ActionType.GOBACK)


def seek(
    screen: UITree,
    handler: str,
    target: str,
    order: Sequence[str] = (),
    long: bool = False,
) -> Action:
    """Tap (or long-press) the row whose handler arg is ``target``; scroll toward it (using
    ``order``, the rows' args top to bottom, to pick the direction) when it is off screen."""
    element = screen.find_one(handler=handler, handler_arg=target)
    if element is not None:
        kind = ActionType.LONG_CLICK if long else ActionType.CLICK
        return Action(kind, index=element.index)
    rank = {arg: i for i, arg in enumerate(order)}
    shown = [rank[e.handler_arg] for e in screen.find(handler=handler) if e.handler_arg in rank]
    want = rank.get(target)
    if shown and want is not None and want < min(shown) and screen.can_scroll_up:
        return Action(ActionType.SCROLL, direction="up")
    if screen.can_scroll_down:
        return Action(ActionType.SCROLL, direction="down")
    if screen.can_scroll_up:
        return Action(ActionType.SCROLL, direction="up")
    return Action(ActionType.GOBACK)


def type_into(screen: UITree, field_arg: str, text: str, form: dict[str, str]) -> Action | None:
    """INPUT ``text`` into the field ``field_arg`` unless it already holds it; scrolls to it."""
    if form.get(field_arg, "") == text:
        return None
    element = screen.find_one(handler_arg=field_arg, editable=True)
    if element is None:
        if screen.can_scroll_down:
            return Action(ActionType.SCROLL, direction="down")
        return Action(ActionType.SCROLL, direction="up")
    return Action(ActionType.INPUT, index=element.index, text=text)


def go_to_root(phone: PhoneState, key: str) -> Action | None:
    """GOBACK until app ``key`` shows its root screen (None once it does)."""
    stack = phone.stacks.get(key, [])
    if phone.focus:
        return Action(ActionType.GOBACK)
    if len(stack) > 1:
        return Action(ActionType.GOBACK)
    return None
