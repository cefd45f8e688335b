"""Experts for the MiniWoB++ tasks a person solves by looking: shapes on a canvas, a
colour swatch, icons, geometry on an SVG grid.

They read only what the observation shows (the UI tree, miniwob's fields, and the
screenshot that ``screenshot=True`` observes, through ``ctx.extra["screenshot"]``, analysed
with numpy as a person reads the same screen) and act only through gui-gym actions.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext
from gui_gym.core.ui import UIElement, UITree
from gui_gym.envs.miniwob.drag import DRAG_STEPS  # the pointer moves of a straight drag
from gui_gym.envs.miniwob.oracles.common import (
    OracleStuck,
    click,
    descendants,
    element_with_text,
    fill_then_submit,
    find_element,
    press_submit,
    task_state,
)

__all__ = [
    "bisect_angle",
    "circle_center",
    "count_polygon_sides",
    "count_sides",
    "drag_cube",
    "drag_items_grid",
    "draw_circle",
    "find_midpoint",
    "order_food",
    "right_angle",
    "swatch_colour",
    "use_colorwheel_2",
]


def _pixels(ctx: PredicateContext) -> np.ndarray:
    """The screenshot of the task area, ``(height, width, 3)`` uint8."""
    grab = ctx.extra.get("screenshot")
    if grab is None:
        raise OracleStuck("this expert reads the screen, and the env gives no screenshot")
    return np.asarray(grab() if callable(grab) else grab)


# -- count-sides --------------------------------------------------------------------------------

_POLYGON_SIDES = (3, 4, 5, 6, 7)
_DARK = 100


def _outline_radii(mask: np.ndarray, centre: tuple[float, float], bins: int = 360) -> np.ndarray:
    """For each of ``bins`` directions around ``centre``, the farthest dark pixel's distance
    (NaN where none is dark)."""
    ys, xs = np.nonzero(mask)
    dx, dy = xs + 0.5 - centre[0], ys + 0.5 - centre[1]
    angle = (np.arctan2(dy, dx) % (2 * np.pi)) * bins / (2 * np.pi)
    radius = np.hypot(dx, dy)
    out = np.full(bins, np.nan)
    np.fmax.at(out, angle.astype(int) % bins, radius)
    return out


def _polygon_radius(theta: np.ndarray, sides: int, phase: float, circumradius: float) -> np.ndarray:
    """Distance from the centre to a regular polygon's outline in direction ``theta``."""
    sector = 2 * np.pi / sides
    local = (theta - phase) % sector - sector / 2
    return circumradius * np.cos(sector / 2) / np.cos(local)


def count_polygon_sides(mask: np.ndarray, centre: tuple[float, float]) -> int:
    """How many sides the regular polygon stroked in ``mask`` has: the regular polygon
    (3-7 sides, any rotation and size) whose outline best fits the outer edge of the
    stroke, direction by direction (a vertex sticks out beyond the sides' midpoints by
    ``1 - cos(pi / n)`` of the radius: 50% for a triangle, 10% for a heptagon)."""
    radii = _outline_radii(mask, centre)
    seen = ~np.isnan(radii)
    if seen.sum() < 90:
        raise OracleStuck("no shape on the canvas")
    theta = (np.arange(radii.size) + 0.5) * 2 * np.pi / radii.size
    best: tuple[float, int] = (np.inf, 0)
    for sides in _POLYGON_SIDES:
        for phase in np.linspace(0, 2 * np.pi / sides, 90, endpoint=False):
            model = _polygon_radius(theta[seen], sides, phase, 1.0)
            scale = np.median(radii[seen] / model)
            error = float(np.median(np.abs(radii[seen] - scale * model)))
            best = min(best, (error, sides))
    return best[1]


def count_sides(ctx: PredicateContext) -> Action:
    """Count the sides of the polygon drawn on the canvas (only the screenshot shows it)
    and press that number's button."""
    screen = ctx.screen
    canvas = find_element(screen, lambda e: e.role == "image")
    x0, y0, x1, y1 = canvas.bounds
    pixels = _pixels(ctx)[y0:y1, x0:x1].astype(int)
    mask = (pixels < _DARK).all(axis=2)
    # the page draws the shape around the canvas's centre
    sides = count_polygon_sides(mask, ((x1 - x0) / 2, (y1 - y0) / 2))
    return Action(ActionType.CLICK, index=element_with_text(screen, str(sides), ("button",)).index)


