"""Experts for forms, lists and games that need a person's knowledge: a thesaurus, a
scrolling list box, a text editor's toolbar, flight forms with airport codes, a daily
calendar, and icon menus read from the screenshot.

What a person brings to a page (English words and their synonyms) the expert carries as
data written here, never read from the task's code.
"""

from __future__ import annotations

import re

import numpy as np

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext
from gui_gym.core.ui import UIElement
from gui_gym.envs.miniwob.oracles.common import (
    MONTHS,
    NAMED_COLOURS,
    OracleStuck,
    click,
    click_centre,
    colour_of,
    descendants,
    element_by_id,
    element_with_text,
    expert_notes,
    fill_field,
    find_element,
    label_of,
    press_key,
    press_submit,
    task_state,
)
from gui_gym.envs.miniwob.oracles.widgets import click_menu_2 as _click_menu_by_label

__all__ = [
    "SYNONYM_GROUPS",
    "click_checkboxes_soft",
    "click_menu_2",
    "click_scroll_list",
    "daily_calendar",
    "flight_aa",
    "flight_alaska",
    "text_editor",
]


# Words that mean the same, as an English speaker groups them (a small thesaurus: the
# everyday senses of common adjectives, verbs and nouns, with plurals where a noun has one).
# A word belongs to one group only (a test checks), so "similar to" is a lookup.
SYNONYM_GROUPS: tuple[frozenset[str], ...] = tuple(
    frozenset(group.split())
    for group in (
        "big large huge enormous gigantic giant immense massive vast",
        "small tiny little mini petite minute miniature",
        "red scarlet crimson vermillion vermilion ruby",
        "happy cheerful joyful gleeful delighted glad merry jolly",
        "sad unhappy sorrowful miserable tragic gloomy downcast",
        "angry mad furious irritated enraged irate livid",
        "evil wicked immoral sinful corrupt depraved vile",
        "wrong incorrect mistaken erroneous false inaccurate",
        "real genuine actual authentic",
        "strange odd peculiar unusual weird bizarre curious",
        "stop cease halt end finish quit",
        "scared terrified panicked fearful frightened afraid",
        "quiet calm peaceful serene mild tranquil",
        "old aged archaic ancient elderly",
        "love like adore favor favour cherish",
        "kill murder assassinate slay",
        "keep retain preserve sustain maintain",
        "hide conceal camouflage cloak",
        "hate despise loathe detest dislike abhor",
        "funny humorous amusing comical laughable hilarious",
        "fat fleshy plump chubby obese",
        "stupid dumb dull unwise foolish",
        "delicious savory savoury delectable appetizing tasty yummy",
        "cut slice carve chop",
        "brave courageous fearless bold valiant",
        "begin start initiate launch commence",
        "answer reply response",
        "television televisions tv tvs",
        "house home houses homes",
        "fire flame fires flames",
        "pig pork swine hog pigs",
        "rabbit rabbits bunny bunnies",
        "car cars automobile automobiles vehicle vehicles",
        "water",
    )
)


def _synonyms(word: str) -> frozenset[str]:
    word = word.strip().lower()
    return next((g for g in SYNONYM_GROUPS if word in g), frozenset({word}))


def click_checkboxes_soft(ctx: PredicateContext) -> Action:
    """Tick the boxes whose words mean the same as an asked word (untick the others), then
    submit."""
    screen = ctx.screen
    asked = [v for k, v in task_state(ctx).fields.items() if k.startswith("target")]
    wanted = frozenset().union(*(_synonyms(w) for w in asked)) if asked else frozenset()
    for e in screen.elements:
        if e.role == "checkbox" and (label_of(screen, e).strip().lower() in wanted) != e.checked:
            return click(e)
    return press_submit(screen)


def click_scroll_list(ctx: PredicateContext) -> Action:
    """Make the multi-select list box's highlighted options the asked ones: ctrl+click each
    option that is wrong (ctrl keeps the others as they are), scrolling the box until it
    shows, then submit."""
    screen = ctx.screen
    box = find_element(screen, lambda e: e.role == "select")
    options = [screen.elements[i] for i in box.children]
    asked = {w.strip() for w in task_state(ctx).fields["target"].split(",")}
    missing = asked - {o.text for o in options}
    if missing:
        raise OracleStuck(f"the list box has no option {sorted(missing)[0]!r}")
    for option in options:
        if (option.text in asked) == option.selected:
            continue
        y = option.center[1]
        if y < box.bounds[1] + 4 or y > box.bounds[3] - 4:  # hidden: scroll the box to it
            direction = "up" if y < box.bounds[1] + 4 else "down"
            return Action(ActionType.SCROLL, direction=direction, index=box.index)
        return Action(ActionType.CLICK, index=option.index, modifiers="ctrl")
    return press_submit(screen)


