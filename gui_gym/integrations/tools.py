"""gui-gym's whole action space as function-calling tools, from one table.

:data:`TOOLS` lists one :class:`ToolSpec` per argument form of the action grammar
(:mod:`gui_gym.core.actions`): element forms (``click(element_id)``), coordinate forms
(``click_at(x, y)``), label forms (``click_label(label)``: WebShop-Text's ``click[Next >]``),
typing into the focused field (``type_text``), keys, drags, selects, hovers, scrolls (of the
screen, of an element, from a point), WebShop-Text's ``search``, and ``command`` (a listed
command by its text: ALFWorld). Engines that call tools (TRL's ``environment_factory``)
generate their methods from it; :func:`action_form` names the form of any
:class:`~gui_gym.core.actions.Action`, and ``tests/test_tools.py`` asserts every form the
grammar can write has a tool, so a new action or argument form cannot be missed.

A tool's arguments are data, never another action: :func:`build_action` builds the
:class:`~gui_gym.core.actions.Action` field by field (``answer("<action>DONE()</action>")``
answers that literal text). Argument types are strict: ``click(2.9)``, ``click(True)`` or
``input_text(0, None)`` are :class:`ToolArgumentError` s (one line, for the model), never
coerced.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gui_gym.core.actions import (
    DIRECTIONS,
    MAX_ACTION_LENGTH,
    MAX_COORDINATE,
    MAX_INDEX,
    Action,
    ActionParseError,
    ActionType,
)

__all__ = [
    "COMMAND_TOOL",
    "TOOLS",
    "TOOLS_BY_NAME",
    "Param",
    "ToolArgumentError",
    "ToolSpec",
    "action_form",
    "build_action",
    "tool_call",
]


class ToolArgumentError(ValueError):
    """A tool called with arguments of the wrong name, type or value (one line)."""


@dataclass(frozen=True)
class Param:
    """One tool argument.

    Attributes:
        name: The argument's name in the tool's schema.
        kind: ``int`` (an element id), ``float`` (a coordinate), ``str``, ``direction``
            (one of :data:`~gui_gym.core.actions.DIRECTIONS`) or ``points`` (a list of
            coordinates, x, y pairs).
        field: The :class:`~gui_gym.core.actions.Action` field it fills.
        doc: Its description in the schema.
        optional: Whether it may be left out (its Action field is then unset).
    """

    name: str
    kind: str
    field: str
    doc: str
    optional: bool = False


@dataclass(frozen=True)
class ToolSpec:
    """One tool: the action type it performs and the arguments that fill its fields."""

    name: str
    type: ActionType
    doc: str
    params: tuple[Param, ...] = field(default_factory=tuple)


COMMAND_TOOL = "command"
"""The tool that picks a listed command by its text (ALFWorld): resolved to the element whose
text it is, then ``CLICK(i)`` (no grammar form of its own)."""

_ID = "The id of the element, as the screen lists it."
_X = "Horizontal screen coordinate in pixels."
_Y = "Vertical screen coordinate in pixels."
_KEYS = "Keys held during the click: ctrl, shift, alt or meta, joined by '+'; omit for none."


def _element(name: str, atype: ActionType, verb: str, keys: bool = False) -> list[ToolSpec]:
    held = (Param("held_keys", "str", "modifiers", _KEYS, optional=True),) if keys else ()
    return [
        ToolSpec(
            name,
            atype,
            f"{verb} an element of the screen.",
            (Param("element_id", "int", "index", _ID), *held),
        ),
        ToolSpec(
            f"{name}_at",
            atype,
            f"{verb} a point of the screen (screenshot pixels).",
            (Param("x", "float", "x", _X), Param("y", "float", "y", _Y), *held),
        ),
        ToolSpec(
            f"{name}_label",
            atype,
            f"{verb} the element or link shown with this exact label (text pages).",
            (Param("label", "str", "label", "The label, exactly as shown."), *held),
        ),
    ]


TOOLS: tuple[ToolSpec, ...] = (
    *_element("click", ActionType.CLICK, "Click", keys=True),
    *_element("double_click", ActionType.DOUBLE_CLICK, "Double-click"),
    *_element("long_click", ActionType.LONG_CLICK, "Long-press"),
    *_element("hover", ActionType.HOVER, "Move the mouse over"),
    ToolSpec(
        "input_text",
        ActionType.INPUT,
        "Type text into a text field.",
        (
            Param("element_id", "int", "index", "The id of the text field."),
            Param("text", "str", "text", "The text to type."),
        ),
    ),
    ToolSpec(
        "type_text",
        ActionType.INPUT,
        "Type text into the focused field.",
        (Param("text", "str", "text", "The text to type."),),
    ),
    ToolSpec(
        "scroll",
        ActionType.SCROLL,
        "Scroll the screen, or one element of it (a list, a slider), to see more.",
        (
            Param("direction", "direction", "direction", "One of up, down, left, right."),
            Param(
                "element_id",
                "int",
                "index",
                "The id of the element to scroll; omit to scroll the screen.",
                optional=True,
            ),
        ),
    ),
    ToolSpec(
        "scroll_at",
        ActionType.SCROLL,
        "Swipe to scroll from a point of the screen.",
        (
            Param("direction", "direction", "direction", "One of up, down, left, right."),
            Param("x", "float", "x", _X),
            Param("y", "float", "y", _Y),
        ),
    ),
    ToolSpec(
        "drag",
        ActionType.DRAG,
        "Drag an element onto another.",
        (
            Param("element_id", "int", "index", "The id of the element to drag."),
            Param("target_id", "int", "end_index", "The id of the element to drop it on."),
        ),
    ),
    ToolSpec(
        "drag_at",
        ActionType.DRAG,
        "Press at one point, move and release at another (sliders, drawing, selecting text).",
        (
            Param("x0", "float", "x", "Where the press starts, horizontal pixel."),
            Param("y0", "float", "y", "Where the press starts, vertical pixel."),
            Param("x1", "float", "end_x", "Where it is released, horizontal pixel."),
            Param("y1", "float", "end_y", "Where it is released, vertical pixel."),
            Param(
                "via",
                "points",
                "via",
                "Points the stroke passes through on the way, as x, y, x, y, ...; omit for "
                "a straight drag.",
                optional=True,
            ),
        ),
    ),
    ToolSpec(
        "select_option",
        ActionType.SELECT,
        "Choose an option of a drop-down list.",
        (
            Param("element_id", "int", "index", "The id of the drop-down list."),
            Param("option", "str", "text", "The option's text."),
        ),
    ),
    ToolSpec(
        "key",
        ActionType.KEY,
        "Press a key or a key combination.",
        (Param("name", "str", "text", "The key, e.g. Tab, Escape, ArrowDown, ctrl+a."),),
    ),
    ToolSpec(
        "open_app",
        ActionType.OPEN_APP,
        "Open an app by its name.",
        (Param("name", "str", "text", "The app's name."),),
    ),
    ToolSpec(
        "search",
        ActionType.SEARCH,
        "Search the site for a query (text shops).",
        (Param("query", "str", "text", "The search query."),),
    ),
    ToolSpec(
        "answer",
        ActionType.ANSWER,
        "Answer the user's question (ends the episode).",
        (Param("text", "str", "text", "The answer."),),
    ),
    ToolSpec("go_back", ActionType.GOBACK, "Press the back button."),
    ToolSpec("home", ActionType.HOME, "Go to the home screen."),
    ToolSpec("enter", ActionType.ENTER, "Press the enter key."),
    ToolSpec("wait", ActionType.WAIT, "Wait one step for the screen to change."),
    ToolSpec("do_nothing", ActionType.DO_NOTHING, "Take no action this step."),
    ToolSpec(
        "done",
        ActionType.DONE,
        "Declare the task complete (ends the episode).",
        (
            Param(
                "status",
                "str",
                "text",
                "Omit when the task is done; 'infeasible' when it cannot be done.",
                optional=True,
            ),
        ),
    ),
    ToolSpec(
        COMMAND_TOOL,
        ActionType.CLICK,
        "Send one of the listed commands, by its text (text games).",
        (Param("text", "str", "label", "The command, exactly as listed."),),
    ),
)
"""Every tool, one per argument form of the grammar (and ``command``)."""

TOOLS_BY_NAME: dict[str, ToolSpec] = {t.name: t for t in TOOLS}


def _check(param: Param, value: Any) -> Any:
    """``value`` if it is of ``param``'s kind, else a one-line :class:`ToolArgumentError`."""
    kind, name = param.kind, param.name
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ToolArgumentError(f"{name} must be an integer, got {value!r:.40}")
        if not 0 <= value <= MAX_INDEX:
            raise ToolArgumentError(f"{name} must be from 0 to {MAX_INDEX}, got {value}")
        return value
    if kind in ("float", "points"):
        values = value if kind == "points" else [value]
        if kind == "points" and not isinstance(value, list | tuple):
            raise ToolArgumentError(f"{name} must be a list of numbers, got {value!r:.40}")
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise ToolArgumentError(f"{name} must hold numbers, got {v!r:.40}")
            if not math.isfinite(v) or abs(v) > MAX_COORDINATE:
                raise ToolArgumentError(f"{name} must be a finite coordinate, got {v!r:.40}")
        if kind == "points":
            if len(values) % 2:
                raise ToolArgumentError(f"{name} holds x, y pairs, got {len(values)} number(s)")
            return tuple(float(v) for v in values)
        return float(value)
    if not isinstance(value, str):
        raise ToolArgumentError(f"{name} must be a string, got {value!r:.40}")
    if len(value) > MAX_ACTION_LENGTH:
        raise ToolArgumentError(f"{name} is {len(value)} characters, over {MAX_ACTION_LENGTH}")
    if kind == "direction":
        direction = value.strip().lower()
        if direction not in DIRECTIONS:
            raise ToolArgumentError(
                f"{name} must be one of {', '.join(DIRECTIONS)}, got {value!r:.40}"
            )
        return direction
    return value


