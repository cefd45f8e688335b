"""Experts for the first MiniWoB++ tasks: buttons, links, dialogs, tabs, text fields,
logins, checkboxes, tables, multi-field forms, copying text and arithmetic."""

from __future__ import annotations

import re
from collections.abc import Callable

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext
from gui_gym.core.ui import UIElement, UITree
from gui_gym.envs.miniwob.oracles.common import (
    OracleStuck,
    click,
    element_with_text,
    fill_then_submit,
    find_element,
    input_fields,
    label_of,
    press_submit,
    task_state,
)

__all__ = [
    "click_button_sequence",
    "click_checkboxes",
    "click_collapsible",
    "click_dialog",
    "click_dialog_2",
    "click_link",
    "click_option",
    "click_tab",
    "click_target_button",
    "click_test",
    "click_widget",
    "copy_paste",
    "enter_password",
    "enter_text",
    "enter_text_2",
    "find_word",
    "focus_text",
    "focus_text_2",
    "login_user",
    "multi_form",
    "read_table",
    "read_table_2",
    "simple_algebra",
    "simple_arithmetic",
    "text_transform",
]


# -- clicks -------------------------------------------------------------------------------------


def click_test(ctx: PredicateContext) -> Action:
    return click(find_element(ctx.screen, lambda e: e.role == "button"))


def click_target_button(ctx: PredicateContext) -> Action:
    return click(element_with_text(ctx.screen, task_state(ctx).fields["target"], ("button",)))


def click_link(ctx: PredicateContext) -> Action:
    return click(element_with_text(ctx.screen, task_state(ctx).fields["target"], ("link",)))


def click_dialog(ctx: PredicateContext) -> Action:
    screen = ctx.screen

    def is_close(e: UIElement) -> bool:
        return e.role == "button" and any(
            screen.elements[c].text == "Close" or "close" in screen.elements[c].description
            for c in e.children
        )

    return click(find_element(screen, is_close))


def click_dialog_2(ctx: PredicateContext) -> Action:
    target = task_state(ctx).fields["target"]
    if target.lower() == "x":
        return click_dialog(ctx)
    return click(element_with_text(ctx.screen, target, ("button",)))


def click_tab(ctx: PredicateContext) -> Action:
    return click(
        element_with_text(ctx.screen, f"Tab #{task_state(ctx).fields['target']}", ("link",))
    )


def click_button_sequence(ctx: PredicateContext) -> Action:
    one = element_with_text(ctx.screen, "ONE", ("button",))
    last = ctx.action
    if last is not None and last.type is ActionType.CLICK and last.index == one.index:
        return click(element_with_text(ctx.screen, "TWO", ("button",)))
    return click(one)


_WIDGET_ROLES = {
    "text": ("input",),
    "textarea": ("textarea",),
    "button": ("button",),
    "checkbox": ("checkbox",),
    "radio": ("radio",),
}


def click_widget(ctx: PredicateContext) -> Action:
    target = task_state(ctx).fields["target"]
    roles = _WIDGET_ROLES.get(target)
    if roles is None:
        raise OracleStuck(f"unknown widget kind {target!r}")
    return click(find_element(ctx.screen, lambda e: e.role in roles))


