"""Clock (``com.google.android.deskclock``): Alarm, Clock, Timer and Stopwatch tabs.

* Alarm: the alarms with on/off switches; "Add alarm" opens a time entry.
* Clock: the device time and date.
* Timer: a digit pad; digits fill the display from the right (``"00h 01m 23s"`` after 1, 2,
  3; a leading 0 is ignored) and "Delete" removes the last one. "Start" starts the timer,
  which then shows its time left with Pause/Resume and "Delete timer".
* Stopwatch: "Start" (a floating button whose content description is ``Start``, ``Pause``
  while running), "Lap" while running and "Reset" while paused.

The simulated phone's clock does not run: a running stopwatch gains a nominal 1.50 s per tap
on its buttons, and a running timer shows the time it was started with.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.apps.calendar import parse_time
from gui_gym.envs.androidworld.apps.rows import ImmutableRow
from gui_gym.envs.androidworld.phone import AppView, PhoneApp, PhoneState, Screen, icon

__all__ = ["TABS", "Alarm", "ClockApp", "ClockData", "timer_text"]

TABS = {"alarm": "Alarm", "clock": "Clock", "timer": "Timer", "stopwatch": "Stopwatch"}
_TICK_CS = 150  # centiseconds a running stopwatch gains per tap


@dataclass(frozen=True)
class Alarm(ImmutableRow):
    id: int
    time: str  # "HH:MM"
    enabled: bool = False
    days: str = ""


@dataclass
class ClockData:
    """The clock app's state.

    Attributes:
        tab: The tab on display (a key of :data:`TABS`).
        stopwatch_running: Whether the stopwatch runs.
        stopwatch_cs: Stopwatch time in centiseconds; ``laps`` its lap times.
        timer_entry: Digits typed on the timer pad (no leading zeros, at most 6).
        timer_seconds: Length of the started timer (0: no timer, the pad shows).
        timer_running: Whether the started timer counts down (False: paused).
    """

    tab: str = "alarm"
    alarms: list[Alarm] = field(
        default_factory=lambda: [Alarm(1, "08:30", False, "Mon-Fri"), Alarm(2, "09:00", False)]
    )
    next_alarm: int = 3
    stopwatch_running: bool = False
    stopwatch_cs: int = 0
    laps: list[int] = field(default_factory=list)
    timer_entry: str = ""
    timer_seconds: int = 0
    timer_running: bool = False


def timer_text(entry: str) -> str:
    """The pad's display: ``"HHh MMm SSs"`` from the typed digits."""
    d = entry.rjust(6, "0")
    return f"{d[:2]}h {d[2:4]}m {d[4:]}s"


def _timer_description(entry: str) -> str:
    d = entry.rjust(6, "0")
    return f"{int(d[:2])} hours, {int(d[2:4])} minutes, {int(d[4:])} seconds"


def _stopwatch_text(cs: int) -> str:
    minutes, rest = divmod(cs, 6000)
    seconds, hundredths = divmod(rest, 100)
    return f"{minutes:02d}:{seconds:02d}.{hundredths:02d}"


def _twelve(hhmm: str) -> str:
    hour, minute = int(hhmm[:2]), int(hhmm[3:])
    return f"{(hour % 12) or 12}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


def _fab(description: str, handler: str) -> Block:
    return icon(description, f"clock.{handler}", "fab")


def _tabs(current: str) -> list[Block]:
    return [
        Block(
            "tab",
            label,
            description=label,
            resource_id="tab",
            clickable=True,
            selected=key == current,
            handler="clock.tab",
            handler_arg=key,
        )
        for key, label in TABS.items()
    ]


_PAD = [
    Block(
        "button",
        digit,
        resource_id="timer_digit",
        clickable=True,
        handler="clock.digit",
        handler_arg=digit,
        height=36,
    )
    for digit in "1234567890"
] + [
    Block(
        "button",
        "",
        description="Delete",
        resource_id="timer_delete",
        clickable=True,
        handler="clock.backspace",
        height=36,
    )
]


