"""What every MiniWoB++ expert uses: finding elements on a ``UITree``, the actions it
takes (clicks, keys, filling a field, submitting), the expert's per-episode notes, and a
few things a person knows (month names, colour names).

An expert sees only what an agent sees: the utterance and its fields as miniwob extracts
them, the current ``UITree``, its own last action and notes (``ctx``), and, for the
experts of :mod:`~gui_gym.envs.miniwob.oracles.visual`, the screenshot.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext
from gui_gym.core.ui import UIElement, UITree

__all__ = [
    "MONTHS",
    "NAMED_COLOURS",
    "Expert",
    "OracleStuck",
    "ancestor",
    "as_number",
    "click",
    "click_centre",
    "colour_of",
    "descendants",
    "element_by_id",
    "element_with_text",
    "expert_notes",
    "fill_field",
    "fill_then_submit",
    "find_element",
    "input_fields",
    "label_of",
    "last_clicked_position",
    "press_key",
    "press_submit",
    "task_state",
    "value_of",
    "wait",
]


Expert = Callable[[PredicateContext], Action]
"""An expert: the next action from what an agent reads (utterance fields, screen, last
action, the expert's own notes)."""


class OracleStuck(RuntimeError):
    """The page is not in a state the expert knows how to continue from."""


def task_state(ctx: PredicateContext):  # -> MiniWoBState (import-free to avoid a cycle)
    """The episode's ``MiniWoBState``: the utterance's fields and the expert's notes."""
    return ctx.state


def click(e: UIElement) -> Action:
    """A click on ``e`` (by its index)."""
    return Action(ActionType.CLICK, index=e.index)


def find_element(screen: UITree, pred: Callable[[UIElement], bool]) -> UIElement:
    """The first element of ``screen`` for which ``pred`` holds.

    Raises:
        OracleStuck: when none does.
    """
    for e in screen.elements:
        if pred(e):
            return e
    raise OracleStuck("no element matches on this screen")


def element_with_text(screen: UITree, text: str, roles: tuple[str, ...] = ()) -> UIElement:
    """The first element whose text is ``text`` (of one of ``roles`` when given).

    Raises:
        OracleStuck: when there is none.
    """
    return find_element(screen, lambda e: e.text == text and (not roles or e.role in roles))


def input_fields(screen: UITree) -> list[UIElement]:
    """The editable elements of ``screen``, in order."""
    return [e for e in screen.elements if e.editable]


def press_submit(screen: UITree, labels: tuple[str, ...] = ("Submit",)) -> Action:
    """A click on the first clickable element labelled one of ``labels`` (any case).

    Raises:
        OracleStuck: when there is none.
    """
    for label in labels:
        for e in screen.elements:
            if e.clickable and e.text.strip().lower() == label.lower():
                return click(e)
    raise OracleStuck(f"no {' / '.join(labels)} button")


def fill_field(ctx: PredicateContext, field: UIElement, value: str) -> Action | None:
    """Next action to make ``field`` hold exactly ``value`` (None when it does): type into an
    empty field; clear a wrong one with ctrl+a then Backspace."""
    if field.text == value:
        return None
    if not field.text:
        return Action(ActionType.INPUT, index=field.index, text=value)
    if not field.focused:
        return click(field)
    last = ctx.action
    if last is not None and last.type is ActionType.KEY and last.text == "ctrl+a":
        return Action(ActionType.KEY, text="Backspace")
    return Action(ActionType.KEY, text="ctrl+a")


def fill_then_submit(
    ctx: PredicateContext, pairs: list[tuple[UIElement, str]], submit: Action
) -> Action:
    for field, value in pairs:
        action = fill_field(ctx, field, value)
        if action is not None:
            return action
    return submit


def label_of(screen: UITree, e: UIElement) -> str:
    """Text of the label next to a checkbox/radio: the text leaf beside it in its parent."""
    if e.parent >= 0:
        for i in screen.elements[e.parent].children:
            sibling = screen.elements[i]
            if sibling.index != e.index and sibling.text:
                return sibling.text
    return ""


def wait() -> Action:
    """``WAIT()``: let the page move on (a delayed widget, a timer)."""
    return Action(ActionType.WAIT)


def press_key(name: str) -> Action:
    """A key press (``"Enter"``, ``"ctrl+a"``, ...)."""
    return Action(ActionType.KEY, text=name)


def descendants(screen: UITree, e: UIElement) -> list[UIElement]:
    """Every element below ``e``, depth first in document order."""
    out: list[UIElement] = []
    stack = list(reversed(e.children))
    while stack:
        child = screen.elements[stack.pop()]
        out.append(child)
        stack.extend(reversed(child.children))
    return out


def ancestor(screen: UITree, e: UIElement, levels: int) -> UIElement:
    """The element ``levels`` parents above ``e`` (the root when there are fewer)."""
    for _ in range(levels):
        if e.parent < 0:
            break
        e = screen.elements[e.parent]
    return e


def element_by_id(screen: UITree, resource_id: str) -> UIElement | None:
    """The first element with ``resource_id`` (the DOM id), or None."""
    return next((e for e in screen.elements if e.resource_id == resource_id), None)


def last_clicked_position(ctx: PredicateContext, candidates: list[UIElement]) -> int | None:
    """Which of ``candidates`` the expert's last action clicked, by position (None when the
    last action was not a click on one of them)."""
    last = ctx.action
    if last is None or last.type is not ActionType.CLICK:
        return None
    return next((i for i, e in enumerate(candidates) if e.index == last.index), None)


def value_of(ctx: PredicateContext, field: UIElement, value: str, submit: Action) -> Action:
    """Type ``value`` into an empty ``field`` once, then ``submit`` (for inputs whose shown
    value differs from the keys typed: dates, times)."""
    if not field.text:
        return Action(ActionType.INPUT, index=field.index, text=value)
    return submit


def as_number(text: str) -> float | None:
    """``text`` as a number (thousands commas and ``$`` dropped), or None."""
    try:
        return float(text.replace(",", "").replace("$", ""))
    except ValueError:
        return None


def expert_notes(ctx: PredicateContext) -> dict:
    """What the expert noted earlier this episode (``MiniWoBState.notes``)."""
    return task_state(ctx).notes


# Month names as the date widgets show them, January first.
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def colour_of(e: UIElement) -> tuple[int, int, int] | None:
    """The ``#rrggbb`` background the screen shows for a text-less leaf, as integers."""
    m = re.search(r"#([0-9a-f]{6})\b", e.description)
    if m is None:
        return None
    value = int(m.group(1), 16)
    return value >> 16, (value >> 8) & 255, value & 255


# The colours click-color names (CSS's), as a person knows them.
NAMED_COLOURS = {
    "red": (255, 0, 0),
    "blue": (0, 0, 255),
    "olive": (128, 128, 0),
    "lime": (0, 255, 0),
    "black": (0, 0, 0),
    "white": (255, 255, 255),
    "green": (0, 128, 0),
    "grey": (128, 128, 128),
    "gray": (128, 128, 128),
    "purple": (128, 0, 128),
    "orange": (255, 165, 0),
    "yellow": (255, 255, 0),
    "cyan": (0, 255, 255),
    "pink": (255, 192, 203),
    "magenta": (255, 0, 255),
}


def click_centre(e: UIElement) -> Action:
    """A click at the element's centre (a real mouse click: SVG widgets ignore the
    scripted click that CLICK(i) sends to an element with a ref)."""
    x, y = e.center
    return Action(ActionType.CLICK, x=x, y=y)
