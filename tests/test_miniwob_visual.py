"""The screen-reading parts of the MiniWoB++ visual experts (oracles/visual.py), on drawn
images and worked layouts: no browser needed (test_miniwob.py runs the experts in
Chromium and replays them on raw miniwob)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image, ImageDraw

from gui_gym.envs.miniwob.drag import DRAG_STEPS as _DRAG_STEPS
from gui_gym.envs.miniwob.oracles import OracleStuck
from gui_gym.envs.miniwob.oracles.visual import (
    _grid_drag,
    _sortable_drop,
    count_polygon_sides,
    swatch_colour,
)


def _polygon_mask(sides: int, degrees: float) -> np.ndarray:
    """count-sides' canvas: a regular polygon of radius 35 stroked 3 px wide around the
    centre of a 150x100 canvas, rotated, as the page draws it."""
    image = Image.new("L", (150, 100), 255)
    turn = math.radians(degrees)
    points = [
        (
            75 + 35 * math.cos(turn + 2 * math.pi * k / sides),
            50 + 35 * math.sin(turn + 2 * math.pi * k / sides),
        )
        for k in range(sides)
    ]
    ImageDraw.Draw(image).polygon(points, outline=0, width=3)
    return np.asarray(image) < 100


@pytest.mark.parametrize("sides", [3, 4, 5, 6, 7])
@pytest.mark.parametrize("degrees", [0, 17, 45, 90, 133, 180])
def test_polygon_sides_are_counted_at_any_rotation(sides: int, degrees: float) -> None:
    assert count_polygon_sides(_polygon_mask(sides, degrees), (75, 50)) == sides


def test_an_empty_canvas_is_not_guessed() -> None:
    with pytest.raises(OracleStuck, match="no shape"):
        count_polygon_sides(np.zeros((100, 150), bool), (75, 50))


def test_swatch_colour_is_read_exactly_and_text_is_not_a_swatch() -> None:
    query = np.full((50, 160, 3), (255, 255, 0), np.uint8)  # the yellow instruction area
    query[10:13, 5:40] = 0  # a text stroke: 3 px high, never a 6x6 block
    query[20:30, 100:110] = (0xAB, 0x25, 0x67)  # the 10x10 swatch
    assert swatch_colour(query) == (0xAB, 0x25, 0x67)
    with pytest.raises(OracleStuck, match="no colour swatch"):
        swatch_colour(query[:15])


# drag-items-grid's 3x3 grid: 40 px items, 6 px apart
GRID = [(7 + 46 * c, 57 + 46 * r, 47 + 46 * c, 97 + 46 * r) for r in range(3) for c in range(3)]


def test_sortable_places_the_item_by_the_last_moves_direction() -> None:
    # item 8 dragged up and right onto item 6's right half: after 6, at position 7
    up_right = [(73, 169), (86, 157), (99, 146), (112, 134), (125, 123)]
    assert _sortable_drop(GRID, 8, up_right, refresh=False) == 7
    # the same drag stopped on 6's left half: moving right, nothing moves
    assert _sortable_drop(GRID, 8, up_right[:-1], refresh=False) == 8
    # 6's left half reached moving left (round the grid's right side): before 6
    around = [(73, 169), (150, 169), (150, 123), (105, 123)]
    assert _sortable_drop(GRID, 8, around, refresh=False) == 6


@pytest.mark.parametrize(("source", "target"), [(8, 6), (1, 9), (7, 9), (6, 7), (5, 1), (2, 1)])
def test_grid_drag_is_planned_to_land_on_the_target(source: int, target: int) -> None:
    sx, sy, ex, ey = _grid_drag(GRID, source, target)
    steps = _DRAG_STEPS
    path = [
        (int(sx + (ex - sx) * k / steps), int(sy + (ey - sy) * k / steps)) for k in range(steps + 1)
    ]
    assert all(_sortable_drop(GRID, source, path, refresh) == target for refresh in (False, True))
    x0, y0, x1, y1 = GRID[source - 1]
    assert x0 <= sx < x1 and y0 <= sy < y1  # pressed on the item itself