def click_collapsible(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    heading = find_element(screen, lambda e: e.role == "heading")
    last = ctx.action
    if last is not None and last.type is ActionType.CLICK and last.index == heading.index:
        return press_submit(screen)
    return click(heading)


# -- forms --------------------------------------------------------------------------------------


def focus_text(ctx: PredicateContext) -> Action:
    return click(input_fields(ctx.screen)[0])


def focus_text_2(ctx: PredicateContext) -> Action:
    n = int(task_state(ctx).fields["target"])
    return click(input_fields(ctx.screen)[n - 1])


def enter_text(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    return fill_then_submit(
        ctx, [(input_fields(screen)[0], task_state(ctx).fields["target"])], press_submit(screen)
    )


def enter_text_2(ctx: PredicateContext) -> Action:
    fields = task_state(ctx).fields
    value = fields["text"].upper() if fields["case"] == "upper" else fields["text"].lower()
    screen = ctx.screen
    return fill_then_submit(ctx, [(input_fields(screen)[0], value)], press_submit(screen))


def enter_password(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    value = task_state(ctx).fields["target"]
    return fill_then_submit(ctx, [(f, value) for f in input_fields(screen)], press_submit(screen))


def login_user(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = task_state(ctx).fields
    user = find_element(screen, lambda e: e.editable and e.resource_id == "username")
    password = find_element(screen, lambda e: e.editable and e.resource_id == "password")
    return fill_then_submit(
        ctx,
        [(user, fields["username"]), (password, fields["password"])],
        press_submit(screen, ("Login", "Log in", "OK", "Submit")),
    )


def _check_boxes(ctx: PredicateContext, wanted: set[str], role: str) -> Action:
    screen = ctx.screen
    for e in screen.elements:
        if e.role == role and (label_of(screen, e) in wanted) != e.checked:
            return click(e)
    return press_submit(screen)


def click_checkboxes(ctx: PredicateContext) -> Action:
    fields = task_state(ctx).fields
    wanted = {v for k, v in fields.items() if k.startswith("target")}
    return _check_boxes(ctx, wanted, "checkbox")


def click_option(ctx: PredicateContext) -> Action:
    return _check_boxes(ctx, {task_state(ctx).fields["target"]}, "radio")


def read_table(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    key = task_state(ctx).fields["target"]
    return fill_then_submit(
        ctx, [(input_fields(screen)[0], _table_value(screen, key))], press_submit(screen)
    )


def _table_value(screen: UITree, key: str) -> str:
    cell = element_with_text(screen, key)
    row = screen.elements[cell.parent]
    for i in row.children:
        if i != cell.index and screen.elements[i].text:
            return screen.elements[i].text
    raise OracleStuck(f"no value beside {key!r}")


def read_table_2(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    pairs = []
    for field in input_fields(screen):
        label = find_element(
            screen,
            lambda e, f=field: e.parent == f.parent and e.text.endswith(":"),
        )
        pairs.append((field, _table_value(screen, label.text.rstrip(":"))))
    return fill_then_submit(ctx, pairs, press_submit(screen))


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
    fields = task_state(ctx).fields
    pairs = []
    for field in input_fields(screen):
        label = _nearest_label(screen, field).lower()
        key = next(
            (k for k, words in _MOVIE_LABELS.items() if any(w in label for w in words)), None
        )
        if key is None:
            raise OracleStuck(f"no field for the label {label!r}")
        pairs.append((field, fields[key]))
    return fill_then_submit(ctx, pairs, press_submit(screen, ("Submit", "Search", "Go!", "Go")))


def copy_paste(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    source = find_element(screen, lambda e: e.editable and e.resource_id == "to-copy")
    target = find_element(screen, lambda e: e.editable and e.resource_id == "answer-input")
    return fill_then_submit(ctx, [(target, source.text)], press_submit(screen))


def text_transform(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    captcha = find_element(screen, lambda e: e.resource_id == "captcha")
    text = "".join(screen.elements[i].text for i in captcha.children)
    return fill_then_submit(ctx, [(input_fields(screen)[0], text)], press_submit(screen))


# -- reading and arithmetic -----------------------------------------------------------------------


_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")


def find_word(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    n = int(task_state(ctx).fields["target"])
    paragraph = find_element(screen, lambda e: e.role == "text" and len(e.text.split()) > 3)
    word = re.sub(r"[^\w]", "", paragraph.text.split()[n - 1])
    return fill_then_submit(ctx, [(input_fields(screen)[0], word)], press_submit(screen))


_OPS: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "x": lambda a, b: a * b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a // b,
}


def simple_arithmetic(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    problem = find_element(screen, lambda e: e.resource_id == "math-problem").text
    match = re.fullmatch(r"\s*(-?\d+)\s*([-+x*/])\s*(-?\d+)\s*=\s*", problem)
    if match is None:
        raise OracleStuck(f"cannot read the problem {problem!r}")
    value = _OPS[match.group(2)](int(match.group(1)), int(match.group(3)))
    return fill_then_submit(ctx, [(input_fields(screen)[0], str(value))], press_submit(screen))


def simple_algebra(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    problem = find_element(screen, lambda e: e.resource_id == "math-problem").text.replace(" ", "")
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
    return fill_then_submit(ctx, [(input_fields(screen)[0], str(value))], press_submit(screen))
