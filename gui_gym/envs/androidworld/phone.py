"""The simulated Android phone: system state, the launcher, status bar, notification shade
with quick settings, navigation, keyboard focus, dialogs, and the app plug-in API.

Layout is in density-independent pixels on a 360x800 screen (a 1080x2400 phone at 3x);
the env scales bounds to the requested ``screen_scale``.

An app is a :class:`PhoneApp` subclass. It owns a data object (plain dataclasses, kept in
``PhoneState.apps[key]``), a navigation stack of :class:`Screen` s (``PhoneState.stacks[key]``),
draft form fields (``PhoneState.forms[key]``), and builds an :class:`AppView` per screen.
Its elements name behaviour by handler keys ``"<app key>.<name>"``; the phone resolves them to
the app's ``on_<verb>_<name>`` methods, which receive the whole :class:`PhoneState`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block, ScrollPage, SimApp, handler_table
from gui_gym.core.task import Task
from gui_gym.core.ui import UIElement, UITree

__all__ = [
    "AppView",
    "Dialog",
    "Phone",
    "PhoneApp",
    "PhoneState",
    "Screen",
    "SystemState",
    "bring_to_front",
    "icon",
    "visible_args",
]

WIDTH, HEIGHT = 360, 800
STATUS_BAR = 28
APP_BAR = 52
KEYBOARD = 280
BOTTOM_BUTTON = 56
DEVICE_TIME = "2023-10-15 15:34"  # AndroidWorld's device clock (a Sunday)


# ------------------------------------------------------------------------------------- state


@dataclass
class Screen:
    """One entry of an app's navigation stack."""

    name: str
    arg: str = ""
    scroll: int = 0


@dataclass
class SystemState:
    """Device settings the Settings app and quick settings change.

    ``brightness`` follows Android's ``screen_brightness`` (1..255); ``wifi``/``bluetooth``
    mirror ``wifi_on``/``bluetooth_on``.
    """

    wifi: bool = True
    bluetooth: bool = False
    airplane: bool = False
    do_not_disturb: bool = False
    brightness: int = 128
    clipboard: str = ""
    battery: int = 100
    now: str = DEVICE_TIME

    @property
    def wifi_on(self) -> int:
        """Android's ``settings get global wifi_on``, which AndroidWorld's checks read: 0 off,
        1 on, 3 on but suspended by airplane mode (Android's WIFI_DISABLED_AIRPLANE_ON).

        AndroidWorld counts only 0 as off and 1 or 2 as on, so airplane mode over a switched-on
        Wi-Fi is neither on nor off, as on a real device."""
        if not self.wifi:
            return 0
        return 3 if self.airplane else 1


@dataclass
class Dialog:
    """A modal dialog: title, message and buttons ``(label, handler key, handler arg)``."""

    title: str
    message: str = ""
    buttons: list[tuple[str, str, str]] = field(default_factory=list)


