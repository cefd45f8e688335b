"""Actions: the shared grammar, its parser, and natural-language descriptions.

Every backend accepts the same :class:`Action` values. Agents may send an ``Action`` or a
string in any of these forms (case-insensitive, tolerant of whitespace and quote style):

* the grammar: ``CLICK(3)``, ``LONG_CLICK(3)``, ``INPUT(2, "text")``, ``SCROLL(down)``,
  ``SCROLL(up, 4)``, ``GOBACK()``, ``HOME()``, ``ENTER()``, ``OPEN_APP("Contacts")``,
  ``ANSWER("42")``, ``WAIT()``, ``DO_NOTHING()``, ``DONE()``, plus ``CLICK_XY(x, y)``,
  ``LONG_CLICK_XY(x, y)``, ``SCROLL(d, x, y)`` (a swipe from a point), ``DOUBLE_CLICK(i)``,
  ``KEY("Tab")`` and ``SEARCH("query")``;
  web pages add ``DRAG(i, j)`` (element ``i`` onto element ``j``), ``DRAG_XY(x0, y0, x1, y1)``
  (a press at one point, moved and released at another: sliders, drawing, text selection;
  more x, y pairs between make the stroke pass through them: ``DRAG_XY(x0, y0, x1, y1, x2,
  y2)``, a curve such as a circle),
  ``SELECT(i, "option")`` (choose an option of a ``<select>``) and ``HOVER(i)`` /
  ``HOVER_XY(x, y)`` (move the mouse over an element: menus that open on hover), and a click
  with held keys, ``CLICK(i, modifiers="ctrl")`` (ctrl/shift/alt/meta joined by ``+``:
  several options of a list box);
  keyword arguments (``CLICK(element_id=3)``) and common aliases (``NOTHING``, ``BACK``,
  ``TYPE``, ``TAP``, ``LONG_PRESS``) are accepted;
* AndroidWorld JSON: ``{"action_type": "click", "index": 3}`` and the other 13 types;
* WebShop text: ``search[red shoes]``, ``click[Buy Now]``;
* any of the above inside ``<action>...</action>`` in longer model output (the last block
  wins), or inside a code fence.

:func:`parse_action` returns an ``Action`` or raises :class:`ActionParseError` (a
``ValueError``) saying what was expected. It never evaluates its input.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gui_gym.core.untrusted_text import (
    load_json,
    strip_code_fence,
    without_lone_surrogates,
)

if TYPE_CHECKING:
    from gui_gym.core.ui import UIElement, UITree

__all__ = [
    "DIRECTIONS",
    "MAX_ACTION_LENGTH",
    "MAX_INDEX",
    "MODIFIER_KEYS",
    "Action",
    "ActionParseError",
    "ActionType",
    "candidate_actions",
    "describe",
    "parse_action",
    "target_element",
    "try_parse_action",
]

MAX_ACTION_LENGTH = 20_000
"""Longest action string :func:`parse_action` reads; longer input is rejected unread."""

MAX_INDEX = 999_999_999
"""Largest element index (nine digits); a longer digit run is an error, never a label."""

DIRECTIONS = ("up", "down", "left", "right")

MODIFIER_KEYS = ("ctrl", "shift", "alt", "meta")
"""Keys a click can hold down (``CLICK(i, modifiers="ctrl+shift")``), in canonical order."""
_MODIFIER_ALIASES = {"control": "ctrl", "cmd": "meta", "command": "meta", "option": "alt"}


class ActionType(enum.StrEnum):
    """What an action does. Values are the grammar's names."""

    CLICK = "CLICK"
    DOUBLE_CLICK = "DOUBLE_CLICK"
    LONG_CLICK = "LONG_CLICK"
    INPUT = "INPUT"
    SCROLL = "SCROLL"
    GOBACK = "GOBACK"
    HOME = "HOME"
    ENTER = "ENTER"
    KEY = "KEY"
    OPEN_APP = "OPEN_APP"
    SEARCH = "SEARCH"
    ANSWER = "ANSWER"
    WAIT = "WAIT"
    DO_NOTHING = "DO_NOTHING"
    DONE = "DONE"
    DRAG = "DRAG"
    SELECT = "SELECT"
    HOVER = "HOVER"

    def __str__(self) -> str:
        return self.value


_TARGETED = frozenset(
    {ActionType.CLICK, ActionType.DOUBLE_CLICK, ActionType.LONG_CLICK, ActionType.HOVER}
)
_TEXT_ONLY = frozenset({ActionType.OPEN_APP, ActionType.SEARCH, ActionType.ANSWER, ActionType.KEY})
_NO_ARGS = frozenset(
    {
        ActionType.GOBACK,
        ActionType.HOME,
        ActionType.ENTER,
        ActionType.WAIT,
        ActionType.DO_NOTHING,
    }
)
TERMINAL_TYPES = frozenset({ActionType.DONE, ActionType.ANSWER})
"""Action types that end the episode."""


class ActionParseError(ValueError):
    """An action string that is not in any accepted form; the message says what was expected."""


