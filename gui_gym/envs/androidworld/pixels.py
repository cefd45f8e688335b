"""Content that exists only as pixels: pictures in the gallery, video frames, a web page's
canvas or maze. Such an element carries no text (what a screen reader would say is its
description, "Image receipt.png"); the env draws its content into the screenshot from the
phone state, through the renderer its app registered here for the element's handler key.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from PIL import Image, ImageDraw

from gui_gym.core.draw import _font as pillow_font
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.phone import PhoneState

__all__ = ["PIXEL_SOURCES", "draw_pixels", "pixel_source", "render_lines"]

Renderer = Callable[[PhoneState, str, int, int], np.ndarray]

PIXEL_SOURCES: dict[str, Renderer] = {}
"""Handler key -> ``(phone, handler_arg, width, height) -> (height, width, 3) uint8``."""


def pixel_source(handler: str) -> Callable[[Renderer], Renderer]:
    """Decorator registering the renderer of elements with handler key ``handler``."""

    def register(fn: Renderer) -> Renderer:
        PIXEL_SOURCES[handler] = fn
        return fn

    return register


@functools.lru_cache(maxsize=64)
def render_lines(lines: tuple[str, ...], width: int, height: int) -> np.ndarray:
    """``lines`` of dark text on white (a receipt, a photographed note, a video frame's
    caption), ``(height, width, 3)`` uint8. No lines: a plain photo (a grey-blue gradient)."""
    width, height = max(1, width), max(1, height)
    if not lines:
        column = np.linspace(150, 210, height).astype(np.uint8)
        photo = np.stack([column, column + 10, np.full_like(column, 230)], axis=-1)
        return np.ascontiguousarray(np.repeat(photo[:, None, :], width, axis=1))
    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    size = max(8, min(11 * width // 344 if width >= 344 else 11, height // len(lines)))
    font = pillow_font(size)
    y = 4
    for line in lines:
        draw.text((6, y), line, fill=(20, 20, 20), font=font)
        y += size + 2
    array = np.asarray(image, dtype=np.uint8)
    array.setflags(write=False)
    return array


def draw_pixels(screenshot: np.ndarray, tree: UITree, phone: PhoneState) -> np.ndarray:
    """Draw the pixel-only content of the elements on screen into ``screenshot`` (in place;
    returned)."""
    height = screenshot.shape[0]
    for e in tree.elements:
        render = PIXEL_SOURCES.get(e.handler) if e.handler else None
        if render is None:
            continue
        x0, y0, x1, y1 = e.bounds
        if x1 <= x0 or y1 <= y0 or y0 >= height:
            continue
        pixels = render(phone, e.handler_arg, x1 - x0, y1 - y0)
        screenshot[y0 : min(y1, height), x0:x1] = pixels[: min(y1, height) - y0]
    return screenshot
