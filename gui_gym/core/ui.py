"""The one UI model every backend converts to: :class:`UIElement` and :class:`UITree`.

A simulated app, an Android accessibility tree, a browser DOM and a WebShop page all become a
``UITree``: a flat, immutable sequence of elements whose ``index`` is their position in the
sequence, stable within one screen. Hierarchy is kept through ``parent``/``children`` indices so
trees stay plain data that pickles, hashes and compares cheaply.

Simulated apps attach a *handler key* (``handler`` plus one string argument ``handler_arg``) to
an element to name its behaviour; the app resolves the key when the element is acted on. Real
backends leave both empty.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = [
    "ANDROID_CLASS_ROLES",
    "FLAG_ORDER",
    "ROLES",
    "Bounds",
    "UIElement",
    "UITree",
    "android_role",
    "render_text",
]

Bounds = tuple[int, int, int, int]
"""Element box in screen pixels: ``(x0, y0, x1, y1)``, with ``x1``/``y1`` exclusive."""

ROLES = frozenset(
    {
        "button",
        "text",
        "heading",
        "input",
        "checkbox",
        "switch",
        "radio",
        "list",
        "listitem",
        "image",
        "link",
        "tab",
        "menuitem",
        "dialog",
        "toast",
        "slider",
        "container",
        "select",
        "option",
    }
)
"""Roles the renderers know. Backends may use others; they render as generic elements."""


@dataclass(frozen=True, slots=True)
class UIElement:
    """One element of a screen.

    Attributes:
        index: Position in the tree; stable within one screen, never across screens.
        role: What the element is: ``button``, ``text``, ``input``, ``link``, ... (see ROLES).
        text: Visible text.
        description: Accessibility description (content-desc / aria-label / alt).
        resource_id: Backend identifier (Android resource id, DOM id, handler-free name).
        bounds: ``(x0, y0, x1, y1)`` in screen pixels.
        clickable, long_clickable, editable, scrollable, checkable: what the element accepts.
        checked, selected, focused, enabled: its current flags.
        parent: Index of the parent element, ``-1`` for a root.
        children: Indices of the children.
        handler: Simulated apps only: the behaviour key resolved by the app on interaction.
        handler_arg: Simulated apps only: the key's argument (an article slug, a contact id).
    """

    index: int
    role: str
    text: str = ""
    description: str = ""
    resource_id: str = ""
    bounds: Bounds = (0, 0, 0, 0)
    clickable: bool = False
    long_clickable: bool = False
    editable: bool = False
    scrollable: bool = False
    checkable: bool = False
    checked: bool = False
    selected: bool = False
    focused: bool = False
    enabled: bool = True
    parent: int = -1
    children: tuple[int, ...] = ()
    handler: str = ""
    handler_arg: str = ""

    @property
    def label(self) -> str:
        """The text a human would read for this element: its text, else its description."""
        return self.text or self.description

    @property
    def center(self) -> tuple[int, int]:
        """Centre of the element's bounds in pixels."""
        x0, y0, x1, y1 = self.bounds
        return ((x0 + x1) // 2, (y0 + y1) // 2)

    @property
    def identity(self) -> tuple[str, str, str]:
        """What identifies the element across screens: ``(role, label, resource_id)``.

        ProgRM's step similarity compares targets by this, never by the per-screen index.
        """
        return (self.role, self.label, self.resource_id)

    @property
    def interactive(self) -> bool:
        """True when the element accepts any action."""
        return (
            self.clickable
            or self.long_clickable
            or self.editable
            or self.scrollable
            or self.checkable
        )

    def contains_point(self, x: float, y: float) -> bool:
        """True when ``(x, y)`` lies inside the element's bounds."""
        x0, y0, x1, y1 = self.bounds
        return x0 <= x < x1 and y0 <= y < y1

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict holding only the fields that differ from their defaults."""
        out: dict[str, Any] = {"index": self.index, "role": self.role}
        for name, default in _ELEMENT_DEFAULTS.items():
            value = getattr(self, name)
            if value != default:
                out[name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UIElement:
        """Inverse of :meth:`to_dict`.

        Raises:
            ValueError: if a key is unknown or a required key is missing.
        """
        unknown = set(data) - _ELEMENT_FIELDS
        if unknown:
            raise ValueError(f"unknown UIElement field(s) {sorted(unknown)}")
        if "index" not in data or "role" not in data:
            raise ValueError("a UIElement needs 'index' and 'role'")
        kwargs = dict(data)
        if "bounds" in kwargs:
            kwargs["bounds"] = tuple(int(v) for v in kwargs["bounds"])
        if "children" in kwargs:
            kwargs["children"] = tuple(int(v) for v in kwargs["children"])
        return cls(**kwargs)


_ELEMENT_DEFAULTS: dict[str, Any] = {
    "text": "",
    "description": "",
    "resource_id": "",
    "bounds": (0, 0, 0, 0),
    "clickable": False,
    "long_clickable": False,
    "editable": False,
    "scrollable": False,
    "checkable": False,
    "checked": False,
    "selected": False,
    "focused": False,
    "enabled": True,
    "parent": -1,
    "children": (),
    "handler": "",
    "handler_arg": "",
}
_ELEMENT_FIELDS = frozenset({"index", "role", *_ELEMENT_DEFAULTS})


@dataclass(frozen=True, slots=True, eq=False)
class UITree:
    """An immutable screen: its elements in index order plus screen-level facts.

    Attributes:
        elements: Elements; ``elements[i].index == i`` always holds.
        width, height: Screen size in pixels (the screenshot size).
        name: Screen name (activity, page kind, URL path); for humans and predicates.
        can_scroll_up, can_scroll_down: Whether the main content scrolls further.
    """

    elements: tuple[UIElement, ...]
    width: int = 360
    height: int = 720
    name: str = ""
    can_scroll_up: bool = False
    can_scroll_down: bool = False
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for position, element in enumerate(self.elements):
            if element.index != position:
                raise ValueError(
                    f"element at position {position} has index {element.index}; "
                    "indices must equal positions (use UITree.build to number them)"
                )

    @classmethod
    def build(cls, elements: Iterable[UIElement], **kwargs: Any) -> UITree:
        """Build a tree, renumbering ``elements`` 0..n-1 in the given order."""
        numbered = tuple(e if e.index == i else replace(e, index=i) for i, e in enumerate(elements))
        return cls(numbered, **kwargs)

    def __len__(self) -> int:
        return len(self.elements)

    def __iter__(self) -> Iterator[UIElement]:
        return iter(self.elements)

    def __getitem__(self, index: int) -> UIElement:
        """The element at ``index``.

        Raises:
            IndexError: with the valid range, when ``index`` is not on this screen.
        """
        if not 0 <= index < len(self.elements):
            raise IndexError(
                f"no element {index} on this screen (valid indices: 0..{len(self.elements) - 1})"
            )
        return self.elements[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UITree):
            return NotImplemented
        return (
            self.elements == other.elements
            and self.width == other.width
            and self.height == other.height
            and self.name == other.name
            and self.can_scroll_up == other.can_scroll_up
            and self.can_scroll_down == other.can_scroll_down
        )

    def __hash__(self) -> int:
        return hash((self.elements, self.width, self.height, self.name))

    @property
    def text(self) -> str:
        """The rendered screen (:func:`render_text`), computed once per tree."""
        cached = self._cache.get("text")
        if cached is None:
            cached = render_text(self)
            self._cache["text"] = cached
        return cached

    @property
    def all_text(self) -> str:
        """Every label on the screen joined by newlines (for ``screen_contains``)."""
        cached = self._cache.get("all_text")
        if cached is None:
            cached = "\n".join(e.label for e in self.elements if e.label)
            self._cache["all_text"] = cached
        return cached

    def find(
        self,
        role: str | None = None,
        text: str | None = None,
        text_regex: str | re.Pattern[str] | None = None,
        resource_id: str | None = None,
        handler: str | None = None,
        handler_arg: str | None = None,
        **flags: bool,
    ) -> list[UIElement]:
        """Elements matching every given criterion (exact ``text``, or ``text_regex`` search)."""
        pattern = re.compile(text_regex) if isinstance(text_regex, str) else text_regex
        found = []
        for e in self.elements:
            if role is not None and e.role != role:
                continue
            if text is not None and e.label != text:
                continue
            if pattern is not None and not pattern.search(e.label):
                continue
            if resource_id is not None and e.resource_id != resource_id:
                continue
            if handler is not None and e.handler != handler:
                continue
            if handler_arg is not None and e.handler_arg != handler_arg:
                continue
            if any(getattr(e, flag) != value for flag, value in flags.items()):
                continue
            found.append(e)
        return found

    def find_one(self, **criteria: Any) -> UIElement | None:
        """The first element matching :meth:`find`'s criteria, or None."""
        found = self.find(**criteria)
        return found[0] if found else None

    def at_point(self, x: float, y: float) -> UIElement | None:
        """The top-most (last drawn) interactive element under ``(x, y)``, else any element."""
        hit = None
        for e in self.elements:
            if e.contains_point(x, y) and (e.interactive or hit is None or not hit.interactive):
                hit = e
        return hit

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (used by trajectories)."""
        return {
            "name": self.name,
            "width": self.width,
            "height": self.height,
            "can_scroll_up": self.can_scroll_up,
            "can_scroll_down": self.can_scroll_down,
            "elements": [e.to_dict() for e in self.elements],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UITree:
        """Inverse of :meth:`to_dict`."""
        return cls(
            tuple(UIElement.from_dict(e) for e in data["elements"]),
            width=int(data.get("width", 360)),
            height=int(data.get("height", 720)),
            name=str(data.get("name", "")),
            can_scroll_up=bool(data.get("can_scroll_up", False)),
            can_scroll_down=bool(data.get("can_scroll_down", False)),
        )


FLAG_ORDER = (
    "clickable",
    "long_clickable",
    "editable",
    "scrollable",
    "checkable",
    "checked",
    "selected",
    "focused",
)
"""The :class:`UIElement` flags that are off by default, in the order :func:`render_text`
shows the ones that are on (``enabled``, on by default, shows as ``disabled`` when off)."""


ANDROID_CLASS_ROLES = (
    ("EditText", "input"),
    ("AutoCompleteTextView", "input"),
    ("CheckBox", "checkbox"),
    ("Switch", "switch"),
    ("ToggleButton", "switch"),
    ("RadioButton", "radio"),
    ("SeekBar", "slider"),
    ("ImageButton", "button"),
    ("Button", "button"),
    ("ImageView", "image"),
    ("RecyclerView", "list"),
    ("ListView", "list"),
    ("ScrollView", "list"),
    ("TextView", "text"),
    ("Spinner", "select"),
    ("TabWidget", "tab"),
)
"""``(class-name suffix, role)`` of Android views, the first match winning (see
:func:`android_role`)."""


def android_role(
    class_name: str, clickable: bool, roles: Iterable[tuple[str, str]] = ANDROID_CLASS_ROLES
) -> str:
    """The role of an Android view of class ``class_name`` (``android.widget.Button``): the
    role of the first of ``roles`` whose suffix ends the short class name, else ``button``
    for a clickable view and ``container`` for the rest."""
    short = class_name.rsplit(".", 1)[-1]
    for suffix, role in roles:
        if short.endswith(suffix):
            return role
    return "button" if clickable else "container"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def render_element(element: UIElement) -> str:
    """One line of :func:`render_text`: ``<button id=3 clickable>Search</button>``."""
    parts = [element.role, f"id={element.index}"]
    parts.extend(flag for flag in FLAG_ORDER if getattr(element, flag))
    if not element.enabled:
        parts.append("disabled")
    if element.description and element.text:
        parts.append(f'description="{_escape(element.description).replace(chr(34), "&quot;")}"')
    label = _escape(element.label)
    return f"<{' '.join(parts)}>{label}</{element.role}>"


def render_text(tree: UITree) -> str:
    """The compact HTML-like screen an LLM reads: one element a line, with its index.

    Only elements worth acting on or reading appear: containers with no text and no
    accepted action are left out. Scroll hints close the screen when content continues.
    """
    lines = [render_element(e) for e in tree.elements if e.label or e.interactive]
    if tree.can_scroll_up or tree.can_scroll_down:
        directions = [
            d for d, ok in (("up", tree.can_scroll_up), ("down", tree.can_scroll_down)) if ok
        ]
        lines.append(f"<!-- more content: scroll {' or '.join(directions)} -->")
    return "\n".join(lines)