@dataclass(frozen=True, slots=True)
class Action:
    """One agent action.

    Attributes:
        type: What the action does.
        index: Target element index on the current screen (CLICK, INPUT, SCROLL, ...).
        text: Typed text (INPUT), answer (ANSWER), app name (OPEN_APP), query (SEARCH),
            key name (KEY), or the status of DONE (``"infeasible"``).
        direction: ``up``/``down``/``left``/``right`` for SCROLL.
        x, y: Screen coordinates for coordinate clicks (``CLICK_XY``).
        label: Target by visible label instead of index (WebShop's ``click[label]``).
        end_index: DRAG's drop target element (``DRAG(i, j)``: ``index`` onto ``end_index``).
        end_x, end_y: DRAG_XY's release point (``x``, ``y`` is where the press starts).
        via: DRAG_XY's points between press and release, flattened ``(x1, y1, x2, y2,
            ...)``: the pointer moves through them in order (a curved stroke, e.g. drawing a
            circle); None for a straight drag.
        modifiers: Keys held during a CLICK, ``+``-joined in :data:`MODIFIER_KEYS` order
            (``"ctrl"``, ``"ctrl+shift"``): ctrl+click adds an option to a list box's
            selection. Only backends with a keyboard and a mouse (MiniWoB++) have it.
    """

    type: ActionType
    index: int | None = None
    text: str | None = None
    direction: str | None = None
    x: float | None = None
    y: float | None = None
    label: str | None = None
    end_index: int | None = None
    end_x: float | None = None
    end_y: float | None = None
    via: tuple[float, ...] | None = None
    modifiers: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.type, ActionType):
            object.__setattr__(self, "type", _lookup_type(str(self.type)))
        if self.direction is not None and self.direction not in DIRECTIONS:
            raise ActionParseError(
                f"direction must be one of {', '.join(DIRECTIONS)}, got {self.direction!r}"
            )
        if self.index is not None:
            try:  # any integer type (numpy's too), never a bool or a float
                index = operator.index(self.index)
            except TypeError:
                index = -1
            if isinstance(self.index, bool) or not 0 <= index <= MAX_INDEX:
                raise ActionParseError(
                    f"element index must be an int from 0 to {MAX_INDEX}, got {self.index!r}"
                )
            if type(self.index) is not int:
                object.__setattr__(self, "index", index)
        for name in ("text", "label"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ActionParseError(f"{name} must be a str, got {type(value).__name__}")
            if value and not value.isascii():
                object.__setattr__(self, name, without_lone_surrogates(value))
        if self.modifiers is not None:
            object.__setattr__(self, "modifiers", _as_modifiers(self.modifiers, self.type))
        if self.end_index is not None and (
            not isinstance(self.end_index, int)
            or isinstance(self.end_index, bool)
            or not 0 <= self.end_index <= MAX_INDEX
        ):
            raise ActionParseError(
                f"drop target index must be an int from 0 to {MAX_INDEX}, got {self.end_index!r}"
            )
        if self.via is not None:
            _check_via(self)
        if self.type in (ActionType.DRAG, ActionType.SELECT):
            _check_drag_or_select(self)

    @property
    def is_terminal(self) -> bool:
        """True for DONE and ANSWER, which end the episode."""
        return self.type in TERMINAL_TYPES

    @property
    def has_point(self) -> bool:
        """True when the action targets screen coordinates."""
        return self.x is not None and self.y is not None

    def __str__(self) -> str:
        return self.to_string()

    def to_string(self) -> str:
        """The canonical grammar form; ``parse_action(a.to_string()) == a`` always holds."""
        t = self.type
        name = t.value
        if t in _TARGETED:
            held = f", modifiers={_quote(self.modifiers)}" if self.modifiers else ""
            if self.has_point:
                return f"{name}_XY({_num(self.x)}, {_num(self.y)}{held})"
            if self.index is not None:
                return f"{name}({self.index}{held})"
            if self.label is not None:
                return f"{name}({_quote(self.label)}{held})"
            return f"{name}()"
        if t is ActionType.DRAG:
            if self.has_point:
                points = [self.x, self.y, *(self.via or ()), self.end_x, self.end_y]
                return f"DRAG_XY({', '.join(_num(v) for v in points)})"
            return f"DRAG({self.index}, {self.end_index})"
        if t is ActionType.SELECT:
            return f"SELECT({self.index}, {_quote(self.text or '')})"
        if t is ActionType.INPUT:
            if self.index is None:
                return f"INPUT({_quote(self.text or '')})"
            return f"INPUT({self.index}, {_quote(self.text or '')})"
        if t is ActionType.SCROLL:
            direction = self.direction or "down"
            if self.has_point:
                return f"SCROLL({direction}, {_num(self.x)}, {_num(self.y)})"
            if self.index is None:
                return f"SCROLL({direction})"
            return f"SCROLL({direction}, {self.index})"
        if t in _TEXT_ONLY:
            return f"{name}({_quote(self.text or '')})"
        if t is ActionType.DONE:
            return "DONE()" if not self.text else f"DONE({_quote(self.text)})"
        return f"{name}()"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the set fields."""
        out: dict[str, Any] = {"type": self.type.value}
        for name in _FIELDS[1:]:
            value = getattr(self, name)
            if value is not None:
                out[name] = list(value) if name == "via" else value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Action:
        """Inverse of :meth:`to_dict`.

        Raises:
            ActionParseError: on unknown keys or values of the wrong type.
        """
        unknown = set(data) - set(_FIELDS)
        if unknown:
            raise ActionParseError(f"unknown Action field(s) {sorted(unknown)}")
        try:
            action = cls(
                type=_lookup_type(str(data["type"])),
                index=None if data.get("index") is None else _as_index(data["index"]),
                text=None if data.get("text") is None else str(data["text"]),
                direction=None if data.get("direction") is None else str(data["direction"]),
                x=None if data.get("x") is None else float(data["x"]),
                y=None if data.get("y") is None else float(data["y"]),
                label=None if data.get("label") is None else str(data["label"]),
                end_index=None if data.get("end_index") is None else _as_index(data["end_index"]),
                end_x=None if data.get("end_x") is None else float(data["end_x"]),
                end_y=None if data.get("end_y") is None else float(data["end_y"]),
                via=None if data.get("via") is None else _as_via(data["via"]),
                modifiers=None if data.get("modifiers") is None else data["modifiers"],
            )
        except KeyError:
            raise ActionParseError("an Action dict needs a 'type'") from None
        except (TypeError, ValueError) as err:
            if isinstance(err, ActionParseError):
                raise
            raise ActionParseError(f"bad Action dict {data!r}: {err}") from None
        return action


_FIELDS = (
    "type",
    "index",
    "text",
    "direction",
    "x",
    "y",
    "label",
    "end_index",
    "end_x",
    "end_y",
    "via",
    "modifiers",
)
MAX_VIA_POINTS = 64
"""Most points a DRAG_XY passes through between press and release (a circle needs ~24)."""


def _as_via(value: Any) -> tuple[float, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
        raise ActionParseError(f"via must be a list of coordinates, got {value!r}")
    return tuple(_as_coordinate(v, f"via[{k}]") for k, v in enumerate(value))


def _check_via(action: Action) -> None:
    """``via`` belongs to a DRAG by points: an even number of finite coordinates."""
    via = action.via
    if not isinstance(via, tuple):
        raise ActionParseError(f"via must be a tuple of coordinates, got {via!r}")
    if action.type is not ActionType.DRAG or not action.has_point:
        raise ActionParseError("via (points a drag passes through) belongs to DRAG_XY only")
    if len(via) % 2 or len(via) > 2 * MAX_VIA_POINTS:
        raise ActionParseError(
            f"via holds x, y pairs (at most {MAX_VIA_POINTS} points), got {len(via)} number(s)"
        )
    for k, v in enumerate(via):
        _as_coordinate(v, f"via[{k}]")


def _as_modifiers(value: Any, atype: ActionType) -> str:
    """Held keys as ``"ctrl+shift"``: known names, each once, in :data:`MODIFIER_KEYS` order."""
    if atype is not ActionType.CLICK:
        raise ActionParseError(f"modifiers (held keys) apply to CLICK only, not {atype.value}")
    if not isinstance(value, str):
        raise ActionParseError(
            f"modifiers must be a str such as 'ctrl', got {type(value).__name__}"
        )
    names = [part.strip().lower() for part in value.split("+")]
    names = [_MODIFIER_ALIASES.get(n, n) for n in names]
    unknown = [n for n in names if n not in MODIFIER_KEYS]
    if unknown or not value.strip():
        raise ActionParseError(
            f"modifiers must be {', '.join(MODIFIER_KEYS)} joined by '+' (e.g. 'ctrl', "
            f"'ctrl+shift'), got {value[:40]!r}"
        )
    return "+".join(k for k in MODIFIER_KEYS if k in names)


def _num(v: float | None) -> str:
    assert v is not None
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# Parsing

_ALIASES: dict[str, tuple[ActionType, bool]] = {
    # name -> (type, coordinates?)
    "CLICK": (ActionType.CLICK, False),
    "TAP": (ActionType.CLICK, False),
    "CLICK_XY": (ActionType.CLICK, True),
    "TAP_XY": (ActionType.CLICK, True),
    "DOUBLE_CLICK": (ActionType.DOUBLE_CLICK, False),
    "DOUBLE_TAP": (ActionType.DOUBLE_CLICK, False),
    "DOUBLE_CLICK_XY": (ActionType.DOUBLE_CLICK, True),
    "LONG_CLICK": (ActionType.LONG_CLICK, False),
    "LONG_PRESS": (ActionType.LONG_CLICK, False),
    "LONG_CLICK_XY": (ActionType.LONG_CLICK, True),
    "INPUT": (ActionType.INPUT, False),
    "INPUT_TEXT": (ActionType.INPUT, False),
    "TYPE": (ActionType.INPUT, False),
    "SCROLL": (ActionType.SCROLL, False),
    "GOBACK": (ActionType.GOBACK, False),
    "GO_BACK": (ActionType.GOBACK, False),
    "BACK": (ActionType.GOBACK, False),
    "NAVIGATE_BACK": (ActionType.GOBACK, False),
    "PRESS_BACK": (ActionType.GOBACK, False),
    "HOME": (ActionType.HOME, False),
    "GO_HOME": (ActionType.HOME, False),
    "NAVIGATE_HOME": (ActionType.HOME, False),
    "PRESS_HOME": (ActionType.HOME, False),
    "ENTER": (ActionType.ENTER, False),
    "KEYBOARD_ENTER": (ActionType.ENTER, False),
    "PRESS_ENTER": (ActionType.ENTER, False),
    "KEY": (ActionType.KEY, False),
    "PRESS_KEY": (ActionType.KEY, False),
    "OPEN_APP": (ActionType.OPEN_APP, False),
    "LAUNCH_APP": (ActionType.OPEN_APP, False),
    "SEARCH": (ActionType.SEARCH, False),
    "ANSWER": (ActionType.ANSWER, False),
    "WAIT": (ActionType.WAIT, False),
    "DO_NOTHING": (ActionType.DO_NOTHING, False),
    "NOTHING": (ActionType.DO_NOTHING, False),
    "NOOP": (ActionType.DO_NOTHING, False),
    "NO_OP": (ActionType.DO_NOTHING, False),
    "DONE": (ActionType.DONE, False),
    "FINISH": (ActionType.DONE, False),
    "STATUS": (ActionType.DONE, False),
    "DRAG": (ActionType.DRAG, False),
    "DRAG_AND_DROP": (ActionType.DRAG, False),
    "DRAG_XY": (ActionType.DRAG, True),
    "SELECT": (ActionType.SELECT, False),
    "SELECT_OPTION": (ActionType.SELECT, False),
    "HOVER": (ActionType.HOVER, False),
    "HOVER_XY": (ActionType.HOVER, True),
    "MOUSE_MOVE": (ActionType.HOVER, False),
}

_GRAMMAR_HELP = (
    'expected one of CLICK(i), LONG_CLICK(i), INPUT(i, "text"), SCROLL(up|down|left|right[, i]), '
    'GOBACK(), HOME(), ENTER(), OPEN_APP("name"), ANSWER("text"), WAIT(), DO_NOTHING(), '
    'DONE(), CLICK_XY(x, y), KEY("name"), SEARCH("query"), DRAG(i, j), DRAG_XY(x0, y0, x1, y1), '
    'SELECT(i, "option"), HOVER(i), CLICK(i, modifiers="ctrl"); AndroidWorld JSON such as '
    '{"action_type": "click", "index": 3}; or WebShop search[query] / click[label]'
)

# Every pattern below is linear by construction (see core/untrusted_text.py): no two
# quantifiers can match the same characters; blocks and fences are found by string scanning.
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*", re.ASCII)
_INT = re.compile(r"^[+]?[0-9]{1,9}$", re.ASCII)
_LONG_INT = re.compile(r"[+]?[0-9]{10,}", re.ASCII)
_NUMBER = re.compile(
    r"^[+-]?(?:[0-9]{1,64}(?:\.[0-9]{0,64})?|\.[0-9]{1,64})(?:[eE][+-]?[0-9]{1,4})?$", re.ASCII
)
"""A number as a model writes one (bounded lengths keep the match linear); its range is
checked after parsing, so ``2147483647`` and ``1e6`` are told the allowed range."""
MAX_COORDINATE = 1e7
"""Screen coordinates lie in ``(-MAX_COORDINATE, MAX_COORDINATE)``: far beyond any screen,
and small enough that no backend overflows."""
_KEYWORD = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\s*=", re.ASCII)
_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "«": "»"}
_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "b": "\b",
    "f": "\f",
    '"': '"',
    "'": "'",
    "\\": "\\",
    "/": "/",
}
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")

_KEYWORD_ROLES = {
    "index": "index",
    "idx": "index",
    "id": "index",
    "element": "index",
    "element_id": "index",
    "elem_id": "index",
    "text": "text",
    "content": "text",
    "value": "text",
    "answer": "text",
    "query": "text",
    "key": "text",
    "keycode": "text",
    "app": "text",
    "app_name": "text",
    "name": "text",
    "status": "text",
    "goal_status": "text",
    "option": "text",
    "modifiers": "modifiers",
    "modifier": "modifiers",
    "hold": "modifiers",
    "direction": "direction",
    "dir": "direction",
    "x": "x",
    "y": "y",
}


def _lookup_type(name: str) -> ActionType:
    entry = _ALIASES.get(name.strip().upper())
    if entry is None:
        raise ActionParseError(f"unknown action {name!r}; {_GRAMMAR_HELP}")
    return entry[0]


def _as_index(value: Any) -> int:
    if isinstance(value, bool):
        raise ActionParseError(f"element index must be an integer, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ActionParseError(f"element index must be non-negative, got {value}")
        return value
    if isinstance(value, float) and value.is_integer():
        return _as_index(int(value))
    if isinstance(value, str) and _INT.match(value.strip()):
        return int(value.strip())
    raise ActionParseError(f"element index must be a non-negative integer, got {value!r}")


def _as_coordinate(value: Any, name: str) -> float:
    if isinstance(value, bool):
        raise ActionParseError(f"{name} must be a number, got {value!r}")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and _NUMBER.match(value.strip()):
        number = float(value.strip())
    else:
        raise ActionParseError(f"{name} must be a number, got {value!r}")
    if not (number == number and abs(number) < MAX_COORDINATE):  # NaN, inf or absurd
        raise ActionParseError(
            f"{name} must be a screen coordinate between -{MAX_COORDINATE:,.0f} and"
            f" {MAX_COORDINATE:,.0f} (exclusive), got {value!r}"
        )
    return number


def _as_direction(value: Any) -> str:
    direction = str(value).strip().strip("\"'").lower()
    if direction not in DIRECTIONS:
        raise ActionParseError(
            f"scroll direction must be one of {', '.join(DIRECTIONS)}, got {value!r}"
        )
    return direction


class _Arg:
    """One positional/keyword argument: its value and whether it was quoted."""

    __slots__ = ("keyword", "quoted", "value")

    def __init__(self, value: str, quoted: bool, keyword: str | None = None):
        self.value = value
        self.quoted = quoted
        self.keyword = keyword


def _split_args(body: str) -> list[_Arg]:
    """Split an argument list on top-level commas, honouring quotes and escapes."""
    args: list[_Arg] = []
    i, n = 0, len(body)
    while i < n:
        while i < n and body[i].isspace():
            i += 1
        if i >= n:
            break
        keyword = None
        match = _KEYWORD.match(body[i : i + 40])
        if match and match.group(1).lower() in _KEYWORD_ROLES:
            # keyword=value: only when the name is followed directly by '='
            keyword = match.group(1).lower()
            i += match.end()
            while i < n and body[i].isspace():
                i += 1
        if i < n and body[i] in _QUOTES:
            close = _QUOTES[body[i]]
            i += 1
            chars: list[str] = []
            while True:
                if i >= n:
                    raise ActionParseError(f"unterminated string in arguments ({body[:60]!r})")
                c = body[i]
                if c == "\\" and i + 1 < n:
                    nxt = body[i + 1]
                    if nxt == "u" and _HEX4.match(body, i + 2):
                        # a lone surrogate escape is replaced in Action.__post_init__
                        chars.append(chr(int(body[i + 2 : i + 6], 16)))
                        i += 6
                        continue
                    chars.append(_ESCAPES.get(nxt, "\\" + nxt))
                    i += 2
                    continue
                if c == close:
                    i += 1
                    break
                chars.append(c)
                i += 1
            args.append(_Arg("".join(chars), True, keyword))
            while i < n and body[i].isspace():
                i += 1
            if i < n and body[i] != ",":
                raise ActionParseError(
                    f"expected ',' or ')' after a quoted argument, got {body[i : i + 20]!r}"
                )
            i += 1
        else:
            end = body.find(",", i)
            end = n if end < 0 else end
            args.append(_Arg(body[i:end].strip(), False, keyword))
            i = end + 1
    return args


def _from_call(name: str, body: str | None) -> Action:
    entry = _ALIASES.get(name.upper())
    if entry is None:
        raise ActionParseError(f"unknown action {name!r}; {_GRAMMAR_HELP}")
    atype, coordinates = entry
    args = _split_args(body) if body and body.strip() else []
    positional = [a for a in args if a.keyword is None]
    named: dict[str, _Arg] = {}
    for a in args:
        if a.keyword is None:
            continue
        role = _KEYWORD_ROLES.get(a.keyword)
        if role is None:
            raise ActionParseError(f"{atype.value} does not take a keyword {a.keyword!r}")
        named[role] = a
    display = atype.value + ("_XY" if coordinates else "")
    held = named.pop("modifiers", None)
    if held is not None:  # CLICK(3, modifiers="ctrl"): the held keys, then the usual target
        if atype is not ActionType.CLICK:
            raise ActionParseError(f"{display} takes no modifiers (held keys): only CLICK does")
        args = [a for a in args if a is not held]
        target = _from_call(name, ", ".join(_unsplit(a) for a in args))
        return dataclasses.replace(target, modifiers=held.value)
    if atype in (ActionType.DRAG, ActionType.SELECT):
        return _drag_or_select(atype, coordinates, args, named)

    def arity(lo: int, hi: int) -> None:
        if not lo <= len(args) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise ActionParseError(f"{display} takes {want} argument(s), got {len(args)}")

    if atype in _NO_ARGS:
        arity(0, 0)
        return Action(atype)

    def point() -> Action:
        # exactly two arguments, each a coordinate: x/y keywords or positional
        wrong = [a.keyword for a in args if a.keyword is not None and a.keyword not in ("x", "y")]
        if wrong:
            raise ActionParseError(
                f"{display} takes one element index or two coordinates x, y; "
                f"got keyword {wrong[0]!r} with another argument"
            )
        rest = list(positional)
        xs = named.get("x") or (rest.pop(0) if rest else None)
        ys = named.get("y") or (rest.pop(0) if rest else None)
        if xs is None or ys is None:
            raise ActionParseError(f"{display} needs both coordinates x and y")
        return Action(atype, x=_as_coordinate(xs.value, "x"), y=_as_coordinate(ys.value, "y"))

    if atype in _TARGETED:
        if coordinates:
            arity(2, 2)
            return point()
        if not args:
            raise ActionParseError(f"{display} needs a target element index, e.g. {display}(3)")
        arity(1, 2)
        if len(args) == 2:  # CLICK(x, y) written without the _XY suffix
            return point()
        arg = args[0]
        if arg.keyword is not None and _KEYWORD_ROLES.get(arg.keyword) in ("x", "y"):
            raise ActionParseError(f"{display} needs both coordinates x and y")
        if not arg.quoted and _INT.match(arg.value):
            return Action(atype, index=int(arg.value))
        if not arg.quoted and _LONG_INT.fullmatch(arg.value):
            raise ActionParseError(
                f"element index {arg.value[:20]} is out of range (at most {MAX_INDEX})"
            )
        if arg.quoted and _INT.match(arg.value):
            return Action(atype, index=int(arg.value))
        if arg.keyword is not None and _KEYWORD_ROLES.get(arg.keyword) == "index":
            return Action(atype, index=_as_index(arg.value))
        if not arg.value:
            raise ActionParseError(f"{display} needs an element index, e.g. {display}(3)")
        if not arg.quoted and re.fullmatch(r"-[0-9]+", arg.value, re.ASCII):
            raise ActionParseError(f"element index must be non-negative, got {arg.value}")
        return Action(atype, label=arg.value)
    if atype is ActionType.INPUT:
        if not args:
            raise ActionParseError(
                'INPUT takes an element index and a text, e.g. INPUT(2, "hello")'
            )
        index_arg = named.get("index")
        text_arg = named.get("text")
        rest = list(positional)
        if (
            index_arg is None
            and rest
            and not rest[0].quoted
            and _INT.match(rest[0].value)
            and (len(rest) > 1 or text_arg is not None)
        ):
            index_arg = rest.pop(0)
        if text_arg is None:
            if not rest:
                raise ActionParseError('INPUT needs a text, e.g. INPUT(2, "hello")')
            if len(rest) > 1 and all(not a.quoted for a in rest):
                text_value = ", ".join(a.value for a in rest)  # unquoted text with commas
            elif len(rest) == 1:
                text_value = rest[0].value
            else:
                raise ActionParseError(
                    f"INPUT takes an element index and one text, got {len(args)} arguments"
                )
        else:
            if rest:
                raise ActionParseError("INPUT got both a positional and a keyword text")
            text_value = text_arg.value
        index = None if index_arg is None else _as_index(index_arg.value)
        return Action(ActionType.INPUT, index=index, text=text_value)
    if atype is ActionType.SCROLL:
        arity(1, 3)
        direction = named.get("direction")
        index = named.get("index")
        if len(positional) == 3 and direction is None and index is None:
            # SCROLL(direction, x, y): a swipe that starts at a point (screenshot-only policies)
            return Action(
                ActionType.SCROLL,
                direction=_as_direction(positional[0].value),
                x=_as_coordinate(positional[1].value, "x"),
                y=_as_coordinate(positional[2].value, "y"),
            )
        if len(args) == 3:
            raise ActionParseError(
                "SCROLL takes a direction and an element index, SCROLL(down, 3), or a "
                "direction and a point, SCROLL(down, 120, 400)"
            )
        for a in positional:
            if _INT.match(a.value) and index is None:
                index = a
            elif direction is None:
                direction = a
            else:
                raise ActionParseError(f"SCROLL got an unexpected argument {a.value!r}")
        if direction is None:
            raise ActionParseError("SCROLL needs a direction: up, down, left or right")
        return Action(
            ActionType.SCROLL,
            direction=_as_direction(direction.value),
            index=None if index is None else _as_index(index.value),
        )
    if atype is ActionType.DONE:
        arity(0, 1)
        status = args[0].value.strip() if args else ""
        if status.lower() in ("", "complete", "completed", "success", "successful", "true"):
            return Action(ActionType.DONE)
        return Action(ActionType.DONE, text=status)
    # OPEN_APP, SEARCH, ANSWER, KEY: one text argument (unquoted commas are kept)
    if not args:
        raise ActionParseError(f'{atype.value} takes one text argument, e.g. {atype.value}("...")')
    if len(args) > 1:
        if all(not a.quoted and a.keyword is None for a in args):
            return Action(atype, text=", ".join(a.value for a in args))
        raise ActionParseError(f"{atype.value} takes one text argument, got {len(args)}")
    return Action(atype, text=args[0].value)


def _unsplit(arg: _Arg) -> str:
    """One parsed argument written back as source (quoted text re-quoted)."""
    value = _quote(arg.value) if arg.quoted else arg.value
    return f"{arg.keyword}={value}" if arg.keyword is not None else value


def _drag_or_select(
    atype: ActionType, coordinates: bool, args: list[_Arg], named: dict[str, _Arg]
) -> Action:
    """``DRAG(i, j)``, ``DRAG_XY(x0, y0, x1, y1)`` (or ``DRAG_XY(x0, y0, ..., xn, yn)``
    through more points) and ``SELECT(i, "option")``: positional only, except SELECT's
    ``index=``/``option=`` (``text=``) keywords."""
    if atype is ActionType.SELECT:
        index, option = named.get("index"), named.get("text")
        rest = [a for a in args if a.keyword is None]
        if index is None and rest:
            index = rest.pop(0)
        if option is None and rest:
            option = rest.pop(0)
        if index is None or option is None or rest:
            raise ActionParseError(
                f'SELECT takes an element index and one option text, e.g. SELECT(4, "Red"), '
                f"got {len(args)} argument(s)"
            )
        return Action(atype, index=_as_index(index.value), text=option.value)
    if named:
        raise ActionParseError(f"DRAG takes positional arguments only, got {sorted(named)}")
    if coordinates:
        if len(args) < 4 or len(args) % 2 or len(args) > 4 + 2 * MAX_VIA_POINTS:
            raise ActionParseError(
                f"DRAG_XY takes 4 coordinates (x0, y0, x1, y1), or x, y pairs of a path "
                f"through up to {MAX_VIA_POINTS} more points, got {len(args)} argument(s)"
            )
        values = [_as_coordinate(a.value, f"{'xy'[k % 2]}{k // 2}") for k, a in enumerate(args)]
        x0, y0, *via, x1, y1 = values
        return Action(atype, x=x0, y=y0, end_x=x1, end_y=y1, via=tuple(via) or None)
    if len(args) != 2:
        raise ActionParseError(
            f"DRAG takes 2 element indices (the dragged element, the drop target), e.g. "
            f"DRAG(3, 7), got {len(args)} argument(s); DRAG_XY(x0, y0, x1, y1) drags by points"
        )
    return Action(atype, index=_as_index(args[0].value), end_index=_as_index(args[1].value))


def _check_drag_or_select(action: Action) -> None:
    """A DRAG/SELECT has the fields its grammar form needs (however it was built: parsed,
    from a dict, or constructed directly), so ``to_string`` always has a form to write."""
    if action.type is ActionType.SELECT:
        if action.index is None or action.text is None:
            raise ActionParseError("a SELECT needs 'index' and 'text' (the option)")
    elif action.has_point:
        if action.end_x is None or action.end_y is None:
            raise ActionParseError("a DRAG by points needs 'x', 'y', 'end_x' and 'end_y'")
    elif action.index is None or action.end_index is None:
        raise ActionParseError("a DRAG needs 'index' and 'end_index' (or x, y, end_x, end_y)")


_JSON_TYPES: dict[str, ActionType] = {
    "click": ActionType.CLICK,
    "double_tap": ActionType.DOUBLE_CLICK,
    "long_press": ActionType.LONG_CLICK,
    "input_text": ActionType.INPUT,
    "keyboard_enter": ActionType.ENTER,
    "navigate_home": ActionType.HOME,
    "navigate_back": ActionType.GOBACK,
    "scroll": ActionType.SCROLL,
    "swipe": ActionType.SCROLL,
    "open_app": ActionType.OPEN_APP,
    "wait": ActionType.WAIT,
    "status": ActionType.DONE,
    "answer": ActionType.ANSWER,
    "unknown": ActionType.DO_NOTHING,
    # Not in AndroidWorld's JSONAction (it has no drag or option choice): gui-gym's extension
    # in the same style, {"action_type": "drag", "index": 3, "end_index": 7} or with
    # x/y/end_x/end_y, and {"action_type": "select", "index": 4, "text": "Red"}.
    "drag": ActionType.DRAG,
    "select": ActionType.SELECT,
}
_SWIPE_TO_SCROLL = {"up": "down", "down": "up", "left": "right", "right": "left"}


def _from_json(data: Any) -> Action:
    """AndroidWorld's JSONAction (``android_world/env/json_action.py``) as an Action."""
    if not isinstance(data, dict):
        raise ActionParseError(f"a JSON action must be an object, got {type(data).__name__}")
    if "action_type" not in data:
        if "type" in data:
            return Action.from_dict(data)
        raise ActionParseError(f"a JSON action needs 'action_type'; {_GRAMMAR_HELP}")
    kind = str(data["action_type"]).strip().lower()
    atype = _JSON_TYPES.get(kind)
    if atype is None:
        raise ActionParseError(
            f"unknown action_type {data['action_type']!r}; expected one of {', '.join(_JSON_TYPES)}"
        )
    if atype in (ActionType.DRAG, ActionType.SELECT):
        fields = {k: v for k, v in data.items() if k != "action_type"}
        if "option" in fields and "text" not in fields:
            fields["text"] = fields.pop("option")
        return Action.from_dict({"type": atype.value, **fields})
    index = data.get("index")
    x, y = data.get("x"), data.get("y")
    if index is not None and (x is not None or y is not None):
        raise ActionParseError("give either 'index' or 'x'/'y', not both")
    target: dict[str, Any] = {}
    if index is not None:
        target["index"] = _as_index(index)
    elif x is not None or y is not None:
        if x is None or y is None:
            raise ActionParseError("coordinate actions need both 'x' and 'y'")
        target["x"] = _as_coordinate(x, "x")
        target["y"] = _as_coordinate(y, "y")
    if atype in _TARGETED:
        if not target:
            raise ActionParseError(f"{kind} needs 'index' or 'x' and 'y'")
        if data.get("modifiers") is not None:  # gui-gym's extension: a click with held keys
            target["modifiers"] = data["modifiers"]
        return Action(atype, **target)
    if atype is ActionType.INPUT:
        text = data.get("text")
        if text is None:
            raise ActionParseError("input_text needs 'text'")
        return Action(atype, index=target.get("index"), text=str(text))
    if atype is ActionType.SCROLL:
        direction = data.get("direction")
        if direction is None:
            raise ActionParseError(f"{kind} needs 'direction' (up, down, left or right)")
        direction = _as_direction(direction)
        if kind == "swipe":  # AndroidWorld: swipe is the inverse of scroll
            direction = _SWIPE_TO_SCROLL[direction]
        return Action(atype, direction=direction, index=target.get("index"))
    if atype is ActionType.OPEN_APP:
        name = data.get("app_name", data.get("text"))
        if not name:
            raise ActionParseError("open_app needs 'app_name'")
        return Action(atype, text=str(name))
    if atype is ActionType.ANSWER:
        text = data.get("text")
        if text is None:
            raise ActionParseError("answer needs 'text'")
        return Action(atype, text=str(text))
    if atype is ActionType.DONE:
        status = str(data.get("goal_status", "complete")).strip().lower()
        return Action(atype, text=None if status in ("complete", "") else status)
    return Action(atype)


CACHED_ACTION_LENGTH = 512
"""Action strings up to this length are memoised (8,192 of them, so at most a few MB per
process); longer ones, rare and mostly degenerate model output, are parsed every time."""


@functools.lru_cache(maxsize=8192)
def _parse_cached(text: str) -> Action:
    return _parse(text)


def _split_call(text: str) -> tuple[str, str | None] | None:
    """``NAME``, ``NAME(body)`` or either with a trailing ``;``, as (name, body); else None."""
    name = _IDENTIFIER.match(text)
    if name is None:
        return None
    rest = text[name.end() :].strip()
    if rest.endswith(";"):
        rest = rest[:-1].rstrip()
    if not rest:
        return name.group(0), None
    if len(rest) >= 2 and rest[0] == "(" and rest[-1] == ")":
        return name.group(0), rest[1:-1]
    return None


def _split_webshop(text: str) -> tuple[str, str] | None:
    """WebShop's ``search[query]`` / ``click[label]`` as (kind, argument); else None."""
    kind = text[:6].lower()
    if kind.startswith("search"):
        kind, rest = "search", text[6:]
    elif kind.startswith("click"):
        kind, rest = "click", text[5:]
    else:
        return None
    rest = rest.lstrip()
    if len(rest) >= 2 and rest[0] == "[" and rest[-1] == "]":
        return kind, rest[1:-1].strip()
    return None


_BLOCK_TOKENS = re.compile(r'\\.|"|</action>', re.IGNORECASE | re.DOTALL)


def _action_blocks(text: str) -> list[str]:
    """The ``<action>...</action>`` blocks of model output, in order. A block ends at the
    first ``</action>`` outside a double-quoted string (so ``INPUT(0, "a </action> b")``
    inside a block stays one block); a block whose quotes never balance ends at its first
    ``</action>``, as :func:`~gui_gym.core.untrusted_text.tagged_blocks` reads it. Linear in
    the text's length."""
    lower = text.lower()
    blocks: list[str] = []
    position = 0
    scan = True  # once a scan ran to the end unbalanced, the rest is read naively: linear
    while True:
        start = lower.find("<action>", position)
        if start < 0:
            return blocks
        begin = start + len("<action>")
        naive = lower.find("</action>", begin)
        if naive < 0:
            return blocks
        end, quoted = -1, False
        if scan:
            for token in _BLOCK_TOKENS.finditer(text, begin):
                piece = token.group(0)
                if piece == '"':
                    quoted = not quoted
                elif piece[0] == "<" and not quoted:
                    end = token.start()
                    break
        if end < 0:
            end, scan = naive, False
        blocks.append(text[begin:end])
        position = end + len("</action>")


def _parse(raw: str) -> Action:
    text = raw.strip()
    if "<action>" in text.lower():
        # a whole action whose text arguments hold <action> tags: the tags are data, never a
        # second action (INPUT(0, "<action>GOBACK()</action>") types them; issue 46)
        try:
            return _parse_plain(text, raw)
        except ActionParseError:
            pass
        blocks = _action_blocks(text)
        if not blocks:
            raise ActionParseError("found <action> without a closing </action>")
        text = blocks[-1].strip()
    return _parse_plain(text, raw)


def _parse_plain(text: str, raw: str) -> Action:
    """One action with no ``<action>`` block around it (a code fence may wrap it)."""
    text = strip_code_fence(text, not_tags=frozenset(_ALIASES))
    text = text.strip("`").strip()
    if not text:
        raise ActionParseError(f"empty action; {_GRAMMAR_HELP}")
    if text[0] == "{":
        try:
            data = load_json(text)
        except ValueError as err:
            raise ActionParseError(f"invalid JSON action: {err}") from None
        return _from_json(data)
    webshop = _split_webshop(text)
    if webshop:
        kind, arg = webshop
        if kind == "search":
            if not arg:
                raise ActionParseError("search[...] needs a query")
            return Action(ActionType.SEARCH, text=arg)
        if not arg:
            raise ActionParseError("click[...] needs a button label")
        return Action(ActionType.CLICK, label=arg)
    call = _split_call(text)
    if call is None:
        raise ActionParseError(f"could not read an action from {raw[:80]!r}; {_GRAMMAR_HELP}")
    return _from_call(*call)


def parse_action(action: str | Action | dict[str, Any]) -> Action:
    """Read an action in any accepted form.

    Args:
        action: A grammar string, AndroidWorld JSON (string or dict), WebShop text, model
            output holding ``<action>...</action>``, or an :class:`Action` (returned as is).

    Returns:
        The parsed :class:`Action`.

    Raises:
        ActionParseError: when the input is not an action; the message says what was expected.
    """
    if isinstance(action, Action):
        return action
    if isinstance(action, dict):
        return _from_json(action)
    if not isinstance(action, str):
        raise ActionParseError(
            f"an action must be a str, dict or Action, got {type(action).__name__}"
        )
    if len(action) > MAX_ACTION_LENGTH:
        raise ActionParseError(
            f"action string of {len(action)} characters exceeds the limit of {MAX_ACTION_LENGTH}"
        )
    if len(action) <= CACHED_ACTION_LENGTH:
        return _parse_cached(action)
    return _parse(action)


# ---------------------------------------------------------------------------------------------
# Descriptions


def try_parse_action(action: str | Action | dict[str, Any]) -> tuple[Action | None, str | None]:
    """:func:`parse_action` for callers that treat a bad action as data, not an exception
    (an env's ``step``, a probe): ``(action, None)`` when it parses, else ``(None, message)``
    with the :class:`ActionParseError`'s message."""
    try:
        return parse_action(action), None
    except ActionParseError as err:
        return None, str(err)


_DESCRIBE_LIMIT = 80


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _DESCRIBE_LIMIT else text[: _DESCRIBE_LIMIT - 3] + "..."


def target_element(action: Action, tree: UITree | None) -> UIElement | None:
    """The element of ``tree`` that ``action`` acts on: by index, by point, or by label.

    Returns None when the action has no target or it cannot be resolved on ``tree``.
    """
    if tree is None:
        return None
    if action.index is not None and 0 <= action.index < len(tree.elements):
        return tree.elements[action.index]
    if action.has_point:
        return tree.at_point(action.x, action.y)  # type: ignore[arg-type]
    if action.label is not None:
        return tree.find_one(text=action.label) or tree.find_one(
            text_regex=re.compile(re.escape(action.label), re.IGNORECASE)
        )
    return None


def _target_phrase(action: Action, tree: UITree | None) -> str:
    element = target_element(action, tree)
    if element is not None:
        label = element.label or element.resource_id
        if label:
            return f'"{_short(label)}" {element.role}'
        return f"{element.role} {element.index}"
    if action.label is not None:
        return f'"{_short(action.label)}"'
    if action.has_point:
        return f"point ({_num(action.x)}, {_num(action.y)})"
    if action.index is not None:
        return f"element {action.index}"
    return "the focused element"


def describe(action: Action, tree: UITree | None = None) -> str:
    """Natural-language description of ``action`` on the screen ``tree``.

    This is ``info["action_description"]``, which ADMIRE's milestone matcher and the PRM read,
    e.g. ``click "Create contact" button`` or ``type "pasta" into "Search" input``.
    """
    t = action.type
    if t is ActionType.CLICK:
        held = f"{action.modifiers}+" if action.modifiers else ""
        return f"{held}click {_target_phrase(action, tree)}"
    if t is ActionType.DOUBLE_CLICK:
        return f"double-click {_target_phrase(action, tree)}"
    if t is ActionType.LONG_CLICK:
        return f"long-press {_target_phrase(action, tree)}"
    if t is ActionType.HOVER:
        return f"move the mouse over {_target_phrase(action, tree)}"
    if t is ActionType.INPUT:
        return f'type "{_short(action.text or "")}" into {_target_phrase(action, tree)}'
    if t is ActionType.SCROLL:
        if action.index is not None:
            return f"scroll {action.direction} in {_target_phrase(action, tree)}"
        return f"scroll {action.direction}"
    if t is ActionType.GOBACK:
        return "go back"
    if t is ActionType.HOME:
        return "go to the home screen"
    if t is ActionType.ENTER:
        return "press enter"
    if t is ActionType.KEY:
        return f'press key "{_short(action.text or "")}"'
    if t is ActionType.OPEN_APP:
        return f'open app "{_short(action.text or "")}"'
    if t is ActionType.SEARCH:
        return f'search for "{_short(action.text or "")}"'
    if t is ActionType.ANSWER:
        return f'answer "{_short(action.text or "")}"'
    if t is ActionType.DRAG:
        if action.has_point:
            start = f"({_num(action.x)}, {_num(action.y)})"
            end = f"({_num(action.end_x)}, {_num(action.end_y)})"
            if action.via:
                return f"drag from {start} through {len(action.via) // 2} point(s) to {end}"
            return f"drag from {start} to {end}"
        end = Action(ActionType.CLICK, index=action.end_index)
        return f"drag {_target_phrase(action, tree)} onto {_target_phrase(end, tree)}"
    if t is ActionType.SELECT:
        return f'select "{_short(action.text or "")}" in {_target_phrase(action, tree)}'
    if t is ActionType.WAIT:
        return "wait"
    if t is ActionType.DO_NOTHING:
        return "do nothing"
    if action.text:
        return f'stop and report the task as "{_short(action.text)}"'
    return "declare the task complete"


def candidate_actions(tree: UITree, texts: Sequence[str] = ()) -> list[Action]:
    """Actions that make sense on ``tree``: a click on each clickable element, a long-click
    on each long-clickable one, typing each of ``texts`` into each editable one, scrolling
    where the content continues, and going back. Disabled elements offer nothing.
    ``GuiEnv.candidate_actions`` is this on the current screen with the task's vocabulary."""
    out: list[Action] = []
    for e in tree.elements:
        if not e.enabled:
            continue
        if e.clickable:
            out.append(Action(ActionType.CLICK, index=e.index))
        if e.long_clickable:
            out.append(Action(ActionType.LONG_CLICK, index=e.index))
        if e.editable:
            out.extend(Action(ActionType.INPUT, index=e.index, text=t) for t in texts)
    if tree.can_scroll_down:
        out.append(Action(ActionType.SCROLL, direction="down"))
    if tree.can_scroll_up:
        out.append(Action(ActionType.SCROLL, direction="up"))
    out.append(Action(ActionType.GOBACK))
    return out