_STYLE_BUTTONS = {"bold": 0, "italics": 1, "underlined": 2}  # the toolbar's icons, in order
_DEFAULT_TEXT_COLOUR = (0, 0, 0)  # the picker's first swatch: "no colour"


def _editor_plan(ctx: PredicateContext) -> list[tuple[str, str]]:
    """text-editor's steps, planned once from the page: clear the editor, then retype its
    text with the style switched on for the asked word (or all of it) and off after it, as
    a person formats while typing (styling one word in place would need the word's pixels)."""
    screen = ctx.screen
    target = task_state(ctx).fields["target"]
    match = re.search(r"(?:everything|the text (\S+)) the (style|color) (\w+)", target)
    if match is None:
        raise OracleStuck(f"text-editor asks for something unknown: {target!r}")
    word, kind, value = match.groups()
    editor = find_element(screen, lambda e: e.resource_id == "editor")
    text = " ".join(e.text for e in descendants(screen, editor) if e.text)
    if word is None:
        prefix, styled, suffix = "", text, ""
    else:
        words = text.split(" ")
        if word not in words:
            raise OracleStuck(f"the editor has no word {word!r}")
        at = words.index(word)
        prefix = " ".join(words[:at]) + (" " if at else "")
        styled = word
        suffix = (" " if at < len(words) - 1 else "") + " ".join(words[at + 1 :])
    on = [("button", value)] if kind == "style" else [("picker", ""), ("swatch", value)]
    off = [("button", value)] if kind == "style" else [("picker", ""), ("swatch", "")]
    plan = [("click", ""), ("key", "ctrl+a"), ("key", "Backspace")]
    plan += [("type", prefix)] if prefix else []
    plan += [*on, ("type", styled)]
    plan += [*off, ("type", suffix)] if suffix else []
    return [*plan, ("submit", "")]


def text_editor(ctx: PredicateContext) -> Action:
    """Clear the editor and retype its text, switching the asked style or colour on at the
    cursor for the asked word (or everything) and off after it, then submit."""
    screen = ctx.screen
    notes = expert_notes(ctx)
    if "plan" not in notes:
        notes["plan"] = _editor_plan(ctx)
        notes["next"] = 0
    plan = notes["plan"]
    step, value = plan[min(notes["next"], len(plan) - 1)]
    notes["next"] += 1
    if step == "click":  # a real click puts the caret in the editor
        editor = find_element(screen, lambda e: e.resource_id == "editor")
        return click_centre(next(e for e in descendants(screen, editor) if e.text))
    if step == "key":
        return press_key(value)
    if step == "type":  # typing goes to the focused editor, at the caret
        return Action(ActionType.INPUT, text=value)
    if step == "button":
        buttons = [e for e in screen.elements if e.role == "button" and not e.text]
        return click_centre(buttons[_STYLE_BUTTONS[value]])  # a click keeps the caret's place
    if step == "picker":  # the colour picker opens on its icon
        return click_centre(next(e for e in screen.elements if e.role == "image"))
    if step == "swatch":
        want = NAMED_COLOURS.get(value) if value else _DEFAULT_TEXT_COLOUR
        swatches = [
            (e, c)
            for e in screen.elements
            if "ql-picker-item" in e.description and (c := colour_of(e))
        ]
        if want is None or not swatches:
            raise OracleStuck(f"no swatch for {value!r}")
        return click_centre(
            min(swatches, key=lambda s: sum((a - b) ** 2 for a, b in zip(s[1], want)))[0]
        )
    return press_submit(screen)


def _city_words(text: str) -> str:
    return " ".join(re.sub(r"[^a-z ]", " ", text.lower()).split())


# The state a city name means when several states have one (Portland alone is Oregon's).
_USUAL_STATE = {"portland": "OR"}


def _airport(suggestions: list[UIElement], city: str) -> UIElement | None:
    """The suggestion a person picks for a city: "City, ST (...)" whose city (with or
    without its state) is the asked one; the city's "All Airports" entry when it has one;
    the usual state's city when the name is shared."""
    want = _city_words(city)
    matches = [
        e
        for e in suggestions
        if want in (_city_words(e.text.split("(")[0]), _city_words(e.text.split(",")[0]))
    ]
    state = _USUAL_STATE.get(want)
    preferred = [e for e in matches if "All Airports" in e.text] + [
        e for e in matches if state is not None and f", {state} (" in e.text
    ]
    return (preferred or matches or [None])[0]


