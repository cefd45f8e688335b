"""Experts for widget pages: collapsibles, tabs, menus, lists and trees, date and time
fields and pickers, spinners, autocompletes, the e-mail and social-media apps, booking
forms and drags."""

from __future__ import annotations

import math
import re

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext
from gui_gym.core.ui import UIElement, UITree
from gui_gym.envs.miniwob.oracles.basic import login_user
from gui_gym.envs.miniwob.oracles.common import (
    MONTHS,
    OracleStuck,
    ancestor,
    click,
    click_centre,
    descendants,
    element_by_id,
    element_with_text,
    expert_notes,
    fill_field,
    fill_then_submit,
    find_element,
    input_fields,
    last_clicked_position,
    press_key,
    press_submit,
    task_state,
    value_of,
    wait,
)

__all__ = [
    "book_flight",
    "buy_ticket",
    "choose_date",
    "choose_list",
    "click_collapsible_2",
    "click_menu",
    "click_menu_2",
    "click_tab_2",
    "copy_paste_2",
    "drag_in_direction",
    "drag_items",
    "drag_sort_numbers",
    "email_inbox",
    "enter_date",
    "enter_time",
    "form_sequence_3",
    "grid_coordinate",
    "guess_number",
    "highlight_text",
    "login_user_popup",
    "navigate_tree",
    "phone_book",
    "resize_textarea",
    "scroll_text",
    "scroll_text_2",
    "sign_agreement",
    "social_media",
    "social_media_all",
    "use_autocomplete",
    "use_spinner",
    "visual_addition",
]


def click_collapsible_2(ctx: PredicateContext) -> Action:
    """Open the sections one by one (an accordion: opening one closes the others) until the
    link is shown; wait while a clicked section has not started opening."""
    screen = ctx.screen
    want = task_state(ctx).fields["target"]
    target = next((e for e in screen.elements if e.role == "link" and e.text == want), None)
    if target is not None:
        return click(target)
    headings = [e for e in screen.elements if e.role == "heading"]
    if not headings:
        raise OracleStuck("no sections")
    ends = [h.index for h in headings[1:]] + [len(screen.elements)]
    opened = [i for i, (h, end) in enumerate(zip(headings, ends)) if end > h.index + 1]
    clicked = last_clicked_position(ctx, headings)
    if clicked is not None and clicked not in opened and ctx.step < 40:
        return wait()
    if ctx.action is not None and ctx.action.type is ActionType.WAIT and not opened:
        return wait()
    position = opened[-1] + 1 if opened else 0
    return click(headings[position % len(headings)])


