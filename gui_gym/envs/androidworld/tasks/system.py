"""System tasks (AndroidWorld ``task_evals/single/system.py`` and ``composite/system.py``)."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.settings import settings_path
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    StateCheck,
    fuzzy_match,
    milestone,
    open_app,
    reach,
    register,
)

__all__ = ["OPEN_APP_CHOICES"]

OPEN_APP_CHOICES = ("camera", "clock", "contacts", "settings")
"""AndroidWorld's OpenAppTaskEval apps (its 'dialer' is not simulated)."""


def _installed_choices() -> tuple[str, ...]:
    from gui_gym.envs.androidworld.apps import default_apps

    installed = {app.key for app in default_apps()}
    return tuple(k for k in OPEN_APP_CHOICES if k in installed)


def _wifi_on(phone: PhoneState) -> bool:
    """AndroidWorld's Wi-Fi-on check: ``wifi_on`` reads 1 or 2."""
    return phone.system.wifi_on in (1, 2)


def _settings_toggle(phone: PhoneState, screen: UITree, section: str, handler: str) -> Action:
    """Expert path: Settings > ... > ``section`` (following :func:`settings_path`) > toggle."""
    action = open_app(phone, "settings", "Settings")
    if action is not None:
        return action
    here = tuple(s.name for s in phone.stacks["settings"][1:])
    path = settings_path(section)
    if here == path:
        return reach(screen, handler=f"settings.{handler}")
    if here == path[: len(here)]:
        return reach(screen, handler="settings.section", handler_arg=path[len(here)])
    return Action(ActionType.GOBACK)


class _SettingTask(AndroidWorldTask):
    """A setting to reach; ``Verify`` variants start already done, so the expert looks at the
    setting's screen and then reports completion (AndroidWorld's optimal 2-3 steps)."""

    app = "settings"
    section: ClassVar[str] = "network"
    verify: ClassVar[bool] = False

    def milestone_checks(self):
        if not self.verify:
            return super().milestone_checks()
        section = self.section
        return [
            self.opened_milestone(),
            milestone("setting_viewed", lambda p: p.screen_name == f"settings/{section}"),
        ]

    def oracle(self, ctx: PredicateContext) -> Action:
        phone: PhoneState = ctx.state
        if (
            self.verify
            and phone.screen_name != f"settings/{self.section}"
            and self.score(phone) >= 1.0
        ):
            return self.expert(phone, ctx.screen)
        return super().oracle(ctx)


class _Toggle(_SettingTask):
    setting: ClassVar[str] = "wifi"
    want_on: ClassVar[bool] = True
    start_on: ClassVar[bool] = False

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        setattr(phone.system, self.setting, self.start_on)

    def score(self, phone: PhoneState) -> float:
        if self.setting == "wifi":
            # AndroidWorld: on is wifi_on in {1, 2}, off is exactly 0 (airplane mode reads 3)
            return float(_wifi_on(phone) if self.want_on else phone.system.wifi_on == 0)
        return float(getattr(phone.system, self.setting) == self.want_on)

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        return _settings_toggle(phone, screen, self.section, self.setting)


def _toggle_task(
    name: str, setting: str, section: str, want_on: bool, verify: bool
) -> type[AndroidWorldTask]:
    noun = "WiFi" if setting == "wifi" else "Bluetooth"
    attrs = {
        "name": name,
        "setting": setting,
        "section": section,
        "want_on": want_on,
        "start_on": want_on if verify else not want_on,
        "verify": verify,
        "solved_at_start": verify,
        "template": f"Turn {noun} {'on' if want_on else 'off'}.",
        "__doc__": f"{name}: {noun} must end {'on' if want_on else 'off'}"
        + (" (it already is: the agent must verify and stop)." if verify else "."),
    }
    return _publish(register(type(name, (_Toggle,), attrs)))


def _publish(cls: type[AndroidWorldTask]) -> type[AndroidWorldTask]:
    # Generated classes live in this module's namespace so they pickle by reference.
    cls.__module__ = __name__
    cls.__qualname__ = cls.__name__
    globals()[cls.__name__] = cls
    return cls


for _setting, _section in (("wifi", "internet"), ("bluetooth", "connected")):
    _noun = "Wifi" if _setting == "wifi" else "Bluetooth"
    for _on in (True, False):
        for _verify in (False, True):
            _toggle_task(
                f"System{_noun}Turn{'On' if _on else 'Off'}{'Verify' if _verify else ''}",
                _setting,
                _section,
                _on,
                _verify,
            )


