"""Clock tasks (AndroidWorld ``task_evals/single/clock.py``).

AndroidWorld checks these on the screen (the DeskClock activity in front with certain
elements). Here ``score()`` reads the clock app's state instead, with the same meaning: the
Clock app is in front on its main screen (no shade, dialog or pushed screen over it) on the
right tab, and the stopwatch or timer is in the right state.
"""

from __future__ import annotations

import random
from typing import Any

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.clock import ClockData
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    milestone,
    open_app,
    register,
    tap,
)

_GOBACK = Action(ActionType.GOBACK)


def _clock(p: PhoneState) -> ClockData:
    return p.apps["clock"]


def _in_front(p: PhoneState, tab: str) -> bool:
    """The Clock app's main screen is on display, showing ``tab``."""
    return (
        p.screen_name == "clock/main" and not p.shade and p.dialog is None and _clock(p).tab == tab
    )


def _to_tab(phone: PhoneState, screen: UITree, tab: str) -> Action | None:
    """The next action toward the Clock app's ``tab``; None once it is on display."""
    action = open_app(phone, "clock", "Clock")
    if action is not None:
        return action
    if phone.dialog is not None or phone.focus or phone.screen_name != "clock/main":
        return _GOBACK
    if _clock(phone).tab != tab:
        return tap(screen, handler="clock.tab", handler_arg=tab) or _GOBACK
    return None


@register
class ClockStopWatchRunning(AndroidWorldTask):
    """Start the stopwatch (it starts paused at 00:00.00).

    Adapted from the screen check (DeskClock in front with "Pause" and "Lap" buttons): the
    Clock app's Stopwatch tab is on display and the stopwatch runs."""

    name = "ClockStopWatchRunning"
    app = "clock"
    complexity = 1.0
    template = "Run the stopwatch."

    def score(self, phone: PhoneState) -> float:
        return float(_in_front(phone, "stopwatch") and _clock(phone).stopwatch_running)

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("stopwatch_shown", lambda p: _in_front(p, "stopwatch")),
            self.done_milestone("stopwatch_running"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        action = _to_tab(phone, screen, "stopwatch")
        if action is not None:
            return action
        return tap(screen, handler="clock.start") or _GOBACK


@register
class ClockStopWatchPausedVerify(AndroidWorldTask):
    """Pause the stopwatch, which already is paused at 00:00.00 (a Verify task).

    Adapted from the screen check (DeskClock in front showing "Start" and the Stopwatch tab):
    the score reads the stopwatch state (not running), so the starting state scores 1 as every
    Verify task does here; looking at the Stopwatch tab is the expert's milestone."""

    name = "ClockStopWatchPausedVerify"
    app = "clock"
    complexity = 1.0
    solved_at_start = True
    template = "Pause the stopwatch."

    def score(self, phone: PhoneState) -> float:
        return float(not _clock(phone).stopwatch_running)

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("stopwatch_shown", lambda p: _in_front(p, "stopwatch")),
        ]

    def oracle(self, ctx: PredicateContext) -> Action:
        phone: PhoneState = ctx.state
        if phone.shade:
            return _GOBACK
        action = _to_tab(phone, ctx.screen, "stopwatch")
        if action is not None:
            return action
        return self.expert(phone, ctx.screen)

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if _clock(phone).stopwatch_running:
            return tap(screen, handler="clock.pause") or _GOBACK
        return Action(ActionType.DONE)


@register
class ClockTimerEntry(AndroidWorldTask):
    """Type a timer's hours, minutes and seconds on the pad without starting it.

    Adapted from the screen check (DeskClock in front with the text "HHh MMm SSs"): the Clock
    app's Timer tab is on display with no timer started and the pad's digits read
    ``HHh MMm SSs``."""

    name = "ClockTimerEntry"
    app = "clock"
    complexity = 1.0
    template = (
        "Create a timer with {hours} hours, {minutes} minutes, and {seconds} seconds. "
        "Do not start the timer."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        while True:  # a timer of 0 seconds cannot be typed
            params = {
                "hours": rng.randint(0, 23),
                "minutes": rng.randint(0, 59),
                "seconds": rng.randint(0, 59),
            }
            if any(params.values()):
                return params

    def _digits(self) -> str:
        p = self.params
        return f"{p['hours']:02d}{p['minutes']:02d}{p['seconds']:02d}".lstrip("0")

    def score(self, phone: PhoneState) -> float:
        data = _clock(phone)
        return float(
            _in_front(phone, "timer")
            and not data.timer_seconds
            and data.timer_entry.rjust(6, "0") == self._digits().rjust(6, "0")
        )

    def milestone_checks(self):
        want = self._digits()
        return [
            self.opened_milestone(),
            milestone("timer_shown", lambda p: _in_front(p, "timer")),
            milestone(
                "digits_started",
                lambda p: bool(_clock(p).timer_entry) and want.startswith(_clock(p).timer_entry),
            ),
            self.done_milestone("timer_set"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        action = _to_tab(phone, screen, "timer")
        if action is not None:
            return action
        data = _clock(phone)
        if data.timer_seconds:
            return tap(screen, handler="clock.delete_timer") or _GOBACK
        want, entry = self._digits(), data.timer_entry
        if not want.startswith(entry):
            return tap(screen, handler="clock.backspace") or _GOBACK
        return tap(screen, handler="clock.digit", handler_arg=want[len(entry)]) or _GOBACK