# -- use-colorwheel-2 ---------------------------------------------------------------------------

_QUERY_HEIGHT = 50


def swatch_colour(pixels: np.ndarray, size: int = 6) -> tuple[int, int, int]:
    """The colour of the one solid ``size`` x ``size`` block in ``pixels`` that is not the
    background (the most common colour): the instruction's swatch, which text strokes (one
    or two pixels wide) never fill."""
    flat = pixels.reshape(-1, 3)
    values, counts = np.unique(flat, axis=0, return_counts=True)
    background = values[counts.argmax()]
    height, width, _ = pixels.shape
    for y in range(height - size + 1):
        for x in range(width - size + 1):
            block = pixels[y : y + size, x : x + size].reshape(-1, 3)
            first = block[0]
            if (block == first).all() and not (first == background).all():
                return int(first[0]), int(first[1]), int(first[2])
    raise OracleStuck("no colour swatch in the instruction")


def use_colorwheel_2(ctx: PredicateContext) -> Action:
    """Read the swatch's colour off the instruction (only the screen shows it), type its hex
    code into the picker's field, then submit."""
    screen = ctx.screen
    notes = task_state(ctx).notes
    if "hex" not in notes:
        red, green, blue = swatch_colour(_pixels(ctx)[:_QUERY_HEIGHT])
        notes["hex"] = f"{red:02X}{green:02X}{blue:02X}"
    field = find_element(screen, lambda e: e.resource_id == "col")
    return fill_then_submit(ctx, [(field, notes["hex"])], press_submit(screen))


# -- order-food ---------------------------------------------------------------------------------


def _menu(screen: UITree) -> list[tuple[str, set[str], UIElement, str]]:
    """The menu's dishes: name, kinds (the icons' alternative texts), the ``+`` button, and
    the quantity shown (``""`` for none)."""
    dishes = []
    for plus in (e for e in screen.elements if e.role == "text" and e.text == "+"):
        order = screen.elements[plus.parent]
        item = screen.elements[order.parent]
        parts = descendants(screen, item)
        name = next(
            (e.text for e in parts if e.text and e.text not in "+-" and not e.text.isdigit()), ""
        )
        kinds = {e.description.split("alt ", 1)[1] for e in parts if "alt " in e.description}
        quantity = next((e.text for e in parts if e.text.isdigit()), "")
        dishes.append((name, kinds, plus, quantity))
    return dishes


def order_food(ctx: PredicateContext) -> Action:
    """Order one of each named dish, or the asked number of dishes of a kind (all of one
    dish of that kind: the page counts the total), then press Order!."""
    screen = ctx.screen
    fields = task_state(ctx).fields
    dishes = _menu(screen)
    if fields.get("criterion") == "name":
        wanted = {v.strip() for k, v in fields.items() if k.startswith("target")}
        for name, _, plus, quantity in dishes:
            if name in wanted and not quantity:
                return click(plus)
    else:
        kind, amount = fields["type"], int(fields["amount"])
        fitting = [d for d in dishes if kind in d[1]]
        if not fitting:
            raise OracleStuck(f"no dish is {kind!r}")
        _, _, plus, quantity = fitting[0]
        if int(quantity or 0) < amount:
            return click(plus)
    return press_submit(screen, ("Order!",))


# -- drag-items-grid ----------------------------------------------------------------------------

_GRID_PLACES = {
    "top left": 1,
    "top center": 2,
    "top right": 3,
    "center left": 4,
    "center": 5,
    "center right": 6,
    "bottom left": 7,
    "bottom center": 8,
    "bottom right": 9,
}
_GRID_STEPS = {"up by one": -3, "down by one": 3, "left by one": -1, "right by one": 1}