class _Brightness(_SettingTask):
    section = "display"
    want_max: ClassVar[bool] = True
    start_max: ClassVar[bool] = False

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        phone.system.brightness = 255 if self.start_max else 1

    def score(self, phone: PhoneState) -> float:
        return float(phone.system.brightness == (255 if self.want_max else 1))

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        action = open_app(phone, "settings", "Settings")
        if action is not None:
            return action
        current = phone.screen
        assert current is not None
        if current.name != "display":
            if current.name != "main":
                return Action(ActionType.GOBACK)
            return reach(screen, handler="settings.section", handler_arg="display")
        slider = screen.find_one(handler="settings.brightness")
        if self.verify and self.score(phone) >= 1.0:
            return Action(ActionType.DONE)
        if slider is None:
            return Action(ActionType.SCROLL, direction="down")
        x0, y0, x1, y1 = slider.bounds
        x = x1 - 1 if self.want_max else x0
        return Action(ActionType.CLICK, x=float(x), y=float((y0 + y1) // 2))


for _max in (True, False):
    for _verify in (False, True):
        _name = f"SystemBrightness{'Max' if _max else 'Min'}{'Verify' if _verify else ''}"
        _publish(
            register(
                type(
                    _name,
                    (_Brightness,),
                    {
                        "name": _name,
                        "want_max": _max,
                        "start_max": _max if _verify else not _max,
                        "verify": _verify,
                        "solved_at_start": _verify,
                        "template": f"Turn brightness to the {'max' if _max else 'min'} value.",
                    },
                )
            )
        )


@register
class OpenAppTaskEval(AndroidWorldTask):
    """Open an app: success when it is in the foreground."""

    name = "OpenAppTaskEval"
    app = "settings"
    template = "Open the {app_name} app. Clear any pop-ups that may appear by granting all permissions that are required."

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"app_name": rng.choice(_installed_choices())}

    def milestone_checks(self):
        key = self.params["app_name"]
        return [milestone("app_opened", lambda p: p.foreground == key and not p.shade)]

    def score(self, phone: PhoneState) -> float:
        return float(phone.foreground == self.params["app_name"] and not phone.shade)

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        return Action(ActionType.OPEN_APP, text=self.params["app_name"])


@register
class TurnOnWifiAndOpenApp(AndroidWorldTask):
    """Composite with partial credit: (wifi on + app open) / 2."""

    name = "TurnOnWifiAndOpenApp"
    app = "settings"
    complexity = 2
    template = "Turn on Wifi, then open the {app_name} app"

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"app_name": rng.choice(_installed_choices())}

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        phone.system.wifi = False

    def milestone_checks(self):
        key = self.params["app_name"]

        # The app counts once Wi-Fi is on: opening Settings to toggle it is not the goal.
        opened = StateCheck("app_opened", lambda p: _wifi_on(p) and p.foreground == key)
        return [milestone("wifi_on", _wifi_on), ("app_opened", opened)]

    def score(self, phone: PhoneState) -> float:
        wifi = _wifi_on(phone)
        return (
            float(wifi) + float(phone.foreground == self.params["app_name"] and not phone.shade)
        ) / 2

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if not _wifi_on(phone):
            return _settings_toggle(phone, screen, "internet", "wifi")
        return Action(ActionType.OPEN_APP, text=self.params["app_name"])


@register
class TurnOffWifiAndTurnOnBluetooth(AndroidWorldTask):
    """Composite with partial credit: (wifi off + bluetooth on) / 2."""

    name = "TurnOffWifiAndTurnOnBluetooth"
    app = "settings"
    complexity = 2
    template = "Turn off WiFi, then enable bluetooth"

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        phone.system.wifi = True
        phone.system.bluetooth = False

    def milestone_checks(self):
        return [
            milestone("wifi_off", lambda p: p.system.wifi_on == 0),
            milestone("bluetooth_on", lambda p: p.system.bluetooth),
        ]

    def score(self, phone: PhoneState) -> float:
        wifi_off = phone.system.wifi_on == 0  # airplane mode reads 3, not off
        return (float(wifi_off) + float(phone.system.bluetooth)) / 2

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if phone.system.wifi_on != 0:
            return _settings_toggle(phone, screen, "internet", "wifi")
        return _settings_toggle(phone, screen, "connected", "bluetooth")


_CLIPBOARD_TEXTS = (
    "Meeting at 3 PM",
    "Call Alice back",
    "Order #48213",
    "Pick up groceries",
    "Flight UA 882",
    "Wi-Fi password: sunflower42",
    "Gate B12",
    "Dentist on Friday",
    "Room 404",
    "Invoice 2023-117",
)


@register
class SystemCopyToClipboard(AndroidWorldTask):
    """Copy a given text to the clipboard (the Clipper app copies what is typed into it)."""

    name = "SystemCopyToClipboard"
    app = "clipper"
    template = "Copy the following text to the clipboard: {clipboard_content}"

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"clipboard_content": rng.choice(_CLIPBOARD_TEXTS)}

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        phone.system.clipboard = "~~~RESET~~~"

    def score(self, phone: PhoneState) -> float:
        return float(fuzzy_match(phone.system.clipboard, self.params["clipboard_content"]))

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        action = open_app(phone, "clipper", "Clipper")
        if action is not None:
            return action
        form = phone.forms.get("clipper", {})
        text = self.params["clipboard_content"]
        if form.get("text", "") != text:
            box = screen.find_one(handler="clipper.field")
            assert box is not None
            return Action(ActionType.INPUT, index=box.index, text=text)
        return reach(screen, handler="clipper.copy")
