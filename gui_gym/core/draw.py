"""Pillow-drawn screenshots of a :class:`~gui_gym.core.ui.UITree`, for simulated apps.

The picture is a faithful, deterministic drawing of the tree: every element at its bounds,
styled by role and flags, with its label wrapped inside. Vision-language agents get pixels
that agree exactly with the text screen.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from gui_gym.core.ui import UIElement, UITree

__all__ = ["draw_screenshot"]

_BACKGROUND = (250, 250, 250)
_STYLE: dict[
    str, tuple[tuple[int, int, int] | None, tuple[int, int, int] | None, tuple[int, int, int]]
] = {
    # role: (fill, outline, text colour)
    "button": ((54, 120, 70), None, (255, 255, 255)),
    "link": (None, None, (25, 90, 170)),
    "input": ((255, 255, 255), (120, 120, 120), (40, 40, 40)),
    "heading": (None, None, (20, 20, 20)),
    "text": (None, None, (60, 60, 60)),
    "checkbox": ((255, 255, 255), (80, 80, 80), (40, 40, 40)),
    "switch": ((235, 235, 235), (80, 80, 80), (40, 40, 40)),
    "image": ((210, 220, 210), None, (90, 90, 90)),
    "tab": ((236, 242, 236), None, (40, 70, 40)),
    "dialog": ((255, 255, 255), (60, 60, 60), (20, 20, 20)),
    "toast": ((50, 50, 50), None, (255, 255, 255)),
    "listitem": (None, (230, 230, 230), (40, 40, 40)),
    "menuitem": ((255, 255, 255), (220, 220, 220), (40, 40, 40)),
    "container": (None, None, (40, 40, 40)),
}
_DEFAULT_STYLE = (None, (200, 200, 200), (40, 40, 40))


@functools.cache
def _font(size: int = 11) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    # At the base size, Pillow's bitmap font: fast and identical everywhere. Larger screens use
    # the FreeType font Pillow ships (no font files needed either way).
    if size <= 11:
        return ImageFont.load_default_imagefont()
    return ImageFont.load_default(size=size)


class _Pen:
    """Sizes for one drawing scale (1.0 = a 360-dp-wide screen)."""

    def __init__(self, scale: float):
        self.scale = scale
        self.char_w = max(1, round(6 * scale))
        self.line_h = max(1, round(11 * scale))
        self.pad = max(1, round(4 * scale))
        self.font = _font(round(11 * scale) if scale > 1.05 else 11)


_TO_LATIN1 = str.maketrans(
    {"•": "*", "’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-", "…": "..."}
)


_ICON_WORDS = {
    "navigate up": "<-",
    "back": "<-",
    "bookmark": "Save",
    "remove bookmark": "Saved",
    "more options": "...",
}


def _drawable(text: str) -> str:
    # The bitmap font covers Latin-1 only; anything else is drawn as '?'.
    return text.translate(_TO_LATIN1).encode("latin-1", "replace").decode("latin-1")


def _wrap(text: str, width_px: int, max_lines: int, char_w: int = 6) -> list[str]:
    per_line = max(1, width_px // char_w)
    words = text.split()
    lines: list[str] = []
    current = ""
    for word in words:
        while len(word) > per_line:
            if current:
                lines.append(current)
                current = ""
            lines.append(word[:per_line])
            word = word[per_line:]
        candidate = f"{current} {word}" if current else word
        if len(candidate) <= per_line:
            current = candidate
        else:
            lines.append(current)
            current = word
        if len(lines) >= max_lines:
            break
    if current and len(lines) < max_lines:
        lines.append(current)
    return lines[:max_lines]


def _draw_element(draw: ImageDraw.ImageDraw, e: UIElement, pen: _Pen) -> None:
    x0, y0, x1, y1 = e.bounds
    if x1 <= x0 or y1 <= y0:
        return
    pad, char_w, line_h = pen.pad, pen.char_w, pen.line_h
    fill, outline, ink = _STYLE.get(e.role, _DEFAULT_STYLE)
    if not e.enabled:
        fill, ink = (225, 225, 225) if fill else None, (150, 150, 150)
    if e.selected and e.role not in ("button", "toast", "switch"):
        fill = (255, 243, 205)
    if fill is not None or outline is not None:
        draw.rectangle((x0, y0, x1 - 1, y1 - 1), fill=fill, outline=outline)
    if e.focused:
        draw.rectangle((x0, y0, x1 - 1, y1 - 1), outline=(30, 110, 220), width=max(2, pad // 2))
    text_x = x0 + pad
    if e.role in ("checkbox", "radio"):
        box = (x0 + pad, y0 + pad, x0 + 3 * pad + 2, y0 + 3 * pad + 2)
        draw.rectangle(box, outline=(60, 60, 60), fill=(60, 140, 80) if e.checked else None)
        text_x = x0 + 5 * pad
    elif e.role == "switch":
        # A track and knob on the right, as Android draws a Switch.
        tw, th = 9 * pad, 4 * pad
        tx1, ty0 = x1 - 2 * pad, y0 + (y1 - y0 - th) // 2
        track = (tx1 - tw, ty0, tx1, ty0 + th)
        draw.rounded_rectangle(
            track, radius=th // 2, fill=(120, 180, 130) if e.checked else (190, 190, 190)
        )
        kx = tx1 - th if e.checked else tx1 - tw
        draw.ellipse(
            (kx, ty0, kx + th, ty0 + th),
            fill=(40, 120, 60) if e.checked else (250, 250, 250),
            outline=(120, 120, 120),
        )
    elif e.role == "slider":
        cy = (y0 + y1) // 2
        draw.line(
            (x0 + pad, cy + 2 * pad, x1 - pad, cy + 2 * pad),
            fill=(150, 150, 150),
            width=max(1, pad // 2),
        )
    label = e.label
    if not label:
        return
    if e.editable and not e.text:
        ink = (140, 140, 140)  # an empty field shows its hint in grey
    if not e.text and (x1 - x0) <= 64 * pen.scale:
        # An icon (description only): one centred, truncated word, as a glyph stands in for it.
        word = _drawable(_ICON_WORDS.get(label.lower(), label.split()[0]))
        word = word[: max(1, (x1 - x0 - pad) // char_w)]
        wx = x0 + max(2, (x1 - x0 - len(word) * char_w) // 2)
        draw.text((wx, y0 + (y1 - y0 - line_h) // 2), word, fill=ink, font=pen.font)
        return
    max_lines = max(1, (y1 - y0 - 2) // line_h)
    lines = _wrap(_drawable(label), x1 - text_x - pad, max_lines, char_w)
    y = y0 + max(1, (y1 - y0 - len(lines) * line_h) // 2) if max_lines == 1 else y0 + 3
    for line in lines:
        draw.text((text_x, y), line, fill=ink, font=pen.font)
        y += line_h
    if e.role == "heading":
        draw.line((x0 + pad, y1 - 2, x1 - pad, y1 - 2), fill=(200, 200, 200))


Decorator = Callable[[ImageDraw.ImageDraw, UITree, float], None]


def draw_screenshot(
    tree: UITree,
    *,
    scale: float | None = None,
    before: Decorator | None = None,
    after: Decorator | None = None,
) -> np.ndarray:
    """Draw ``tree`` as an RGB ``uint8`` array of shape ``(height, width, 3)``.

    Args:
        tree: The screen; bounds are in screenshot pixels.
        scale: Size of text and strokes relative to a 360-pixel-wide screen (default:
            ``tree.width / 360``).
        before, after: Backend decorations drawn under and over the elements (a phone's
            status bar and keyboard, for instance), called with ``(draw, tree, scale)``.

    The drawing is cached on the tree; each call returns a fresh copy the caller may modify.
    """
    cached = tree._cache.get("screenshot")
    if cached is not None:
        return cached.copy()
    pen = _Pen(scale if scale is not None else tree.width / 360)
    image = Image.new("RGB", (tree.width, tree.height), _BACKGROUND)
    draw = ImageDraw.Draw(image)
    if before is not None:
        before(draw, tree, pen.scale)
    for element in tree.elements:
        _draw_element(draw, element, pen)
    if after is not None:
        after(draw, tree, pen.scale)
    if tree.can_scroll_down:
        w = max(3, round(4 * pen.scale))
        draw.rectangle(
            (tree.width - w, tree.height - 10 * w, tree.width - 1, tree.height - 1),
            fill=(160, 160, 160),
        )
    array = np.asarray(image, dtype=np.uint8)
    array.setflags(write=False)
    tree._cache["screenshot"] = array
    return array.copy()
