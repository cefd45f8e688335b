"""Experts for pages of coloured boxes and shapes read from the UI tree (SVG attributes and
background colours): colours, shades, shapes, pies, lines, drags of shapes, cards, a colour
picker and a checkbox grid."""

from __future__ import annotations

import re

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext
from gui_gym.core.ui import UIElement, UITree
from gui_gym.envs.miniwob.oracles.common import (
    NAMED_COLOURS,
    OracleStuck,
    click,
    click_centre,
    colour_of,
    descendants,
    element_with_text,
    expert_notes,
    fill_then_submit,
    find_element,
    press_submit,
    task_state,
    wait,
)

__all__ = [
    "click_color",
    "click_pie",
    "click_shades",
    "click_shape",
    "count_shape",
    "drag_box",
    "drag_shapes",
    "drag_shapes_2",
    "draw_line",
    "find_greatest",
    "identify_shape",
    "number_checkboxes",
    "use_colorwheel",
]


def click_color(ctx: PredicateContext) -> Action:
    want = NAMED_COLOURS.get(task_state(ctx).fields["target"].lower())
    if want is None:
        raise OracleStuck(f"unknown colour {task_state(ctx).fields['target']!r}")
    boxes = [
        (e, c) for e in ctx.screen.elements if "color" in e.description and (c := colour_of(e))
    ]
    # white boxes carry no background colour in the reading (white is the page's)
    for e in (e for e in ctx.screen.elements if e.description == "color"):
        boxes.append((e, (255, 255, 255)))
    if not boxes:
        raise OracleStuck("no colour boxes")
    return click(min(boxes, key=lambda b: sum((x - y) ** 2 for x, y in zip(b[1], want)))[0])


def click_shades(ctx: PredicateContext) -> Action:
    """Click every swatch whose hue is the asked colour's (red, green or blue channel
    largest), then submit; clicked swatches are noted (their mark is not in the reading)."""
    screen = ctx.screen
    channel = ("red", "green", "blue").index(task_state(ctx).fields["target"])
    notes = expert_notes(ctx).setdefault("clicked", set())
    for e in screen.elements:
        colour = colour_of(e)
        if colour is None or e.index in notes:
            continue
        if colour[channel] == max(colour) and sorted(colour)[1] < colour[channel]:
            notes.add(e.index)
            return click(e)
    return press_submit(screen)


_SHAPE_NAMES = {"circle": "Circle", "rect": "Rectangle", "polygon": "Triangle"}


