"""Scripted experts for MiniWoB++ tasks, driven only through gui-gym's action API.

Each expert reads what an agent reads (the utterance and its fields as miniwob extracts them,
the current ``UITree``, and the last action) and returns the next :class:`Action`. They prove
the DOM -> UITree and action -> miniwob mappings end to end: a test runs each over several
seeds and expects miniwob's raw reward of 1.0, and replays the same miniwob actions on a raw
``miniwob`` env to compare rewards.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext
from gui_gym.core.ui import UIElement, UITree

__all__ = ["ORACLES", "UNSCRIPTED", "Expert"]

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


# -- more experts (issue 24): every task through gui-gym actions ---------------------------------


def _wait() -> Action:
    return Action(ActionType.WAIT)


def _key(name: str) -> Action:
    return Action(ActionType.KEY, text=name)


def _descendants(screen: UITree, e: UIElement) -> list[UIElement]:
    out: list[UIElement] = []
    stack = list(reversed(e.children))
    while stack:
        child = screen.elements[stack.pop()]
        out.append(child)
        stack.extend(reversed(child.children))
    return out


def _ancestor(screen: UITree, e: UIElement, levels: int) -> UIElement:
    for _ in range(levels):
        if e.parent < 0:
            break
        e = screen.elements[e.parent]
    return e


def _by_id(screen: UITree, resource_id: str) -> UIElement | None:
    return next((e for e in screen.elements if e.resource_id == resource_id), None)


def _clicked(ctx: PredicateContext, e: UIElement) -> bool:
    """The last action clicked ``e`` (indices of elements before a change stay put)."""
    last = ctx.action
    return last is not None and last.type is ActionType.CLICK and last.index == e.index


def _last_clicked_position(ctx: PredicateContext, candidates: list[UIElement]) -> int | None:
    last = ctx.action
    if last is None or last.type is not ActionType.CLICK:
        return None
    return next((i for i, e in enumerate(candidates) if e.index == last.index), None)


def _value_of(ctx: PredicateContext, field: UIElement, value: str, submit: Action) -> Action:
    """Type ``value`` into an empty ``field`` once, then ``submit`` (for inputs whose shown
    value differs from the keys typed: dates, times)."""
    if not field.text:
        return Action(ActionType.INPUT, index=field.index, text=value)
    return submit


def click_collapsible_2(ctx: PredicateContext) -> Action:
    """Open the sections one by one (an accordion: opening one closes the others) until the
    link is shown; wait while a clicked section has not started opening."""
    screen = ctx.screen
    want = _state(ctx).fields["target"]
    target = next((e for e in screen.elements if e.role == "link" and e.text == want), None)
    if target is not None:
        return _click(target)
    headings = [e for e in screen.elements if e.role == "heading"]
    if not headings:
        raise OracleStuck("no sections")
    ends = [h.index for h in headings[1:]] + [len(screen.elements)]
    opened = [i for i, (h, end) in enumerate(zip(headings, ends)) if end > h.index + 1]
    clicked = _last_clicked_position(ctx, headings)
    if clicked is not None and clicked not in opened and ctx.step < 40:
        return _wait()
    if ctx.action is not None and ctx.action.type is ActionType.WAIT and not opened:
        return _wait()
    position = opened[-1] + 1 if opened else 0
    return _click(headings[position % len(headings)])


def click_tab_2(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    want = _state(ctx).fields["target"]
    tabs = [
        e
        for e in screen.elements
        if e.role == "link" and e.parent >= 0 and screen.elements[e.parent].role == "listitem"
    ]
    target = next(
        (e for e in screen.elements if e.role == "link" and e.text == want and e not in tabs), None
    )
    if target is not None:
        return _click(target)
    if not tabs:
        raise OracleStuck("no tabs")
    position = _last_clicked_position(ctx, tabs)
    return _click(tabs[(1 if position is None else position + 1) % len(tabs)])  # tab 1 starts open


def choose_list(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    want = _state(ctx).fields["target"]
    select = _find(screen, lambda e: e.role == "select")
    if select.text != want:
        return Action(ActionType.SELECT, index=select.index, text=want)
    return _submit(screen)


def click_menu(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    path = _state(ctx).fields["target"].split(">")
    shown = [
        next((e for e in screen.elements if e.text == name and e.clickable), None) for name in path
    ]
    deepest = max((i for i, e in enumerate(shown) if e is not None), default=None)
    if deepest is None:
        raise OracleStuck(f"no item of {path} is shown")
    element = shown[deepest]
    assert element is not None
    if deepest == len(path) - 1:
        return _point(element)  # the pointer makes the item the menu's active one
    # A submenu opens 300 ms after the mouse comes over its item, and every move restarts
    # that delay: hover once, then wait.
    notes = _notes(ctx)
    if notes.get("hovered") == path[deepest] and ctx.step < 45:
        return _wait()
    notes["hovered"] = path[deepest]
    return Action(ActionType.HOVER, index=element.index)


def click_menu_2(ctx: PredicateContext) -> Action:
    """Open the menu, find the item whose (possibly wrapped) label is asked, hovering
    "Playback" for its submenu. The other half of the episodes name the item by an icon
    drawn in the instruction, which only the screenshot shows."""
    screen = ctx.screen
    match = re.search(r'labeled "([^"]+)"', _state(ctx).fields.get("target", ""))
    if match is None:
        raise OracleStuck("the item is named by an icon only the screenshot shows")
    want = match.group(1)
    items = [e for e in screen.elements if e.role == "listitem"]
    if not items:
        return _click(_by_text(screen, "Menu", ("button",)))
    for item in items:
        words = [e for e in _descendants(screen, item) if e.text and e.role == "text"]
        own = [
            w
            for w in words
            if _ancestor(screen, w, 1).index == item.index
            or _ancestor(screen, w, 2).index == item.index
        ]
        if " ".join(w.text for w in own) == want:
            return _point(own[0])
    notes = _notes(ctx)
    if notes.get("hovered") and ctx.step < 45:
        return _wait()  # the submenu opens 300 ms after the hover
    notes["hovered"] = True
    return Action(ActionType.HOVER, index=_find(screen, lambda e: e.text == "Playback").index)


def navigate_tree(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    want = _state(ctx).fields["target"]
    target = next((e for e in screen.elements if e.text == want and e.role == "text"), None)
    if target is not None:
        return _click(target)
    closed = [e for e in screen.elements if "expandable-hitarea" in e.description]
    if not closed:
        raise OracleStuck(f"{want!r} is not in the tree")
    return _click(closed[0])


def login_user_popup(ctx: PredicateContext) -> Action:
    cancel = _by_id(ctx.screen, "popup-cancel")
    if cancel is not None:
        return _click(cancel)
    return login_user(ctx)


def enter_date(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    month, day, year = _state(ctx).fields["target"].split("/")
    return _value_of(ctx, _inputs(screen)[0], f"{month}{day}{year}", _submit(screen))


def enter_time(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    match = re.fullmatch(r"(\d+):(\d+)\s*([AP]M)", _state(ctx).fields["target"].strip())
    if match is None:
        raise OracleStuck(f"cannot read the time {_state(ctx).fields['target']!r}")
    hour, minute, half = match.groups()
    return _value_of(ctx, _inputs(screen)[0], f"{int(hour):02d}{minute}{half}", _submit(screen))


def guess_number(ctx: PredicateContext) -> Action:
    """Guess 5, then step towards the number as the page's feedback says (it shows only the
    last guess's feedback, so the expert walks rather than bisects: at most 5 guesses)."""
    screen = ctx.screen
    field = _by_id(screen, "tt")
    if field is None:
        raise OracleStuck("no guess field")
    guess = 5
    shown = " ".join(e.text for e in screen.elements if e.text and not e.editable)
    if m := re.search(r"(higher|lower) than\s+(-?\d+)", shown):
        guess = int(m.group(2)) + (1 if m.group(1) == "higher" else -1)
    return _fill(ctx, field, str(guess)) or _submit(screen)


