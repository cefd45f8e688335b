"""The simulated-app pattern shared by WikiHow, AndroidWorld-sim and WebShop.

* the app's **state** is plain data; copying it is ``fork()``;
* a **view** is a pure function ``state -> UITree``, cached per :meth:`SimApp.view_key`;
* an element names its behaviour by a **handler key** (``element.handler`` plus
  ``element.handler_arg``), never by a Python callable, so trees stay plain data;
* an **update** resolves the key in the app's handler table and changes the state; unknown
  keys and impossible actions raise :class:`~gui_gym.core.env.InvalidAction`.

Handler tables are built from method names: an app method ``on_click_open_article`` handles
CLICK on elements whose handler is ``open_article``; ``on_input_search`` handles INPUT on
``search``; ``on_long_click_*`` and ``on_scroll_*`` likewise. Keys are only ever produced by the
app's own views, so no user text selects a method.

:class:`ScrollPage` lays out a column of blocks taller than the screen and cuts the visible
window at a scroll offset, which is what makes SCROLL matter.
"""

from __future__ import annotations

import copy
import math
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.env import GuiEnv, InvalidAction
from gui_gym.core.task import Task, TaskSuite
from gui_gym.core.ui import UIElement, UITree

__all__ = ["Block", "ScrollPage", "SimApp", "SimGuiEnv", "handler_table"]

S = TypeVar("S")

CHAR_WIDTH = 6
"""Pixels per character used to estimate wrapped text height (matches the screenshot font)."""
LINE_HEIGHT = 14


@dataclass(frozen=True, slots=True)
class Block:
    """An element placed in a scrolling column; its height follows from its wrapped text.

    ``height`` overrides the computed height; ``indent`` shifts it right.
    """

    role: str
    text: str = ""
    description: str = ""
    resource_id: str = ""
    height: int = 0
    indent: int = 0
    clickable: bool = False
    long_clickable: bool = False
    editable: bool = False
    scrollable: bool = False
    checkable: bool = False
    checked: bool = False
    selected: bool = False
    focused: bool = False
    handler: str = ""
    handler_arg: str = ""
    gap: int = 4

    def element(self, bounds: tuple[int, int, int, int], index: int = 0) -> UIElement:
        return UIElement(
            index=index,
            role=self.role,
            text=self.text,
            description=self.description,
            resource_id=self.resource_id,
            bounds=bounds,
            clickable=self.clickable,
            long_clickable=self.long_clickable,
            editable=self.editable,
            scrollable=self.scrollable,
            checkable=self.checkable,
            checked=self.checked,
            selected=self.selected,
            focused=self.focused,
            handler=self.handler,
            handler_arg=self.handler_arg,
        )