def identify_shape(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    svg = find_element(screen, lambda e: e.resource_id == "area_svg")
    shape = next(iter(descendants(screen, svg)), None)
    if shape is None:
        raise OracleStuck("no figure")
    if shape.text:
        answer = "Number" if shape.text.isdigit() else "Letter"
    else:
        answer = _SHAPE_NAMES.get(shape.description.split()[0] if shape.description else "", "")
    if not answer:
        raise OracleStuck(f"unknown figure {shape.description!r}")
    return click(element_with_text(screen, answer, ("button",)))


def _click_then_submit(ctx: PredicateContext, x: float, y: float) -> Action:
    if ctx.action is not None and ctx.action.has_point and ctx.action.type is ActionType.CLICK:
        return press_submit(ctx.screen)
    return Action(ActionType.CLICK, x=x, y=y)


def draw_line(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    if ctx.action is not None and ctx.action.type is ActionType.DRAG:
        return click(element_with_text(screen, "Submit", ("button",)))
    dot = find_element(screen, lambda e: e.resource_id == "circ")
    x, y = dot.center
    if task_state(ctx).fields["direction"] == "vertical":
        return Action(ActionType.DRAG, x=x, y=y - 25, end_x=x, end_y=y + 25)
    return Action(ActionType.DRAG, x=x - 25, y=y, end_x=x + 25, end_y=y)


def click_pie(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    want = task_state(ctx).fields["target"]
    item = next((e for e in screen.elements if e.text == want), None)
    if item is not None and (item.bounds[2] - item.bounds[0]) > 2:
        title = screen.elements[item.parent].resource_id  # wheelnav-<id>-title-<k>
        if "-title-" in title and "fill #ffffff" in item.description:
            # the item that starts selected takes no real click (its slice lets the mouse
            # through): miniwob's element click on its slice, as CLICK(i) sends, reaches it
            slice_id = title.replace("-title-", "-slice-")
            return click(find_element(screen, lambda e: e.resource_id == slice_id))
        # a point of the item's slice between the pie's centre and its label (a label at
        # the rim can sit outside the slice's clickable shape)
        hub = find_element(screen, lambda e: e.resource_id.endswith("-spreader")).center
        x, y = item.center
        return Action(
            ActionType.CLICK,
            x=round(hub[0] + 0.75 * (x - hub[0])),
            y=round(hub[1] + 0.75 * (y - hub[1])),
        )
    if expert_notes(ctx).get("opened") and ctx.step < 40:
        return wait()  # the menu is still opening
    expert_notes(ctx)["opened"] = True
    return click_centre(find_element(screen, lambda e: e.text == "+"))


def drag_box(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    if ctx.action is not None and ctx.action.type is ActionType.DRAG:
        return press_submit(screen)
    small = find_element(screen, lambda e: e.resource_id == "draggableSmall")
    large = find_element(screen, lambda e: e.resource_id == "draggableLarge")
    return Action(ActionType.DRAG, index=small.index, end_index=large.index)


_SHAPE_WORDS = {
    "triangles": "polygon",
    "rectangles": "rect",
    "circles": "circle",
    "squares": "rect",
}


def drag_shapes(ctx: PredicateContext) -> Action:
    screen = ctx.screen
    kind = _SHAPE_WORDS.get(task_state(ctx).fields["target"])
    if kind is None:
        raise OracleStuck(f"the shapes are named by {task_state(ctx).fields['target']!r}")
    box = find_element(screen, lambda e: e.resource_id == "shape-container")
    bx0, by0, bx1, by1 = box.bounds
    for e in screen.elements:
        if e.description.split()[:1] != [kind] or e.index == box.index:
            continue
        x, y = e.center
        if not (bx0 < x < bx1 and by0 < y < by1):
            return Action(ActionType.DRAG, x=x, y=y, end_x=(bx0 + bx1) / 2, end_y=(by0 + by1) / 2)
    return press_submit(screen)


def find_greatest(ctx: PredicateContext) -> Action:
    """Turn each card over (one shows at a time), note its number, then show the greatest
    and submit."""
    screen = ctx.screen
    notes = expert_notes(ctx).setdefault("cards", {})
    holder = find_element(screen, lambda e: e.resource_id == "cardholder")
    cards = [screen.elements[i] for i in holder.children]
    for position, card in enumerate(cards):
        shown = [e.text for e in descendants(screen, card) if re.fullmatch(r"-?\d+", e.text)]
        if shown:
            notes[position] = int(shown[0])
    unseen = [p for p in range(len(cards)) if p not in notes]
    if unseen:
        return click(cards[unseen[0]])
    best = max(notes, key=notes.__getitem__)
    if not any(re.fullmatch(r"-?\d+", e.text) for e in descendants(screen, cards[best])):
        return click(cards[best])
    return click(find_element(screen, lambda e: e.resource_id == "submit"))


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
    svg = find_element(screen, lambda e: e.resource_id == "area_svg")
    return [
        (e, item)
        for e in descendants(screen, svg)
        if e.resource_id != "shape-container" and (item := _shape_of(e)) is not None
    ]


def click_shape(ctx: PredicateContext) -> Action:
    size, colour, thing = _wanted_shape(task_state(ctx).fields)
    for e, item in _items(ctx.screen):
        if _matches(item, size, colour, thing):
            return click_centre(e)
    raise OracleStuck(f"no {size} {colour} {thing} on the page")


def count_shape(ctx: PredicateContext) -> Action:
    size, colour, thing = _wanted_shape(task_state(ctx).fields)
    count = sum(_matches(item, size, colour, thing) for _, item in _items(ctx.screen))
    return click(element_with_text(ctx.screen, str(count), ("button",)))


def drag_shapes_2(ctx: PredicateContext) -> Action:
    """Drag the asked items into the left box and the others into the right one."""
    screen = ctx.screen
    words = task_state(ctx).fields["target"].split()
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
    return press_submit(screen)


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
    name = task_state(ctx).fields["target"].lower()
    if name not in _CSS_COLOURS:
        raise OracleStuck(f"unknown colour {name!r}")
    field = find_element(screen, lambda e: e.resource_id == "col")
    return fill_then_submit(ctx, [(field, _CSS_COLOURS[name])], press_submit(screen))


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
    pattern = _DIGIT_PATTERNS[task_state(ctx).fields["target"]].replace(" ", "")
    grid = find_element(screen, lambda e: e.resource_id == "checkboxes")
    boxes = [e for e in descendants(screen, grid) if e.role == "checkbox"]
    for box, bit in zip(boxes, pattern):
        if box.checked != (bit == "1"):
            return click(box)
    return press_submit(screen)
