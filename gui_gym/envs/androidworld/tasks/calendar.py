"""Simple Calendar Pro tasks: AndroidWorld's ``task_evals/single/calendar/calendar.py``
(add and delete events) and the calendar entries of ``information_retrieval/proto/
tasks.textproto`` (questions answered with ANSWER).

Add tasks check the ``events`` rows as AndroidWorld's ``validate_event_addition_integrity``
does: exactly one new row whose start, end and repetition match exactly and whose title,
location (empty) and description match fuzzily, with every pre-existing row unchanged. Delete
tasks check that the seeded target rows are gone and every other row is unchanged, with no new
rows. Seeded and noise rows live in the parameters so the checks can compare against them.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Any, ClassVar

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.calendar import (
    TODAY,
    CalendarData,
    CalendarEvent,
    parse_date,
    parse_time,
)
from gui_gym.envs.androidworld.data import ANSWER_TITLES, PROTO_TIMES
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    fuzzy_match,
    milestone,
    mix_with_noise,
    open_app,
    reach,
    register,
    tap,
    type_into,
)

__all__ = ["EVENT_LOCATIONS", "navigate_to", "random_event", "reword_date"]

_TITLE = "Simple Calendar Pro"
_GOBACK = Action(ActionType.GOBACK)

# Event titles and descriptions (AndroidWorld's ``events_generator``).
_PREFIXES = (
    "Meeting with",
    "Call with",
    "Workshop on",
    "Appointment for",
    "Catch up on",
    "Review session for",
)
_PEOPLE = ("Alice", "Bob", "the Team", "HR", "Dr. Smith", "Marketing")
_SUBJECTS = ("Project X", "Annual Report", "Budget Planning", "Campaign")
_ACTIONS = (
    "discuss",
    "finalize",
    "plan",
    "celebrate",
    "prepare for",
    "review",
    "explore",
    "understand",
    "organize",
    "strategize about",
)
_TOPICS = (
    "upcoming project milestones",
    "marketing strategies",
    "annual budget",
    "product launch",
    "team roles",
    "client feedback",
    "contract details",
    "software updates",
    "business objectives",
)
_NOTES = (
    "Please bring relevant documents.",
    "Remember to confirm attendance.",
    "Let's be punctual.",
    "Looking forward to productive discussions.",
    "Snacks will be provided.",
)


def _random_title(rng: random.Random) -> str:
    prefix = rng.choice(_PREFIXES)
    return f"{prefix} {rng.choice(_PEOPLE if 'with' in prefix else _SUBJECTS)}"


def _random_description(rng: random.Random) -> str:
    text = f"We will {rng.choice(_ACTIONS)} {rng.choice(_TOPICS)}."
    if rng.random() < 0.5:
        text += f" {rng.choice(_NOTES)}"
    return text


def _event(
    title: str,
    start: datetime,
    minutes: int,
    description: str = "",
    location: str = "",
    repeat: str = "",
) -> dict[str, Any]:
    end = start + timedelta(minutes=minutes)
    return {
        "title": title,
        "start": start.strftime("%Y-%m-%d %H:%M"),
        "end": end.strftime("%Y-%m-%d %H:%M"),
        "location": location,
        "description": description,
        "repeat": repeat,
    }


def random_event(rng: random.Random, first_day: int = 15, last_day: int = 31) -> dict[str, Any]:
    """An event on a day of October 2023 in ``[first_day, last_day]`` at a random whole hour,
    lasting 15, 30, 45 or 60 minutes (``events_generator.generate_event``)."""
    start = datetime(2023, 10, rng.randint(first_day, last_day), rng.randrange(24))
    minutes = rng.choice((15, 30, 45, 60))
    return _event(_random_title(rng), start, minutes, _random_description(rng))


def _window_event(rng: random.Random) -> dict[str, Any]:
    """A noise event for the questions: anywhere in the 30 days around the device time."""
    start = datetime(2023, 9, 30, 15, 35) + timedelta(minutes=5 * rng.randrange(30 * 288))
    minutes = rng.choice((15, 30, 45, 60, 90, 120))
    return _event(_random_title(rng), start, minutes, _random_description(rng))


def _draw(
    rng: random.Random,
    n: int,
    make: Callable[[], dict[str, Any]],
    keep: Callable[[dict[str, Any]], bool] = lambda r: True,
) -> list[dict[str, Any]]:
    """``n`` distinct rows from ``make`` that pass ``keep`` (``get_random_items``)."""
    rows: list[dict[str, Any]] = []
    while len(rows) < n:
        row = make()
        if keep(row) and row not in rows:
            rows.append(row)
    return rows


def _write(phone: PhoneState, rows: list[dict[str, Any]]) -> None:
    """Rows (with ``id`` keys) become the calendar's events."""
    data: CalendarData = phone.apps["calendar"]
    data.events = [CalendarEvent(**row) for row in rows]
    data.next_id = max((row["id"] for row in rows), default=0) + 1