def _alaska_airport(ctx: PredicateContext, field_id: str, city: str) -> Action | None:
    """Next action to make the From/To field hold the city's airport (None once it does):
    type the city, then pick its suggestion."""
    screen = ctx.screen
    field = find_element(screen, lambda e: e.resource_id == field_id)
    if "(" in field.text and _city_words(city) in _city_words(field.text.replace(",", " ")):
        return None
    suggestions = [e for e in screen.elements if e.role == "listitem" and "(" in e.text]
    choice = _airport(suggestions, city) if field.focused else None
    if choice is not None:
        return click(choice)
    if not field.text:
        return Action(ActionType.INPUT, index=field.index, text=city)
    if field.focused and expert_notes(ctx).get("waited", 0) < 5:  # the suggestions are coming
        expert_notes(ctx)["waited"] = expert_notes(ctx).get("waited", 0) + 1
        return Action(ActionType.WAIT)
    expert_notes(ctx)["waited"] = 0
    return fill_field(ctx, field, "")


def _alaska_date(ctx: PredicateContext, field_id: str, which: str, day: str) -> Action | None:
    """Next action to give a date field March ``day`` (the page's calendar opens on March
    2017, the month every instruction asks for), None once it has one. ``which`` is the
    calendar's title word for the field ("departure", "return")."""
    screen = ctx.screen
    done = element_by_id(screen, "btnDone")
    field = find_element(screen, lambda e: e.resource_id == field_id)
    if done is None:
        return None if field.text else click(field)
    title = element_by_id(screen, "cal-top-text")
    if title is None or title.text != which:  # the calendar is open for the other date
        return None if field.text else click(done)
    month = find_element(screen, lambda e: e.text == "March 2017")
    picked = expert_notes(ctx).setdefault("dates", {})
    if picked.get(field_id) != day:
        link = find_element(
            screen, lambda e: e.index > month.index and e.role == "link" and e.text == day
        )
        picked[field_id] = day
        return click(link)
    return click(done)


def flight_alaska(ctx: PredicateContext) -> Action:
    """FlightWoB's Alaska Airlines form: the two airports (typed, then the suggestion), one
    way or return, the dates on the page's calendar, the number of passengers and the
    cabin, then search."""
    screen = ctx.screen
    fields = task_state(ctx).fields
    for field_id, key in (("geo-from", "Departure City"), ("geo-to", "Destination City")):
        action = _alaska_airport(ctx, field_id, fields[key])
        if action is not None:
            return action
    trip = (fields.get("Ticket Type") or fields.get("One Way or Round Trip", "")).lower()
    one_way = "one" in trip
    returning = element_by_id(screen, "return-date")
    shown = returning is not None and returning.bounds[2] > returning.bounds[0]
    if one_way and shown and not expert_notes(ctx).get("one-way"):
        expert_notes(ctx)["one-way"] = True
        return click(find_element(screen, lambda e: e.text == "One-way"))
    action = _alaska_date(ctx, "departure-date", "departure", fields["Departure Day"])
    if action is not None:
        return action
    if not one_way:
        action = _alaska_date(ctx, "return-date", "return", fields["Returning Day"])
        if action is not None:
            return action
    travellers = element_by_id(screen, "tnum-display")
    wanted = fields.get("Passengers")
    if wanted is not None and travellers is not None and travellers.text != wanted:
        sign = "+" if int(travellers.text or 0) < int(wanted) else "-"
        holder = screen.elements[travellers.parent]
        return click(next(e for e in descendants(screen, holder) if e.text == sign))
    if fields.get("Seat type", "Coach") != "Coach":
        first = element_by_id(screen, "cabin-first")
        if first is None:
            return click(find_element(screen, lambda e: e.text == "More search options"))
        if not first.checked:
            return click(find_element(screen, lambda e: e.resource_id == "cabin-ftext"))
    form = find_element(screen, lambda e: e.resource_id == "searchForm")
    return click([e for e in descendants(screen, form) if e.role == "button"][-1])


# A traveller's knowledge of a city's main airport where the suggestions' names do not say
# it (San Diego's is Lindbergh Field; Carlsbad is another town).
_MAIN_AIRPORT = {"san diego": "SAN"}