@dataclass
class PhoneState:
    """Everything the phone remembers; task checks read it by attribute path.

    Attributes:
        system: Device settings.
        apps: Each app's data, by app key.
        stacks: Each app's navigation stack (apps not yet opened have none).
        forms: Draft text fields per app (what is typed but not saved).
        foreground: The app on screen, or ``"launcher"``.
        focus: ``"<app>.<field>"`` of the focused text field ("" when the keyboard is hidden).
        shade: Whether the notification shade (with quick settings) is pulled down.
        dialog: The open dialog, if any.
        toast: A transient message shown on the next screen.
        notifications: ``[{"app": ..., "title": ..., "text": ...}]`` in the shade.
        opened: App keys in the order they were brought to the foreground.
        seen: The screens shown this episode, in order (``"<app>/<screen>:<arg>"``, a new
            entry when the screen changes): ordered milestones that need an earlier screen
            to have been read check it (AndroidWorld+).
    """

    system: SystemState = field(default_factory=SystemState)
    apps: dict[str, Any] = field(default_factory=dict)
    stacks: dict[str, list[Screen]] = field(default_factory=dict)
    forms: dict[str, dict[str, str]] = field(default_factory=dict)
    foreground: str = "launcher"
    focus: str = ""
    shade: bool = False
    dialog: Dialog | None = None
    toast: str = ""
    notifications: list[dict[str, str]] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)

    @property
    def seen_key(self) -> str:
        """What :attr:`seen` records for the screen in front now."""
        screen = self.screen
        if screen is None or self.shade:
            return "launcher" if not self.shade else "shade"
        return f"{self.foreground}/{screen.name}:{screen.arg}"

    @property
    def screen(self) -> Screen | None:
        """The foreground app's current screen (None on the launcher)."""
        stack = self.stacks.get(self.foreground)
        return stack[-1] if stack else None

    @property
    def screen_name(self) -> str:
        """``"<app>/<screen>"`` of what is on screen, or ``"launcher"``."""
        screen = self.screen
        return "launcher" if screen is None else f"{self.foreground}/{screen.name}"


# --------------------------------------------------------------------------------- app API


@dataclass
class AppView:
    """What an app shows on one screen.

    Attributes:
        title: App bar title.
        content: Scrolling column of blocks.
        actions: App bar action buttons (icons): blocks with a description.
        bottom: Fixed buttons along the bottom (Save, Cancel, ...).
        fab: A floating action button, if any.
        back: Whether the app bar shows a back arrow (defaults to "stack deeper than 1").
    """

    title: str
    content: list[Block] = field(default_factory=list)
    actions: list[Block] = field(default_factory=list)
    bottom: list[Block] = field(default_factory=list)
    fab: Block | None = None
    back: bool | None = None


def icon(description: str, handler: str, resource_id: str, arg: str = "", **kwargs: Any) -> Block:
    """A clickable icon (app bar action, floating button, toolbar icon): no text, named by
    its ``description`` (what a screen reader says), calling the full ``handler`` key."""
    return Block(
        "button",
        "",
        description=description,
        resource_id=resource_id,
        clickable=True,
        handler=handler,
        handler_arg=arg,
        **kwargs,
    )