def highlight_text(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    last = ctx.action
    if last is not None and last.type is ActionType.DRAG:
        return _submit(screen)
    if "target" in _state(ctx).fields:
        n = int(_state(ctx).fields["target"])
        box = _find(screen, lambda e: e.resource_id == "randomText")
        paragraph = [screen.elements[i] for i in box.children if screen.elements[i].text][n - 1]
    else:
        paragraph = _find(screen, lambda e: e.resource_id == "randomText")
    x0, y0, x1, y1 = paragraph.bounds
    return Action(ActionType.DRAG, x=x0, y=y0 + 2, end_x=x1 - 1, end_y=y1 - 2)


def scroll_text(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    area = _find(screen, lambda e: e.resource_id == "text-area")
    word = re.sub(r"[^\w]", "", area.text.split()[-1])
    return _fill_all(
        ctx, [(_by_id(screen, "answer-input") or _inputs(screen)[1], word)], _submit(screen)
    )


def scroll_text_2(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    area = _find(screen, lambda e: e.resource_id == "text-area")
    if ctx.step < 12:  # 50 px a wheel step; the text is at most ~600 px tall
        return Action(
            ActionType.SCROLL,
            direction="up" if _state(ctx).fields["target"] == "top" else "down",
            index=area.index,
        )
    return _submit(screen)


def copy_paste_2(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    n = int(_state(ctx).fields["target"])
    source = _find(screen, lambda e: e.resource_id == f"text-{n}")
    target = _find(screen, lambda e: e.resource_id == "answer-input")
    return _fill_all(ctx, [(target, source.text)], _submit(screen))


def grid_coordinate(ctx: PredicateContext) -> Action:
    fields = _state(ctx).fields
    return _click(_find(ctx.screen, lambda e: e.resource_id == f"({fields['x']},{fields['y']})"))


def visual_addition(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    total = sum(
        1
        for side in ("visual-1", "visual-2")
        for e in _descendants(screen, _find(screen, lambda e, s=side: e.resource_id == s))
        if "addition-block" in e.description
    )
    return _fill_all(
        ctx, [(_by_id(screen, "math-answer") or _inputs(screen)[0], str(total))], _submit(screen)
    )


def _as_number(text: str) -> float | None:
    try:
        return float(text.replace(",", "").replace("$", ""))
    except ValueError:
        return None


def use_spinner(ctx: PredicateContext) -> Action:
    """Focus the spinner and step it with the arrow keys (it ignores typed text)."""
    screen = ctx.screen
    field = _find(screen, lambda e: e.resource_id == "spinner")
    want = int(_state(ctx).fields["target"])
    value = int(field.text or 0)
    if value == want:
        return _submit(screen)
    if not field.focused:
        return _click(field)
    return _key("ArrowUp" if want > value else "ArrowDown")


def use_autocomplete(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = _state(ctx).fields
    field = _find(screen, lambda e: e.resource_id == "tags")
    start, end = fields.get("start", ""), fields.get("end", "")

    def fits(text: str) -> bool:
        return bool(text) and text.startswith(start) and text.endswith(end)

    if fits(field.text):
        return _submit(screen)
    menu = [
        e
        for e in screen.elements
        if e.index > field.index and e.role in ("text", "listitem") and fits(e.text)
    ]
    if menu:
        return _click(menu[0])
    if not field.text:
        return Action(ActionType.INPUT, index=field.index, text=start or end[:2])
    return _wait()


def _email_row(screen: UITree, sender: str) -> UIElement:
    name = _find(screen, lambda e: e.text == sender and e.role == "text")
    return _ancestor(screen, name, 2)


def email_inbox(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = _state(ctx).fields
    task = fields.get("task") or ("forward" if "to" in fields else "reply")
    if (text := _by_id(screen, "reply-text")) is not None:
        return _fill(ctx, text, fields["message"]) or _click(_by_id(screen, "send-reply"))  # type: ignore[arg-type]
    if _by_id(screen, "forward-text") is not None:
        to = _find(screen, lambda e: e.role == "input")
        return _fill(ctx, to, fields["to"]) or _click(_by_id(screen, "send-forward"))  # type: ignore[arg-type]
    if _by_id(screen, "close-email") is not None:
        if task == "reply":
            return _click(_by_text(screen, "Reply"))
        if task == "forward":
            return _click(_by_text(screen, "Forward"))
        icon = "trash" if task == "delete" else "star"
        return _click(_find(screen, lambda e: e.description.split()[:1] == [icon]))
    row = _email_row(screen, fields["by"])
    if task in ("delete", "star"):
        icon = "trash" if task == "delete" else "star"
        return _click(
            next(e for e in _descendants(screen, row) if e.description.split()[:1] == [icon])
        )
    return _click(_find(screen, lambda e: e.text == fields["by"] and e.role == "text"))


def social_media(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = _state(ctx).fields
    button = fields["button"]
    # the "more" menu's items carry the user: "Mute @vitae"
    item = next(
        (
            e
            for e in screen.elements
            if e.clickable and e.text in (button, f"{button} {fields['user']}")
        ),
        None,
    )
    if item is not None:
        return _click(item)
    handle = _find(screen, lambda e: e.text == fields["user"])
    post = _ancestor(screen, handle, 2)
    icon = {"Reply": "reply", "Retweet": "retweet", "Like": "like"}.get(button, "more")
    return _click(
        next(e for e in _descendants(screen, post) if e.description.split()[:1] == [icon])
    )


def social_media_all(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = _state(ctx).fields
    wanted = int(fields["amount"]) if "amount" in fields else None
    icon = fields["button"].lower()
    done = pending = 0
    for handle in (e for e in screen.elements if e.text == fields["user"]):
        post = _ancestor(screen, handle, 2)
        button = next(e for e in _descendants(screen, post) if e.description.split()[:1] == [icon])
        if "clicked" in button.description or "active" in button.description:
            done += 1
        elif wanted is None or done + pending < wanted:
            return _click(button)
    return _submit(screen, (fields.get("submit", "Submit"),))


ORACLES.update(
    {
        "click-collapsible-nodelay": click_collapsible,
        "click-collapsible-2": click_collapsible_2,
        "click-collapsible-2-nodelay": click_collapsible_2,
        "click-tab-2": click_tab_2,
        "click-tab-2-easy": click_tab_2,
        "click-tab-2-medium": click_tab_2,
        "click-tab-2-hard": click_tab_2,
        "choose-list": choose_list,
        "click-menu": click_menu,
        "click-menu-2": click_menu_2,
        "navigate-tree": navigate_tree,
        "login-user-popup": login_user_popup,
        "enter-date": enter_date,
        "enter-time": enter_time,
        "guess-number": guess_number,
        "highlight-text": highlight_text,
        "highlight-text-2": highlight_text,
        "scroll-text": scroll_text,
        "scroll-text-2": scroll_text_2,
        "copy-paste-2": copy_paste_2,
        "grid-coordinate": grid_coordinate,
        "visual-addition": visual_addition,
        "use-spinner": use_spinner,
        "use-autocomplete": use_autocomplete,
        "use-autocomplete-nodelay": use_autocomplete,
        "email-inbox": email_inbox,
        "email-inbox-delete": email_inbox,
        "email-inbox-forward": email_inbox,
        "email-inbox-forward-nl": email_inbox,
        "email-inbox-forward-nl-turk": email_inbox,
        "email-inbox-important": email_inbox,
        "email-inbox-nl-turk": email_inbox,
        "email-inbox-noscroll": email_inbox,
        "email-inbox-reply": email_inbox,
        "email-inbox-star-reply": email_inbox,
        "social-media": social_media,
        "social-media-all": social_media_all,
        "social-media-some": social_media_all,
    }
)


def _notes(ctx: PredicateContext) -> dict:
    """What the expert noted earlier this episode (``MiniWoBState.notes``)."""
    return _state(ctx).notes


def ascending_numbers(ctx: PredicateContext) -> Action:
    """Click 1, which hides the numbers behind squares; then click the squares where 2, 3,
    ... were, as a person remembers them."""
    notes = _notes(ctx)
    screen = ctx.screen
    numbers = {
        int(e.text): e.center for e in screen.elements if e.role == "text" and e.text.isdigit()
    }
    if numbers:
        notes["where"] = numbers
        notes["next"] = 2
        return _click(_find(screen, lambda e: e.text == "1"))
    where = notes.get("where")
    if not where or notes["next"] not in where:
        raise OracleStuck("the numbers were hidden before they were seen")
    x, y = where[notes["next"]]
    notes["next"] += 1
    return Action(ActionType.CLICK, x=x, y=y)


def _slider_to(
    ctx: PredicateContext, slider: UIElement, value_shown: UIElement, want: int, key: str
) -> Action | None:
    """Next action to set a jQuery UI slider to ``want`` (None once it shows it): drag the
    handle to both ends to read the range, drag to where ``want`` falls, then step with the
    arrow keys. ``key`` names this slider in the notes."""
    screen = ctx.screen
    value = int(value_shown.text)
    if value == want:
        return None
    handle = next(e for e in _descendants(screen, slider) if "ui-slider-handle" in e.description)
    notes = _notes(ctx).setdefault(key, {})
    x0, y0, x1, y1 = slider.bounds
    vertical = (y1 - y0) > (x1 - x0)
    ends = (
        ((x0 + x1) / 2, y1 - 1, (x0 + x1) / 2, y0 + 1)
        if vertical
        else (x0 + 1, (y0 + y1) / 2, x1 - 1, (y0 + y1) / 2)
    )
    hx, hy = handle.center
    if "low" not in notes:
        if notes.get("dragged") == "low":
            notes["low"] = value
        else:
            notes["dragged"] = "low"
            return Action(ActionType.DRAG, x=hx, y=hy, end_x=ends[0], end_y=ends[1])
    if "high" not in notes:
        if notes.get("dragged") == "high":
            notes["high"] = value
        else:
            notes["dragged"] = "high"
            return Action(ActionType.DRAG, x=hx, y=hy, end_x=ends[2], end_y=ends[3])
    if not notes.get("placed"):
        notes["placed"] = True
        low, high = notes["low"], notes["high"]
        share = (want - low) / (high - low) if high != low else 0.0
        tx = ends[0] + (ends[2] - ends[0]) * share
        ty = ends[1] + (ends[3] - ends[1]) * share
        return Action(ActionType.DRAG, x=hx, y=hy, end_x=tx, end_y=ty)
    return _key("ArrowUp" if want > value else "ArrowDown")


def use_slider(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    slider = _find(screen, lambda e: e.resource_id == "slider")
    shown = _find(screen, lambda e: e.resource_id == "val")
    want = int(_state(ctx).fields["target"])
    return _slider_to(ctx, slider, shown, want, "slider") or _submit(screen)


def use_slider_2(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = _state(ctx).fields
    for n in (1, 2, 3):
        slider = _find(screen, lambda e, n=n: e.resource_id == f"slider-{n}")
        shown = _find(screen, lambda e, n=n: e.resource_id == f"val-{n}")
        action = _slider_to(ctx, slider, shown, int(fields[f"n{n}"]), f"slider-{n}")
        if action is not None:
            return action
    return _submit(screen)


def form_sequence(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = _state(ctx).fields
    slider = _find(screen, lambda e: e.resource_id == "slider")
    shown = _find(screen, lambda e: e.resource_id == "val")
    action = _slider_to(ctx, slider, shown, int(fields["slider target"]), "slider")
    if action is not None:
        return action
    box = _find(screen, lambda e: e.resource_id == f"checkbox-{fields['checkbox target']}")
    if not box.checked:
        return _click(box)
    return _submit(screen)


def form_sequence_2(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = _state(ctx).fields
    radio = [e for e in screen.elements if e.role == "radio"][int(fields["radio target"]) - 1]
    if not radio.checked:
        return _click(radio)
    field = _find(screen, lambda e: e.resource_id == f"input-{fields['textbox target']}")
    return _fill_all(ctx, [(field, fields["textbox text"])], _submit(screen))


def generate_number(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    utterance = _state(ctx).utterance
    shown = _find(screen, lambda e: e.resource_id == "display-number").text
    value = int(shown) if re.fullmatch(r"-?\d+", shown) else None
    if value is not None:
        if m := re.search(r"less than (-?\d+)", utterance):
            good = value < int(m.group(1))
        elif m := re.search(r"greater than (-?\d+)", utterance):
            good = value > int(m.group(1))
        elif "even" in utterance:
            good = value % 2 == 0
        elif "odd" in utterance:
            good = value % 2 == 1
        else:
            raise OracleStuck(f"unknown criterion in {utterance!r}")
        if good:
            return _click(_find(screen, lambda e: e.resource_id == "submit"))
    return _click(_find(screen, lambda e: e.resource_id == "generate"))


def odd_or_even(ctx: PredicateContext) -> Action:
    """Mark each number in turn (the marks leave no trace in the DOM reading, so the expert
    notes how many it marked)."""
    screen = ctx.screen
    notes = _notes(ctx)
    rows = [
        e
        for e in screen.elements
        if e.role == "text" and re.fullmatch(r"-?\d+", e.text) and e.parent >= 0
    ]
    done = notes.get("marked", 0)
    if done >= len(rows):
        return _click(_find(screen, lambda e: e.resource_id == "submit"))
    notes["marked"] = done + 1
    number = rows[done]
    row = _ancestor(screen, number, 2)
    label = "Even" if int(number.text) % 2 == 0 else "Odd"
    return _click(next(e for e in _descendants(screen, row) if e.text == label))


def search_engine(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = _state(ctx).fields
    notes = _notes(ctx)
    field = _find(screen, lambda e: e.resource_id == "search-text")
    content = _by_id(screen, "page-content")
    results = (
        [e for e in _descendants(screen, content) if e.role == "link"]
        if content is not None
        else []
    )
    if not results:
        return _fill(ctx, field, fields["query"]) or _click(_by_id(screen, "search"))  # type: ignore[arg-type]
    rank = int(fields["rank"])
    page = (rank - 1) // 3 + 1
    if notes.get("page", 1) != page:
        notes["page"] = page
        pages = _find(screen, lambda e: e.resource_id == "pagination")
        return _click(next(e for e in _descendants(screen, pages) if e.text == str(page)))
    return _click(results[(rank - 1) % 3])


def terminal(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    notes = _notes(ctx)
    field = _find(screen, lambda e: e.resource_id == "terminal-target")
    extension = re.search(r"extension (\S+)", _state(ctx).utterance)
    if extension is None:
        raise OracleStuck(f"cannot read the file to delete from {_state(ctx).utterance!r}")
    ext = extension.group(1).rstrip(".")
    stage = notes.get("stage", "ls")
    if stage == "ls":
        notes["stage"] = "ls-enter"
        return Action(ActionType.INPUT, index=field.index, text="ls")
    if stage == "ls-enter":
        notes["stage"] = "rm"
        return Action(ActionType.ENTER)
    if stage == "rm":
        names = [w for e in screen.elements for w in e.text.split() if w.endswith(ext)]
        if not names:
            raise OracleStuck(f"ls shows no file ending in {ext}")
        notes["stage"] = "rm-enter"
        return Action(ActionType.INPUT, index=field.index, text=f"rm {names[0]}")
    return Action(ActionType.ENTER)


_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def _winner(board: list[str]) -> str:
    for a, b, c in _LINES:
        if board[a] in ("x", "o") and board[a] == board[b] == board[c]:
            return board[a]
    return ""


def _wins_for(board: str, mark: str) -> list[int]:
    """Cells where ``mark`` would complete a line."""
    out = []
    for line in _LINES:
        marks = [board[i] for i in line]
        if marks.count(mark) == 2 and marks.count(".") == 1:
            out.append(line[marks.index(".")])
    return out


def _move_value(board: str, cell: int) -> float:
    """Chance that X wins after playing ``cell`` on ``board`` ("." empty), against the
    page's O: it moves at random 55% of the time, and otherwise takes a win, else blocks
    X, else moves at random (tic-tac-toe.html's computerMove)."""
    after = board[:cell] + "x" + board[cell + 1 :]
    if _winner(list(after)) == "x":
        return 1.0
    free = [i for i, v in enumerate(after) if v == "."]
    if not free:
        return 0.0  # a draw is not a win
    smart = _wins_for(after, "o") or _wins_for(after, "x") or free
    chance = 0.0
    for weight, moves in ((0.55, free), (0.45, smart)):
        for o_cell in moves:
            reply = after[:o_cell] + "o" + after[o_cell + 1 :]
            if _winner(list(reply)) != "o":
                chance += weight / len(moves) * _x_win_chance(reply)
    return chance


@functools.lru_cache(maxsize=20_000)  # at most 3**9 boards
def _x_win_chance(board: str) -> float:
    """Chance that X, to move on ``board``, wins when it plays its best."""
    free = [i for i, v in enumerate(board) if v == "."]
    return max((_move_value(board, cell) for cell in free), default=0.0)


def _best_move(board: list[str]) -> int:
    """The X move that most often wins against the page's O."""
    text = "".join(v or "." for v in board)
    free = [i for i, v in enumerate(text) if v == "."]
    return max(free, key=lambda cell: _move_value(text, cell))


def tic_tac_toe(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    cells = [_find(screen, lambda e, i=i: e.resource_id == f"ttt-{i}") for i in range(9)]
    board = [
        "x" if "mark-x" in c.description else "o" if "mark-o" in c.description else ""
        for c in cells
    ]
    return _click(cells[_best_move(board)])


ORACLES.update(
    {
        "ascending-numbers": ascending_numbers,
        "use-slider": use_slider,
        "use-slider-2": use_slider_2,
        "form-sequence": form_sequence,
        "form-sequence-2": form_sequence_2,
        "generate-number": generate_number,
        "odd-or-even": odd_or_even,
        "search-engine": search_engine,
        "terminal": terminal,
        "tic-tac-toe": tic_tac_toe,
    }
)


_MONTHS = [
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


def choose_date(ctx: PredicateContext) -> Action:
    """Open the date picker, page to the month with Prev/Next, click the day."""
    screen = ctx.screen
    fields = _state(ctx).fields
    month, day, year = int(fields["month"]), int(fields["day"]), int(fields["year"])
    field = _find(screen, lambda e: e.resource_id == "datepicker")
    if field.text == f"{month:02d}/{day:02d}/{year}":
        return _submit(screen)
    picker = _by_id(screen, "ui-datepicker-div")
    shown = [e.text for e in _descendants(screen, picker)] if picker is not None else []
    names = [t for t in shown if t in _MONTHS]
    years = [int(t) for t in shown if re.fullmatch(r"\d{4}", t)]
    if not names or not years:
        return _click(field)
    current = years[0] * 12 + _MONTHS.index(names[0])
    wanted = year * 12 + month - 1
    if current != wanted:
        label = "Prev" if wanted < current else "Next"
        return _click(next(e for e in _descendants(screen, picker) if e.text == label))  # type: ignore[arg-type]
    return _click(
        next(e for e in _descendants(screen, picker) if e.role == "link" and e.text == str(day))  # type: ignore[arg-type]
    )


def phone_book(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = _state(ctx).fields
    heading = _find(screen, lambda e: e.role == "heading")
    if heading.text != fields["name"]:
        pages = _find(screen, lambda e: e.resource_id == "pagination")
        return _click(next(e for e in _descendants(screen, pages) if e.text == ">"))
    wanted = fields["target"].split()[0].lower()
    label = _find(screen, lambda e: e.text.rstrip(":").lower() == wanted)
    row = screen.elements[label.parent]
    return _click(next(e for e in _descendants(screen, row) if e.role == "link"))


def sign_agreement(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = _state(ctx).fields
    if "name" not in fields:  # "Click the cancel button."
        return _click(_by_text(screen, fields["button"], ("button",)))
    area = _find(screen, lambda e: e.resource_id == "text-area")
    notes = _notes(ctx)
    # The textarea is disabled (no keys) and 1,400 to 2,500 px tall: wheel steps of 50 px
    # each, as many as its text needs (at most 1.25 px of height a character, in its
    # 85 px window; the page unlocks 10 px before the end), and not more: at 150 ms a
    # step a fixed worst-case count runs into the 10 s limit on a loaded machine.
    needed = math.ceil((1.25 * len(area.text) - 95) / 50) + 1
    if notes.get("scrolls", 0) < needed:
        notes["scrolls"] = notes.get("scrolls", 0) + 1
        return Action(ActionType.SCROLL, direction="down", index=area.index)
    field = _find(screen, lambda e: e.resource_id == "name")
    return _fill(ctx, field, fields["name"]) or _click(
        _by_text(screen, fields["button"], ("button",))
    )


def _minutes(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)h\s*(\d+)m\s*", text)
    if m is None:
        raise OracleStuck(f"cannot read the duration {text!r}")
    return int(m.group(1)) * 60 + int(m.group(2))


def _offers(screen: UITree) -> list[tuple[int, int, UIElement]]:
    """``(minutes, price, book button)`` of each offer card (buy-ticket, book-flight)."""
    offers = []
    for button in (e for e in screen.elements if e.role == "button" and e.text.startswith("Book")):
        card = button
        duration = None
        while duration is None and card.parent >= 0:
            card = screen.elements[card.parent]
            duration = next(
                (e.text for e in _descendants(screen, card) if re.fullmatch(r"\d+h \d+m", e.text)),
                None,
            )
        if duration is None or "$" not in button.text:
            continue
        price = int(button.text.rsplit("$", 1)[1].replace(",", ""))
        offers.append((_minutes(duration), price, button))
    return offers


def buy_ticket(ctx: PredicateContext) -> Action:
    target = _state(ctx).fields["target"]
    offers = _offers(ctx.screen)
    if not offers:
        raise OracleStuck("no tickets shown")
    key = {
        "shortest duration": lambda o: o[0],
        "longest duration": lambda o: -o[0],
        "cheapest cost": lambda o: o[1],
        "most expensive cost": lambda o: -o[1],
    }.get(target)
    if key is None:
        raise OracleStuck(f"unknown criterion {target!r}")
    return _click(min(offers, key=key)[2])


def form_sequence_3(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = _state(ctx).fields
    want = fields["dropdown target"]
    label = next(e for e in screen.elements if "label" in e.description.split() or e.index == 6)
    if _notes(ctx).get("chosen"):
        return _click(_by_text(screen, fields["button target"], ("button",)))
    option = next((e for e in screen.elements if e.role == "listitem" and e.text == want), None)
    if option is None:
        return _click(label)
    _notes(ctx)["chosen"] = True
    return _click(option)


_DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def drag_in_direction(ctx: PredicateContext) -> Action:
    """drag-circle / drag-single-shape: drag the shape 30 px the asked way, then submit."""
    screen = ctx.screen
    if ctx.action is not None and ctx.action.type is ActionType.DRAG:
        return _submit(screen)
    shape = _find(
        screen, lambda e: e.parent >= 0 and screen.elements[e.parent].role == "image" and not e.text
    )
    dx, dy = _DIRECTIONS[_state(ctx).fields["target"].split()[0]]
    x, y = shape.center
    return Action(ActionType.DRAG, x=x, y=y, end_x=x + 30 * dx, end_y=y + 30 * dy)


def resize_textarea(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    if ctx.action is not None and ctx.action.type is ActionType.DRAG:
        return _submit(screen)
    target = _state(ctx).fields["target"]
    grow = "larger" in target
    handles = [e for e in screen.elements if "ui-resizable-handle" in e.description]
    corner = min(handles, key=lambda e: (e.bounds[2] - e.bounds[0]) + (e.bounds[3] - e.bounds[1]))
    x, y = corner.center
    step = 15 if grow else -15
    dx, dy = (step, 0) if "width" in target else (0, step)
    return Action(ActionType.DRAG, x=x, y=y, end_x=x + dx, end_y=y + dy)


def _sortable_items(screen: UITree) -> list[UIElement]:
    box = _find(screen, lambda e: e.resource_id == "sortable")
    return [
        next(c for c in (screen.elements[i] for i in screen.elements[li].children) if c.text)
        for li in box.children
    ]


def _move_in_list(items: list[UIElement], source: int, target: int) -> Action:
    """Drag item ``source`` to position ``target`` of a jQuery UI sortable: drop it just past
    the middle of the item now at ``target``, on the side it comes from."""
    x, y = items[source].center
    x0, y0, x1, y1 = items[target].bounds
    end_y = y1 - 2 if target > source else y0 + 2
    return Action(ActionType.DRAG, x=x, y=y, end_x=x, end_y=end_y)


def drag_items(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    goal = _state(ctx).fields["target"].rstrip(".")
    items = _sortable_items(screen)
    names = [e.text for e in items]
    name = next((n for n in names if goal.startswith(n + " ")), None)
    if name is None:
        raise OracleStuck(f"cannot read {goal!r}")
    rest, source = goal[len(name) + 1 :], names.index(name)
    if m := re.fullmatch(r"to the (\d+)\w* position", rest):
        target = int(m.group(1)) - 1
    else:
        moves = {"to the top": 0, "to the bottom": len(names) - 1}
        steps = {"down by one position": source + 1, "up by one position": source - 1}
        target = moves.get(rest, steps.get(rest, -1))
        if target < 0:
            raise OracleStuck(f"cannot read {goal!r}")
        if _notes(ctx).setdefault("target", target) != target:  # the list moved under us
            target = _notes(ctx)["target"]
    if source == target:
        return _submit(screen)
    return _move_in_list(items, source, target)


def drag_sort_numbers(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    items = _sortable_items(screen)
    values = [int(e.text) for e in items]
    order = sorted(values)
    for position, value in enumerate(order):
        if values[position] != value:
            return _move_in_list(items, values.index(value), position)
    return _submit(screen)


ORACLES.update(
    {
        "choose-date": choose_date,
        "choose-date-easy": choose_date,
        "choose-date-medium": choose_date,
        "choose-date-nodelay": choose_date,
        "phone-book": phone_book,
        "sign-agreement": sign_agreement,
        "buy-ticket": buy_ticket,
        "form-sequence-3": form_sequence_3,
        "drag-circle": drag_in_direction,
        "drag-single-shape": drag_in_direction,
        "resize-textarea": resize_textarea,
        "drag-items": drag_items,
        "drag-sort-numbers": drag_sort_numbers,
    }
)


def _colour(e: UIElement) -> tuple[int, int, int] | None:
    """The ``#rrggbb`` background the screen shows for a text-less leaf, as integers."""
    m = re.search(r"#([0-9a-f]{6})\b", e.description)
    if m is None:
        return None
    value = int(m.group(1), 16)
    return value >> 16, (value >> 8) & 255, value & 255


# The colours click-color names (CSS's), as a person knows them.
_NAMED_COLOURS = {
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


def click_color(ctx: PredicateContext) -> Action:
    want = _NAMED_COLOURS.get(_state(ctx).fields["target"].lower())
    if want is None:
        raise OracleStuck(f"unknown colour {_state(ctx).fields['target']!r}")
    boxes = [(e, c) for e in ctx.screen.elements if "color" in e.description and (c := _colour(e))]
    # white boxes carry no background colour in the reading (white is the page's)
    for e in (e for e in ctx.screen.elements if e.description == "color"):
        boxes.append((e, (255, 255, 255)))
    if not boxes:
        raise OracleStuck("no colour boxes")
    return _click(min(boxes, key=lambda b: sum((x - y) ** 2 for x, y in zip(b[1], want)))[0])


def click_shades(ctx: PredicateContext) -> Action:
    """Click every swatch whose hue is the asked colour's (red, green or blue channel
    largest), then submit; clicked swatches are noted (their mark is not in the reading)."""
    screen = ctx.screen
    channel = ("red", "green", "blue").index(_state(ctx).fields["target"])
    notes = _notes(ctx).setdefault("clicked", set())
    for e in screen.elements:
        colour = _colour(e)
        if colour is None or e.index in notes:
            continue
        if colour[channel] == max(colour) and sorted(colour)[1] < colour[channel]:
            notes.add(e.index)
            return _click(e)
    return _submit(screen)


_SHAPE_NAMES = {"circle": "Circle", "rect": "Rectangle", "polygon": "Triangle"}


def identify_shape(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    svg = _find(screen, lambda e: e.resource_id == "area_svg")
    shape = next(iter(_descendants(screen, svg)), None)
    if shape is None:
        raise OracleStuck("no figure")
    if shape.text:
        answer = "Number" if shape.text.isdigit() else "Letter"
    else:
        answer = _SHAPE_NAMES.get(shape.description.split()[0] if shape.description else "", "")
    if not answer:
        raise OracleStuck(f"unknown figure {shape.description!r}")
    return _click(_by_text(screen, answer, ("button",)))


def _click_then_submit(ctx: PredicateContext, x: float, y: float) -> Action:
    if ctx.action is not None and ctx.action.has_point and ctx.action.type is ActionType.CLICK:
        return _submit(ctx.screen)
    return Action(ActionType.CLICK, x=x, y=y)


def draw_line(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    if ctx.action is not None and ctx.action.type is ActionType.DRAG:
        return _click(_by_text(screen, "Submit", ("button",)))
    dot = _find(screen, lambda e: e.resource_id == "circ")
    x, y = dot.center
    if _state(ctx).fields["direction"] == "vertical":
        return Action(ActionType.DRAG, x=x, y=y - 25, end_x=x, end_y=y + 25)
    return Action(ActionType.DRAG, x=x - 25, y=y, end_x=x + 25, end_y=y)


def _point(e: UIElement) -> Action:
    """A click at the element's centre (a real mouse click: SVG widgets ignore the
    scripted click that CLICK(i) sends to an element with a ref)."""
    x, y = e.center
    return Action(ActionType.CLICK, x=x, y=y)


def click_pie(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    want = _state(ctx).fields["target"]
    item = next((e for e in screen.elements if e.text == want), None)
    if item is not None and (item.bounds[2] - item.bounds[0]) > 2:
        title = screen.elements[item.parent].resource_id  # wheelnav-<id>-title-<k>
        if "-title-" in title and "fill #ffffff" in item.description:
            # the item that starts selected takes no real click (its slice lets the mouse
            # through): miniwob's element click on its slice, as CLICK(i) sends, reaches it
            slice_id = title.replace("-title-", "-slice-")
            return _click(_find(screen, lambda e: e.resource_id == slice_id))
        # a point of the item's slice between the pie's centre and its label (a label at
        # the rim can sit outside the slice's clickable shape)
        hub = _find(screen, lambda e: e.resource_id.endswith("-spreader")).center
        x, y = item.center
        return Action(
            ActionType.CLICK,
            x=round(hub[0] + 0.75 * (x - hub[0])),
            y=round(hub[1] + 0.75 * (y - hub[1])),
        )
    if _notes(ctx).get("opened") and ctx.step < 40:
        return _wait()  # the menu is still opening
    _notes(ctx)["opened"] = True
    return _point(_find(screen, lambda e: e.text == "+"))


def drag_box(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    if ctx.action is not None and ctx.action.type is ActionType.DRAG:
        return _submit(screen)
    small = _find(screen, lambda e: e.resource_id == "draggableSmall")
    large = _find(screen, lambda e: e.resource_id == "draggableLarge")
    return Action(ActionType.DRAG, index=small.index, end_index=large.index)


_SHAPE_WORDS = {
    "triangles": "polygon",
    "rectangles": "rect",
    "circles": "circle",
    "squares": "rect",
}


def drag_shapes(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    kind = _SHAPE_WORDS.get(_state(ctx).fields["target"])
    if kind is None:
        raise OracleStuck(f"the shapes are named by {_state(ctx).fields['target']!r}")
    box = _find(screen, lambda e: e.resource_id == "shape-container")
    bx0, by0, bx1, by1 = box.bounds
    for e in screen.elements:
        if e.description.split()[:1] != [kind] or e.index == box.index:
            continue
        x, y = e.center
        if not (bx0 < x < bx1 and by0 < y < by1):
            return Action(ActionType.DRAG, x=x, y=y, end_x=(bx0 + bx1) / 2, end_y=(by0 + by1) / 2)
    return _submit(screen)


ORACLES.update(
    {
        "click-color": click_color,
        "click-shades": click_shades,
        "identify-shape": identify_shape,
        "draw-line": draw_line,
        "click-pie": click_pie,
        "click-pie-nodelay": click_pie,
        "drag-box": drag_box,
        "drag-shapes": drag_shapes,
    }
)


def find_greatest(ctx: PredicateContext) -> Action:
    """Turn each card over (one shows at a time), note its number, then show the greatest
    and submit."""
    screen = ctx.screen
    notes = _notes(ctx).setdefault("cards", {})
    holder = _find(screen, lambda e: e.resource_id == "cardholder")
    cards = [screen.elements[i] for i in holder.children]
    for position, card in enumerate(cards):
        shown = [e.text for e in _descendants(screen, card) if re.fullmatch(r"-?\d+", e.text)]
        if shown:
            notes[position] = int(shown[0])
    unseen = [p for p in range(len(cards)) if p not in notes]
    if unseen:
        return _click(cards[unseen[0]])
    best = max(notes, key=notes.__getitem__)
    if not any(re.fullmatch(r"-?\d+", e.text) for e in _descendants(screen, cards[best])):
        return _click(cards[best])
    return _click(_find(screen, lambda e: e.resource_id == "submit"))


ORACLES["find-greatest"] = find_greatest  # text-editor: oracle_forms.py


# The shapes pages' colours (miniwob's common/shapes.js), as a person names them.
_SHAPE_COLOURS = {
    "#ff0000": "red",
    "#008000": "green",
    "#0000ff": "blue",
    "#00ffff": "aqua",
    "#000000": "black",
    "#ff00ff": "magenta",
    "#ffff00": "yellow",
}
_SHAPE_TAGS = {"circle": "circle", "rect": "rectangle", "polygon": "triangle"}


def _shape_of(e: UIElement) -> dict[str, str] | None:
    """A shapes-page item as a person describes it: size, colour, type and its text (the
    letter, the digit, or the shape's name); None for what is not an item."""
    fill = re.search(r"fill (#[0-9a-f]{6})", e.description)
    if fill is None or fill.group(1) not in _SHAPE_COLOURS:
        return None
    if e.text:
        kind, text = ("digit" if e.text.isdigit() else "letter"), e.text
    else:
        tag = e.description.split()[0]
        if tag not in _SHAPE_TAGS:
            return None
        kind, text = "shape", _SHAPE_TAGS[tag]
    size = "large" if e.bounds[3] - e.bounds[1] >= 16 else "small"
    return {"size": size, "color": _SHAPE_COLOURS[fill.group(1)], "type": kind, "text": text}


def _matches(item: dict[str, str], size: str, colour: str, thing: str) -> bool:
    """miniwob's shapes.shapeMatchesText."""
    return (
        (not size or item["size"] == size)
        and (not colour or item["color"] == colour)
        and (thing in ("", "item") or thing in (item["text"], item["type"]))
    )


def _wanted_shape(fields: dict[str, str]) -> tuple[str, str, str]:
    thing = fields.get("type") or fields.get("target") or "item"
    known = set(_SHAPE_TAGS.values()) | {"item", "shape", "letter", "digit"}
    if thing not in known and thing.endswith("s") and thing[:-1] in known:
        thing = thing[:-1]
    return fields.get("size", ""), fields.get("color", ""), thing


def _items(screen: UITree) -> list[tuple[UIElement, dict[str, str]]]:
    svg = _find(screen, lambda e: e.resource_id == "area_svg")
    return [
        (e, item)
        for e in _descendants(screen, svg)
        if e.resource_id != "shape-container" and (item := _shape_of(e)) is not None
    ]


def click_shape(ctx: PredicateContext) -> Action:
    size, colour, thing = _wanted_shape(_state(ctx).fields)
    for e, item in _items(ctx.screen):
        if _matches(item, size, colour, thing):
            return _point(e)
    raise OracleStuck(f"no {size} {colour} {thing} on the page")


def count_shape(ctx: PredicateContext) -> Action:
    size, colour, thing = _wanted_shape(_state(ctx).fields)
    count = sum(_matches(item, size, colour, thing) for _, item in _items(ctx.screen))
    return _click(_by_text(ctx.screen, str(count), ("button",)))


def drag_shapes_2(ctx: PredicateContext) -> Action:
    """Drag the asked items into the left box and the others into the right one."""
    screen = ctx.screen
    words = _state(ctx).fields["target"].split()
    colours = set(_SHAPE_COLOURS.values())
    size = next((w for w in words if w in ("large", "small")), "")
    colour = next((w for w in words if w in colours), "")
    rest = [w for w in words if w not in colours and w not in ("large", "small")]
    thing = rest[-1] if rest else "item"
    known = set(_SHAPE_TAGS.values()) | {"item", "shape", "letter", "digit"}
    if thing not in known and thing.endswith("s") and thing[:-1] in known:
        thing = thing[:-1]
    boxes = sorted(
        (e for e in screen.elements if e.resource_id == "shape-container"),
        key=lambda e: e.bounds[0],
    )
    if len(boxes) != 2:
        raise OracleStuck("no two boxes")
    for e, item in _items(screen):
        box = boxes[0] if _matches(item, size, colour, thing) else boxes[1]
        bx0, by0, bx1, by1 = box.bounds
        x, y = e.center
        if not (bx0 < x < bx1 and by0 < y < by1):
            return Action(ActionType.DRAG, x=x, y=y, end_x=(bx0 + bx1) / 2, end_y=(by0 + by1) / 2)
    return _submit(screen)


ORACLES.update(
    {"click-shape": click_shape, "count-shape": count_shape, "drag-shapes-2": drag_shapes_2}
)


def stock_market(ctx: PredicateContext) -> Action:
    """Watch the price and buy once it is below the asked one."""
    screen = ctx.screen
    limit = float(_state(ctx).fields["target"].lstrip("$"))
    price = _by_id(screen, "stock-price")  # empty (no box) until the first tick
    value = _as_number(price.text) if price is not None else None
    if value is not None and value < limit:
        return _click(_find(screen, lambda e: e.resource_id == "buy"))
    return _wait()


ORACLES["stock-market"] = stock_market


def _pick_date(
    ctx: PredicateContext, field: UIElement, month: int, day: int, year: int
) -> Action | None:
    """Next action to set a jQuery UI date picker's field to the date (None once it holds
    it): open the picker, page to the month with Prev/Next, click the day."""
    screen = ctx.screen
    if field.text == f"{month:02d}/{day:02d}/{year}":
        return None
    picker = _by_id(screen, "ui-datepicker-div")
    shown = [e.text for e in _descendants(screen, picker)] if picker is not None else []
    names = [t for t in shown if t in _MONTHS]
    years = [int(t) for t in shown if re.fullmatch(r"\d{4}", t)]
    if not names or not years:
        return _click(field)
    assert picker is not None
    current = years[0] * 12 + _MONTHS.index(names[0])
    wanted = year * 12 + month - 1
    if current != wanted:
        label = "Prev" if wanted < current else "Next"
        return _click(next(e for e in _descendants(screen, picker) if e.text == label))
    return _click(
        next(e for e in _descendants(screen, picker) if e.role == "link" and e.text == str(day))
    )


def _autocomplete(ctx: PredicateContext, field: UIElement, value: str) -> Action | None:
    """Next action to fill an autocomplete field with ``value`` (None once it holds it):
    type its first word, then click the suggestion that starts with it."""
    if value in field.text and "(" in field.text:  # a suggestion (with its code) was chosen
        return None
    suggestion = next(
        (
            e
            for e in ctx.screen.elements
            if e.index > field.index and value in e.text and "(" in e.text
        ),
        None,
    )
    if suggestion is not None and field.focused:
        return _click(suggestion)
    if not field.text:
        return Action(ActionType.INPUT, index=field.index, text=value.split(",")[0])
    if field.focused:
        return _wait()
    return _fill(ctx, field, "")


def book_flight(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = _state(ctx).fields
    origin = _by_id(screen, "flight-from")
    if origin is not None:
        for field_id, value in (("flight-from", fields["from"]), ("flight-to", fields["to"])):
            field = _find(screen, lambda e, i=field_id: e.resource_id == i)
            action = _autocomplete(ctx, field, value)
            if action is not None:
                return action
        month, day, year = (int(p) for p in fields["date"].split("/"))
        date = _find(screen, lambda e: e.resource_id == "datepicker")
        return _pick_date(ctx, date, month, day, year) or _click(
            _find(screen, lambda e: e.resource_id == "search")
        )
    offers = _offers(screen)
    if not offers:
        return _wait()  # the results are loading
    key = {"cheapest": lambda o: o[1], "shortest": lambda o: o[0]}.get(fields["criterion"])
    if key is None:
        raise OracleStuck(f"unknown criterion {fields['criterion']!r}")
    return _click(min(offers, key=key)[2])


ORACLES.update({"book-flight": book_flight, "book-flight-nodelay": book_flight})


# The colour names use-colorwheel asks for (CSS's), as a person knows them.
_CSS_COLOURS = {
    "black": "000000",
    "white": "FFFFFF",
    "aqua": "00FFFF",
    "blue": "0000FF",
    "gray": "808080",
    "green": "008000",
    "lime": "00FF00",
    "maroon": "800000",
    "navy": "000080",
    "olive": "808000",
    "purple": "800080",
    "red": "FF0000",
    "silver": "C0C0C0",
    "teal": "008080",
    "yellow": "FFFF00",
    "pink": "FFC0CB",
    "magenta": "FF00FF",
    "gold": "FFD700",
    "orange": "FFA500",
}


def use_colorwheel(ctx: PredicateContext) -> Action:
    """Type the colour's hex code into the picker's field, then submit."""
    screen = ctx.screen
    name = _state(ctx).fields["target"].lower()
    if name not in _CSS_COLOURS:
        raise OracleStuck(f"unknown colour {name!r}")
    field = _find(screen, lambda e: e.resource_id == "col")
    return _fill_all(ctx, [(field, _CSS_COLOURS[name])], _submit(screen))


ORACLES["use-colorwheel"] = use_colorwheel


# The 4x7 digits number-checkboxes shows as its example image (the expert has read them off
# the image, as a person does; the image itself is not in the DOM reading).
_DIGIT_PATTERNS = {
    "0": "0110 1001 1001 1001 1001 1001 0110",
    "1": "0010 0110 0010 0010 0010 0010 0010",
    "2": "0110 1001 1001 0010 0100 1000 1111",
    "3": "0110 1001 0001 0110 0001 1001 0110",
    "4": "1000 1010 1010 1111 0010 0010 0010",
    "5": "1111 1000 1000 1110 0001 1001 0110",
    "6": "0110 1001 1000 1110 1001 1001 0110",
    "7": "1111 1001 0001 0010 0010 0100 0100",
    "8": "0110 1001 1001 0110 1001 1001 0110",
    "9": "0110 1001 1001 0111 0001 1001 0110",
}


def number_checkboxes(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    pattern = _DIGIT_PATTERNS[_state(ctx).fields["target"]].replace(" ", "")
    grid = _find(screen, lambda e: e.resource_id == "checkboxes")
    boxes = [e for e in _descendants(screen, grid) if e.role == "checkbox"]
    for box, bit in zip(boxes, pattern):
        if box.checked != (bit == "1"):
            return _click(box)
    return _submit(screen)


ORACLES["number-checkboxes"] = number_checkboxes


# hot-cold's bands: the page says HOT within 5 px of the hidden spot, WARM within 10, COLD
# within 40, ICE COLD beyond.
_BANDS = {"HOT": (0.0, 5.0), "WARM": (5.0, 10.0), "COLD": (10.0, 40.0), "ICE COLD": (40.0, 1e9)}


def hot_cold(ctx: PredicateContext) -> Action:
    """Move the mouse, read the page's HOT/WARM/COLD/ICE COLD, keep the spots every reading
    allows (the spot is somewhere in the touch area), and hover their middle; click once
    they are all within the HOT radius."""
    import numpy as np

    screen = ctx.screen
    notes = _notes(ctx)
    area = _find(screen, lambda e: e.resource_id == "touch-area")
    readings = notes.setdefault("readings", [])
    last = notes.get("last")
    shown = " ".join(e.text for e in screen.elements if e.text in _BANDS)
    if last is not None and shown in _BANDS:
        readings.append((*last, shown))
        if shown == "HOT":
            return Action(ActionType.CLICK, x=last[0], y=last[1])
    x0, y0, x1, y1 = area.bounds
    xs, ys = np.meshgrid(np.arange(x0 + 3, x1 - 2), np.arange(y0 + 3, y1 - 2))
    keep = np.ones(xs.shape, bool)
    for hx, hy, band in readings:
        low, high = _BANDS[band]
        distance = np.hypot(xs - hx, ys - hy)
        keep &= (distance >= low - 1) & (distance < high + 1)
    if not keep.any():
        raise OracleStuck("no spot fits the readings")
    # Hover the possible spot nearest the middle of all possible spots (the middle itself
    # may be ruled out, e.g. the centre of a ring).
    cx, cy = float(xs[keep].mean()), float(ys[keep].mean())
    spread = float(np.hypot(xs[keep] - cx, ys[keep] - cy).max())
    if spread < 4:
        return Action(ActionType.CLICK, x=round(cx), y=round(cy))
    nearest = np.argmin(np.where(keep, np.hypot(xs - cx, ys - cy), np.inf))
    cx, cy = float(xs.flat[nearest]), float(ys.flat[nearest])
    notes["last"] = (round(cx), round(cy))
    return Action(ActionType.HOVER, x=round(cx), y=round(cy))


ORACLES["hot-cold"] = hot_cold


UNSCRIPTED: dict[str, str] = {}
"""MiniWoB++ tasks without an expert, and why (docs/miniwob.md lists the experts below 90%)."""


# The experts that read the screen (canvas shapes, colour swatches, icons, SVG geometry):
# importing the module adds them to ORACLES (whichever of the two modules is imported first).
import gui_gym.envs.miniwob.oracle_visual  # noqa: E402, F401

# The experts of oracle_forms register themselves into ORACLES (imported last: that module
# builds on this one's helpers; imported first, it imports this one and then registers).
from gui_gym.envs.miniwob import oracle_forms  # noqa: E402, F401