def _aa_airport(suggestions: list[UIElement], city: str) -> UIElement | None:
    """The suggestion ("CODE - Name, ST") a person picks on American Airlines' page: an
    airport of the asked city, the city's all-airports code (named by the city alone) first,
    then its main or international airport, then the usual state's."""
    want = _city_words(city)
    state = _USUAL_STATE.get(want)
    main = _MAIN_AIRPORT.get(want)

    def name(e: UIElement) -> str:
        return _city_words(e.text.split(" - ", 1)[-1].rsplit(",", 1)[0])

    ranked = []
    for e in suggestions:
        code, _, rest = e.text.partition(" - ")
        words, region = name(e), rest.rsplit(",", 1)[-1].strip()
        city_only = words == want or words == want.replace(" dc", "")
        if not (words.startswith(want) or city_only):
            continue
        international = "international" in words or "intl" in words.split()
        ranked.append((not city_only, code != main, not international, region != state, e))
    return min(ranked, key=lambda r: r[:4])[-1] if ranked else None


def flight_aa(ctx: PredicateContext) -> Action:
    """FlightWoB's American Airlines form: one way or round trip (tabs), the two airports
    (typed, then a suggestion), the dates typed as mm/dd/yyyy, then search."""
    screen = ctx.screen
    fields = task_state(ctx).fields
    notes = expert_notes(ctx)
    dialog = element_by_id(screen, "datePickerDialogClose")
    if dialog is not None:  # the calendar dialog: the day in the asked month
        title = find_element(
            screen, lambda e: e.role == "heading" and e.text in ("Depart", "Return")
        )
        which = "Departure" if title.text == "Depart" else "Returning"
        month = MONTHS[int(fields[f"{which} Month"]) - 1]
        header = find_element(screen, lambda e: e.text == month)
        day = fields[f"{which} Day"]
        return click(find_element(screen, lambda e: e.index > header.index and e.text == day))
    if "one" in fields.get("One Way or Round Trip", "").lower() and not notes.get("one-way"):
        notes["one-way"] = True
        return click(find_element(screen, lambda e: e.role == "link" and e.text == "One way"))
    for field_id, key in (
        ("segments0.origin", "Departure City"),
        ("segments0.destination", "Destination City"),
    ):
        field = find_element(screen, lambda e, i=field_id: e.resource_id == i)
        chosen = notes.setdefault("airports", {})
        if chosen.get(field_id) and field.text == chosen[field_id]:
            continue
        suggestions = [e for e in screen.elements if e.role == "link" and " - " in e.text]
        choice = _aa_airport(suggestions, fields[key]) if field.focused else None
        if choice is not None:
            chosen[field_id] = choice.text.split(" - ")[0]
            return click(choice)
        if field.text and field.text != fields[key]:
            return fill_field(ctx, field, "")  # the page's guess from the location: cleared
        if not field.text:
            return Action(ActionType.INPUT, index=field.index, text=fields[key])
        if notes.get("waits", 0) > 40:
            raise OracleStuck(f"no airport suggestion for {fields[key]!r}")
        notes["waits"] = notes.get("waits", 0) + 1
        return Action(ActionType.WAIT)  # the suggestions come after a delay
    dates = ["segments0.travelDate"] + ([] if notes.get("one-way") else ["segments1.travelDate"])
    for field_id in dates:
        field = find_element(screen, lambda e, i=field_id: e.resource_id == i)
        if not field.text:
            return click(field)  # opens the calendar
    return click(
        find_element(screen, lambda e: e.role == "button" and _label_text(screen, e) == "Search")
    )


def _label_text(screen, e: UIElement) -> str:
    return " ".join(screen.elements[i].text for i in e.children if screen.elements[i].text)


def _half_hours(length: str) -> int:
    """ "90 mins" / "1.5 hours" as a number of half-hour slots."""
    number = float(re.match(r"[\d.]+", length.strip()).group(0))  # type: ignore[union-attr]
    return round(number * (60 if "hour" in length else 1) / 30)


def _slot_of(clock: str) -> int:
    """ "8AM" / "12PM" as the index of the half-hour slot that starts then."""
    hour = int(re.match(r"\d+", clock).group(0)) % 12  # type: ignore[union-attr]
    return 2 * (hour + (12 if clock.strip().upper().endswith("PM") else 0))