def _sortable_drop(
    boxes: list[tuple[int, int, int, int]],
    source: int,
    path: list[tuple[int, int]],
    refresh: bool,
) -> int:
    """Where a floated jQuery UI (1.12) sortable puts item ``source`` (1-based) dragged
    along ``path`` (press point first), as its ``_mouseDrag`` decides at each pointer move:
    the last item (in page order) under the pointer, other than the dragged one and the
    placeholder's neighbour on that side, takes the placeholder after it when the pointer
    moved right or down, else before it, provided the pointer is over its half on the side
    it moved to (else nothing moves). ``refresh``: the items' positions are re-read after
    each change (the page does so on a timer, which may or may not run within a drag)."""
    dragged, placeholder = 0, -1
    items = range(1, len(boxes) + 1)
    # the page's list: the dragged item stays in place (lifted out of the flow) with the
    # placeholder right after it
    dom = [k for i in items for k in ((dragged, placeholder) if i == source else (i,))]
    where = {i: boxes[i - 1] for i in items}
    for (px, py), (x, y) in itertools.pairwise(path):
        dx, dy = x - px, y - py
        for item in reversed(items):
            if item == source:
                continue
            x0, y0, x1, y1 = where[item]
            if not (x0 <= x < x1 and y0 <= y < y1):
                continue
            after = dx > 0 or dy > 0
            at = dom.index(placeholder)
            side = at - 1 if after else at + 1
            if 0 <= side < len(dom) and dom[side] == item:
                continue
            if dx:
                sides = (x >= (x0 + x1) / 2) == (dx > 0)
            else:
                sides = dy != 0 and (y >= (y0 + y1) / 2) == (dy > 0)
            if sides:
                dom.remove(placeholder)
                dom.insert(dom.index(item) + (1 if after else 0), placeholder)
                if refresh:
                    flow = [i for i in dom if i != dragged]
                    where = {i: boxes[k] for k, i in enumerate(flow) if i > 0}
            break
    return [i for i in dom if i != dragged].index(placeholder) + 1


def _grid_drag(
    boxes: list[tuple[int, int, int, int]], source: int, target: int
) -> tuple[int, int, int, int]:
    """Press and release points of one straight drag (:data:`DRAG_STEPS` pointer moves)
    that moves item ``source`` to position ``target`` of a floated sortable whose items
    sit in ``boxes``, whether or not the page re-reads the items' positions mid-drag; the
    one whose release point lies deepest inside an item."""
    src = boxes[source - 1]
    ends = []
    for ex in range(boxes[0][0] + 2, max(b[2] for b in boxes) - 1, 2):
        for ey in range(boxes[0][1] + 2, max(b[3] for b in boxes) - 1, 2):
            depth = max((min(ex - b[0], b[2] - ex, ey - b[1], b[3] - ey) for b in boxes), default=0)
            ends.append((depth, ex, ey))
    ends.sort(reverse=True)
    starts = [
        (sx, sy)
        for sx in range(src[0] + 6, src[2] - 5, 4)
        for sy in range(src[1] + 6, src[3] - 5, 4)
    ]
    for _, ex, ey in ends:
        for sx, sy in starts:
            path = [
                (int(sx + (ex - sx) * k / DRAG_STEPS), int(sy + (ey - sy) * k / DRAG_STEPS))
                for k in range(DRAG_STEPS + 1)
            ]
            if all(
                _sortable_drop(boxes, source, path, refresh) == target for refresh in (False, True)
            ):
                return sx, sy, ex, ey
    raise OracleStuck(f"no straight drag moves item {source} to {target}")


def drag_items_grid(ctx: PredicateContext) -> Action:
    """Drag the named item of the 3x3 sortable grid to the asked cell in one drag (the
    page ends the episode when the drag ends); see :func:`_grid_drag` for where."""
    screen = ctx.screen
    goal = task_state(ctx).fields["target"].rstrip(".")
    cells = [e for e in screen.elements if e.role == "listitem"]
    names = [" ".join(screen.elements[c].text for c in cell.children) for cell in cells]
    name = next((n for n in names if n and goal.startswith(n + " ")), None)
    if name is None or len(cells) != 9:
        raise OracleStuck(f"cannot read {goal!r} on a 3x3 grid")
    rest, source = goal[len(name) + 1 :], names.index(name) + 1
    if rest.startswith("to the "):
        target = _GRID_PLACES.get(rest[len("to the ") :])
    else:
        target = source + _GRID_STEPS[rest] if rest in _GRID_STEPS else None
    if target is None:
        raise OracleStuck(f"cannot read {goal!r}")
    x, y, end_x, end_y = _grid_drag([c.bounds for c in cells], source, target)
    return Action(ActionType.DRAG, x=x, y=y, end_x=end_x, end_y=end_y)