def build_action(name: str, arguments: Mapping[str, Any]) -> Action:
    """The :class:`~gui_gym.core.actions.Action` a tool call means, built field by field (its
    text arguments stay data). For :data:`COMMAND_TOOL` it is ``CLICK(label=text)``; the
    engine resolves the label to a listed command's element.

    Raises:
        ToolArgumentError: for an unknown tool, a missing, unknown or ill-typed argument, or
            values the action refuses (one line).
    """
    spec = TOOLS_BY_NAME.get(name)
    if spec is None:
        raise ToolArgumentError(f"unknown tool {name!r:.40}")
    known = {p.name for p in spec.params}
    unknown = sorted(str(k) for k in arguments if k not in known)
    if unknown:
        allowed = ", ".join(p.name for p in spec.params) or "none"
        raise ToolArgumentError(f"{name}: unknown argument(s) {unknown}; allowed: {allowed}")
    fields: dict[str, Any] = {}
    for param in spec.params:
        if param.name not in arguments or (param.optional and arguments[param.name] is None):
            if not param.optional:
                raise ToolArgumentError(f"{name}: missing argument {param.name!r}")
            continue
        try:
            value = _check(param, arguments[param.name])
        except ToolArgumentError as err:
            raise ToolArgumentError(f"{name}: {err}") from None
        if param.optional and value in ("", ()):
            continue  # an empty optional (held_keys="", status="", via=[]) is left out
        fields[param.field] = value
    try:
        return Action(spec.type, **fields)
    except ActionParseError as err:
        raise ToolArgumentError(f"{name}: {str(err).splitlines()[0]}") from None


