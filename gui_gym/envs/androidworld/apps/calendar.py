"""Simple Calendar Pro (``com.simplemobiletools.calendar.pro``): a month view, day views
listing events, event details with Edit and Delete, and an event editor.

The month view opens on the device month (October 2023) and lists its days with how many
events each has; tapping a day opens its day view (events with their time range and title,
arrows to the previous and next day). An event's details show its date and time, location,
description and repetition. The editor has text fields for title, location, description,
start date, start time and end time (an end time before the start time ends the event the
next day), and a Repeat choice (none, daily, weekly).

Events are rows of the app's ``events`` table: ``start``/``end`` are ``"YYYY-MM-DD HH:MM"``;
``repeat_interval`` and ``repeat_rule`` follow the app's columns (seconds between
occurrences; a weekday bit mask for weekly events).
"""

from __future__ import annotations

import calendar as _cal
import functools
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.apps.rows import ImmutableRow, RowTable
from gui_gym.envs.androidworld.phone import AppView, Dialog, PhoneApp, PhoneState, Screen, icon

__all__ = [
    "REPEATS",
    "CalendarApp",
    "CalendarData",
    "CalendarEvent",
    "parse_date",
    "parse_time",
]

TODAY = "2023-10-15"
"""The device date (AndroidWorld's ``DT``)."""
DEFAULT_START, DEFAULT_END = "16:00", "17:00"
"""A new event starts at the next full hour after the device time (15:34), for an hour."""
REPEATS = {"": "Does not repeat", "daily": "Daily", "weekly": "Weekly"}
_INTERVALS = {"": 0, "daily": 86400, "weekly": 604800}

_DATE_FORMATS = (
    "%Y-%m-%d",
    "%B %d %Y",
    "%B %d, %Y",
    "%b %d %Y",
    "%b %d, %Y",
    "%d %B %Y",
    "%m/%d/%Y",
    "%A, %B %d %Y",
    "%a, %b %d %Y",
)
_TIME_FORMATS = ("%H:%M", "%I:%M%p", "%I%p", "%H")