# -- draw-circle --------------------------------------------------------------------------------

_STROKE_RADIUS = 15
_STROKE_POINTS = 24


def draw_circle(ctx: PredicateContext) -> Action:
    """Draw a circle around the marked point in one stroke (a DRAG_XY through points on
    it), then submit."""
    screen = ctx.screen
    if ctx.action is not None and ctx.action.type is ActionType.DRAG:
        return press_submit(screen)
    mark = find_element(screen, lambda e: e.description.startswith("circle"))
    x0, y0, x1, y1 = mark.bounds
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    turns = np.linspace(0, 2 * np.pi, _STROKE_POINTS + 1)
    points = [
        (round(cx + _STROKE_RADIUS * np.cos(t)), round(cy + _STROKE_RADIUS * np.sin(t)))
        for t in turns
    ]
    (sx, sy), *middle, (ex, ey) = points
    via = tuple(float(v) for point in middle for v in point)
    return Action(ActionType.DRAG, x=sx, y=sy, end_x=ex, end_y=ey, via=via)


# -- drag-cube ----------------------------------------------------------------------------------


def _red_box(pixels: np.ndarray) -> tuple[int, int, int, int] | None:
    """Bounding box of the clearly red pixels (the active face's digit), or None."""
    p = pixels.astype(int)
    red = (p[..., 0] > 180) & (p[..., 1] < 90) & (p[..., 2] < 90)
    if red.sum() < 15:
        return None
    ys, xs = np.nonzero(red)
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


_CUBE_STEP = 14


