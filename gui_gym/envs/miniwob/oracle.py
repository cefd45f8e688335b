"""Scripted experts for MiniWoB++ tasks, driven only through gui-gym's action API.

Each expert reads what an agent reads (the utterance and its fields as miniwob extracts them,
the current ``UITree``, and the last action) and returns the next :class:`Action`. They prove
the DOM -> UITree and action -> miniwob mappings end to end: a test runs each over several
seeds and expects miniwob's raw reward of 1.0, and replays the same miniwob actions on a raw
``miniwob`` env to compare rewards.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext
from gui_gym.core.ui import UIElement, UITree

__all__ = ["ORACLES", "Expert"]

Expert = Callable[[PredicateContext], Action]


class OracleStuck(RuntimeError):
    """The page is not in a state the expert knows how to continue from."""


def _state(ctx: PredicateContext):  # -> MiniWoBState (import-free to avoid a cycle)
    return ctx.state


def _click(e: UIElement) -> Action:
    return Action(ActionType.CLICK, index=e.index)


def _find(screen: UITree, pred: Callable[[UIElement], bool]) -> UIElement:
    for e in screen.elements:
        if pred(e):
            return e
    raise OracleStuck("no element matches on this screen")


def _by_text(screen: UITree, text: str, roles: tuple[str, ...] = ()) -> UIElement:
    return _find(screen, lambda e: e.text == text and (not roles or e.role in roles))


def _inputs(screen: UITree) -> list[UIElement]:
    return [e for e in screen.elements if e.editable]


def _submit(screen: UITree, labels: tuple[str, ...] = ("Submit",)) -> Action:
    for label in labels:
        for e in screen.elements:
            if e.clickable and e.text.strip().lower() == label.lower():
                return _click(e)
    raise OracleStuck(f"no {' / '.join(labels)} button")


def _fill(ctx: PredicateContext, field: UIElement, value: str) -> Action | None:
    """Next action to make ``field`` hold exactly ``value`` (None when it does): type into an
    empty field; clear a wrong one with ctrl+a then Backspace."""
    if field.text == value:
        return None
    if not field.text:
        return Action(ActionType.INPUT, index=field.index, text=value)
    if not field.focused:
        return _click(field)
    last = ctx.action
    if last is not None and last.type is ActionType.KEY and last.text == "ctrl+a":
        return Action(ActionType.KEY, text="Backspace")
    return Action(ActionType.KEY, text="ctrl+a")


def _fill_all(ctx: PredicateContext, pairs: list[tuple[UIElement, str]], submit: Action) -> Action:
    for field, value in pairs:
        action = _fill(ctx, field, value)
        if action is not None:
            return action
    return submit


def _label_of(screen: UITree, e: UIElement) -> str:
    """Text of the label next to a checkbox/radio: the text leaf beside it in its parent."""
    if e.parent >= 0:
        for i in screen.elements[e.parent].children:
            sibling = screen.elements[i]
            if sibling.index != e.index and sibling.text:
                return sibling.text
    return ""


# -- clicks -------------------------------------------------------------------------------------


def click_test(ctx: PredicateContext) -> Action:
    return _click(_find(ctx.screen, lambda e: e.role == "button"))


def click_target_button(ctx: PredicateContext) -> Action:
    return _click(_by_text(ctx.screen, _state(ctx).fields["target"], ("button",)))


def click_link(ctx: PredicateContext) -> Action:
    return _click(_by_text(ctx.screen, _state(ctx).fields["target"], ("link",)))


def click_dialog(ctx: PredicateContext) -> Action:
    screen = ctx.screen

    def is_close(e: UIElement) -> bool:
        return e.role == "button" and any(
            screen.elements[c].text == "Close" or "close" in screen.elements[c].description
            for c in e.children
        )

    return _click(_find(screen, is_close))


def click_dialog_2(ctx: PredicateContext) -> Action:
    target = _state(ctx).fields["target"]
    if target.lower() == "x":
        return click_dialog(ctx)
    return _click(_by_text(ctx.screen, target, ("button",)))


def click_tab(ctx: PredicateContext) -> Action:
    return _click(_by_text(ctx.screen, f"Tab #{_state(ctx).fields['target']}", ("link",)))


def click_button_sequence(ctx: PredicateContext) -> Action:
    one = _by_text(ctx.screen, "ONE", ("button",))
    last = ctx.action
    if last is not None and last.type is ActionType.CLICK and last.index == one.index:
        return _click(_by_text(ctx.screen, "TWO", ("button",)))
    return _click(one)


_WIDGET_ROLES = {
    "text": ("input",),
    "textarea": ("textarea",),
    "button": ("button",),
    "checkbox": ("checkbox",),
    "radio": ("radio",),
}


def click_widget(ctx: PredicateContext) -> Action:
    target = _state(ctx).fields["target"]
    roles = _WIDGET_ROLES.get(target)
    if roles is None:
        raise OracleStuck(f"unknown widget kind {target!r}")
    return _click(_find(ctx.screen, lambda e: e.role in roles))


def click_collapsible(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    heading = _find(screen, lambda e: e.role == "heading")
    last = ctx.action
    if last is not None and last.type is ActionType.CLICK and last.index == heading.index:
        return _submit(screen)
    return _click(heading)


# -- forms --------------------------------------------------------------------------------------


def focus_text(ctx: PredicateContext) -> Action:
    return _click(_inputs(ctx.screen)[0])


def focus_text_2(ctx: PredicateContext) -> Action:
    n = int(_state(ctx).fields["target"])
    return _click(_inputs(ctx.screen)[n - 1])


def enter_text(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    return _fill_all(ctx, [(_inputs(screen)[0], _state(ctx).fields["target"])], _submit(screen))


def enter_text_2(ctx: PredicateContext) -> Action:
    fields = _state(ctx).fields
    value = fields["text"].upper() if fields["case"] == "upper" else fields["text"].lower()
    screen = ctx.screen
    return _fill_all(ctx, [(_inputs(screen)[0], value)], _submit(screen))


def enter_password(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    value = _state(ctx).fields["target"]
    return _fill_all(ctx, [(f, value) for f in _inputs(screen)], _submit(screen))


def login_user(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = _state(ctx).fields
    user = _find(screen, lambda e: e.editable and e.resource_id == "username")
    password = _find(screen, lambda e: e.editable and e.resource_id == "password")
    return _fill_all(
        ctx,
        [(user, fields["username"]), (password, fields["password"])],
        _submit(screen, ("Login", "Log in", "OK", "Submit")),
    )


def _check_boxes(ctx: PredicateContext, wanted: set[str], role: str) -> Action:
    screen = ctx.screen
    for e in screen.elements:
        if e.role == role and (_label_of(screen, e) in wanted) != e.checked:
            return _click(e)
    return _submit(screen)


def click_checkboxes(ctx: PredicateContext) -> Action:
    fields = _state(ctx).fields
    wanted = {v for k, v in fields.items() if k.startswith("target")}
    return _check_boxes(ctx, wanted, "checkbox")


def click_option(ctx: PredicateContext) -> Action:
    return _check_boxes(ctx, {_state(ctx).fields["target"]}, "radio")


def read_table(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    key = _state(ctx).fields["target"]
    return _fill_all(ctx, [(_inputs(screen)[0], _table_value(screen, key))], _submit(screen))


def _table_value(screen: UITree, key: str) -> str:
    cell = _by_text(screen, key)
    row = screen.elements[cell.parent]
    for i in row.children:
        if i != cell.index and screen.elements[i].text:
            return screen.elements[i].text
    raise OracleStuck(f"no value beside {key!r}")


def read_table_2(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    pairs = []
    for field in _inputs(screen):
        label = _find(
            screen,
            lambda e, f=field: e.parent == f.parent and e.text.endswith(":"),
        )
        pairs.append((field, _table_value(screen, label.text.rstrip(":"))))
    return _fill_all(ctx, pairs, _submit(screen))


_MOVIE_LABELS = {"year": ("year", "date"), "genre": ("genre",), "director": ("director",)}


def _nearest_label(screen: UITree, field: UIElement) -> str:
    """The text nearest ``field`` in the tree: a text child of its parent, else of its
    grandparent, and so on (labels sit before or after inputs, depending on the layout)."""
    node = field
    while node.parent >= 0:
        parent = screen.elements[node.parent]
        for i in parent.children:
            e = screen.elements[i]
            if i != node.index and e.text and not e.editable:
                return e.text
        node = parent
    return ""


def multi_form(ctx: PredicateContext) -> Action:
    """multi-orderings / multi-layouts: fill each input by the label nearest to it."""
    screen = ctx.screen
    fields = _state(ctx).fields
    pairs = []
    for field in _inputs(screen):
        label = _nearest_label(screen, field).lower()
        key = next(
            (k for k, words in _MOVIE_LABELS.items() if any(w in label for w in words)), None
        )
        if key is None:
            raise OracleStuck(f"no field for the label {label!r}")
        pairs.append((field, fields[key]))
    return _fill_all(ctx, pairs, _submit(screen, ("Submit", "Search", "Go!", "Go")))


def copy_paste(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    source = _find(screen, lambda e: e.editable and e.resource_id == "to-copy")
    target = _find(screen, lambda e: e.editable and e.resource_id == "answer-input")
    return _fill_all(ctx, [(target, source.text)], _submit(screen))


def text_transform(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    captcha = _find(screen, lambda e: e.resource_id == "captcha")
    text = "".join(screen.elements[i].text for i in captcha.children)
    return _fill_all(ctx, [(_inputs(screen)[0], text)], _submit(screen))


# -- reading and arithmetic -----------------------------------------------------------------------


_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")


def find_word(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    n = int(_state(ctx).fields["target"])
    paragraph = _find(screen, lambda e: e.role == "text" and len(e.text.split()) > 3)
    word = re.sub(r"[^\w]", "", paragraph.text.split()[n - 1])
    return _fill_all(ctx, [(_inputs(screen)[0], word)], _submit(screen))


_OPS: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "x": lambda a, b: a * b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a // b,
}


def simple_arithmetic(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    problem = _find(screen, lambda e: e.resource_id == "math-problem").text
    match = re.fullmatch(r"\s*(-?\d+)\s*([-+x*/])\s*(-?\d+)\s*=\s*", problem)
    if match is None:
        raise OracleStuck(f"cannot read the problem {problem!r}")
    value = _OPS[match.group(2)](int(match.group(1)), int(match.group(3)))
    return _fill_all(ctx, [(_inputs(screen)[0], str(value))], _submit(screen))


def simple_algebra(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    problem = _find(screen, lambda e: e.resource_id == "math-problem").text.replace(" ", "")
    value: int | None = None
    if (m := re.fullmatch(r"(-?\d+)\+x=(-?\d+)", problem)) or (
        m := re.fullmatch(r"x\+(-?\d+)=(-?\d+)", problem)
    ):
        value = int(m.group(2)) - int(m.group(1))
    elif m := re.fullmatch(r"(-?\d+)-x=(-?\d+)", problem):
        value = int(m.group(1)) - int(m.group(2))
    elif m := re.fullmatch(r"x-(-?\d+)=(-?\d+)", problem):
        value = int(m.group(2)) + int(m.group(1))
    if value is None:
        raise OracleStuck(f"cannot solve {problem!r}")
    return _fill_all(ctx, [(_inputs(screen)[0], str(value))], _submit(screen))


ORACLES: dict[str, Expert] = {
    "click-test": click_test,
    "click-test-2": click_target_button,
    "click-test-transfer": click_target_button,
    "click-button": click_target_button,
    "unicode-test": click_target_button,
    "click-link": click_link,
    "click-dialog": click_dialog,
    "click-dialog-2": click_dialog_2,
    "click-tab": click_tab,
    "click-button-sequence": click_button_sequence,
    "click-widget": click_widget,
    "click-collapsible": click_collapsible,
    "click-checkboxes": click_checkboxes,
    "click-checkboxes-large": click_checkboxes,
    "click-checkboxes-transfer": click_checkboxes,
    "click-option": click_option,
    "focus-text": focus_text,
    "focus-text-2": focus_text_2,
    "enter-text": enter_text,
    "enter-text-dynamic": enter_text,
    "enter-text-2": enter_text_2,
    "enter-password": enter_password,
    "login-user": login_user,
    "read-table": read_table,
    "read-table-2": read_table_2,
    "multi-orderings": multi_form,
    "multi-layouts": multi_form,
    "copy-paste": copy_paste,
    "text-transform": text_transform,
    "find-word": find_word,
    "simple-arithmetic": simple_arithmetic,
    "simple-algebra": simple_algebra,
}
"""Task name -> expert."""