def daily_calendar(ctx: PredicateContext) -> Action:
    """Drag over free half-hour slots inside the asked window (scrolling the day to them),
    then name the new event and create it."""
    screen = ctx.screen
    fields = task_state(ctx).fields
    name = element_by_id(screen, "event-name")
    if name is not None:
        return fill_field(ctx, name, fields["name"]) or click(
            element_with_text(screen, "Create", ("button",))
        )
    area = find_element(screen, lambda e: e.resource_id == "area")
    slots = {
        int(e.resource_id[3:]): e for e in screen.elements if re.fullmatch(r"hh-\d+", e.resource_id)
    }
    events = [e for e in screen.elements if e.parent == area.index and e.text]
    length = _half_hours(fields["length"])
    first, last = _slot_of(fields["between from"]), _slot_of(fields["between to"])

    def free(start: int) -> bool:
        top, bottom = slots[start].bounds[1], slots[start + length - 1].bounds[3]
        return all(e.bounds[3] <= top + 1 or e.bounds[1] >= bottom - 1 for e in events)

    start = next((s for s in range(first, last - length + 1) if free(s)), None)
    if start is None:
        raise OracleStuck("no free slots in the asked window")
    top, bottom = slots[start].bounds[1], slots[start + length - 1].bounds[3]
    if top < area.bounds[1] + 2:
        return Action(ActionType.SCROLL, direction="up", index=area.index)
    if bottom > min(area.bounds[3], screen.height) - 2:
        return Action(ActionType.SCROLL, direction="down", index=area.index)
    x = (slots[start].bounds[0] + slots[start].bounds[2]) / 2
    return Action(ActionType.DRAG, x=x, y=top + 4, end_x=x, end_y=bottom - 4)


def _ink(pixels: np.ndarray) -> np.ndarray:
    """Which pixels are drawn on their background (the most common colour around them)."""
    flat = pixels.reshape(-1, 3).astype(int)
    colours, counts = np.unique(flat, axis=0, return_counts=True)
    background = colours[counts.argmax()]
    contrast = np.abs(pixels.astype(int) - background).sum(axis=-1)
    # half the strongest contrast: the same shape whatever the colours (grey on grey, white
    # on a highlighted item, dark on the instruction's yellow)
    return contrast > max(60, contrast.max() // 2)


def _icon_shown_in(instruction_area: np.ndarray, icons: dict[str, np.ndarray]) -> str | None:
    """The menu item whose icon (the ink of its glyph) is drawn in the instruction area: the icon
    and place where the ink overlaps best (intersection over union)."""
    ink = _ink(instruction_area)
    best, best_score = None, 0.0
    for label, icon in icons.items():
        h, w = icon.shape
        windows = np.lib.stride_tricks.sliding_window_view(ink, (h, w))
        both = (windows & icon).sum(axis=(-2, -1))
        either = (windows | icon).sum(axis=(-2, -1))
        score = float((both / np.maximum(either, 1)).max())
        if score > best_score:
            best, best_score = label, score
    return best if best_score > 0.6 else None


def click_menu_2(ctx: PredicateContext) -> Action:
    """Items named by label: :func:`~gui_gym.envs.miniwob.oracles.widgets.click_menu_2`.
    Items named by an icon drawn in the instruction: open the menu and the Playback submenu,
    note each item's icon as the screen shows it, find which of them the instruction shows,
    and click that item."""
    if "labeled" in task_state(ctx).fields.get("target", ""):
        return _click_menu_by_label(ctx)
    screenshot = ctx.extra.get("screenshot")
    if screenshot is None:
        raise OracleStuck("the item is named by an icon only the screenshot shows")
    screen = ctx.screen
    items = [e for e in screen.elements if e.role == "listitem"]
    if not items:
        return click(element_with_text(screen, "Menu", ("button",)))
    pixels = screenshot()
    icons: dict[str, np.ndarray] = expert_notes(ctx).setdefault("icons", {})
    labels: dict[str, UIElement] = {}
    for item in items:
        parts = (
            [e for e in screen.elements if e.parent == item.children[0]] if item.children else []
        )
        words = " ".join(e.text for e in parts if e.text)
        icon = next((e for e in parts if "ui-icon" in e.description and not e.text), None)
        if not words or icon is None or "caret" in icon.description:
            continue
        labels[words] = next(e for e in parts if e.text)
        x0, y0, x1, y1 = icon.bounds
        # the glyph inside its 16x16 box (the box's edge can touch a highlighted neighbour)
        ink = _ink(pixels[y0 + 1 : y1 - 1, x0 + 1 : x1 - 1])
        if words not in icons and ink.shape == (14, 14) and ink.sum() >= 10:
            icons[words] = ink  # (a closed submenu's items are read but not drawn)
    wanted = _icon_shown_in(pixels[:50], icons)
    if wanted is not None and wanted in labels:
        return click_centre(labels[wanted])
    notes = expert_notes(
        ctx
    )  # not among the icons seen: the submenu's show once Playback is hovered
    if not notes.get("hovered"):
        notes["hovered"] = True
        return Action(
            ActionType.HOVER, index=find_element(screen, lambda e: e.text == "Playback").index
        )
    if ctx.step < 45:
        return Action(ActionType.WAIT)  # the submenu opens 300 ms after the hover
    raise OracleStuck("no menu icon matches the one in the instruction")