class PhoneApp:
    """Base class of a simulated app. Subclasses set the class attributes and implement
    :meth:`initial_data` and :meth:`view`, plus ``on_<verb>_<name>`` handlers.

    Handlers have the signature ``(self, phone, element, action)`` and change ``phone`` in
    place; raise :class:`~gui_gym.core.env.InvalidAction` (before changing anything) for an
    impossible action.
    """

    key: ClassVar[str] = ""
    title: ClassVar[str] = ""
    package: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    root: ClassVar[str] = "main"
    launcher_order: ClassVar[int] = 100

    def initial_data(self) -> Any:
        """A fresh data object for this app."""
        return None

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        raise NotImplementedError

    # -- helpers for handlers --------------------------------------------------------------

    def data(self, phone: PhoneState) -> Any:
        return phone.apps[self.key]

    def form(self, phone: PhoneState) -> dict[str, str]:
        return phone.forms.setdefault(self.key, {})

    def push(
        self, phone: PhoneState, name: str, arg: str = "", form: dict[str, str] | None = None
    ) -> None:
        """Open screen ``name``; ``form`` (if given) becomes the draft fields."""
        phone.stacks.setdefault(self.key, [Screen(self.root)]).append(Screen(name, arg))
        phone.focus = ""
        if form is not None:
            phone.forms[self.key] = dict(form)

    def pop(self, phone: PhoneState) -> None:
        """Close the current screen (back to the previous one, or to the launcher)."""
        stack = phone.stacks.get(self.key, [])
        phone.focus = ""
        if len(stack) > 1:
            stack.pop()
        else:
            phone.foreground = "launcher"

    def field(self, name: str, label: str, phone: PhoneState, multiline: bool = False) -> Block:
        """An editable text field bound to the draft ``forms[key][name]``; its hint is
        ``label`` (shown as the element's description)."""
        value = self.form(phone).get(name, "")
        return Block(
            "input",
            value,
            description=label,
            resource_id=f"{self.key}_{name}",
            editable=True,
            clickable=True,
            focused=phone.focus == f"{self.key}.{name}",
            handler=f"{self.key}.field",
            handler_arg=name,
            height=64 if multiline else 0,
        )

    def button(self, label: str, handler: str, arg: str = "", **kwargs: Any) -> Block:
        return Block(
            "button",
            label,
            clickable=True,
            handler=f"{self.key}.{handler}",
            handler_arg=arg,
            height=40,
            **kwargs,
        )

    def row(self, text: str, handler: str, arg: str = "", **kwargs: Any) -> Block:
        """A list row: clickable (and long-clickable) text."""
        return Block(
            "listitem",
            text,
            clickable=True,
            long_clickable=True,
            handler=f"{self.key}.{handler}",
            handler_arg=arg,
            gap=2,
            **kwargs,
        )

    def toggle(self, label: str, checked: bool, handler: str, arg: str = "") -> Block:
        return Block(
            "switch",
            label,
            clickable=True,
            checkable=True,
            checked=checked,
            handler=f"{self.key}.{handler}",
            handler_arg=arg,
            height=40,
        )

    def ask_delete(
        self, phone: PhoneState, title: str, message: str, arg: str, handler: str = "confirm_delete"
    ) -> None:
        """Open a Cancel / Delete dialog; Delete calls ``<key>.<handler>`` with ``arg``."""
        phone.dialog = Dialog(
            title,
            message,
            [("Cancel", f"{self.key}.cancel", ""), ("Delete", f"{self.key}.{handler}", arg)],
        )

    # -- default handlers shared by every app ------------------------------------------------

    def on_click_field(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.focus = f"{self.key}.{element.handler_arg}"

    def on_input_field(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        # Typing replaces the field's text (the ADB "clear then type" path); the field keeps focus.
        self.form(phone)[element.handler_arg] = action.text or ""
        phone.focus = f"{self.key}.{element.handler_arg}"

    def on_click_back(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.pop(phone)

    def on_click_cancel(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        """Cancel in a dialog closes it."""
        phone.dialog = None

    def on_enter(self, phone: PhoneState, field_name: str) -> None:
        """ENTER on a focused field: hides the keyboard by default; search boxes submit."""
        phone.focus = ""


# ------------------------------------------------------------------------------------ phone


def _element(
    index: int,
    role: str,
    text: str = "",
    bounds: tuple[int, int, int, int] = (0, 0, 0, 0),
    **kw: Any,
) -> UIElement:
    return UIElement(index, role, text, bounds=bounds, **kw)


class Phone(SimApp[PhoneState]):
    """The phone shell over a set of :class:`PhoneApp` s.

    Args:
        apps: The installed apps (launcher order).
        scale: Factor from the 360x800 layout to screen pixels (``screen_scale * 3``).
    """

    width = WIDTH
    height = HEIGHT

    def __init__(self, apps: Iterable[PhoneApp], scale: float = 1.0):
        super().__init__()
        self._handlers = handler_table(self, prefix="phone.")
        self.apps: dict[str, PhoneApp] = {}
        for app in apps:
            if not app.key or app.key in self.apps or "." in app.key:
                raise ValueError(f"bad or duplicate app key {app.key!r}")
            self.apps[app.key] = app
            self._handlers.update(handler_table(app, prefix=f"{app.key}."))
        self.scale = scale
        self.width = round(WIDTH * scale)
        self.height = round(HEIGHT * scale)
        self._names: dict[str, str] = {}
        for app in self.apps.values():
            for name in (app.key, app.title, app.package, *app.aliases):
                self._names[name.lower()] = app.key

    # -- state --------------------------------------------------------------------------------

    def initial_state(self, task: Task, rng: np.random.Generator) -> PhoneState:
        return PhoneState(apps={key: app.initial_data() for key, app in self.apps.items()})

    def resolve_app(self, name: str) -> str:
        """The app key for a launcher label, package or alias (case-insensitive).

        Raises:
            InvalidAction: listing the installed apps when nothing matches.
        """
        key = self._names.get(name.strip().lower())
        if key is None:
            titles = ", ".join(app.title for app in self.apps.values())
            raise InvalidAction(f"no app named {name!r} is installed; installed: {titles}")
        return key

    def launch(self, state: PhoneState, key: str) -> None:
        """Bring app ``key`` to the foreground, resuming its stack (or starting at its root)."""
        bring_to_front(state, key, self.apps[key].root)

    # -- views ----------------------------------------------------------------------------------

    def view_key(self, state: PhoneState) -> Hashable:  # pragma: no cover - views are not cached
        raise NotImplementedError

    def view(self, state: PhoneState) -> UITree:
        # App data is open-ended, so there is no cheap view key; the env caches the screen
        # between steps instead, and building one costs tens of microseconds.
        return self.build_view(state)

    def layout(self, state: PhoneState) -> tuple[AppView, ScrollPage] | None:
        """The foreground app's view and its scrolling layout (None on the launcher/shade)."""
        screen = state.screen
        if screen is None or state.shade:
            return None
        app = self.apps[state.foreground]
        view = app.view(state, screen)
        bottom = (
            HEIGHT
            - (KEYBOARD if state.focus else 0)
            - (BOTTOM_BUTTON if view.bottom and not state.focus else 0)
        )
        return view, ScrollPage(view.content, WIDTH, STATUS_BAR + APP_BAR, bottom)

    def build_view(self, state: PhoneState) -> UITree:
        elements: list[UIElement] = [self._status_bar(state)]
        name = state.screen_name
        can_up = can_down = False
        if state.shade:
            elements += self._shade(state, len(elements))
            name = "shade"
        elif state.dialog is not None:
            elements += self._dialog(state.dialog, len(elements))
            name = f"{name}|dialog"
        elif state.screen is None:
            elements += self._launcher(len(elements))
        else:
            laid = self.layout(state)
            assert laid is not None
            view, page = laid
            screen = state.screen
            screen.scroll = page.clamp(screen.scroll)
            elements += self._app_bar(state, view, len(elements))
            elements += page.window(screen.scroll, first_index=len(elements))
            can_up, can_down = screen.scroll > 0, screen.scroll < page.max_scroll
            if view.fab is not None and not state.focus:
                elements.append(
                    view.fab.element((288, page.bottom - 72, 344, page.bottom - 16), len(elements))
                )
            if view.bottom and not state.focus:
                width = (WIDTH - 16) // len(view.bottom)
                for i, block in enumerate(view.bottom):
                    x0 = 8 + i * width
                    elements.append(
                        block.element((x0, HEIGHT - 52, x0 + width - 8, HEIGHT - 8), len(elements))
                    )
            if state.focus:
                elements.append(
                    _element(
                        len(elements),
                        "container",
                        bounds=(0, HEIGHT - KEYBOARD, WIDTH, HEIGHT),
                        description="Keyboard",
                        resource_id="keyboard",
                    )
                )
        if state.toast:
            elements.append(_element(len(elements), "toast", state.toast, (40, 700, 320, 736)))
        if self.scale != 1.0:
            s = self.scale
            elements = [_rescale(e, s) for e in elements]
        return UITree(
            tuple(elements),
            width=self.width,
            height=self.height,
            name=name,
            can_scroll_up=can_up,
            can_scroll_down=can_down,
        )

    def _status_bar(self, state: PhoneState) -> UIElement:
        sysstate = state.system
        icons = []
        if sysstate.airplane:
            icons.append("Airplane mode on")
        icons.append("Wi-Fi on" if sysstate.wifi and not sysstate.airplane else "Wi-Fi off")
        if sysstate.bluetooth:
            icons.append("Bluetooth on")
        icons.append(f"Battery {sysstate.battery} percent")
        return _element(
            0,
            "text",
            sysstate.now[-5:],
            (0, 0, WIDTH, STATUS_BAR),
            description=", ".join(icons),
            resource_id="status_bar",
            scrollable=True,
            handler="phone.shade",
        )

    def _launcher(self, start: int) -> list[UIElement]:
        out = []
        cols, cell_w, cell_h = 4, WIDTH // 4, 96
        for i, app in enumerate(self.apps.values()):
            r, c = divmod(i, cols)
            x0, y0 = c * cell_w, STATUS_BAR + 24 + r * cell_h
            out.append(
                _element(
                    start + len(out),
                    "button",
                    app.title,
                    (x0 + 4, y0, x0 + cell_w - 4, y0 + cell_h - 8),
                    description=app.title,
                    resource_id="launcher_icon",
                    clickable=True,
                    # as on Android; readers of a screen (ProRe's scripted judge) know icons
                    # by it, and the SB3 adapter's max_candidates=64 holds the 43 actions
                    long_clickable=True,
                    handler="phone.launch",
                    handler_arg=app.key,
                )
            )
        return out

    def _app_bar(self, state: PhoneState, view: AppView, start: int) -> list[UIElement]:
        out = []
        y0, y1 = STATUS_BAR + 4, STATUS_BAR + APP_BAR - 4
        back = view.back if view.back is not None else len(state.stacks[state.foreground]) > 1
        x = 8
        if back:
            out.append(
                _element(
                    start,
                    "button",
                    "",
                    (4, y0, 48, y1),
                    description="Navigate up",
                    resource_id="navigate_up",
                    clickable=True,
                    handler="phone.up",
                )
            )
            x = 52
        right = WIDTH - 4 - 44 * len(view.actions)
        out.append(
            _element(
                start + len(out),
                "heading",
                view.title,
                (x, y0, right, y1),
                resource_id="toolbar_title",
            )
        )
        for i, block in enumerate(view.actions):
            x0 = right + i * 44
            out.append(block.element((x0, y0, x0 + 44, y1), start + len(out)))
        return out

    def _shade(self, state: PhoneState, start: int) -> list[UIElement]:
        sysstate = state.system
        out: list[UIElement] = []

        def tile(label: str, on: bool, handler: str, y: int, x: int) -> None:
            out.append(
                _element(
                    start + len(out),
                    "switch",
                    label,
                    (x, y, x + 164, y + 56),
                    description=label,
                    resource_id="qs_tile",
                    clickable=True,
                    checkable=True,
                    checked=on,
                    handler=handler,
                )
            )

        tile("Internet", sysstate.wifi and not sysstate.airplane, "phone.qs_wifi", 40, 8)
        tile("Bluetooth", sysstate.bluetooth, "phone.qs_bluetooth", 40, 188)
        tile("Airplane mode", sysstate.airplane, "phone.qs_airplane", 104, 8)
        tile("Do Not Disturb", sysstate.do_not_disturb, "phone.qs_dnd", 104, 188)
        percent = round(100 * (sysstate.brightness - 1) / 254)
        out.append(
            _element(
                start + len(out),
                "slider",
                f"Brightness {percent}%",
                (8, 176, 352, 216),
                description="Display brightness",
                resource_id="brightness_slider",
                scrollable=True,
                clickable=True,
                handler="phone.brightness",
            )
        )
        y = 232
        out.append(
            _element(
                start + len(out),
                "heading",
                "Notifications" if state.notifications else "No notifications",
                (8, y, 352, y + 28),
            )
        )
        y += 32
        for i, note in enumerate(state.notifications[-6:]):
            out.append(
                _element(
                    start + len(out),
                    "listitem",
                    f"{note['title']}: {note['text']}",
                    (8, y, 352, y + 52),
                    description=note.get("app", ""),
                    clickable=True,
                    handler="phone.notification",
                    handler_arg=str(len(state.notifications[-6:]) - 1 - i),
                )
            )
            y += 56
        return out

    def _dialog(self, dialog: Dialog, start: int) -> list[UIElement]:
        # Up to three buttons sit in a row (OK/Cancel); longer choices stack as a list, as
        # Android's single-choice dialogs do.
        vertical = len(dialog.buttons) > 3
        top = 200 if vertical else 280
        bottom = min(HEIGHT - 40, top + 120 + 48 * len(dialog.buttons)) if vertical else 520
        out = [
            _element(start, "dialog", dialog.title, (24, top, 336, bottom), resource_id="dialog")
        ]
        y = top + 40
        if dialog.message:
            out.append(
                _element(
                    start + 1,
                    "text",
                    dialog.message,
                    (40, y, 320, y + 80),
                    resource_id="dialog_message",
                )
            )
            y += 88
        width = 280 // max(1, len(dialog.buttons))
        for i, (label, handler, arg) in enumerate(dialog.buttons):
            if vertical:
                bounds = (40, y + 48 * i, 320, y + 48 * i + 44)
            else:
                x0 = 40 + i * width
                bounds = (x0, 460, x0 + width - 8, 504)
            out.append(
                _element(
                    start + len(out),
                    "button",
                    label,
                    bounds,
                    clickable=True,
                    handler=handler,
                    handler_arg=arg,
                    resource_id="dialog_button",
                )
            )
        return out

    # -- behaviour ------------------------------------------------------------------------------

    def update(self, state: PhoneState, action: Action, screen: UITree) -> None:
        toast = state.toast
        state.toast = ""
        try:
            super().update(state, action, screen)
        except InvalidAction:
            state.toast = toast
            raise
        key = state.seen_key
        if not state.seen or state.seen[-1] != key:
            state.seen.append(key)

    def on_scroll_shade(self, state: PhoneState, element: UIElement, action: Action) -> None:
        # Swiping down from the status bar (content moving down: SCROLL(up, 0)) pulls the
        # shade down; swiping up pushes it back.
        state.shade = action.direction == "up"
        state.focus = ""

    def on_click_launch(self, state: PhoneState, element: UIElement, action: Action) -> None:
        self.launch(state, element.handler_arg)

    def on_click_up(self, state: PhoneState, element: UIElement, action: Action) -> None:
        self.apps[state.foreground].pop(state)

    def on_click_qs_wifi(self, state: PhoneState, element: UIElement, action: Action) -> None:
        state.system.wifi = not (state.system.wifi and not state.system.airplane)
        if state.system.wifi:
            state.system.airplane = False

    def on_click_qs_bluetooth(self, state: PhoneState, element: UIElement, action: Action) -> None:
        state.system.bluetooth = not state.system.bluetooth

    def on_click_qs_airplane(self, state: PhoneState, element: UIElement, action: Action) -> None:
        state.system.airplane = not state.system.airplane

    def on_click_qs_dnd(self, state: PhoneState, element: UIElement, action: Action) -> None:
        state.system.do_not_disturb = not state.system.do_not_disturb

    def on_click_brightness(self, state: PhoneState, element: UIElement, action: Action) -> None:
        # A tap on the slider sets the level at that point (coordinates), else does nothing.
        if action.has_point:
            x0, _, x1, _ = element.bounds
            state.system.brightness = slider_level(element, float(action.x))  # type: ignore[arg-type]

    def on_scroll_brightness(self, state: PhoneState, element: UIElement, action: Action) -> None:
        step = {"right": 64, "up": 64, "left": -64, "down": -64}[action.direction or "right"]
        state.system.brightness = min(255, max(1, state.system.brightness + step))

    def on_click_notification(self, state: PhoneState, element: UIElement, action: Action) -> None:
        index = len(state.notifications) - 1 - int(element.handler_arg)
        note = state.notifications[index]
        state.shade = False
        app = note.get("app", "")
        if app in self.apps:
            self.launch(state, app)

    def back(self, state: PhoneState) -> None:
        if state.shade:
            state.shade = False
        elif state.dialog is not None:
            state.dialog = None
        elif state.focus:
            state.focus = ""  # the first BACK hides the keyboard, as on Android
        elif state.foreground != "launcher":
            self.apps[state.foreground].pop(state)

    def home(self, state: PhoneState) -> None:
        state.shade = False
        state.dialog = None
        state.focus = ""
        state.foreground = "launcher"

    def open_app(self, state: PhoneState, name: str) -> None:
        self.launch(state, self.resolve_app(name))

    def enter(self, state: PhoneState, screen: UITree) -> None:
        if not state.focus:
            raise InvalidAction("ENTER does nothing here: no text field is focused")
        app_key, field_name = state.focus.split(".", 1)
        self.apps[app_key].on_enter(state, field_name)

    def scroll(self, state: PhoneState, direction: str, element: UIElement | None) -> None:
        if state.shade or state.dialog is not None:
            return
        if state.screen is None:
            if direction == "up":  # swiping down from the top opens the shade
                state.shade = True
            return
        laid = self.layout(state)
        assert laid is not None
        _, page = laid
        if direction in ("left", "right"):
            return
        delta = page.scroll_step if direction == "down" else -page.scroll_step
        state.screen.scroll = page.clamp(state.screen.scroll + delta)

    def _dispatch(self, state: PhoneState, action: Action, element: UIElement) -> None:
        if (
            state.dialog is not None
            and element.resource_id != "dialog_button"
            and element.handler != "phone.shade"
        ):
            raise InvalidAction("a dialog is open; choose one of its buttons or GOBACK")
        super()._dispatch(state, action, element)


def bring_to_front(state: PhoneState, key: str, root: str = "main") -> None:
    """Bring app ``key`` to the foreground, resuming its stack (or starting at ``root``), as
    the launcher does; apps call it to hand a file to another app ("Open with")."""
    state.shade = False
    state.dialog = None
    state.focus = ""
    state.foreground = key
    if not state.stacks.get(key):
        state.stacks[key] = [Screen(root)]
    state.opened.append(key)


def visible_args(phone: PhoneState, app: PhoneApp, handler: str, screen: str = "main") -> set[str]:
    """Handler args of the ``handler`` rows on screen now (at least partly, as the phone cuts
    its window), from the state alone: empty unless ``app`` shows ``screen`` unobstructed.
    Milestones use it for "the answer is in view" without a screen."""
    if phone.foreground != app.key or phone.shade or phone.dialog is not None:
        return set()
    current = phone.screen
    if current is None or current.name != screen:
        return set()
    view = app.view(phone, current)
    bottom = (
        HEIGHT
        - (KEYBOARD if phone.focus else 0)
        - (BOTTOM_BUTTON if view.bottom and not phone.focus else 0)
    )
    page = ScrollPage(view.content, WIDTH, STATUS_BAR + APP_BAR, bottom)
    return {e.handler_arg for e in page.window(current.scroll) if e.handler == handler}


def slider_level(element: UIElement, x: float) -> int:
    """Brightness (1..255) for a tap at ``x`` on a slider: its ends are min and max."""
    x0, _, x1, _ = element.bounds
    fraction = min(1.0, max(0.0, (x - x0) / max(1, x1 - 1 - x0)))
    return 1 + round(fraction * 254)


def _rescale(e: UIElement, s: float) -> UIElement:
    x0, y0, x1, y1 = e.bounds
    return replace(e, bounds=(round(x0 * s), round(y0 * s), round(x1 * s), round(y1 * s)))