def _with_ids(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": i, **row} for i, row in enumerate(rows, 1)]


def reword_date(rng: random.Random, iso: str) -> str:
    """A natural wording of a day, as AndroidWorld rewrites date parameters: "October 16",
    "October 16 2023", today/tomorrow/yesterday, "<Weekday>"/"this <Weekday>" within a week
    ahead, "the <Weekday> after next" 8-14 days ahead, "<Weekday>" within a week back."""
    d = date.fromisoformat(iso)
    today = date.fromisoformat(TODAY)
    options = [f"{d:%B} {d.day}", f"{d:%B} {d.day} {d.year}"]
    delta = (d - today).days
    options += {0: ["today"], 1: ["tomorrow"], -1: ["yesterday"]}.get(delta, [])
    weekday = d.strftime("%A")
    if 0 < delta <= 7:
        options += [weekday, f"this {weekday}"]
    elif 7 < delta <= 14:
        options.append(f"the {weekday} after next")
    elif -7 <= delta < 0:
        options.append(weekday)
    return rng.choice(options)


# -- navigation shared by the experts ------------------------------------------------------------


def navigate_to(
    phone: PhoneState, screen: UITree, day: str, event_id: int | None = None
) -> Action | None:
    """The next action toward the day view of ``day`` (or, with ``event_id``, that event's
    details); None once there."""
    action = open_app(phone, "calendar", _TITLE)
    if action is not None:
        return action
    current = phone.screen
    assert current is not None
    if phone.focus:
        return _GOBACK
    if current.name == "event":
        return None if event_id is not None and current.arg == str(event_id) else _GOBACK
    if current.name == "day":
        if current.arg != day:
            return _GOBACK
        if event_id is None:
            return None
        return reach(screen, handler="calendar.open_event", handler_arg=str(event_id))
    if current.name != "main":
        return _GOBACK
    month = current.arg or TODAY[:7]
    if month != day[:7]:
        handler = "calendar.prev_month" if day[:7] < month else "calendar.next_month"
        return tap(screen, handler=handler) or _GOBACK
    return reach(screen, handler="calendar.open_day", handler_arg=day)


def _delete_step(phone: PhoneState, screen: UITree, event: CalendarEvent) -> Action:
    """The next action toward deleting ``event`` (open it, Delete, confirm)."""
    if phone.dialog is not None:
        return tap(screen, handler="calendar.confirm_delete", handler_arg=str(event.id)) or _GOBACK
    action = navigate_to(phone, screen, event.day, event.id)
    return action or tap(screen, handler="calendar.delete") or _GOBACK


def _on_screen(phone: PhoneState, name: str, arg: str) -> bool:
    screen = phone.screen
    return (
        phone.foreground == "calendar"
        and screen is not None
        and screen.name == name
        and screen.arg == arg
    )


# -- adding events --------------------------------------------------------------------------------


class _AddEvent(AndroidWorldTask):
    """Create one event; ``params["event"]`` is the reference row and ``params["noise"]`` the
    rows present at the start (ids 1..n)."""

    app = "calendar"
    complexity = 3.4
    first_day: ClassVar[int] = 15
    last_day: ClassVar[int] = 31

    @classmethod
    def _target(cls, rng: random.Random) -> dict[str, Any]:
        return random_event(rng, cls.first_day, cls.last_day)

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        event = cls._target(rng)
        noise = _draw(
            rng,
            rng.randint(0, 20),
            lambda: random_event(rng, 1, 31),
            keep=lambda r: r["title"] != event["title"],
        )
        start = datetime.fromisoformat(event["start"])
        minutes = int((datetime.fromisoformat(event["end"]) - start).total_seconds()) // 60
        return {
            "event_title": event["title"],
            "event_description": event["description"],
            "day_of_week": start.strftime("%A"),
            "hour": start.hour,
            "duration_mins": minutes,
            "year": start.year,
            "month": start.month,
            "day": start.day,
            "repeat_rule": event["repeat"],
            "event": event,
            "noise": _with_ids(noise),
        }

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        _write(phone, self.params["noise"])

    def _matches(self, e: CalendarEvent) -> bool:
        t = self.params["event"]
        return (
            e.start == t["start"]
            and e.end == t["end"]
            and e.repeat == t["repeat"]
            and fuzzy_match(e.title, t["title"])
            and fuzzy_match(e.description, t["description"])
            and fuzzy_match(e.location, t["location"])
        )

    def _new_events(self, data: CalendarData) -> list[CalendarEvent]:
        n = len(self.params["noise"])
        return [e for e in data.events if e.id > n]

    def score(self, phone: PhoneState) -> float:
        data: CalendarData = phone.apps["calendar"]
        noise = self.params["noise"]
        if len(data.events) != len(noise) + 1:
            return 0.0
        present = {e.id: e for e in data.events}
        if any(present.get(row["id"]) != CalendarEvent(**row) for row in noise):
            return 0.0
        new = self._new_events(data)
        return float(len(new) == 1 and self._matches(new[0]))

    def _form_ready(self, phone: PhoneState) -> bool:
        form = phone.forms.get("calendar", {})
        t = self.params["event"]
        return (
            fuzzy_match(form.get("title", ""), t["title"])
            and fuzzy_match(form.get("description", ""), t["description"])
            and parse_date(form.get("date", "")) == t["start"][:10]
            and parse_time(form.get("start", "")) == t["start"][11:]
            and parse_time(form.get("end", "")) == t["end"][11:]
            and form.get("repeat", "") == t["repeat"]
        )

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("editor_opened", lambda p: p.screen_name == "calendar/edit"),
            milestone("details_entered", self._form_ready),
            self.done_milestone("event_saved"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        t = self.params["event"]
        data: CalendarData = phone.apps["calendar"]
        new = self._new_events(data)
        keep = next((e for e in new if self._matches(e)), None)
        stray = [e for e in new if e is not keep]
        if stray:  # a wrong extra event: delete it first
            return _delete_step(phone, screen, stray[0])
        if phone.dialog is not None:
            return tap(screen, handler="calendar.set_repeat", handler_arg=t["repeat"]) or _GOBACK
        action = open_app(phone, "calendar", _TITLE)
        if action is not None:
            return action
        current = phone.screen
        assert current is not None
        if current.name == "edit" and not current.arg:
            form = phone.forms.get("calendar", {})
            for name, value in (
                ("title", t["title"]),
                ("description", t["description"]),
                ("date", t["start"][:10]),
                ("start", t["start"][11:]),
                ("end", t["end"][11:]),
            ):
                action = type_into(screen, name, value, form)
                if action is not None:
                    return action
            if form.get("repeat", "") != t["repeat"]:
                return reach(screen, handler="calendar.pick_repeat")
            return reach(screen, handler="calendar.save")
        if current.name in ("main", "day") and not phone.focus:
            return tap(screen, handler="calendar.new") or _GOBACK
        return _GOBACK


_DETAILS = (
    " at {hour}h with the title '{event_title}' and the description '{event_description}'."
    " The event should last for {duration_mins} mins."
)


@register
class SimpleCalendarAddOneEvent(_AddEvent):
    """Create an event on a given date (October 15-31) at a whole hour."""

    name = "SimpleCalendarAddOneEvent"
    template = "In Simple Calendar Pro, create a calendar event on {year}-{month}-{day}" + _DETAILS


@register
class SimpleCalendarAddOneEventRelativeDay(_AddEvent):
    """Create an event "this <weekday>" (Monday October 16 to Saturday October 21)."""

    name = "SimpleCalendarAddOneEventRelativeDay"
    template = "In Simple Calendar Pro, create a calendar event for this {day_of_week}" + _DETAILS
    first_day, last_day = 16, 21


@register
class SimpleCalendarAddOneEventTomorrow(_AddEvent):
    """Create an event tomorrow (October 16)."""

    name = "SimpleCalendarAddOneEventTomorrow"
    template = "In Simple Calendar Pro, create a calendar event for tomorrow" + _DETAILS
    first_day = last_day = 16


@register
class SimpleCalendarAddOneEventInTwoWeeks(_AddEvent):
    """Create an event in two weeks (October 29)."""

    name = "SimpleCalendarAddOneEventInTwoWeeks"
    template = "In Simple Calendar Pro, create a calendar event in two weeks from today" + _DETAILS
    first_day = last_day = 29


@register
class SimpleCalendarAddRepeatingEvent(_AddEvent):
    """Create an event repeating daily or weekly (the row's ``repeat_interval`` is 86400 or
    604800 s; a weekly row's ``repeat_rule`` is the bit of its weekday, derived from the
    start day)."""

    name = "SimpleCalendarAddRepeatingEvent"
    template = (
        "In Simple Calendar Pro, create a recurring calendar event titled '{event_title}' "
        "starting on {year}-{month}-{day} at {hour}h. The event recurs {repeat_rule}, forever, "
        "and lasts for {duration_mins} minutes each occurrence. The event description should "
        "be '{event_description}'."
    )

    @classmethod
    def _target(cls, rng: random.Random) -> dict[str, Any]:
        event = random_event(rng, cls.first_day, cls.last_day)
        event["repeat"] = rng.choice(("daily", "weekly"))
        return event


# -- deleting events ------------------------------------------------------------------------------


class _DeleteEvents(AndroidWorldTask):
    """Delete the target rows ``params["targets"]`` (ids) among ``params["rows"]``."""

    app = "calendar"
    complexity = 1.4
    n_rows: ClassVar[int] = 3
    n_noise: ClassVar[int] = 20
    template = "In Simple Calendar Pro, delete all the calendar events on {year}-{month}-{day}"

    @classmethod
    def _day(cls, rng: random.Random) -> int:
        return rng.randint(15, 31)

    @classmethod
    def _rows(cls, rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        day = cls._day(rng)
        targets = _draw(rng, cls.n_rows, lambda: random_event(rng, day, day))
        noise = _draw(
            rng,
            cls.n_noise,
            lambda: random_event(rng, 1, 31),
            keep=lambda r: r["start"][:10] != targets[0]["start"][:10],
        )
        return targets, noise

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        targets, noise = cls._rows(rng)
        rows = targets + noise
        rng.shuffle(rows)
        target_ids = [i for i, row in enumerate(rows, 1) if any(row is t for t in targets)]
        rows = _with_ids(rows)
        target = targets[0]
        start = datetime.fromisoformat(target["start"])
        minutes = int((datetime.fromisoformat(target["end"]) - start).total_seconds()) // 60
        return {
            "event_title": target["title"],
            "day_of_week": start.strftime("%A"),
            "year": start.year,
            "month": start.month,
            "day": start.day,
            "hour": start.hour,
            "duration_mins": minutes,
            "event_description": target["description"],
            "target_day": start.date().isoformat(),
            "rows": rows,
            "targets": target_ids,
        }

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        _write(phone, self.params["rows"])

    def _remaining(self, phone: PhoneState) -> list[CalendarEvent]:
        data: CalendarData = phone.apps["calendar"]
        targets = set(self.params["targets"])
        return [e for e in data.events if e.id in targets]

    def score(self, phone: PhoneState) -> float:
        data: CalendarData = phone.apps["calendar"]
        targets = set(self.params["targets"])
        rows = self.params["rows"]
        if len(data.events) != len(rows) - len(targets):
            return 0.0
        present = {e.id: e for e in data.events}
        return float(
            all(
                present.get(row["id"]) == CalendarEvent(**row)
                for row in rows
                if row["id"] not in targets
            )
        )

    def milestone_checks(self):
        day = self.params["target_day"]
        n = len(self.params["targets"])
        return [
            self.opened_milestone(),
            milestone("day_opened", lambda p: _on_screen(p, "day", day)),
            milestone("first_event_deleted", lambda p: len(self._remaining(p)) < n),
            self.done_milestone("events_deleted"),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        remaining = sorted(self._remaining(phone), key=lambda e: (e.start, e.id))
        if not remaining:
            return Action(ActionType.DONE)  # the other rows were changed: nothing to fix
        return _delete_step(phone, screen, remaining[0])


@register
class SimpleCalendarDeleteEvents(_DeleteEvents):
    """Delete the three events of a day (no other event is on that day)."""

    name = "SimpleCalendarDeleteEvents"


@register
class SimpleCalendarDeleteEventsOnRelativeDay(_DeleteEvents):
    """Delete the two events "this <weekday>" (October 16-21; no other event that day)."""

    name = "SimpleCalendarDeleteEventsOnRelativeDay"
    complexity = 1.2
    n_rows = 2
    template = (
        "In Simple Calendar Pro, delete all events scheduled for this {day_of_week}. "
        "Assume the week starts from Sunday."
    )

    @classmethod
    def _day(cls, rng: random.Random) -> int:
        return rng.randint(16, 21)


@register
class SimpleCalendarDeleteOneEvent(_DeleteEvents):
    """Delete one event given by date, hour and title; other events may share its day."""

    name = "SimpleCalendarDeleteOneEvent"
    complexity = 1.2
    n_rows = 1
    template = (
        "In Simple Calendar Pro, delete the calendar event on {year}-{month}-{day} at {hour}h "
        "with the title '{event_title}'"
    )

    @classmethod
    def _rows(cls, rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        target = random_event(rng)
        noise = _draw(
            rng,
            cls.n_noise,
            lambda: random_event(rng, 1, 31),
            keep=lambda r: r["start"] != target["start"] and r["title"] != target["title"],
        )
        return [target], noise

    def milestone_checks(self):
        target = str(self.params["targets"][0])
        day = self.params["target_day"]
        return [
            self.opened_milestone(),
            milestone("day_opened", lambda p: _on_screen(p, "day", day)),
            milestone("event_opened", lambda p: _on_screen(p, "event", target)),
            self.done_milestone("event_deleted"),
        ]


# -- questions ---------------------------------------------------------------------------------------

_DAYS = tuple(date(2023, 10, d).isoformat() for d in range(15, 30))
_DURATIONS = (
    "30 m",
    "60 minutes",
    "45min",
    "1 h",
    "2 hours",
    "15 minutes",
    "1.5 hours",
    "90 min",
    "20 min",
    "3 h",
    "25 minutes",
    "10 min",
    "50 min",
    "2.5 hours",
    "75 minutes",
    "5 minutes",
)
_TITLES = (
    "Team Meeting",
    "1-on-1 with Manager",
    "Product demo",
    "Team lunch",
    "Coffee with CEO",
    "Quarterly review",
    "Scrum meeting",
    "Doctor's appointment",
    "Birthday party",
    "Coding challenge",
    "Board meeting",
    "Marketing strategy workshop",
    "Movie night",
    "Dinner with friends",
    "Concert",
    "Game night",
    "Date night",
    "Weekend trip",
    "Family reunion",
    "Volunteer cleanup",
    "Sports game",
)
_ON_DATE_TITLES = (
    "Data Dive",
    "Bug Bash",
    "Dan's Birthday Party",
    "Trivia Night",
    *_TITLES[2:],
)
_LOCATION_TITLES = ("Marketing Brainstorm", "Lunch with Client", "Team Offsite", *_TITLES[2:])
EVENT_LOCATIONS = (
    "Conference Room A",
    "McDonald's",
    "100 Main St Chicago",
    "City Park",
    "The Coffee Bean",
    "Sarah's apartment",
    "Zoom meeting",
    "Riverside Restaurant",
    "Local library",
    "Bowling alley",
    "Community center",
    "Online",
    "The beach",
    "John's backyard",
    "State Park",
    "Art Museum",
    "Hiking trail",
    "Downtown",
    "Mall",
    "The gym",
    "School auditorium",
    "Virtual",
)
_PERSONS = (
    "Amanda",
    "John",
    "David",
    "Lucas",
    "James",
    "Ava",
    "Isabella",
    "Mia",
    "Elijah",
    "Charlotte",
    "Emily",
    "Muhammad",
    "Sofia",
    "Mateo",
    "Aaliyah",
    "Daniel",
)
_AFTER_TITLES = (
    "Sales Call",
    "Client Meeting",
    "Training Session",
    "Project Kickoff",
    "Team Brainstorming",
    "Dentist Appointment",
    "Haircut",
    "Grocery Shopping",
    "School Pickup",
    "Soccer Practice",
)
_RANGE_TITLES = (
    "Gym",
    "Dinner with Friends",
    "Happy Hour",
    "Evening Walk",
    "Yoga Class",
    "Run in the Park",
    "Cooking Class",
    "Movie Night",
    "Grocery Shopping",
    "Pick up Kids from School",
)


def _minutes(duration: str) -> int:
    """``"1.5 hours"``/``"45min"``/``"30 m"`` -> minutes."""
    match = re.fullmatch(r"\s*([\d.]+)\s*([a-z]+)\s*", duration.lower())
    if match is None:
        raise ValueError(f"bad duration {duration!r}")
    value = float(match.group(1))
    return round(value * 60) if match.group(2).startswith("h") else round(value)


def _at(day: str, time: str) -> datetime:
    return datetime.fromisoformat(f"{day} {parse_time(time)}")


class _CalendarQuestion(AndroidWorldTask):
    """A question about the calendar, answered with ANSWER.

    ``params["events"]`` are the seeded events the answer comes from, ``params["when"]`` the
    ISO day whose day view shows them; 75 noise events in the 30 days around the device time
    avoid the proto's exclusion conditions (:meth:`excluded`). ``open_event``: the answer is
    read on the event's details (its location) rather than the day view.
    """

    app = "calendar"
    answer_mode = "string"
    open_event: ClassVar[bool] = False

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        day = params["when"]
        return lambda row: row["start"][:10] == day

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        excluded = self.excluded(self.params)
        rows = mix_with_noise(rng, self.params["events"], 75, _window_event, excluded)
        _write(phone, _with_ids(rows))

    def expected_answer(self) -> list[str]:
        return [e["title"] for e in self.params["events"]]

    def answer_text(self) -> str:
        return ", ".join(self.expected_answer())

    def _target_id(self, phone: PhoneState) -> int | None:
        first = self.params["events"][0]
        data: CalendarData = phone.apps["calendar"]
        for e in data.events:
            if e.title == first["title"] and e.start == first["start"]:
                return e.id
        return None

    def _answer_in_view(self, phone: PhoneState) -> bool:
        if self.open_event:
            target = self._target_id(phone)
            return target is not None and _on_screen(phone, "event", str(target))
        return _on_screen(phone, "day", self.params["when"])

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("answer_in_view", self._answer_in_view),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        if phone.dialog is not None:
            return _GOBACK
        target = self._target_id(phone) if self.open_event else None
        action = navigate_to(phone, screen, self.params["when"], target)
        if action is not None:
            return action
        return Action(ActionType.ANSWER, text=self.answer_text())


@register
class SimpleCalendarEventsOnDate(_CalendarQuestion):
    """Title of the one event on a day."""

    name = "SimpleCalendarEventsOnDate"
    template = (
        "What events do I have {date} in Simple Calendar Pro? Answer with the titles only. If "
        "there are multiple titles, format your answer as a comma separated list."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        day, time = rng.choice(_DAYS), rng.choice(PROTO_TIMES)
        title, duration = rng.choice(_ON_DATE_TITLES), rng.choice(_DURATIONS)
        return {
            "date": reword_date(rng, day),
            "title": title,
            "time": time,
            "duration": duration,
            "when": day,
            "events": [_event(title, _at(day, time), _minutes(duration))],
        }


@register
class SimpleCalendarNextEvent(_CalendarQuestion):
    """Title of the next event today (no other event today starts between 15:30 and it).

    AndroidWorld's time list also has "12:00am", which is not upcoming at 15:34; it is left
    out here."""

    name = "SimpleCalendarNextEvent"
    template = (
        "What is my next upcoming event in Simple Calendar Pro? Answer with the title only. "
        "If there are multiples titles, format your answer in a comma separated list."
    )
    _NEXT_TIMES = (
        "3:53pm",
        "21:45",
        "5pm",
        "17:30",
        "16:00",
        "18:30",
        "18:45",
        "7pm",
        "7:15pm",
        "8pm",
        "8:10pm",
        "5:20pm",
        "23:59",
        "4:00pm",
        "16:15",
        "9:15pm",
        "20:40",
        "22:35",
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        time = rng.choice(cls._NEXT_TIMES)
        title, duration = rng.choice(_TITLES), rng.choice(_DURATIONS)
        return {
            "title": title,
            "time": time,
            "duration": duration,
            "when": TODAY,
            "events": [_event(title, _at(TODAY, time), _minutes(duration))],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        last = parse_time(params["time"]) or "23:59"
        return lambda row: row["start"][:10] == TODAY and "15:30" <= row["start"][11:] <= last


@register
class SimpleCalendarEventOnDateAtTime(_CalendarQuestion):
    """Title of the event on a day at a time (no other event starts then)."""

    name = "SimpleCalendarEventOnDateAtTime"
    template = "What is on my schedule for {date} at {time} in Simple Calendar Pro?" + ANSWER_TITLES

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        day, time = rng.choice(_DAYS), rng.choice(PROTO_TIMES)
        title, duration = rng.choice(_TITLES), rng.choice(_DURATIONS)
        return {
            "date": reword_date(rng, day),
            "time": time,
            "title": title,
            "duration": duration,
            "when": day,
            "events": [_event(title, _at(day, time), _minutes(duration))],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        start = _at(params["when"], params["time"]).strftime("%Y-%m-%d %H:%M")
        return lambda row: row["start"] == start


@register
class SimpleCalendarAnyEventsOnDate(_CalendarQuestion):
    """Titles of the three one-hour events on a day (no other event is on that day)."""

    name = "SimpleCalendarAnyEventsOnDate"
    template = "Do I have any events {date} in Simple Calendar Pro?" + ANSWER_TITLES

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        day = rng.choice(_DAYS)
        titles = rng.sample(_TITLES, 3)
        times = rng.sample(PROTO_TIMES, 3)
        return {
            "date": reword_date(rng, day),
            "when": day,
            "events": [
                _event(title, _at(day, time), 60) for title, time in zip(titles, times, strict=True)
            ],
        }


@register
class SimpleCalendarLocationOfEvent(_CalendarQuestion):
    """Location of an event named by its title (no other event has that title); it shows on
    the event's details."""

    name = "SimpleCalendarLocationOfEvent"
    template = (
        "What is the location of my {title} event in Simple Calendar Pro? "
        "Answer with the location only."
    )
    open_event = True

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        title, location = rng.choice(_LOCATION_TITLES), rng.choice(EVENT_LOCATIONS)
        day, time = rng.choice(_DAYS), rng.choice(PROTO_TIMES)
        return {
            "title": title,
            "location": location,
            "time": time,
            "when": day,
            "events": [_event(title, _at(day, time), 60, location=location)],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        title = params["title"].lower()
        return lambda row: title in row["title"].lower()

    def expected_answer(self) -> list[str]:
        return [self.params["location"]]


@register
class SimpleCalendarFirstEventAfterStartTime(_CalendarQuestion):
    """Title of the first event at or after a time on a day (no other event on that day
    starts at or after it)."""

    name = "SimpleCalendarFirstEventAfterStartTime"
    template = "What is my first event after {time} {date} in Simple Calendar Pro?" + ANSWER_TITLES
    _AFTER_TIMES = (
        "18:05",
        "11:00am",
        "1:30pm",
        "9:45am",
        "10:00am",
        "3:15pm",
        "12pm",
        "6:30am",
        "8:00pm",
        "5:20pm",
        "7:45am",
        "4pm",
        "10:30am",
        "16:15",
        "9:15pm",
        "11:30am",
        "20:00",
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        day, time = rng.choice(_DAYS), rng.choice(cls._AFTER_TIMES)
        title, duration = rng.choice(_AFTER_TITLES), rng.choice(_DURATIONS)
        return {
            "time": time,
            "date": reword_date(rng, day),
            "title": title,
            "duration": duration,
            "when": day,
            "events": [_event(title, _at(day, time), _minutes(duration))],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        day, first = params["when"], parse_time(params["time"]) or "00:00"
        return lambda row: row["start"][:10] == day and row["start"][11:] >= first


@register
class SimpleCalendarEventsInTimeRange(_CalendarQuestion):
    """Title of the event on a day between a start time and 8pm (no other event on that day
    starts in that range)."""

    name = "SimpleCalendarEventsInTimeRange"
    template = (
        "Do I have any events between {start_time} and 8pm {date} in Simple Calendar Pro? "
        "Assume the week starts from Sunday." + ANSWER_TITLES
    )
    _STARTS = (
        "11:00am",
        "1:30pm",
        "9:45am",
        "10:00am",
        "3:15pm",
        "12pm",
        "6:30am",
        "5:20pm",
        "7:45am",
        "4pm",
        "10:30am",
        "4:15pm",
        "11:30am",
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        day, start = rng.choice(_DAYS), rng.choice(cls._STARTS)
        title, duration = rng.choice(_RANGE_TITLES), rng.choice(_DURATIONS)
        return {
            "start_time": start,
            "date": reword_date(rng, day),
            "title": title,
            "duration": duration,
            "when": day,
            "events": [_event(title, _at(day, start), _minutes(duration))],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        day, first = params["when"], parse_time(params["start_time"]) or "00:00"
        return lambda row: row["start"][:10] == day and first <= row["start"][11:] <= "20:00"


@register
class SimpleCalendarNextMeetingWithPerson(_CalendarQuestion):
    """Start date and time of "Drinks with <person>" (no other event names that person).

    Answered as ``"<Month> <day> <year> <HH:MM>"`` (AndroidWorld's combined DATE_MATCH and
    TIME_MATCH, parsed with ``"%B %d %Y %H:%M"``)."""

    name = "SimpleCalendarNextMeetingWithPerson"
    template = (
        "When is my next meeting with {person} in Simple Calendar Pro? Express your answer in "
        "the format <month name> <day> <year> <hour in 24-hour format>:<minutes>."
    )
    answer_mode = "date"

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        person = rng.choice(_PERSONS)
        day, time = rng.choice(_DAYS), rng.choice(PROTO_TIMES)
        return {
            "person": person,
            "when": day,
            "events": [_event(f"Drinks with {person}", _at(day, time), 60)],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        person = params["person"].lower()
        return lambda row: person in row["title"].lower()

    def expected_answer(self) -> list[str]:
        start = datetime.fromisoformat(self.params["events"][0]["start"])
        return [f"{start:%B} {start.day} {start.year} {start:%H:%M}"]

    def is_successful(self, ctx: PredicateContext) -> float:
        if ctx.answer is None:
            return 0.0
        text = " ".join(ctx.answer.strip().rstrip(".").split())
        want = datetime.fromisoformat(self.params["events"][0]["start"])
        for fmt in ("%B %d %Y %H:%M", "%B %d, %Y %H:%M", "%Y-%m-%d %H:%M"):
            try:
                return float(datetime.strptime(text, fmt) == want)
            except ValueError:
                continue
        return 0.0


_NEXT_WEEK_TITLES = (*_TITLES[2:12], "Meet with {person}", *_TITLES[12:])


@register
class SimpleCalendarEventsInNextWeek(_CalendarQuestion):
    """Titles of the two events on two days of Monday October 16 to Sunday October 22 (no
    other event falls between today and October 22).

    The answer needs both day views: the expert opens the earlier day, then steps with "Next
    day" to the later one, so the second milestone needs the first to have been seen."""

    name = "SimpleCalendarEventsInNextWeek"
    template = (
        "What events do I have in the next week in Simple Calendar Pro? Assume the week starts "
        "from Monday." + ANSWER_TITLES
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        days = sorted(rng.sample(_DAYS[1:8], 2))
        times = rng.sample(PROTO_TIMES, 2)
        person = rng.choice(_PERSONS)
        titles = [t.format(person=person) for t in rng.sample(_NEXT_WEEK_TITLES, 2)]
        minutes = (_minutes(rng.choice(_DURATIONS)), 30)
        return {
            "when": days[0],
            "last": days[1],
            "events": [
                _event(title, _at(day, time), m)
                for title, day, time, m in zip(titles, days, times, minutes, strict=True)
            ],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        return lambda row: TODAY <= row["start"][:10] <= "2023-10-22"

    def milestone_checks(self):
        first, last = self.params["when"], self.params["last"]
        return [
            self.opened_milestone(),
            milestone("first_day_viewed", lambda p: _on_screen(p, "day", first)),
            milestone("second_day_viewed", lambda p: _on_screen(p, "day", last)),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        current = phone.screen
        first, last = self.params["when"], self.params["last"]
        if (
            phone.foreground == "calendar"
            and phone.dialog is None
            and not phone.focus
            and current is not None
            and current.name == "day"
            and first <= current.arg <= last
        ):
            if current.arg == last:
                return Action(ActionType.ANSWER, text=self.answer_text())
            return tap(screen, handler="calendar.next_day") or _GOBACK
        return super().expert(phone, screen)