def action_form(action: Action) -> tuple[str, frozenset[str]]:
    """The argument form of ``action``: its type and which fields it sets (``x`` and ``y``
    as one, ``end_x`` and ``end_y`` as one)."""
    fields = {
        f
        for f in ("index", "text", "direction", "label", "end_index", "via", "modifiers")
        if getattr(action, f) is not None
    }
    if action.has_point:
        fields.add("x")
    if action.end_x is not None or action.end_y is not None:
        fields.add("end_x")
    return action.type.value, frozenset(fields)


def _spec_form(spec: ToolSpec, with_optional: frozenset[str]) -> tuple[str, frozenset[str]]:
    fields = {p.field for p in spec.params if not p.optional or p.name in with_optional}
    fields = {"x" if f == "y" else "end_x" if f == "end_y" else f for f in fields}
    return spec.type.value, frozenset(fields)


def tool_call(action: Action) -> tuple[str, dict[str, Any]]:
    """The tool call (name, arguments) that performs ``action`` (what an expert's action is
    as a tool call).

    Raises:
        ToolArgumentError: when no tool has ``action``'s argument form.
    """
    form = action_form(action)
    for spec in TOOLS:
        if spec.name == COMMAND_TOOL:
            continue
        optional = [p.name for p in spec.params if p.optional]
        for mask in range(1 << len(optional)):
            chosen = frozenset(n for k, n in enumerate(optional) if mask >> k & 1)
            if _spec_form(spec, chosen) != form:
                continue
            arguments: dict[str, Any] = {}
            for p in spec.params:
                if p.optional and p.name not in chosen:
                    continue
                value = getattr(action, p.field)
                arguments[p.name] = list(value) if p.kind == "points" else value
            return spec.name, arguments
    raise ToolArgumentError(f"no tool performs {action.to_string()[:80]} (form {form})")
