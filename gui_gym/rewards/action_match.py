"""Does a predicted action match the expert's? The ``Matches(a_t, a_t^*)`` of UI-S1.

UI-S1 (semi-online RL, Sec. 3.2, Eq. 7 and Eq. 9) advances a rollout to the next expert state
only when the policy's action matches the expert action, and its step reward (Eq. 8) pays the
action type and the exact match separately. This module decides both, as pure functions of
two :class:`~gui_gym.core.actions.Action` values and the screen they were chosen on.

Rules, per action type (the types must be equal first):

* **Element actions** (``CLICK``, ``LONG_CLICK``, ``DOUBLE_CLICK``). When both actions name an
  element by index, they match by *element identity*: the same index, or an element with the
  same role, label, resource id and bounds. When either side gives screen coordinates, the
  predicted point (an indexed element's centre) must fall inside the expert target's box
  enlarged ``box_scale`` times about its centre, or lie within ``max_point_distance`` of the
  expert point in screen-normalised L2 distance. The expert target of a coordinate tap is the
  smallest clickable element under it; with none, only the distance test applies.
* **Text actions**: ``INPUT`` and ``ANSWER`` compare text by normalised equality (case,
  Unicode form, punctuation and whitespace folded) or, with ``text_match="f1"``, by token F1
  of at least ``min_text_f1``; ``INPUT`` also compares targets by identity when both name one.
  ``OPEN_APP``, ``SEARCH``, ``KEY`` and ``DONE`` compare their text by normalised equality.
* ``SCROLL`` compares directions (and targets, with ``scroll_target=True``).
* ``GOBACK``, ``HOME``, ``ENTER``, ``WAIT``, ``DO_NOTHING``: the type is the whole action.

Thresholds and where the defaults come from:

========================  ==========  ==========  ===============================================
parameter                 ``strict``  ``loose``   source
========================  ==========  ==========  ===============================================
``box_scale``             1.2         1.4         UI-S1 public code (training reward); AITW eval
``max_point_distance``    0.04        0.14        UI-S1 public code; AITW's 14% of the screen
``text_match``            normalized  f1          paper gives none; F1 >= 0.5 is the common
``min_text_f1``           0.5         0.5         AndroidControl evaluation convention
========================  ==========  ==========  ===============================================

``strict`` is the matcher UI-S1's code rewards training steps with; ``loose`` follows the
Android-in-the-Wild matching that SOP-style evaluations reuse (UI-S1's evaluation matcher is
looser than its training one).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UIElement, UITree

__all__ = [
    "MATCHER_PRESETS",
    "ActionMatcher",
    "MatchResult",
    "Matcher",
    "get_matcher",
    "normalize_text",
    "point_distance",
    "scaled_box_contains",
    "token_f1",
]

_ELEMENT_TYPES = frozenset({ActionType.CLICK, ActionType.LONG_CLICK, ActionType.DOUBLE_CLICK})
_EXACT_TEXT_TYPES = frozenset(
    {ActionType.OPEN_APP, ActionType.SEARCH, ActionType.KEY, ActionType.DONE}
)
_TYPE_ONLY = frozenset(
    {ActionType.GOBACK, ActionType.HOME, ActionType.ENTER, ActionType.WAIT, ActionType.DO_NOTHING}
)
_PUNCTUATION = re.compile(r"[^\w\s]|_", re.UNICODE)


@dataclass(frozen=True, slots=True)
class MatchResult:
    """The verdict on one predicted action.

    Attributes:
        type_ok: The action types agree (``r_type`` of UI-S1 Eq. 8).
        exact: The whole action matches (``r_acc`` of Eq. 8, and ``Matches`` of Eq. 7).
        reason: Why it does not match, or how it matched (for logs and ``info``).
    """

    type_ok: bool
    exact: bool
    reason: str


class Matcher(Protocol):
    """Anything that judges a predicted action against the expert's on a screen."""

    def __call__(self, predicted: Action, expert: Action, screen: UITree) -> MatchResult: ...


def normalize_text(text: str | None) -> str:
    """Fold case, Unicode form (NFKC), punctuation and runs of whitespace.

    ``"  Bake, LOBSTER-tails! "`` becomes ``"bake lobster tails"``.
    """
    if not text:
        return ""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_PUNCTUATION.sub(" ", folded).split())


def token_f1(predicted: str | None, reference: str | None) -> float:
    """Token-level F1 of two texts after :func:`normalize_text` (multiset overlap).

    Two empty texts score 1.0; one empty text scores 0.0.
    """
    pred = normalize_text(predicted).split()
    ref = normalize_text(reference).split()
    if not pred and not ref:
        return 1.0
    if not pred or not ref:
        return 0.0
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision = common / len(pred)
    recall = common / len(ref)
    return 2 * precision * recall / (precision + recall)


def scaled_box_contains(
    bounds: tuple[int, int, int, int], x: float, y: float, scale: float = 1.0
) -> bool:
    """Whether ``(x, y)`` lies in ``bounds`` enlarged ``scale`` times about its centre."""
    x0, y0, x1, y1 = bounds
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    half_w, half_h = (x1 - x0) * scale / 2, (y1 - y0) * scale / 2
    return cx - half_w <= x <= cx + half_w and cy - half_h <= y <= cy + half_h