def drag_cube(ctx: PredicateContext) -> Action:
    """Turn the cube until the asked digit is the active (red) face, nudging it sideways
    (the four sides) or up and down (the top and bottom), then submit once the screen is
    still. The active face is the digit whose box the red pixels fill (the screen shows
    it red; the reading gives each digit's box, not its colour): the digit whose box is
    centred where the red glyph is (the faces' boxes overlap, their centres do not)."""
    screen = ctx.screen
    notes = task_state(ctx).notes
    want = task_state(ctx).fields["target"]
    pixels = _pixels(ctx)
    still = notes.get("last") is not None and np.array_equal(notes["last"], pixels)
    notes["last"] = pixels
    digits = [e for e in screen.elements if e.role == "text" and e.text in "123456" and e.text]
    red = _red_box(pixels)
    active = None
    if red is not None and digits:
        cx, cy = (red[0] + red[2]) / 2, (red[1] + red[3]) / 2
        active = min(digits, key=lambda e: math.dist(e.center, (cx, cy))).text
    if active is None or (active == want and not still):
        return Action(ActionType.WAIT)  # the colour is fading in, or the cube still turns
    if active == want:
        return press_submit(screen)
    moved = notes.get("active") != active
    notes["active"] = active
    if not still and moved:
        return Action(ActionType.WAIT)  # turning towards other faces: see where it stops
    # The cube turns by how far the mouse moved while pressed between two of its 20 ms
    # ticks, so each nudge starts where the mouse already is (a jump back to a fixed start
    # right before the press would cancel the nudge); when the next nudge would leave the
    # cube, the mouse first moves back across it unpressed.
    x0, y0, x1, y1 = find_element(screen, lambda e: e.resource_id == "wrapper").bounds
    x, y = notes.get("pointer", ((x0 + x1) // 2, (y0 + y1) // 2 - 20))
    vertical = want in "16" or active in "16"
    dx, dy = (0, _CUBE_STEP) if vertical else (_CUBE_STEP, 0)
    if not (x0 + 5 <= x + dx < x1 - 5 and y0 + 5 <= y + dy < y1 - 40):
        notes["pointer"] = (x0 + 10, y) if not vertical else (x, y0 + 10)
        return Action(ActionType.HOVER, x=notes["pointer"][0], y=notes["pointer"][1])
    notes["pointer"] = (x + dx, y + dy)
    return Action(ActionType.DRAG, x=x, y=y, end_x=x + dx, end_y=y + dy)


# -- geometry on the SVG grid: circle-center, find-midpoint, right-angle, bisect-angle ----------


def _svg_dots(screen: UITree, fill: str) -> list[tuple[float, float]]:
    """Centres of the page's own circles of one fill (``#0000ff``, ``#000000``); not the dot
    the expert placed (``blue-circle``)."""
    return [
        e.center
        for e in screen.elements
        if e.description == f"circle fill {fill}" and e.resource_id != "blue-circle"
    ]


def _place_dot(ctx: PredicateContext, target: tuple[float, float]) -> Action:
    """Put the page's dot at ``target`` and submit: click there, see where the dot landed
    (these pages draw it a couple of pixels off the pointer: their click handler ignores
    the grid's margin), click once more corrected by that offset, submit."""
    screen = ctx.screen
    notes = task_state(ctx).notes
    clicks = notes.setdefault("clicks", [])
    if clicks:
        dot = next((e for e in screen.elements if e.resource_id == "blue-circle"), None)
        if dot is None:
            raise OracleStuck("the click placed no dot")
        if len(clicks) == 1:
            (cx, cy), (bx, by) = clicks[0], dot.center
            clicks.append((round(target[0] - (bx - cx)), round(target[1] - (by - cy))))
            if clicks[1] != clicks[0]:
                return Action(ActionType.CLICK, x=clicks[1][0], y=clicks[1][1])
        return press_submit(screen)
    clicks.append((round(target[0]), round(target[1])))
    return Action(ActionType.CLICK, x=clicks[0][0], y=clicks[0][1])


def _inside_grid(screen: UITree, origin: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """The point along ``direction`` from ``origin`` farthest out (up to 60 px) that stays
    8 px inside the grid: a longer arm measures its angle more finely."""
    grid = find_element(screen, lambda e: e.role == "image")
    x0, y0, x1, y1 = grid.bounds
    for length in range(60, 5, -2):
        x, y = origin + length * direction
        if x0 + 8 <= x <= x1 - 8 and y0 + 8 <= y <= y1 - 8:
            return origin + length * direction
    raise OracleStuck("no room on the grid along that direction")


def circle_center(ctx: PredicateContext) -> Action:
    """Put the dot on the circle's centre, then submit."""
    circle = find_element(ctx.screen, lambda e: e.description == "circle fill #ffffff")
    return _place_dot(ctx, circle.center)


def find_midpoint(ctx: PredicateContext) -> Action:
    """Put the dot halfway between the two black points, then submit."""
    dots = _svg_dots(ctx.screen, "#000000")
    if len(dots) != 2:
        raise OracleStuck("no two points")
    (ax, ay), (bx, by) = dots
    return _place_dot(ctx, ((ax + bx) / 2, (ay + by) / 2))


def right_angle(ctx: PredicateContext) -> Action:
    """Put the dot on the perpendicular to the black point's line at the blue vertex."""
    screen = ctx.screen
    black, blue = _svg_dots(screen, "#000000"), _svg_dots(screen, "#0000ff")
    if len(black) != 1 or len(blue) != 1:
        raise OracleStuck("no vertex and point")
    vertex, arm = np.array(blue[0]), np.array(black[0]) - np.array(blue[0])
    normal = np.array([-arm[1], arm[0]]) / np.hypot(*arm)
    for direction in (normal, -normal):
        try:
            return _place_dot(ctx, tuple(_inside_grid(screen, vertex, direction)))
        except OracleStuck:
            continue
    raise OracleStuck("no room for the right angle's arm")


def bisect_angle(ctx: PredicateContext) -> Action:
    """Put the dot on the bisector of the angle the two black points make at the blue
    vertex."""
    screen = ctx.screen
    black, blue = _svg_dots(screen, "#000000"), _svg_dots(screen, "#0000ff")
    if len(black) != 2 or len(blue) != 1:
        raise OracleStuck("no vertex and two points")
    vertex = np.array(blue[0])
    arms = [np.array(p) - vertex for p in black]
    bisector = sum(a / np.hypot(*a) for a in arms)
    return _place_dot(ctx, tuple(_inside_grid(screen, vertex, bisector / np.hypot(*bisector))))
