"""MiniWoB++ DOM -> :class:`~gui_gym.core.ui.UITree`.

``miniwob`` reads the page with its own ``core.getDOMInfo()`` and hands back a tree of
``miniwob.dom.DOMElement`` (tag, ref, text, value, box, focus and tampered flags). We flatten
that tree in document order into our one UI model and remember each element's miniwob
``ref``, so an action on element ``i`` is executed as miniwob's own action on ``refs[i]``.

Roles follow the tag (``input_text`` -> input, ``input_checkbox`` -> checkbox, ``a`` -> link,
...). MiniWoB pages make plain ``div``/``span`` leaves clickable (colour swatches, tabs, links
drawn as spans), so every leaf with a box is clickable, as in miniwob's own element-action
space; containers are not.

miniwob's reading skips elements without a box, so a ``<select>``'s options never appear in
it; the env reads them separately (``select_options``) and we add them as ``option``
children of their select (in its box, ``selected`` set on the chosen one), with the select's
text being the chosen option's, as a person sees a closed drop-down and its list.
"""

from __future__ import annotations

from typing import Any

from gui_gym.core.ui import UIElement, UITree

__all__ = ["dom_to_tree"]

_INPUT_ROLES = {
    "input_checkbox": "checkbox",
    "input_radio": "radio",
    "input_button": "button",
    "input_submit": "button",
    "input_reset": "button",
    "input_range": "slider",
    "input_image": "button",
}
_TAG_ROLES = {
    "button": "button",
    "a": "link",
    "select": "select",
    "option": "option",
    "textarea": "textarea",
    "label": "text",
    "t": "text",
    "h1": "heading",
    "h2": "heading",
    "h3": "heading",
    "h4": "heading",
    "li": "listitem",
    "ul": "list",
    "ol": "list",
    "img": "image",
    "svg": "image",
    "canvas": "image",
    "table": "container",
    "tr": "container",
}
_INTERACTIVE = frozenset({"button", "a", "select", "option", "textarea", "label"})


def _role(tag: str, is_leaf: bool, classes: str) -> str:
    if "alink" in classes.split():  # MiniWoB draws links as <span class="alink">
        return "link"
    if tag.startswith("input_"):
        return _INPUT_ROLES.get(tag, "input")
    role = _TAG_ROLES.get(tag)
    if role is not None:
        return role
    return "text" if is_leaf else "container"