def parse_date(text: str) -> str | None:
    """An ISO day from ``2023-10-16``, ``October 16 2023``, ``10/16/2023``...; None if
    unreadable."""
    text = " ".join(text.strip().rstrip(".").split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    return None


def parse_time(text: str) -> str | None:
    """``"HH:MM"`` (24 h) from ``14:00``, ``2:00 PM``, ``2pm``, ``14h``...; None if
    unreadable."""
    compact = text.strip().lower().replace(" ", "").replace(".", "")
    if compact.endswith("h") and compact[:-1].isdigit():
        compact = compact[:-1]
    for fmt in _TIME_FORMATS:
        try:
            return datetime.strptime(compact, fmt).strftime("%H:%M")
        except ValueError:
            continue
    return None


@dataclass(frozen=True)
class CalendarEvent(ImmutableRow):
    """One row of the ``events`` table (immutable: an edit replaces the row)."""

    id: int
    title: str
    start: str
    end: str
    location: str = ""
    description: str = ""
    repeat: str = ""

    @property
    def day(self) -> str:
        return self.start[:10]

    @property
    def start_time(self) -> str:
        return self.start[11:]

    @property
    def end_time(self) -> str:
        return self.end[11:]

    @property
    def repeat_interval(self) -> int:
        """Seconds between occurrences (0: a single event)."""
        return _INTERVALS.get(self.repeat, 0)

    @property
    def repeat_rule(self) -> int:
        """For weekly events the bit of the start's weekday (Monday = 1), else 0."""
        if self.repeat != "weekly":
            return 0
        return 1 << (date.fromisoformat(self.day).isoweekday() - 1)

    def occurs_on(self, day: str) -> bool:
        if day == self.day:
            return True
        if not self.repeat or day < self.day:
            return False
        if self.repeat == "daily":
            return True
        return (date.fromisoformat(day) - date.fromisoformat(self.day)).days % 7 == 0


@dataclass
class CalendarData(RowTable[CalendarEvent]):
    """The app's data: its events and the next free id."""

    rows_attr = "events"
    row_type = CalendarEvent

    events: list[CalendarEvent] = field(default_factory=list)
    next_id: int = 1

    def on_day(self, day: str) -> list[CalendarEvent]:
        """Events occurring on ``day`` in display order (start time, then id)."""
        found = [e for e in self.events if e.occurs_on(day)]
        found.sort(key=lambda e: (e.start_time, e.id))
        return found

    def counts(self, year: int, month: int) -> dict[int, int]:
        """Events per day of a month (repeating events counted on every occurrence)."""
        prefix = f"{year:04d}-{month:02d}-"
        ndays = _cal.monthrange(year, month)[1]
        out: dict[int, int] = {}
        month = prefix[:7]
        for e in self.events:
            start = e.start
            if e.repeat:
                for d in range(1, ndays + 1):
                    if e.occurs_on(f"{prefix}{d:02d}"):
                        out[d] = out.get(d, 0) + 1
            elif start[:7] == month:
                d = int(start[8:10])
                out[d] = out.get(d, 0) + 1
        return out


def long_day(iso: str) -> str:
    """``"Monday, October 16 2023"``."""
    d = date.fromisoformat(iso)
    return f"{d:%A}, {d:%B} {d.day} {d.year}"


def _short_day(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d:%a}, {d:%b} {d.day} {d.year}"


def _icon(description: str, handler: str, arg: str = "") -> Block:
    resource_id = description.lower().replace(" ", "_")
    return icon(description, f"calendar.{handler}", resource_id, arg)


@functools.lru_cache(maxsize=2048)
def _day_row(iso: str, n: int) -> Block:
    """A day of the month view with its event count (cached: rows are immutable)."""
    d = date.fromisoformat(iso)
    text = f"{d:%a} {d.day}"
    if n:
        text += f" · {n} event{'s' if n != 1 else ''}"
    return Block(
        "listitem",
        text,
        description="Today" if iso == TODAY else "",
        resource_id="month_day",
        clickable=True,
        selected=iso == TODAY,
        handler="calendar.open_day",
        handler_arg=iso,
        height=40,
        gap=2,
    )


@functools.lru_cache(maxsize=4096)
def _event_row(e: CalendarEvent) -> Block:
    """An event's row in the day view (rows are immutable, so they are cached)."""
    return Block(
        "listitem",
        f"{e.start_time} - {e.end_time}  {e.title}",
        resource_id="event_row",
        clickable=True,
        handler="calendar.open_event",
        handler_arg=str(e.id),
        gap=2,
    )


class CalendarApp(PhoneApp):
    key = "calendar"
    title = "Simple Calendar Pro"
    package = "com.simplemobiletools.calendar.pro"
    aliases = (
        "calendar",
        "simple calendar",
        "simple calendar pro",
        "calendar app",
        "simple calendar pro app",
    )
    launcher_order = 30

    def __init__(self) -> None:
        self._month_cache: dict[str, tuple[tuple[CalendarEvent, ...], list[Block]]] = {}

    def initial_data(self) -> CalendarData:
        return CalendarData()

    # -- views ---------------------------------------------------------------------------------

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        if screen.name == "day":
            return self._day_view(phone, screen.arg)
        if screen.name == "event":
            return self._event_view(phone, screen.arg)
        if screen.name == "edit":
            return self._edit_view(phone, screen.arg)
        return self._month_view(phone, screen.arg or TODAY[:7])

    def _month_rows(self, data: CalendarData, month: str) -> list[Block]:
        """The day rows of a month, reused while the events stay the same objects."""
        events = data.events
        cached = self._month_cache.get(month)
        if (
            cached is not None
            and len(cached[0]) == len(events)
            and all(a is b for a, b in zip(cached[0], events, strict=True))
        ):
            return cached[1]
        year, mon = int(month[:4]), int(month[5:7])
        counts = data.counts(year, mon)
        rows = [
            _day_row(f"{month}-{d:02d}", counts.get(d, 0))
            for d in range(1, _cal.monthrange(year, mon)[1] + 1)
        ]
        if len(self._month_cache) > 16:
            self._month_cache.clear()
        self._month_cache[month] = (tuple(events), rows)
        return rows

    def _month_view(self, phone: PhoneState, month: str) -> AppView:
        year, mon = int(month[:4]), int(month[5:7])
        rows = self._month_rows(self.data(phone), month)
        return AppView(
            f"{_cal.month_name[mon]} {year}",
            rows,
            actions=[
                _icon("Previous month", "prev_month"),
                _icon("Next month", "next_month"),
                _icon("Go to today", "today"),
            ],
            fab=icon("New event", "calendar.new", "fab", TODAY),
        )

    def _day_view(self, phone: PhoneState, day: str) -> AppView:
        data: CalendarData = self.data(phone)
        rows: list[Block] = [Block("heading", long_day(day), resource_id="day_heading")]
        events = data.on_day(day)
        rows += [_event_row(e) for e in events]
        if not events:
            rows.append(Block("text", "No events on this day", resource_id="empty"))
        return AppView(
            _short_day(day),
            rows,
            actions=[_icon("Previous day", "prev_day"), _icon("Next day", "next_day")],
            fab=icon("New event", "calendar.new", "fab", day),
        )

    def _event_view(self, phone: PhoneState, arg: str) -> AppView:
        e = self.data(phone).get(int(arg))
        if e is None:
            return AppView("Event", [Block("text", "This event no longer exists")])
        when = f"{long_day(e.day)}, {e.start_time} - {e.end_time}"
        if e.end[:10] != e.day:
            when += " (next day)"
        content = [
            Block("heading", e.title, resource_id="event_title"),
            Block("text", when, resource_id="event_time"),
            Block("text", e.location, description="Location", resource_id="event_location")
            if e.location
            else Block("text", "No location", resource_id="event_location"),
            Block(
                "text",
                e.description or "No description",
                description="Description",
                resource_id="event_description",
            ),
            Block("text", f"Repeat: {REPEATS.get(e.repeat, e.repeat)}", resource_id="repeat"),
        ]
        return AppView(
            "Event",
            content,
            actions=[_icon("Edit", "edit", arg), _icon("Delete", "delete", arg)],
        )

    def _edit_view(self, phone: PhoneState, arg: str) -> AppView:
        form = self.form(phone)
        repeat = REPEATS.get(form.get("repeat", ""), "Does not repeat")
        return AppView(
            "Edit event" if arg else "New event",
            [
                self.field("title", "Title", phone),
                self.field("location", "Location", phone),
                self.field("description", "Description", phone, multiline=True),
                self.field("date", "Start date", phone),
                self.field("start", "Start time", phone),
                self.field("end", "End time", phone),
                self.button(
                    f"Repeat: {repeat}",
                    "pick_repeat",
                    resource_id="repeat",
                    description="Repeat",
                ),
            ],
            actions=[_icon("Save", "save", arg)],
        )

    # -- navigation ----------------------------------------------------------------------------

    def _top(self, phone: PhoneState) -> Screen:
        return phone.stacks[self.key][-1]

    def _shift_month(self, phone: PhoneState, step: int) -> None:
        screen = self._top(phone)
        month = screen.arg or TODAY[:7]
        year, mon = int(month[:4]), int(month[5:7]) + step
        if mon == 0:
            year, mon = year - 1, 12
        elif mon == 13:
            year, mon = year + 1, 1
        screen.arg = f"{year:04d}-{mon:02d}"
        screen.scroll = 0

    def on_click_prev_month(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self._shift_month(phone, -1)

    def on_click_next_month(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self._shift_month(phone, 1)

    def on_click_today(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        screen = self._top(phone)
        screen.arg = TODAY[:7]
        screen.scroll = 0

    def _shift_day(self, phone: PhoneState, step: int) -> None:
        screen = self._top(phone)
        screen.arg = (date.fromisoformat(screen.arg) + timedelta(days=step)).isoformat()
        screen.scroll = 0

    def on_click_prev_day(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self._shift_day(phone, -1)

    def on_click_next_day(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self._shift_day(phone, 1)

    def on_click_open_day(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "day", element.handler_arg)

    def on_click_open_event(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "event", element.handler_arg)

    # -- editing -------------------------------------------------------------------------------

    def on_click_new(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(
            phone,
            "edit",
            "",
            form={"date": element.handler_arg, "start": DEFAULT_START, "end": DEFAULT_END},
        )

    def on_click_edit(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        e = self.data(phone).get(int(element.handler_arg))
        if e is None:
            raise InvalidAction("this event no longer exists")
        self.push(
            phone,
            "edit",
            element.handler_arg,
            form={
                "title": e.title,
                "location": e.location,
                "description": e.description,
                "date": e.day,
                "start": e.start_time,
                "end": e.end_time,
                "repeat": e.repeat,
            },
        )

    def on_click_pick_repeat(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.focus = ""
        phone.dialog = Dialog(
            "Repeat",
            buttons=[(label, "calendar.set_repeat", key) for key, label in REPEATS.items()],
        )

    def on_click_set_repeat(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.form(phone)["repeat"] = element.handler_arg
        phone.dialog = None

    def on_click_save(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        form = self.form(phone)
        title = form.get("title", "").strip()
        if not title:
            raise InvalidAction("Title cannot be empty")
        day = parse_date(form.get("date", ""))
        if day is None:
            raise InvalidAction(f"cannot read the start date {form.get('date', '')!r}")
        start = parse_time(form.get("start", ""))
        if start is None:
            raise InvalidAction(f"cannot read the start time {form.get('start', '')!r}")
        end = parse_time(form.get("end", ""))
        if end is None:
            raise InvalidAction(f"cannot read the end time {form.get('end', '')!r}")
        end_day = day
        if end < start:  # the end time is on the next day
            end_day = (date.fromisoformat(day) + timedelta(days=1)).isoformat()
        fields = {
            "title": title,
            "start": f"{day} {start}",
            "end": f"{end_day} {end}",
            "location": form.get("location", "").strip(),
            "description": form.get("description", "").strip(),
            "repeat": form.get("repeat", ""),
        }
        data: CalendarData = self.data(phone)
        arg = element.handler_arg
        if arg:
            index = next((i for i, e in enumerate(data.events) if e.id == int(arg)), None)
            if index is None:
                raise InvalidAction("this event no longer exists")
            data.events[index] = CalendarEvent(int(arg), **fields)
        else:
            data.add(**fields)
        phone.forms[self.key] = {}
        self.pop(phone)
        phone.toast = "Event saved"

    def on_click_delete(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        e = self.data(phone).get(int(element.handler_arg))
        if e is None:
            raise InvalidAction("this event no longer exists")
        self.ask_delete(
            phone,
            "Delete event?",
            f"'{e.title}' will be deleted" + (" with all its occurrences." if e.repeat else "."),
            element.handler_arg,
        )

    def on_click_confirm_delete(
        self, phone: PhoneState, element: UIElement, action: Action
    ) -> None:
        data: CalendarData = self.data(phone)
        event_id = int(element.handler_arg)
        data.events = [e for e in data.events if e.id != event_id]
        phone.dialog = None
        if phone.screen_name == "calendar/event":
            self.pop(phone)
        phone.toast = "Event deleted"