class ScrollPage:
    """A column of :class:`Block` s laid out once, windowed per scroll offset.

    Args:
        blocks: The content, top to bottom.
        width: Column width in pixels.
        top: Screen y where the scrolling region starts (below a fixed app bar).
        bottom: Screen y where it ends (above a fixed bottom bar).
        margin: Left/right padding.
    """

    def __init__(self, blocks: Iterable[Block], width: int, top: int, bottom: int, margin: int = 8):
        self.width = width
        self.top = top
        self.bottom = bottom
        self.view_height = bottom - top
        placed: list[tuple[int, int, Block]] = []
        y = 4
        for block in blocks:
            x0 = margin + block.indent
            usable = width - x0 - margin
            if block.height:
                h = block.height
            else:
                chars = max(1, (usable - 8) // CHAR_WIDTH)
                lines = max(1, math.ceil(len(block.text or block.description) / chars))
                h = lines * LINE_HEIGHT + 8
            placed.append((y, h, block))
            y += h + block.gap
        self._placed = placed
        self._margin = margin
        self.content_height = y + 4
        self.max_scroll = max(0, self.content_height - self.view_height)

    @property
    def scroll_step(self) -> int:
        """How far one SCROLL moves: 60% of the visible height, as a phone swipe does."""
        return max(1, int(self.view_height * 0.6))

    def clamp(self, scroll: int) -> int:
        return min(max(0, scroll), self.max_scroll)

    def window(self, scroll: int, first_index: int = 0) -> list[UIElement]:
        """Elements visible at ``scroll``, numbered from ``first_index``, bounds in screen
        pixels, clipped to the scrolling region."""
        scroll = self.clamp(scroll)
        lo, hi = scroll, scroll + self.view_height
        out = []
        for y, h, block in self._placed:
            if y + h <= lo:
                continue
            if y >= hi:
                break
            y0 = max(y, lo) - scroll + self.top
            y1 = min(y + h, hi) - scroll + self.top
            if y1 - y0 < 6:  # a sliver is not readable or tappable
                continue
            x0 = self._margin + block.indent
            out.append(
                block.element((x0, y0, self.width - self._margin, y1), first_index + len(out))
            )
        return out

    def position_of(self, predicate: Callable[[Block], bool]) -> int | None:
        """Content y of the first block satisfying ``predicate`` (oracles use this)."""
        for y, _h, block in self._placed:
            if predicate(block):
                return y
        return None

    def scroll_to_show(self, y: int) -> int:
        """A scroll offset that shows content position ``y`` near the top of the window."""
        return self.clamp(y - 8)


_VERBS = (
    ("long_click", ActionType.LONG_CLICK),
    ("double_click", ActionType.DOUBLE_CLICK),
    ("click", ActionType.CLICK),
    ("input", ActionType.INPUT),
    ("scroll", ActionType.SCROLL),
)


def handler_table(
    obj: object, prefix: str = ""
) -> dict[tuple[ActionType, str], Callable[..., None]]:
    """Map ``(action type, prefix + handler key)`` to ``obj``'s ``on_<verb>_<key>`` methods."""
    table: dict[tuple[ActionType, str], Callable[..., None]] = {}
    for name in dir(type(obj)):
        if not name.startswith("on_"):
            continue
        for verb, atype in _VERBS:
            start = f"on_{verb}_"
            if name.startswith(start):
                table[(atype, prefix + name[len(start) :])] = getattr(obj, name)
                break
    return table


class SimApp(Generic[S]):
    """Base of a simulated app: state factory, cached views, and a handler table.

    Subclasses implement :meth:`initial_state`, :meth:`view_key` and :meth:`build_view`, plus
    ``on_<verb>_<handler>`` methods and the navigation hooks they support.
    """

    width: ClassVar[int] = 360
    height: ClassVar[int] = 720
    view_cache_size: ClassVar[int] = 4096

    def __init__(self) -> None:
        self._views: OrderedDict[Hashable, UITree] = OrderedDict()
        self._handlers: dict[tuple[ActionType, str], Callable[..., None]] = handler_table(self)

    # -- to implement -----------------------------------------------------------------------

    def initial_state(self, task: Task, rng: np.random.Generator) -> S:
        raise NotImplementedError

    def view_key(self, state: S) -> Hashable:
        """Everything the view depends on, as a hashable value."""
        raise NotImplementedError

    def build_view(self, state: S) -> UITree:
        raise NotImplementedError

    # -- navigation hooks (default: not supported) -------------------------------------------

    def back(self, state: S) -> None:
        raise InvalidAction("GOBACK is not supported in this app")

    def home(self, state: S) -> None:
        raise InvalidAction("HOME is not supported in this app")

    def enter(self, state: S, screen: UITree) -> None:
        raise InvalidAction("ENTER does nothing here: no text field is focused")

    def scroll(self, state: S, direction: str, element: UIElement | None) -> None:
        raise InvalidAction("this screen does not scroll")

    def open_app(self, state: S, name: str) -> None:
        raise InvalidAction("OPEN_APP is not supported in this app")

    def search(self, state: S, query: str) -> None:
        raise InvalidAction(
            "SEARCH is not supported in this app; type into a search box with INPUT"
        )

    def key(self, state: S, name: str) -> None:
        raise InvalidAction(f"key {name!r} is not supported in this app")

    def answer(self, state: S, text: str) -> None:
        """Called on ANSWER; apps that show answers on screen record it here."""

    # -- machinery ----------------------------------------------------------------------------

    def view(self, state: S) -> UITree:
        """The screen for ``state``, cached by :meth:`view_key`."""
        key = self.view_key(state)
        views = self._views
        tree = views.get(key)
        if tree is None:
            tree = self.build_view(state)
            views[key] = tree
            if len(views) > self.view_cache_size:
                views.popitem(last=False)
        return tree

    def tree(
        self, elements: Iterable[UIElement], name: str, can_up: bool = False, can_down: bool = False
    ) -> UITree:
        return UITree.build(
            elements,
            width=self.width,
            height=self.height,
            name=name,
            can_scroll_up=can_up,
            can_scroll_down=can_down,
        )

    def resolve_target(self, action: Action, screen: UITree) -> UIElement | None:
        """The element an action targets: by index, by point, by label, or the focused input.

        Raises:
            InvalidAction: when a label or point matches nothing.
        """
        if action.index is not None:
            return screen.elements[action.index]
        if action.has_point:
            element = screen.at_point(action.x, action.y)  # type: ignore[arg-type]
            if element is None:
                raise InvalidAction(f"nothing at ({action.x:g}, {action.y:g})")
            return element
        if action.label is not None:
            wanted = action.label.strip().lower()
            for e in screen.elements:
                if e.label.strip().lower() == wanted and (e.clickable or e.editable):
                    return e
            raise InvalidAction(f"no clickable element labelled {action.label!r} on this screen")
        return None

    def update(self, state: S, action: Action, screen: UITree) -> None:
        """Apply ``action`` to ``state`` in place.

        Raises:
            InvalidAction: when the action is impossible here; ``state`` is then unchanged.
        """
        t = action.type
        if t in (
            ActionType.CLICK,
            ActionType.LONG_CLICK,
            ActionType.DOUBLE_CLICK,
            ActionType.INPUT,
        ):
            element = self.resolve_target(action, screen)
            if element is None:
                if t is not ActionType.INPUT:
                    raise InvalidAction(f"{t.value} needs a target element index")
                focused = [e for e in screen.elements if e.editable and e.focused]
                if not focused:
                    raise InvalidAction("INPUT needs an element index: no text field is focused")
                element = focused[0]
            self._dispatch(state, action, element)
            return
        if t is ActionType.SCROLL:
            element = self.resolve_target(action, screen)
            assert action.direction is not None
            if element is not None and element.handler:
                handler = self._handlers.get((ActionType.SCROLL, element.handler))
                if handler is not None:
                    handler(state, element, action)
                    return
            self.scroll(state, action.direction, element)
            return
        if t is ActionType.GOBACK:
            self.back(state)
        elif t is ActionType.HOME:
            self.home(state)
        elif t is ActionType.ENTER:
            self.enter(state, screen)
        elif t is ActionType.OPEN_APP:
            self.open_app(state, action.text or "")
        elif t is ActionType.SEARCH:
            self.search(state, action.text or "")
        elif t is ActionType.KEY:
            self.key(state, action.text or "")
        elif t is ActionType.ANSWER:
            self.answer(state, action.text or "")
        # WAIT, DO_NOTHING and DONE change nothing.

    def _dispatch(self, state: S, action: Action, element: UIElement) -> None:
        t = action.type
        if not element.enabled:
            raise InvalidAction(f"element {element.index} ({element.label!r}) is disabled")
        if t is ActionType.INPUT and not element.editable:
            raise InvalidAction(
                f"element {element.index} ({element.role} {element.label!r}) is not editable"
            )
        handler = self._handlers.get((t, element.handler)) if element.handler else None
        if handler is None and t is ActionType.DOUBLE_CLICK:
            handler = (
                self._handlers.get((ActionType.CLICK, element.handler)) if element.handler else None
            )
        if handler is None:
            if t is ActionType.LONG_CLICK and (element.clickable or element.long_clickable):
                return  # a long press on an ordinary button does nothing, as on a phone
            if t in (ActionType.CLICK, ActionType.DOUBLE_CLICK) and not element.clickable:
                raise InvalidAction(
                    f"element {element.index} ({element.role} {element.label!r}) is not clickable"
                )
            if t is ActionType.LONG_CLICK:
                raise InvalidAction(
                    f"element {element.index} ({element.role} {element.label!r}) is not clickable"
                )
            raise InvalidAction(f"element {element.index} does not accept {t.value}")
        handler(state, element, action)


class SimGuiEnv(GuiEnv, Generic[S]):
    """A :class:`GuiEnv` backed by a :class:`SimApp` whose state is plain data.

    Subclasses set ``self.app`` before calling ``super().__init__``.
    """

    app: SimApp[Any]

    def __init__(self, suite: TaskSuite, **kwargs: Any):
        self.state: Any = None
        super().__init__(suite, **kwargs)
        width, height = self.screen_size
        if (self.app.width, self.app.height) != (width, height):
            raise ValueError("app and env screen sizes differ")

    def _start(self, task: Task, rng: np.random.Generator) -> None:
        state = self.app.initial_state(task, rng)
        self.state = task.setup(state, rng)

    def _screen(self) -> UITree:
        return self.app.view(self.state)

    def _execute(self, action: Action, screen: UITree) -> str | None:
        self.app.update(self.state, action, screen)
        return None

    def _predicate_state(self) -> Any:
        return self.state

    def _possible(self, action: Action, screen: UITree) -> bool:
        # Tried on a copy of the state: the app's own rules decide (a click under a dialog, a
        # search with an empty box, a Save on an incomplete form), so candidate_actions()
        # offers only actions step() accepts. Scrolling and going back need no copy.
        if self._validate(action, screen) is not None:
            return False
        if action.type in (ActionType.SCROLL, ActionType.GOBACK):
            return True
        state = self.state
        self.state = copy.deepcopy(state)
        try:
            return self._execute(action, screen) is None
        except InvalidAction:
            return False
        finally:
            self.state = state

    def _fork_backend(self, clone: GuiEnv) -> None:
        assert isinstance(clone, SimGuiEnv)
        clone.state = copy.deepcopy(self.state)


def with_flags(element: UIElement, **changes: Any) -> UIElement:
    """A copy of ``element`` with some fields changed."""
    return replace(element, **changes)