def click_tab_2(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    want = task_state(ctx).fields["target"]
    tabs = [
        e
        for e in screen.elements
        if e.role == "link" and e.parent >= 0 and screen.elements[e.parent].role == "listitem"
    ]
    target = next(
        (e for e in screen.elements if e.role == "link" and e.text == want and e not in tabs), None
    )
    if target is not None:
        return click(target)
    if not tabs:
        raise OracleStuck("no tabs")
    position = last_clicked_position(ctx, tabs)
    return click(tabs[(1 if position is None else position + 1) % len(tabs)])  # tab 1 starts open


def choose_list(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    want = task_state(ctx).fields["target"]
    select = find_element(screen, lambda e: e.role == "select")
    if select.text != want:
        return Action(ActionType.SELECT, index=select.index, text=want)
    return press_submit(screen)


def click_menu(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    path = task_state(ctx).fields["target"].split(">")
    shown = [
        next((e for e in screen.elements if e.text == name and e.clickable), None) for name in path
    ]
    deepest = max((i for i, e in enumerate(shown) if e is not None), default=None)
    if deepest is None:
        raise OracleStuck(f"no item of {path} is shown")
    element = shown[deepest]
    assert element is not None
    if deepest == len(path) - 1:
        return click_centre(element)  # the pointer makes the item the menu's active one
    # A submenu opens 300 ms after the mouse comes over its item, and every move restarts
    # that delay: hover once, then wait.
    notes = expert_notes(ctx)
    if notes.get("hovered") == path[deepest] and ctx.step < 45:
        return wait()
    notes["hovered"] = path[deepest]
    return Action(ActionType.HOVER, index=element.index)


def click_menu_2(ctx: PredicateContext) -> Action:
    """Open the menu, find the item whose (possibly wrapped) label is asked, hovering
    "Playback" for its submenu. The other half of the episodes name the item by an icon
    drawn in the instruction, which only the screenshot shows."""
    screen = ctx.screen
    match = re.search(r'labeled "([^"]+)"', task_state(ctx).fields.get("target", ""))
    if match is None:
        raise OracleStuck("the item is named by an icon only the screenshot shows")
    want = match.group(1)
    items = [e for e in screen.elements if e.role == "listitem"]
    if not items:
        return click(element_with_text(screen, "Menu", ("button",)))
    for item in items:
        words = [e for e in descendants(screen, item) if e.text and e.role == "text"]
        own = [
            w
            for w in words
            if ancestor(screen, w, 1).index == item.index
            or ancestor(screen, w, 2).index == item.index
        ]
        if " ".join(w.text for w in own) == want:
            return click_centre(own[0])
    notes = expert_notes(ctx)
    if notes.get("hovered") and ctx.step < 45:
        return wait()  # the submenu opens 300 ms after the hover
    notes["hovered"] = True
    return Action(
        ActionType.HOVER, index=find_element(screen, lambda e: e.text == "Playback").index
    )


def navigate_tree(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    want = task_state(ctx).fields["target"]
    target = next((e for e in screen.elements if e.text == want and e.role == "text"), None)
    if target is not None:
        return click(target)
    closed = [e for e in screen.elements if "expandable-hitarea" in e.description]
    if not closed:
        raise OracleStuck(f"{want!r} is not in the tree")
    return click(closed[0])


def login_user_popup(ctx: PredicateContext) -> Action:
    cancel = element_by_id(ctx.screen, "popup-cancel")
    if cancel is not None:
        return click(cancel)
    return login_user(ctx)


def enter_date(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    month, day, year = task_state(ctx).fields["target"].split("/")
    return value_of(ctx, input_fields(screen)[0], f"{month}{day}{year}", press_submit(screen))


def enter_time(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    match = re.fullmatch(r"(\d+):(\d+)\s*([AP]M)", task_state(ctx).fields["target"].strip())
    if match is None:
        raise OracleStuck(f"cannot read the time {task_state(ctx).fields['target']!r}")
    hour, minute, half = match.groups()
    return value_of(
        ctx, input_fields(screen)[0], f"{int(hour):02d}{minute}{half}", press_submit(screen)
    )


def guess_number(ctx: PredicateContext) -> Action:
    """Guess 5, then step towards the number as the page's feedback says (it shows only the
    last guess's feedback, so the expert walks rather than bisects: at most 5 guesses)."""
    screen = ctx.screen
    field = element_by_id(screen, "tt")
    if field is None:
        raise OracleStuck("no guess field")
    guess = 5
    shown = " ".join(e.text for e in screen.elements if e.text and not e.editable)
    if m := re.search(r"(higher|lower) than\s+(-?\d+)", shown):
        guess = int(m.group(2)) + (1 if m.group(1) == "higher" else -1)
    return fill_field(ctx, field, str(guess)) or press_submit(screen)


def highlight_text(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    last = ctx.action
    if last is not None and last.type is ActionType.DRAG:
        return press_submit(screen)
    if "target" in task_state(ctx).fields:
        n = int(task_state(ctx).fields["target"])
        box = find_element(screen, lambda e: e.resource_id == "randomText")
        paragraph = [screen.elements[i] for i in box.children if screen.elements[i].text][n - 1]
    else:
        paragraph = find_element(screen, lambda e: e.resource_id == "randomText")
    x0, y0, x1, y1 = paragraph.bounds
    return Action(ActionType.DRAG, x=x0, y=y0 + 2, end_x=x1 - 1, end_y=y1 - 2)


def scroll_text(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    area = find_element(screen, lambda e: e.resource_id == "text-area")
    word = re.sub(r"[^\w]", "", area.text.split()[-1])
    return fill_then_submit(
        ctx,
        [(element_by_id(screen, "answer-input") or input_fields(screen)[1], word)],
        press_submit(screen),
    )


def scroll_text_2(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    area = find_element(screen, lambda e: e.resource_id == "text-area")
    if ctx.step < 12:  # 50 px a wheel step; the text is at most ~600 px tall
        return Action(
            ActionType.SCROLL,
            direction="up" if task_state(ctx).fields["target"] == "top" else "down",
            index=area.index,
        )
    return press_submit(screen)


def copy_paste_2(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    n = int(task_state(ctx).fields["target"])
    source = find_element(screen, lambda e: e.resource_id == f"text-{n}")
    target = find_element(screen, lambda e: e.resource_id == "answer-input")
    return fill_then_submit(ctx, [(target, source.text)], press_submit(screen))


def grid_coordinate(ctx: PredicateContext) -> Action:
    fields = task_state(ctx).fields
    return click(
        find_element(ctx.screen, lambda e: e.resource_id == f"({fields['x']},{fields['y']})")
    )


def visual_addition(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    total = sum(
        1
        for side in ("visual-1", "visual-2")
        for e in descendants(screen, find_element(screen, lambda e, s=side: e.resource_id == s))
        if "addition-block" in e.description
    )
    return fill_then_submit(
        ctx,
        [(element_by_id(screen, "math-answer") or input_fields(screen)[0], str(total))],
        press_submit(screen),
    )


def use_spinner(ctx: PredicateContext) -> Action:
    """Focus the spinner and step it with the arrow keys (it ignores typed text)."""
    screen = ctx.screen
    field = find_element(screen, lambda e: e.resource_id == "spinner")
    want = int(task_state(ctx).fields["target"])
    value = int(field.text or 0)
    if value == want:
        return press_submit(screen)
    if not field.focused:
        return click(field)
    return press_key("ArrowUp" if want > value else "ArrowDown")


def use_autocomplete(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = task_state(ctx).fields
    field = find_element(screen, lambda e: e.resource_id == "tags")
    start, end = fields.get("start", ""), fields.get("end", "")

    def fits(text: str) -> bool:
        return bool(text) and text.startswith(start) and text.endswith(end)

    if fits(field.text):
        return press_submit(screen)
    menu = [
        e
        for e in screen.elements
        if e.index > field.index and e.role in ("text", "listitem") and fits(e.text)
    ]
    if menu:
        return click(menu[0])
    if not field.text:
        return Action(ActionType.INPUT, index=field.index, text=start or end[:2])
    return wait()


def _email_row(screen: UITree, sender: str) -> UIElement:
    name = find_element(screen, lambda e: e.text == sender and e.role == "text")
    return ancestor(screen, name, 2)


def email_inbox(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = task_state(ctx).fields
    task = fields.get("task") or ("forward" if "to" in fields else "reply")
    if (text := element_by_id(screen, "reply-text")) is not None:
        return fill_field(ctx, text, fields["message"]) or click(
            element_by_id(screen, "send-reply")
        )  # type: ignore[arg-type]
    if element_by_id(screen, "forward-text") is not None:
        to = find_element(screen, lambda e: e.role == "input")
        return fill_field(ctx, to, fields["to"]) or click(element_by_id(screen, "send-forward"))  # type: ignore[arg-type]
    if element_by_id(screen, "close-email") is not None:
        if task == "reply":
            return click(element_with_text(screen, "Reply"))
        if task == "forward":
            return click(element_with_text(screen, "Forward"))
        icon = "trash" if task == "delete" else "star"
        return click(find_element(screen, lambda e: e.description.split()[:1] == [icon]))
    row = _email_row(screen, fields["by"])
    if task in ("delete", "star"):
        icon = "trash" if task == "delete" else "star"
        return click(
            next(e for e in descendants(screen, row) if e.description.split()[:1] == [icon])
        )
    return click(find_element(screen, lambda e: e.text == fields["by"] and e.role == "text"))


def social_media(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = task_state(ctx).fields
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
        return click(item)
    handle = find_element(screen, lambda e: e.text == fields["user"])
    post = ancestor(screen, handle, 2)
    icon = {"Reply": "reply", "Retweet": "retweet", "Like": "like"}.get(button, "more")
    return click(next(e for e in descendants(screen, post) if e.description.split()[:1] == [icon]))


def social_media_all(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = task_state(ctx).fields
    wanted = int(fields["amount"]) if "amount" in fields else None
    icon = fields["button"].lower()
    done = pending = 0
    for handle in (e for e in screen.elements if e.text == fields["user"]):
        post = ancestor(screen, handle, 2)
        button = next(e for e in descendants(screen, post) if e.description.split()[:1] == [icon])
        if "clicked" in button.description or "active" in button.description:
            done += 1
        elif wanted is None or done + pending < wanted:
            return click(button)
    return press_submit(screen, (fields.get("submit", "Submit"),))


def choose_date(ctx: PredicateContext) -> Action:
    """Open the date picker, page to the month with Prev/Next, click the day; then submit."""
    fields = task_state(ctx).fields
    field = find_element(ctx.screen, lambda e: e.resource_id == "datepicker")
    action = _pick_date(ctx, field, int(fields["month"]), int(fields["day"]), int(fields["year"]))
    return action if action is not None else press_submit(ctx.screen)


def phone_book(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = task_state(ctx).fields
    heading = find_element(screen, lambda e: e.role == "heading")
    if heading.text != fields["name"]:
        pages = find_element(screen, lambda e: e.resource_id == "pagination")
        return click(next(e for e in descendants(screen, pages) if e.text == ">"))
    wanted = fields["target"].split()[0].lower()
    label = find_element(screen, lambda e: e.text.rstrip(":").lower() == wanted)
    row = screen.elements[label.parent]
    return click(next(e for e in descendants(screen, row) if e.role == "link"))


def sign_agreement(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = task_state(ctx).fields
    if "name" not in fields:  # "Click the cancel button."
        return click(element_with_text(screen, fields["button"], ("button",)))
    area = find_element(screen, lambda e: e.resource_id == "text-area")
    notes = expert_notes(ctx)
    # The textarea is disabled (no keys) and 1,400 to 2,500 px tall: wheel steps of 50 px
    # each, as many as its text needs (at most 1.25 px of height a character, in its
    # 85 px window; the page unlocks 10 px before the end), and not more: at 150 ms a
    # step a fixed worst-case count runs into the 10 s limit on a loaded machine.
    needed = math.ceil((1.25 * len(area.text) - 95) / 50) + 1
    if notes.get("scrolls", 0) < needed:
        notes["scrolls"] = notes.get("scrolls", 0) + 1
        return Action(ActionType.SCROLL, direction="down", index=area.index)
    field = find_element(screen, lambda e: e.resource_id == "name")
    return fill_field(ctx, field, fields["name"]) or click(
        element_with_text(screen, fields["button"], ("button",))
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
                (e.text for e in descendants(screen, card) if re.fullmatch(r"\d+h \d+m", e.text)),
                None,
            )
        if duration is None or "$" not in button.text:
            continue
        price = int(button.text.rsplit("$", 1)[1].replace(",", ""))
        offers.append((_minutes(duration), price, button))
    return offers


def buy_ticket(ctx: PredicateContext) -> Action:
    target = task_state(ctx).fields["target"]
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
    return click(min(offers, key=key)[2])


def form_sequence_3(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = task_state(ctx).fields
    want = fields["dropdown target"]
    label = next(e for e in screen.elements if "label" in e.description.split() or e.index == 6)
    if expert_notes(ctx).get("chosen"):
        return click(element_with_text(screen, fields["button target"], ("button",)))
    option = next((e for e in screen.elements if e.role == "listitem" and e.text == want), None)
    if option is None:
        return click(label)
    expert_notes(ctx)["chosen"] = True
    return click(option)


_DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def drag_in_direction(ctx: PredicateContext) -> Action:
    """drag-circle / drag-single-shape: drag the shape 30 px the asked way, then submit."""
    screen = ctx.screen
    if ctx.action is not None and ctx.action.type is ActionType.DRAG:
        return press_submit(screen)
    shape = find_element(
        screen, lambda e: e.parent >= 0 and screen.elements[e.parent].role == "image" and not e.text
    )
    dx, dy = _DIRECTIONS[task_state(ctx).fields["target"].split()[0]]
    x, y = shape.center
    return Action(ActionType.DRAG, x=x, y=y, end_x=x + 30 * dx, end_y=y + 30 * dy)


def resize_textarea(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    if ctx.action is not None and ctx.action.type is ActionType.DRAG:
        return press_submit(screen)
    target = task_state(ctx).fields["target"]
    grow = "larger" in target
    handles = [e for e in screen.elements if "ui-resizable-handle" in e.description]
    corner = min(handles, key=lambda e: (e.bounds[2] - e.bounds[0]) + (e.bounds[3] - e.bounds[1]))
    x, y = corner.center
    step = 15 if grow else -15
    dx, dy = (step, 0) if "width" in target else (0, step)
    return Action(ActionType.DRAG, x=x, y=y, end_x=x + dx, end_y=y + dy)


def _sortable_items(screen: UITree) -> list[UIElement]:
    box = find_element(screen, lambda e: e.resource_id == "sortable")
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
    goal = task_state(ctx).fields["target"].rstrip(".")
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
        if expert_notes(ctx).setdefault("target", target) != target:  # the list moved under us
            target = expert_notes(ctx)["target"]
    if source == target:
        return press_submit(screen)
    return _move_in_list(items, source, target)


def drag_sort_numbers(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    items = _sortable_items(screen)
    values = [int(e.text) for e in items]
    order = sorted(values)
    for position, value in enumerate(order):
        if values[position] != value:
            return _move_in_list(items, values.index(value), position)
    return press_submit(screen)


def _pick_date(
    ctx: PredicateContext, field: UIElement, month: int, day: int, year: int
) -> Action | None:
    """Next action to set a jQuery UI date picker's field to the date (None once it holds
    it): open the picker, page to the month with Prev/Next, click the day."""
    screen = ctx.screen
    if field.text == f"{month:02d}/{day:02d}/{year}":
        return None
    picker = element_by_id(screen, "ui-datepicker-div")
    shown = [e.text for e in descendants(screen, picker)] if picker is not None else []
    names = [t for t in shown if t in MONTHS]
    years = [int(t) for t in shown if re.fullmatch(r"\d{4}", t)]
    if not names or not years:
        return click(field)
    assert picker is not None
    current = years[0] * 12 + MONTHS.index(names[0])
    wanted = year * 12 + month - 1
    if current != wanted:
        label = "Prev" if wanted < current else "Next"
        return click(next(e for e in descendants(screen, picker) if e.text == label))
    return click(
        next(e for e in descendants(screen, picker) if e.role == "link" and e.text == str(day))
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
        return click(suggestion)
    if not field.text:
        return Action(ActionType.INPUT, index=field.index, text=value.split(",")[0])
    if field.focused:
        return wait()
    return fill_field(ctx, field, "")


def book_flight(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    fields = task_state(ctx).fields
    origin = element_by_id(screen, "flight-from")
    if origin is not None:
        for field_id, value in (("flight-from", fields["from"]), ("flight-to", fields["to"])):
            field = find_element(screen, lambda e, i=field_id: e.resource_id == i)
            action = _autocomplete(ctx, field, value)
            if action is not None:
                return action
        month, day, year = (int(p) for p in fields["date"].split("/"))
        date = find_element(screen, lambda e: e.resource_id == "datepicker")
        return _pick_date(ctx, date, month, day, year) or click(
            find_element(screen, lambda e: e.resource_id == "search")
        )
    offers = _offers(screen)
    if not offers:
        return wait()  # the results are loading
    key = {"cheapest": lambda o: o[1], "shortest": lambda o: o[0]}.get(fields["criterion"])
    if key is None:
        raise OracleStuck(f"unknown criterion {fields['criterion']!r}")
    return click(min(offers, key=key)[2])