class ClockApp(PhoneApp):
    key = "clock"
    title = "Clock"
    package = "com.google.android.deskclock"
    aliases = ("deskclock", "alarm", "alarms", "clock app", "google clock")
    launcher_order = 32

    def initial_data(self) -> ClockData:
        return ClockData()

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        if screen.name == "new_alarm":
            return AppView(
                "Add alarm",
                [
                    Block("text", "Alarm time (for example 07:30 or 7:30 AM)"),
                    self.field("time", "Time", phone),
                ],
                bottom=[self.button("Cancel", "back"), self.button("OK", "save_alarm")],
            )
        data: ClockData = self.data(phone)
        tab = data.tab
        bottom = _tabs(tab)
        if tab == "alarm":
            rows: list[Block] = [
                self.toggle(
                    f"{_twelve(a.time)}{'  ' + a.days if a.days else ''}",
                    a.enabled,
                    "toggle_alarm",
                    str(a.id),
                )
                for a in sorted(data.alarms, key=lambda a: (a.time, a.id))
            ]
            if not rows:
                rows = [Block("text", "No alarms")]
            return AppView("Alarm", rows, bottom=bottom, fab=_fab("Add alarm", "new_alarm"))
        if tab == "clock":
            return AppView(
                "Clock",
                [
                    Block("heading", _twelve(phone.system.now[-5:]), resource_id="digital_clock"),
                    Block("text", "Sun, Oct 15", resource_id="date"),
                ],
                bottom=bottom,
            )
        if tab == "timer":
            return self._timer_view(data, bottom)
        return self._stopwatch_view(data, bottom)

    def _timer_view(self, data: ClockData, bottom: list[Block]) -> AppView:
        if data.timer_seconds:
            h, rest = divmod(data.timer_seconds, 3600)
            m, s = divmod(rest, 60)
            content = [
                Block(
                    "text",
                    f"{h}:{m:02d}:{s:02d}",
                    description="Timer",
                    resource_id="timer_time",
                ),
                Block("text", "Running" if data.timer_running else "Paused"),
                self.button("Delete timer", "delete_timer", description="Delete timer"),
            ]
            fab = (
                _fab("Pause", "timer_pause")
                if data.timer_running
                else _fab("Start", "timer_resume")
            )
            return AppView("Timer", content, bottom=bottom, fab=fab)
        entry = data.timer_entry
        content = [
            Block(
                "text",
                timer_text(entry),
                description=_timer_description(entry),
                resource_id="timer_setup_time",
            ),
            *_PAD,
        ]
        fab = _fab("Start", "timer_start") if entry else None
        return AppView("Timer", content, bottom=bottom, fab=fab)

    def _stopwatch_view(self, data: ClockData, bottom: list[Block]) -> AppView:
        content: list[Block] = [
            Block("text", _stopwatch_text(data.stopwatch_cs), resource_id="stopwatch_time")
        ]
        if data.stopwatch_running:
            content.append(self.button("", "lap", description="Lap"))
        elif data.stopwatch_cs:
            content.append(self.button("", "reset", description="Reset"))
        content += [
            Block("text", f"Lap {i}  {_stopwatch_text(cs)}", resource_id="lap")
            for i, cs in reversed(list(enumerate(data.laps, 1)))
        ]
        fab = _fab("Pause", "pause") if data.stopwatch_running else _fab("Start", "start")
        return AppView("Stopwatch", content, bottom=bottom, fab=fab)

    # -- tabs ----------------------------------------------------------------------------------

    def on_click_tab(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.data(phone).tab = element.handler_arg

    # -- alarms --------------------------------------------------------------------------------

    def on_click_toggle_alarm(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: ClockData = self.data(phone)
        alarm_id = int(element.handler_arg)
        data.alarms = [
            Alarm(a.id, a.time, not a.enabled, a.days) if a.id == alarm_id else a
            for a in data.alarms
        ]

    def on_click_new_alarm(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "new_alarm", form={"time": ""})

    def on_click_save_alarm(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        text = self.form(phone).get("time", "")
        hhmm = parse_time(text)
        if hhmm is None:
            raise InvalidAction(f"cannot read the alarm time {text!r}")
        data: ClockData = self.data(phone)
        data.alarms.append(Alarm(data.next_alarm, hhmm, True))
        data.next_alarm += 1
        phone.forms[self.key] = {}
        self.pop(phone)
        phone.toast = f"Alarm set for {_twelve(hhmm)}"

    # -- timer ---------------------------------------------------------------------------------

    def on_click_digit(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: ClockData = self.data(phone)
        digit = element.handler_arg
        if len(data.timer_entry) >= 6 or (digit == "0" and not data.timer_entry):
            return  # the pad is full; a leading zero changes nothing
        data.timer_entry += digit

    def on_click_backspace(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: ClockData = self.data(phone)
        data.timer_entry = data.timer_entry[:-1]

    def on_click_timer_start(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: ClockData = self.data(phone)
        d = data.timer_entry.rjust(6, "0")
        seconds = int(d[:2]) * 3600 + int(d[2:4]) * 60 + int(d[4:])
        if not seconds:
            raise InvalidAction("the timer is 0 seconds long")
        data.timer_seconds = seconds
        data.timer_running = True
        data.timer_entry = ""

    def on_click_timer_pause(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.data(phone).timer_running = False

    def on_click_timer_resume(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.data(phone).timer_running = True

    def on_click_delete_timer(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: ClockData = self.data(phone)
        data.timer_seconds = 0
        data.timer_running = False

    # -- stopwatch -----------------------------------------------------------------------------

    def on_click_start(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.data(phone).stopwatch_running = True

    def on_click_pause(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: ClockData = self.data(phone)
        data.stopwatch_cs += _TICK_CS
        data.stopwatch_running = False

    def on_click_lap(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: ClockData = self.data(phone)
        data.stopwatch_cs += _TICK_CS
        data.laps.append(data.stopwatch_cs)

    def on_click_reset(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: ClockData = self.data(phone)
        data.stopwatch_cs = 0
        data.laps = []
