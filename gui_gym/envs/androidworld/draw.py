"""Phone decorations for Pillow screenshots: status bar, app bar, launcher wallpaper and the
on-screen keyboard, drawn around the generic element drawing of ``gui_gym.core.draw``."""

from __future__ import annotations

import numpy as np
from PIL import ImageDraw

from gui_gym.core.draw import draw_screenshot
from gui_gym.core.ui import UITree

__all__ = ["draw_phone"]

_KEY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _before(draw: ImageDraw.ImageDraw, tree: UITree, scale: float) -> None:
    width = tree.width
    if tree.name == "launcher":
        draw.rectangle((0, 0, width, tree.height), fill=(214, 228, 240))
    elif tree.name == "shade":
        draw.rectangle((0, 0, width, tree.height), fill=(236, 236, 240))
    status = tree.find_one(resource_id="status_bar")
    if status is not None:
        draw.rectangle(status.bounds, fill=(226, 230, 233))
    title = tree.find_one(resource_id="toolbar_title")
    if title is not None:
        y0, y1 = title.bounds[1], title.bounds[3]
        pad = round(4 * scale)
        draw.rectangle((0, y0 - pad, width, y1 + pad), fill=(222, 238, 226))


def _after(draw: ImageDraw.ImageDraw, tree: UITree, scale: float) -> None:
    keyboard = tree.find_one(resource_id="keyboard")
    if keyboard is None:
        return
    x0, y0, x1, y1 = keyboard.bounds
    draw.rectangle((x0, y0, x1, y1), fill=(208, 211, 216))
    rows = (*_KEY_ROWS, " ")
    key_h = (y1 - y0) // (len(rows) + 1)
    gap = max(1, round(3 * scale))
    for r, keys in enumerate(rows):
        n = len(keys) if keys != " " else 1
        key_w = (x1 - x0) // 10
        row_w = key_w * (n if keys != " " else 5)
        start = x0 + ((x1 - x0) - row_w) // 2
        top = y0 + gap + r * key_h
        for i in range(n):
            kx = start + i * key_w
            right = kx + (key_w if keys != " " else row_w) - gap
            draw.rounded_rectangle(
                (kx + gap, top, right, top + key_h - gap), radius=gap * 2, fill=(250, 250, 250)
            )
            if keys != " ":
                draw.text((kx + key_w // 2 - gap, top + key_h // 3), keys[i], fill=(40, 40, 40))


def draw_phone(tree: UITree) -> np.ndarray:
    """The screenshot of a phone screen (cached on the tree like every screenshot)."""
    return draw_screenshot(tree, before=_before, after=_after)
