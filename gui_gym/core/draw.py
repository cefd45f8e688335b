"""Pillow-drawn screenshots of a :class:`~gui_gym.core.ui.UITree`, for simulated apps.

The picture is a faithful, deterministic drawing of the tree: every element at its bounds,
styled by role and flags, with its label wrapped inside. Vision-language agents get pixels
that agree exactly with the text screen.
"""

from __future__ import annotations

import functools

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
def _font() -> ImageFont.ImageFont:
    # The bitmap default font: fast, identical on every machine, no font files needed.
    return ImageFont.load_default_imagefont()


_CHAR_W, _LINE_H = 6, 11
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


def _wrap(text: str, width_px: int, max_lines: int) -> list[str]:
    per_line = max(1, width_px // _CHAR_W)
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


def _draw_element(draw: ImageDraw.ImageDraw, e: UIElement) -> None:
    x0, y0, x1, y1 = e.bounds
    if x1 <= x0 or y1 <= y0:
        return
    fill, outline, ink = _STYLE.get(e.role, _DEFAULT_STYLE)
    if not e.enabled:
        fill, ink = (225, 225, 225) if fill else None, (150, 150, 150)
    if e.selected and e.role not in ("button", "toast"):
        fill = (255, 243, 205)
    if fill is not None or outline is not None:
        draw.rectangle((x0, y0, x1 - 1, y1 - 1), fill=fill, outline=outline)
    if e.focused:
        draw.rectangle((x0, y0, x1 - 1, y1 - 1), outline=(30, 110, 220), width=2)
    text_x = x0 + 4
    if e.role in ("checkbox", "switch", "radio"):
        box = (x0 + 4, y0 + 4, x0 + 14, y0 + 14)
        draw.rectangle(box, outline=(60, 60, 60), fill=(60, 140, 80) if e.checked else None)
        text_x = x0 + 20
    label = e.label
    if not label:
        return
    if not e.text and (x1 - x0) <= 64:
        # An icon (description only): one centred, truncated word, as a glyph stands in for it.
        word = _drawable(_ICON_WORDS.get(label.lower(), label.split()[0]))
        word = word[: max(1, (x1 - x0 - 4) // _CHAR_W)]
        wx = x0 + max(2, (x1 - x0 - len(word) * _CHAR_W) // 2)
        draw.text((wx, y0 + (y1 - y0 - _LINE_H) // 2), word, fill=ink, font=_font())
        return
    max_lines = max(1, (y1 - y0 - 2) // _LINE_H)
    lines = _wrap(_drawable(label), x1 - text_x - 4, max_lines)
    y = y0 + max(1, (y1 - y0 - len(lines) * _LINE_H) // 2) if max_lines == 1 else y0 + 3
    font = _font()
    for line in lines:
        draw.text((text_x, y), line, fill=ink, font=font)
        y += _LINE_H
    if e.role == "heading":
        draw.line((x0 + 4, y1 - 2, x1 - 4, y1 - 2), fill=(200, 200, 200))


def draw_screenshot(tree: UITree) -> np.ndarray:
    """Draw ``tree`` as an RGB ``uint8`` array of shape ``(height, width, 3)``.

    The drawing is cached on the tree; each call returns a fresh copy the caller may modify.
    """
    cached = tree._cache.get("screenshot")
    if cached is not None:
        return cached.copy()
    image = Image.new("RGB", (tree.width, tree.height), _BACKGROUND)
    draw = ImageDraw.Draw(image)
    for element in tree.elements:
        _draw_element(draw, element)
    if tree.can_scroll_down:
        draw.rectangle(
            (tree.width - 4, tree.height - 40, tree.width - 1, tree.height - 1),
            fill=(160, 160, 160),
        )
    array = np.asarray(image, dtype=np.uint8)
    array.setflags(write=False)
    tree._cache["screenshot"] = array
    return array.copy()