def point_distance(
    a: tuple[float, float], b: tuple[float, float], width: float, height: float
) -> float:
    """L2 distance between two points with x divided by ``width`` and y by ``height``."""
    if width <= 0 or height <= 0:
        raise ValueError(f"screen size must be positive, got {width}x{height}")
    return math.hypot((a[0] - b[0]) / width, (a[1] - b[1]) / height)


def _element(screen: UITree, index: int | None) -> UIElement | None:
    if index is None or not 0 <= index < len(screen.elements):
        return None
    return screen.elements[index]


def _same_element(a: UIElement, b: UIElement) -> bool:
    return a.index == b.index or (a.identity == b.identity and a.bounds == b.bounds)


def _has_area(e: UIElement) -> bool:
    x0, y0, x1, y1 = e.bounds
    return x1 > x0 and y1 > y0


def _tap_target(screen: UITree, x: float, y: float) -> UIElement | None:
    """The smallest element under ``(x, y)`` that accepts a tap (not merely a scroll)."""
    best: UIElement | None = None
    best_area = math.inf
    for e in screen.elements:
        if not (e.clickable or e.long_clickable or e.checkable or e.editable):
            continue
        if not _has_area(e) or not e.contains_point(x, y):
            continue
        x0, y0, x1, y1 = e.bounds
        area = (x1 - x0) * (y1 - y0)
        if area < best_area:
            best, best_area = e, area
    return best


def _label_element(screen: UITree, label: str) -> UIElement | None:
    wanted = normalize_text(label)
    for e in screen.elements:
        if normalize_text(e.label) == wanted:
            return e
    return None


