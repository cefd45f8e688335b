"""Where a screenshot-only policy's coordinates live, and how they reach the screen.

A vision-language policy that sees only pixels (UI-S1's and GUI-Shepherd's Qwen2.5-VL
policies) answers ``CLICK_XY(x, y)`` in the coordinates of the image *it saw*, which is not
always the screen's: Qwen2.5-VL's processor rescales every image so both sides are multiples
of 28 pixels (its 14-pixel patches merged 2x2) and the pixel count stays within
``[min_pixels, max_pixels]`` (:func:`qwen_smart_resize`); Qwen2.5-VL answers in absolute
pixels of that resized image. Other models answer in the screen's own pixels, or on a 0-1000
grid (Qwen2-VL, UI-TARS). A :class:`CoordinateSpace` names which, and maps both ways:

* ``screen``: the screen's pixels (identity; the default);
* ``qwen2_5_vl``: pixels of the image as Qwen2.5-VL's processor resizes it;
* ``relative_1000``: each axis scaled to 0..1000.

The mapping is a scale per axis: ``x_screen = x_image * screen_width / image_width``, rounded
to the nearest pixel and clamped onto the screen, so a click on the resized image's last
column lands on the screen's last column.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "COORDINATE_SPACES",
    "QWEN_FACTOR",
    "QWEN_MAX_PIXELS",
    "QWEN_MIN_PIXELS",
    "CoordinateSpace",
    "qwen_smart_resize",
]

QWEN_FACTOR = 28
"""Qwen2.5-VL's resize granularity: 14-pixel patches merged 2x2."""
QWEN_MIN_PIXELS = 56 * 56
"""Qwen2.5-VL's image processor default ``min_pixels`` (3,136)."""
QWEN_MAX_PIXELS = 28 * 28 * 16384
"""Qwen2.5-VL's image processor default ``max_pixels`` (12,845,056)."""

COORDINATE_SPACES = ("screen", "qwen2_5_vl", "relative_1000")
"""The coordinate spaces a screenshot-only policy can answer in."""


def qwen_smart_resize(
    height: int,
    width: int,
    factor: int = QWEN_FACTOR,
    min_pixels: int = QWEN_MIN_PIXELS,
    max_pixels: int = QWEN_MAX_PIXELS,
) -> tuple[int, int]:
    """``(height, width)`` of an image after Qwen2.5-VL's processor resizes it.

    Each side is rounded to the nearest multiple of ``factor``; if the area then exceeds
    ``max_pixels`` both sides shrink by ``beta = sqrt(h * w / max_pixels)`` and are floored
    to multiples of ``factor``; if it falls below ``min_pixels`` both grow by ``beta =
    sqrt(min_pixels / (h * w))`` and are ceiled. The aspect ratio is kept to within a factor.

    Raises:
        ValueError: for a side shorter than ``factor`` or an aspect ratio above 200 (the
            processor refuses both).
    """
    if height < factor or width < factor:
        raise ValueError(f"height {height} and width {width} must be at least {factor} pixels")
    if max(height, width) / min(height, width) > 200:
        raise ValueError(f"aspect ratio {max(height, width) / min(height, width):.0f} exceeds 200")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


@dataclass(frozen=True)
class CoordinateSpace:
    """The space a policy's ``_XY`` coordinates are in (module docstring).

    Attributes:
        kind: One of :data:`COORDINATE_SPACES`.
        min_pixels, max_pixels: The processor's bounds (``qwen2_5_vl`` only).
    """

    kind: str = "screen"
    min_pixels: int = QWEN_MIN_PIXELS
    max_pixels: int = QWEN_MAX_PIXELS

    def __post_init__(self) -> None:
        if self.kind not in COORDINATE_SPACES:
            raise ValueError(
                f"coordinate space must be one of {', '.join(COORDINATE_SPACES)}, got {self.kind!r}"
            )
        if not 0 < self.min_pixels <= self.max_pixels:
            raise ValueError(
                f"need 0 < min_pixels <= max_pixels, got {self.min_pixels}, {self.max_pixels}"
            )

    def image_size(self, screen_width: int, screen_height: int) -> tuple[int, int]:
        """``(width, height)`` of the space for a screen of that size."""
        if self.kind == "screen":
            return screen_width, screen_height
        if self.kind == "relative_1000":
            return 1000, 1000
        h, w = qwen_smart_resize(
            screen_height, screen_width, min_pixels=self.min_pixels, max_pixels=self.max_pixels
        )
        return w, h

    def to_screen(
        self, x: float, y: float, screen_width: int, screen_height: int
    ) -> tuple[int, int]:
        """A point of this space as a screen pixel (rounded, clamped onto the screen)."""
        width, height = self.image_size(screen_width, screen_height)
        sx = round(float(x) * screen_width / width)
        sy = round(float(y) * screen_height / height)
        return min(max(sx, 0), screen_width - 1), min(max(sy, 0), screen_height - 1)

    def from_screen(
        self, x: float, y: float, screen_width: int, screen_height: int
    ) -> tuple[int, int]:
        """A screen pixel as a point of this space (what an expert writes for SFT data)."""
        width, height = self.image_size(screen_width, screen_height)
        ix = round(float(x) * width / screen_width)
        iy = round(float(y) * height / screen_height)
        return min(max(ix, 0), width - 1), min(max(iy, 0), height - 1)