def dom_to_tree(
    root: Any,
    width: int,
    height: int,
    name: str = "",
    select_options: dict[int, tuple[int, list[str]]] | None = None,
    fills: dict[int, str] | None = None,
    alts: dict[int, str] | None = None,
    grafts: dict[int, list[Any]] | None = None,
    chosen_options: dict[int, frozenset[int]] | None = None,
) -> tuple[UITree, list[int], list[str]]:
    """Flatten a miniwob DOM tree.

    Args:
        root: A ``miniwob.dom.DOMElement`` (the page body), or None for a finished episode.
        width, height: The task area in pixels (160x210 for MiniWoB, 375x667 for FlightWoB).
        name: Screen name (the task).
        select_options: For each ``<select>``'s ref, the index of its chosen option and
            the options' texts.
        fills: For SVG elements' refs, their fill colour as ``#rrggbb`` (added to the
            description as ``fill #rrggbb``).
        alts: For ``<img>`` refs, their alternative text (what an accessibility tree names
            an image by; added to the description as ``alt <text>``).
        grafts: For an element's ref, more children (``DOMElement`` trees) to read after its
            own: content miniwob's reading skips because its container has no size.
        chosen_options: For a ``<select>``'s ref, the positions of its selected options:
            a list box (miniwob reads its options, with boxes) shows them highlighted, and
            its ``option`` elements get ``selected``.

    Returns:
        ``(tree, refs, tags)``: the screen and, for each element index, its miniwob ref
        (negative for text pseudo-elements, which miniwob cannot click by ref) and its tag as
        miniwob names it (``"input_text"``, ``"button"``, ``"t"`` for text fragments).
    """
    elements: list[UIElement] = []
    refs: list[int] = []
    tags: list[str] = []
    children: dict[int, list[int]] = {}
    if root is None:
        return UITree((), width=width, height=height, name=name), refs, tags

    stack: list[tuple[Any, int]] = [(root, -1)]
    while stack:
        node, parent = stack.pop()
        tag = node.tag
        is_leaf = node.text is not None
        value = node.value
        editable = (tag.startswith("input_") and _INPUT_ROLES.get(tag) is None) or tag == "textarea"
        checkable = tag in ("input_checkbox", "input_radio")
        classes = node.classes if isinstance(node.classes, str) else ""
        if checkable:
            text = ""
        elif editable:
            text = str(value or "")
        else:
            text = (node.text or "").strip()
        left, top = float(node.left), float(node.top)
        bounds = (
            round(left),
            round(top),
            round(left + float(node.width)),
            round(top + float(node.height)),
        )
        index = len(elements)
        looks = _looks(node, tag, classes) if is_leaf and not text and not checkable else ""
        fill = fills.get(int(node.ref)) if fills else None
        if fill:
            looks = f"{looks} fill {fill}".strip()
        alt = alts.get(int(node.ref)) if alts else None
        if alt:
            looks = f"{looks} alt {alt}".strip()
        selected = False
        if tag == "option" and chosen_options and parent >= 0:
            # its position among the list box's options read so far (document order)
            position = sum(tags[i] == "option" for i in children.get(parent, ()))
            selected = position in chosen_options.get(refs[parent], ())
        elements.append(
            UIElement(
                index=index,
                role=_role(tag, is_leaf, classes),
                text=text,
                description=looks,
                resource_id=str(node.id or ""),
                bounds=bounds,
                clickable=is_leaf or tag in _INTERACTIVE or tag.startswith("input_"),
                editable=editable,
                checkable=checkable,
                checked=bool(value) if checkable else False,
                focused=bool(node.focused),
                selected=selected,
                parent=parent,
            )
        )
        refs.append(int(node.ref))
        tags.append(tag)
        if parent >= 0:
            children.setdefault(parent, []).append(index)
        if (
            tag == "select"
            and select_options
            and int(node.ref) in select_options
            and not node.children  # a list box (size > 1) shows its options with boxes
        ):
            chosen, options = select_options[int(node.ref)]
            if 0 <= chosen < len(options):
                elements[index] = UIElement(**{**_fields(elements[index]), "text": options[chosen]})
            for position, option in enumerate(options):
                children.setdefault(index, []).append(len(elements))
                elements.append(
                    UIElement(
                        index=len(elements),
                        role="option",
                        text=option.strip(),
                        bounds=bounds,
                        selected=position == chosen,
                        parent=index,
                    )
                )
                refs.append(0)  # not in miniwob's reading: no ref of its own
                tags.append("option")
        # Reverse so the stack pops children in document order.
        kids = [*node.children, *(grafts.get(int(node.ref), ()) if grafts else ())]
        stack.extend((child, index) for child in reversed(kids))
    if children:
        elements = [
            UIElement(**{**_fields(e), "children": tuple(children[e.index])})
            if e.index in children
            else e
            for e in elements
        ]
    return UITree(tuple(elements), width=width, height=height, name=name), refs, tags


def _looks(node: Any, tag: str, classes: str) -> str:
    """What a text-less leaf looks like, as a person sees it: its classes (MiniWoB's icons
    are named by class), an SVG shape's kind (miniwob reports every SVG class as
    ``SVG_CLASS``, so the tag says it: ``circle``, ``rect``, ``polygon``, ``line``), and a
    visible background colour as ``#rrggbb`` (colour swatches)."""
    words = [tag if classes == "SVG_CLASS" else classes]
    colour = getattr(node, "bg_color", None)
    if (
        isinstance(colour, tuple)
        and len(colour) == 4
        and colour[3] > 0
        and colour[:3] != (1.0, 1.0, 1.0)
    ):
        words.append("#" + "".join(f"{round(c * 255):02x}" for c in colour[:3]))
    return " ".join(w for w in words if w)


def _fields(e: UIElement) -> dict[str, Any]:
    return {name: getattr(e, name) for name in UIElement.__dataclass_fields__}