@dataclass(frozen=True)
class ActionMatcher:
    """The rule-based ``Matches`` of UI-S1 with every threshold a parameter.

    Args:
        box_scale: A predicted point matches when inside the expert target's box enlarged this
            many times about its centre (UI-S1 code: 1.2; AITW evaluation: 1.4). >= 1.
        max_point_distance: ... or when its screen-normalised L2 distance to the expert point
            is at most this (UI-S1 code: 0.04; AITW: 0.14). In [0, sqrt(2)].
        text_match: ``"normalized"`` (equality after :func:`normalize_text`) or ``"f1"``
            (token F1 of at least ``min_text_f1``) for INPUT and ANSWER text.
        min_text_f1: Threshold of ``text_match="f1"``, in (0, 1].
        input_target: Also require INPUT to target the same element when both name one.
        scroll_target: Also require SCROLL to target the same element when both name one.
        name: A label for logs and result files.

    Raises:
        ValueError: for a threshold out of range or an unknown ``text_match``.
    """

    box_scale: float = 1.2
    max_point_distance: float = 0.04
    text_match: Literal["normalized", "f1"] = "normalized"
    min_text_f1: float = 0.5
    input_target: bool = True
    scroll_target: bool = False
    name: str = "custom"

    def __post_init__(self) -> None:
        if not (isinstance(self.box_scale, int | float) and self.box_scale >= 1.0):
            raise ValueError(f"box_scale must be a number >= 1, got {self.box_scale!r}")
        if not (0.0 <= self.max_point_distance <= math.sqrt(2)):
            raise ValueError(
                f"max_point_distance must be in [0, sqrt(2)], got {self.max_point_distance!r}"
            )
        if self.text_match not in ("normalized", "f1"):
            raise ValueError(f"text_match must be 'normalized' or 'f1', got {self.text_match!r}")
        if not 0.0 < self.min_text_f1 <= 1.0:
            raise ValueError(f"min_text_f1 must be in (0, 1], got {self.min_text_f1!r}")

    @classmethod
    def strict(cls) -> ActionMatcher:
        """UI-S1's training matcher (public code): box x1.2, distance 0.04, exact text."""
        return cls(name="strict")

    @classmethod
    def loose(cls) -> ActionMatcher:
        """An evaluation matcher after AITW: box x1.4, distance 0.14, text F1 >= 0.5."""
        return cls(box_scale=1.4, max_point_distance=0.14, text_match="f1", name="loose")

    def texts_match(self, predicted: str | None, expert: str | None) -> bool:
        """INPUT/ANSWER text rule: normalised equality, or token F1 >= ``min_text_f1``."""
        if self.text_match == "f1":
            return token_f1(predicted, expert) >= self.min_text_f1
        return normalize_text(predicted) == normalize_text(expert)

    def __call__(self, predicted: Action, expert: Action, screen: UITree) -> MatchResult:
        """Judge ``predicted`` against ``expert`` on ``screen`` (the expert's state S_t)."""
        if predicted.type is not expert.type:
            return MatchResult(False, False, f"type {predicted.type} != expert {expert.type}")
        t = expert.type
        if t in _TYPE_ONLY:
            return MatchResult(True, True, "same type")
        if t in _ELEMENT_TYPES:
            if predicted.modifiers != expert.modifiers:  # a ctrl+click is not a plain click
                held = f"{predicted.modifiers or 'no'} held keys != expert {expert.modifiers or 'none'}"
                return MatchResult(True, False, held)
            return self._match_target(predicted, expert, screen)
        if t is ActionType.INPUT:
            if not self.texts_match(predicted.text, expert.text):
                return MatchResult(True, False, "typed text differs")
            if self.input_target and predicted.index is not None and expert.index is not None:
                return self._match_indices(predicted.index, expert.index, screen, "input target")
            return MatchResult(True, True, "same text")
        if t is ActionType.ANSWER:
            ok = self.texts_match(predicted.text, expert.text)
            return MatchResult(True, ok, "same answer" if ok else "answer differs")
        if t in _EXACT_TEXT_TYPES:
            ok = normalize_text(predicted.text) == normalize_text(expert.text)
            return MatchResult(True, ok, "same text" if ok else "text differs")
        if t is ActionType.SCROLL:
            if predicted.direction != expert.direction:
                return MatchResult(
                    True, False, f"scroll {predicted.direction} != expert {expert.direction}"
                )
            if self.scroll_target and predicted.index is not None and expert.index is not None:
                return self._match_indices(predicted.index, expert.index, screen, "scroll target")
            return MatchResult(True, True, "same direction")
        return MatchResult(True, False, f"no rule for {t}")  # pragma: no cover (all types ruled)

    def _match_indices(self, predicted: int, expert: int, screen: UITree, what: str) -> MatchResult:
        if predicted == expert:
            return MatchResult(True, True, f"same {what}")
        a, b = _element(screen, predicted), _element(screen, expert)
        if a is not None and b is not None and _same_element(a, b):
            return MatchResult(True, True, f"same {what} (identity)")
        return MatchResult(True, False, f"{what} {predicted} != expert {expert}")

    def _match_target(self, predicted: Action, expert: Action, screen: UITree) -> MatchResult:
        if predicted.label is not None or expert.label is not None:
            return self._match_labels(predicted, expert, screen)
        if not predicted.has_point and not expert.has_point:
            if predicted.index is None or expert.index is None:
                return MatchResult(True, False, "no target")
            return self._match_indices(predicted.index, expert.index, screen, "element")
        # Coordinates on at least one side: compare geometrically.
        if predicted.has_point:
            point = (float(predicted.x), float(predicted.y))  # type: ignore[arg-type]
        else:
            element = _element(screen, predicted.index)
            if element is None:
                return MatchResult(True, False, f"no element {predicted.index} on this screen")
            point = element.center
        if expert.has_point:
            ex, ey = float(expert.x), float(expert.y)  # type: ignore[arg-type]
            target = _tap_target(screen, ex, ey)
        else:
            target = _element(screen, expert.index)
            if target is None:
                return MatchResult(True, False, "expert target is not on the screen")
            ex, ey = target.center
        if (
            target is not None
            and _has_area(target)
            and scaled_box_contains(target.bounds, point[0], point[1], self.box_scale)
        ):
            return MatchResult(True, True, f"inside the target box x{self.box_scale:g}")
        distance = point_distance(point, (ex, ey), screen.width, screen.height)
        if distance <= self.max_point_distance:
            return MatchResult(True, True, f"within {distance:.3f} of the expert point")
        return MatchResult(True, False, f"{distance:.3f} from the expert point, outside its box")

    def _match_labels(self, predicted: Action, expert: Action, screen: UITree) -> MatchResult:
        def resolve(a: Action) -> UIElement | None:
            if a.label is not None:
                return _label_element(screen, a.label)
            if a.index is not None:
                return _element(screen, a.index)
            return _tap_target(screen, a.x, a.y) if a.has_point else None  # type: ignore[arg-type]

        a, b = resolve(predicted), resolve(expert)
        if a is not None and b is not None:
            ok = _same_element(a, b)
        else:
            ok = predicted.label is not None and normalize_text(predicted.label) == normalize_text(
                expert.label
            )
        return MatchResult(True, ok, "same label" if ok else "different target")


MATCHER_PRESETS: dict[str, Callable[[], ActionMatcher]] = {
    "strict": ActionMatcher.strict,
    "loose": ActionMatcher.loose,
}
"""Named matchers: ``strict`` (UI-S1 training thresholds) and ``loose`` (AITW-style eval)."""


def get_matcher(matcher: str | Matcher) -> Matcher:
    """A matcher from a preset name (``strict``/``loose``) or a matcher passed through.

    Raises:
        ValueError: for an unknown preset name, listing the known ones.
        TypeError: for something that is neither a name nor callable.
    """
    if isinstance(matcher, str):
        factory = MATCHER_PRESETS.get(matcher)
        if factory is None:
            raise ValueError(
                f"unknown matcher {matcher!r}; choose one of {', '.join(MATCHER_PRESETS)} "
                "or pass an ActionMatcher"
            )
        return factory()
    if not callable(matcher):
        raise TypeError(f"matcher must be a preset name or callable, got {type(matcher).__name__}")
    return matcher
