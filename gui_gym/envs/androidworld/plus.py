"""AndroidWorld+ (``GuiGym/AndroidWorldPlus-v0``): multi-app, multi-goal tasks on the
simulated phone, beyond AndroidWorld's 116 (kept apart so that suite stays comparable).

Every template reads a value in one app (a *source*: an event's location, a contact's
number, a track's distance...) and uses it in others (*sinks*: a Markor note, a text message,
an answer). Memory templates read two sources on two screens and combine them (a total, a
list), so the first screen's value has to be remembered while the second is read.

* Parameters, starting data and noise are drawn from the seed, as for AndroidWorld's
  templates; instructions name what to look up, never the value.
* Milestones are ordered across apps: each source's screen seen (the phone's ``seen``
  history, so a later milestone cannot come first), then each sink's goal.
* The score is the mean of the sinks' state checks (partial credit, as AndroidWorld's
  composite tasks), read from the app state (and the ANSWER for answer sinks); the episode
  ends with DONE or ANSWER and is scored as AndroidWorld's runner does.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext
from gui_gym.core.task import TaskSuite
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.contacts import Contact
from gui_gym.envs.androidworld.apps.expense import dollars
from gui_gym.envs.androidworld.apps.joplin import JoplinData
from gui_gym.envs.androidworld.apps.opentracks import TracksData, km_text
from gui_gym.envs.androidworld.data import GIVEN_NAMES, random_name, random_phone, random_sentence
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    fuzzy_match,
    milestone,
    open_app,
    seek,
)
from gui_gym.envs.androidworld.tasks.calendar import navigate_to, random_event
from gui_gym.envs.androidworld.tasks.expense import random_expense
from gui_gym.envs.androidworld.tasks.markor import (
    create_note_with,
    note_holds,
    open_note,
    random_note_name,
)
from gui_gym.envs.androidworld.tasks.recipes import random_recipe
from gui_gym.envs.androidworld.tasks.sms import sent_ok, sms_send_expert
from gui_gym.envs.androidworld.tasks.tasks_app import NOISE_TASKS

__all__ = ["PLUS_TASKS", "PlusTask", "Sink", "Source", "load_plus_suite"]

PLUS_TASKS: dict[str, type[AndroidWorldTask]] = {}
"""Every AndroidWorld+ template by name."""

_GOBACK = Action(ActionType.GOBACK)


# -- sources ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """A value to look up in an app.

    Attributes:
        key: Short name used in template names (``EventLocation``).
        app: App key holding it; ``title`` its launcher title.
        draw: ``rng -> params`` (JSON-safe): the rows to write, ``value`` (the text to read),
            ``name`` (what the instruction names) and ``seen`` (the screen that shows it).
        write: Writes the rows (and noise) into the phone.
        phrase: The instruction's words for the value (``the location of my 'X' event...``).
        nav: The expert's next action toward the screen that shows the value, None there.
        numeric: How to add two values for the memory templates (None: list them).
    """

    key: str
    app: str
    title: str
    draw: Callable[[random.Random], dict[str, Any]]
    write: Callable[[PhoneState, dict[str, Any], random.Random], None]
    phrase: Callable[[dict[str, Any]], str]
    nav: Callable[[PhoneState, UITree, dict[str, Any]], Action | None]
    numeric: Callable[[list[dict[str, Any]]], str] | None = None


def _to_main(phone: PhoneState, app: str, title: str) -> Action | None:
    """Open ``app`` on its main screen (None once there)."""
    if phone.dialog is not None:
        return _GOBACK
    action = open_app(phone, app, title)
    if action is not None:
        return action
    top = phone.screen
    if phone.focus or top is None or top.name != "main":
        return _GOBACK
    return None


def _row_nav(handler: str, detail: str, order: Callable[[PhoneState], list[str]]):
    """Navigator to a list row's detail screen (``<app>/<detail>:<id>``)."""
    app = handler.split(".")[0]

    def nav(phone: PhoneState, screen: UITree, p: dict[str, Any]) -> Action | None:
        if phone.seen_key == p["seen"]:
            return None
        title = p["app_title"]
        top = phone.screen
        if phone.foreground == app and top is not None and top.name == detail:
            return _GOBACK
        action = _to_main(phone, app, title)
        return action or seek(screen, handler, p["seen"].rsplit(":", 1)[1], order(phone))

    return nav


# events: the seeded event gets id 1; noise events follow
def _draw_event(rng: random.Random) -> dict[str, Any]:
    from gui_gym.envs.androidworld.tasks.calendar import EVENT_LOCATIONS

    event = random_event(rng, 16, 28)
    event["title"] = f"{rng.choice(('Lunch', 'Review', 'Workshop', 'Drinks', 'Call'))} with "
    event["title"] += rng.choice(GIVEN_NAMES)
    event["location"] = rng.choice(EVENT_LOCATIONS)
    return {
        "event": event,
        "value": event["location"],
        "name": event["title"],
        "seen": "calendar/event:{id}",
        "app_title": "Simple Calendar Pro",
    }


def _write_events(phone: PhoneState, items: list[dict[str, Any]], rng: random.Random) -> None:
    from gui_gym.envs.androidworld.apps.calendar import CalendarEvent

    data = phone.apps["calendar"]
    titles = {p["event"]["title"] for p in items}
    rows = [p["event"] for p in items]
    while len(rows) < len(items) + 12:
        row = random_event(rng, 1, 31)
        if row["title"] not in titles:
            rows.append(row)
    data.events = [CalendarEvent(id=i + 1, **row) for i, row in enumerate(rows)]
    data.next_id = len(rows) + 1


def _event_nav(phone: PhoneState, screen: UITree, p: dict[str, Any]) -> Action | None:
    if phone.seen_key == p["seen"]:
        return None
    event_id = int(p["seen"].rsplit(":", 1)[1])
    if phone.dialog is not None:
        return _GOBACK
    return navigate_to(phone, screen, p["event"]["start"][:10], event_id)


def _draw_contact(rng: random.Random) -> dict[str, Any]:
    name = random_name(rng)
    number = random_phone(rng)
    return {
        "contact": {"name": name, "number": number},
        "value": number,
        "name": name,
        "seen": "contacts/detail:{id}",
        "app_title": "Contacts",
    }


def _write_contacts(phone: PhoneState, items: list[dict[str, Any]], rng: random.Random) -> None:
    book: list[Contact] = phone.apps["contacts"].contacts
    book.clear()
    names = {p["contact"]["name"] for p in items}
    people = [p["contact"] for p in items]
    while len(people) < len(items) + 8:
        name = random_name(rng, exclude=tuple(names))
        names.add(name)
        people.append({"name": name, "number": random_phone(rng)})
    for person in people:
        first, _, last = person["name"].partition(" ")
        book.append(Contact(first, last, person["number"]))


def _contact_order(phone: PhoneState) -> list[str]:
    book = phone.apps["contacts"].contacts
    return [str(i) for i, c in sorted(enumerate(book), key=lambda ic: ic[1].name.lower())]


def _draw_meeting(rng: random.Random) -> dict[str, Any]:
    from gui_gym.envs.androidworld.tasks.joplin import MEETING_BODIES, MEETING_TITLES

    title, count = rng.choice(MEETING_TITLES), rng.randrange(5, 105, 5)
    return {
        "note": {
            "folder": "Meeting Notes",
            "title": title,
            "body": rng.choice(MEETING_BODIES).format(n=count),
        },
        "value": str(count),
        "name": title,
        "seen": "joplin/note:{id}",
        "app_title": "Joplin",
    }


def _write_meetings(phone: PhoneState, items: list[dict[str, Any]], rng: random.Random) -> None:
    from gui_gym.envs.androidworld.tasks.joplin import NOISE_NOTES

    data: JoplinData = phone.apps["joplin"]
    data.notes, data.next_id = [], 1
    for p in items:
        data.add(**p["note"])
    for _ in range(15):
        folder = rng.choice(list(NOISE_NOTES))
        title, body = rng.choice(NOISE_NOTES[folder])
        data.add(folder=folder, title=title, body=body)


def _joplin_nav(phone: PhoneState, screen: UITree, p: dict[str, Any]) -> Action | None:
    if phone.seen_key == p["seen"]:
        return None
    top = phone.screen
    folder = p["note"]["folder"]
    data: JoplinData = phone.apps["joplin"]
    if phone.foreground == "joplin" and top is not None and top.name == "folder":
        if top.arg != folder:
            return _GOBACK
        order = [str(n.id) for n in data.in_folder(folder)]
        return seek(screen, "joplin.note", p["seen"].rsplit(":", 1)[1], order)
    if phone.foreground == "joplin" and top is not None and top.name == "note":
        return _GOBACK
    action = _to_main(phone, "joplin", "Joplin")
    return action or seek(screen, "joplin.folder", folder, data.folders())


def _draw_track(rng: random.Random) -> dict[str, Any]:
    from gui_gym.envs.androidworld.tasks.opentracks import ACTIVITY_NAMES

    name = rng.choice(ACTIVITY_NAMES)
    metres = rng.randrange(1000, 20000, 10)
    day = rng.randint(2, 14)
    row = {
        "name": name,
        "category": rng.choice(("running", "cycling", "hiking", "swimming")),
        "start": f"2023-10-{day:02d} {rng.randint(6, 19):02d}:{rng.choice(('00', '30'))}",
        "minutes": rng.randint(20, 180),
        "distance_m": metres,
    }
    return {
        "track": row,
        "value": km_text(metres),
        "metres": metres,
        "name": name,
        "seen": "opentracks/track:{id}",
        "app_title": "OpenTracks",
    }


def _write_tracks(phone: PhoneState, items: list[dict[str, Any]], rng: random.Random) -> None:
    from gui_gym.envs.androidworld.tasks.opentracks import random_activity

    data: TracksData = phone.apps["opentracks"]
    data.activities, data.next_id = [], 1
    for p in items:
        data.add(**p["track"])
    for _ in range(12):
        data.add(**random_activity(rng))


def _draw_expense(rng: random.Random) -> dict[str, Any]:
    row = random_expense(rng)
    return {
        "expense": row,
        "value": dollars(row["amount"]),
        "cents": row["amount"],
        "name": row["name"],
        "seen": "expense/detail:{id}",
        "app_title": "Pro Expense",
    }


def _write_expenses(phone: PhoneState, items: list[dict[str, Any]], rng: random.Random) -> None:
    data = phone.apps["expense"]
    data.expenses, data.next_id, data.selected = [], 1, []
    names = {p["expense"]["name"] for p in items}
    for p in items:
        data.add(**p["expense"])
    added = 0
    while added < 10:
        row = random_expense(rng)
        if row["name"] not in names:
            names.add(row["name"])
            data.add(**row)
            added += 1


def _draw_recipe(rng: random.Random) -> dict[str, Any]:
    row = random_recipe(rng)
    return {
        "recipe": row,
        "value": row["preparation_time"],
        "name": row["title"],
        "seen": "recipes/detail:{id}",
        "app_title": "Broccoli",
    }


def _write_recipes(phone: PhoneState, items: list[dict[str, Any]], rng: random.Random) -> None:
    data = phone.apps["recipes"]
    data.recipes, data.next_id = [], 1
    data.searching, data.query = False, ""
    titles = {p["recipe"]["title"] for p in items}
    for p in items:
        data.add(**p["recipe"])
    added = 0
    while added < 8:
        row = random_recipe(rng)
        if row["title"] not in titles:
            titles.add(row["title"])
            data.add(**row)
            added += 1


def _draw_markor(rng: random.Random) -> dict[str, Any]:
    path = random_note_name(rng)
    text = random_sentence(rng)
    return {
        "path": path,
        "value": text,
        "name": path,
        "seen": f"markor/edit:{path}",
        "app_title": "Markor",
    }


def _write_markor(phone: PhoneState, items: list[dict[str, Any]], rng: random.Random) -> None:
    data = phone.apps["markor"]
    for p in items:
        data.add(p["path"], p["value"])
    for _ in range(4):
        name = random_note_name(rng)
        if not data.find(name):
            data.add(name, random_sentence(rng))


def _markor_nav(phone: PhoneState, screen: UITree, p: dict[str, Any]) -> Action | None:
    if phone.seen_key == p["seen"]:
        return None
    if phone.dialog is not None:
        return _GOBACK
    return open_app(phone, "markor", "Markor") or open_note(phone, screen, p["path"])


def _draw_task(rng: random.Random) -> dict[str, Any]:
    title = rng.choice(sorted(NOISE_TASKS))
    return {
        "task": {"title": title, "notes": NOISE_TASKS[title], "due": "2023-10-18"},
        "value": NOISE_TASKS[title],
        "name": title,
        "seen": "tasks_app/detail:{id}",
        "app_title": "Tasks",
    }


def _write_tasks(phone: PhoneState, items: list[dict[str, Any]], rng: random.Random) -> None:
    data = phone.apps["tasks_app"]
    data.tasks, data.next_id = [], 1
    taken = {p["task"]["title"] for p in items}
    for p in items:
        data.add(**p["task"])
    for title in rng.sample(sorted(set(NOISE_TASKS) - taken), 6):
        data.add(title=title, due=f"2023-10-{rng.randint(10, 28)}", notes=NOISE_TASKS[title])


def _tasks_order(phone: PhoneState) -> list[str]:
    open_tasks, done = phone.apps["tasks_app"].shown()
    return [str(t.id) for t in open_tasks + done]


def _sum_km(items: list[dict[str, Any]]) -> str:
    return km_text(sum(p["metres"] for p in items))


def _sum_dollars(items: list[dict[str, Any]]) -> str:
    return dollars(sum(p["cents"] for p in items))


def _sum_int(items: list[dict[str, Any]]) -> str:
    return str(sum(int(p["value"]) for p in items))


SOURCES: dict[str, Source] = {
    s.key: s
    for s in (
        Source(
            "EventLocation",
            "calendar",
            "Simple Calendar Pro",
            _draw_event,
            _write_events,
            lambda p: f"the location of my '{p['name']}' event in Simple Calendar Pro",
            _event_nav,
        ),
        Source(
            "ContactNumber",
            "contacts",
            "Contacts",
            _draw_contact,
            _write_contacts,
            lambda p: f"the phone number of {p['name']} in Contacts",
            _row_nav("contacts.open", "detail", _contact_order),
        ),
        Source(
            "MeetingAttendees",
            "joplin",
            "Joplin",
            _draw_meeting,
            _write_meetings,
            lambda p: f"how many attended the meeting '{p['name']}' (its Joplin note)",
            _joplin_nav,
            _sum_int,
        ),
        Source(
            "TrackDistance",
            "opentracks",
            "OpenTracks",
            _draw_track,
            _write_tracks,
            lambda p: f"the distance of my activity '{p['name']}' in OpenTracks, as shown",
            _row_nav(
                "opentracks.open",
                "track",
                lambda ph: [str(a.id) for a in ph.apps["opentracks"].ordered()],
            ),
            _sum_km,
        ),
        Source(
            "ExpenseAmount",
            "expense",
            "Pro Expense",
            _draw_expense,
            _write_expenses,
            lambda p: f"the amount of my '{p['name']}' expense in Pro Expense, as shown",
            _row_nav(
                "expense.open",
                "detail",
                lambda ph: [str(e.id) for e in ph.apps["expense"].ordered()],
            ),
            _sum_dollars,
        ),
        Source(
            "RecipePrepTime",
            "recipes",
            "Broccoli",
            _draw_recipe,
            _write_recipes,
            lambda p: f"the preparation time of the '{p['name']}' recipe in Broccoli",
            _row_nav(
                "recipes.open", "detail", lambda ph: [str(r.id) for r in ph.apps["recipes"].shown()]
            ),
        ),
        Source(
            "NoteText",
            "markor",
            "Markor",
            _draw_markor,
            _write_markor,
            lambda p: f"the text of the Markor note {p['name']}",
            _markor_nav,
        ),
        Source(
            "TaskNotes",
            "tasks_app",
            "Tasks",
            _draw_task,
            _write_tasks,
            lambda p: f"the notes of the task '{p['name']}' in the Tasks app",
            _row_nav("tasks_app.open", "detail", _tasks_order),
        ),
    )
}


# -- sinks ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sink:
    """A goal that uses the value: ``check(phone, params, answer)`` and an expert step."""

    key: str
    app: str
    phrase: Callable[[dict[str, Any]], str]
    check: Callable[[PhoneState, dict[str, Any], str | None], bool]
    act: Callable[[PhoneState, UITree, dict[str, Any]], Action]
    ends_with_answer: bool = False


SINKS: dict[str, Sink] = {
    s.key: s
    for s in (
        Sink(
            "Note",
            "markor",
            lambda p: f"save it as the only text of a new Markor note named {p['note']}",
            lambda ph, p, a: note_holds(ph, p["note"], p["value"]),
            lambda ph, sc, p: create_note_with(ph, sc, p["note"], p["value"]),
        ),
        Sink(
            "Sms",
            "sms",
            lambda p: f"text it to {p['number']} in Simple SMS Messenger",
            lambda ph, p, a: sent_ok(ph, p["number"], p["value"]),
            lambda ph, sc, p: sms_send_expert(ph, sc, p["number"], p["value"]),
        ),
        Sink(
            "Answer",
            "",
            lambda p: "answer with it (the value only)",
            lambda ph, p, a: a is not None and fuzzy_match(a.strip(), p["value"]),
            lambda ph, sc, p: Action(ActionType.ANSWER, text=p["value"]),
            ends_with_answer=True,
        ),
    )
}


# -- templates -----------------------------------------------------------------------------------


class PlusTask(AndroidWorldTask):
    """An AndroidWorld+ template: ``sources`` read in order, then ``sinks`` done in order.

    Class attributes:
        sources: Source keys (two for memory templates: their values are combined).
        sinks: Sink keys, in the order the goal lists them.
        combine: ``"sum"`` (the sources' ``numeric`` total) or ``"list"`` (values joined by
            ", ") for two sources.
        needs_memory: The value comes from two screens: the first must be remembered.
    """

    sources: ClassVar[tuple[str, ...]] = ()
    sinks: ClassVar[tuple[str, ...]] = ()
    combine: ClassVar[str] = ""
    needs_memory: ClassVar[bool] = False

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        source = SOURCES[cls.sources[0]]
        items: list[dict[str, Any]] = []
        while len(items) < len(cls.sources):
            item = source.draw(rng)
            if all(item["name"] != other["name"] for other in items):
                items.append(item)
        first_id = 0 if source.app == "contacts" else 1  # contacts are keyed by list index
        for k, item in enumerate(items):
            item["seen"] = item["seen"].replace("{id}", str(k + first_id))
        if len(items) == 1:
            value = items[0]["value"]
        elif cls.combine == "sum":
            assert source.numeric is not None
            value = source.numeric(items)
        else:
            value = ", ".join(i["value"] for i in items)
        return {
            "items": items,
            "value": value,
            "note": f"{random_note_name(rng).rsplit('.', 1)[0]}.txt",
            "number": random_phone(rng),
            "goal": cls.goal_text(items),
        }

    @classmethod
    def goal_text(cls, items: list[dict[str, Any]]) -> str:
        source = SOURCES[cls.sources[0]]
        if len(items) == 1:
            what = source.phrase(items[0])
        else:
            parts = " and ".join(source.phrase(i) for i in items)
            what = (
                f"the total of {parts}" if cls.combine == "sum" else f"{parts}, as 'first, second'"
            )
        return f"Look up {what}"

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        SOURCES[self.sources[0]].write(phone, self.params["items"], rng)

    def _goal_checks(self, phone: PhoneState, answer: str | None) -> list[bool]:
        return [SINKS[k].check(phone, self.params, answer) for k in self.sinks]

    def score(self, phone: PhoneState) -> float:
        checks = self._goal_checks(phone, None)
        return sum(checks) / len(checks)

    def is_successful(self, ctx: PredicateContext) -> float:
        checks = self._goal_checks(ctx.state, ctx.answer)
        return sum(checks) / len(checks)

    def milestone_checks(self):
        checks = []
        for k, item in enumerate(self.params["items"]):
            key = item["seen"]
            checks.append(milestone(f"source_{k + 1}_read", lambda p, key=key: key in p.seen))
        read = [item["seen"] for item in self.params["items"]]
        for k in self.sinks:
            if SINKS[k].ends_with_answer:
                continue
            sink = SINKS[k]
            # a goal counts as a milestone once every source was read (ordered across apps)
            checks.append(
                milestone(
                    f"{k.lower()}_done",
                    lambda p, sink=sink: (
                        all(r in p.seen for r in read) and sink.check(p, self.params, None)
                    ),
                )
            )
        return checks

    def oracle(self, ctx: PredicateContext) -> Action:
        phone: PhoneState = ctx.state
        if phone.shade:
            return _GOBACK
        return self.expert(phone, ctx.screen)

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        source = SOURCES[self.sources[0]]
        for item in self.params["items"]:
            if item["seen"] not in phone.seen:
                action = source.nav(phone, screen, item)
                if action is not None:
                    return action
        for k in self.sinks:
            sink = SINKS[k]
            if sink.ends_with_answer or sink.check(phone, self.params, None):
                continue
            return sink.act(phone, screen, self.params)
        if any(SINKS[k].ends_with_answer for k in self.sinks):
            return Action(ActionType.ANSWER, text=self.params["value"])
        return Action(ActionType.DONE)


def _sink_phrase(sinks: tuple[str, ...], params: dict[str, Any]) -> str:
    parts = [SINKS[k].phrase(params) for k in sinks]
    return parts[0] if len(parts) == 1 else ", then ".join(parts)


def _make(sources: tuple[str, ...], sinks: tuple[str, ...], combine: str = "") -> None:
    source = SOURCES[sources[0]]
    tag = ("Total" if combine == "sum" else "Both") if len(sources) > 1 else ""
    name = f"Plus{tag}{source.key}To{''.join(sinks)}"
    sink_text = " then ".join(
        SINKS[k].phrase({"note": "{note}", "number": "{number}"}) for k in sinks
    )
    template = "{goal}, then " + sink_text + "."
    apps = {source.app, *(SINKS[k].app for k in sinks if SINKS[k].app)}
    cls = type(
        name,
        (PlusTask,),
        {
            "name": name,
            "app": source.app,
            "complexity": 2.0 * (len(sources) + len(sinks)),
            "template": template,
            "sources": sources,
            "sinks": sinks,
            "combine": combine,
            "needs_memory": len(sources) > 1,
            "answer_mode": None,
            "__doc__": f"Read {len(sources)} value(s) in {source.title}, then "
            + ", ".join(sinks)
            + f" ({len(apps)} apps).",
        },
    )
    cls.__module__ = __name__
    cls.__qualname__ = name
    globals()[name] = cls
    if name in PLUS_TASKS:
        raise ValueError(f"duplicate AndroidWorld+ template {name}")
    PLUS_TASKS[name] = cls


for _key, _source in SOURCES.items():
    # a sink in the source's own app would make a one-app task: Markor sources text instead
    _combos = (("Note",), ("Sms",), ("Note", "Sms"), ("Note", "Answer"))
    if _source.app == "markor":
        _combos = (("Sms",), ("Note", "Sms"), ("Sms", "Answer"))
    for _sinks in _combos:
        _make((_key,), _sinks)
for _key, _combine in (
    ("TrackDistance", "sum"),
    ("ExpenseAmount", "sum"),
    ("MeetingAttendees", "sum"),
    ("EventLocation", "list"),
    ("RecipePrepTime", "list"),
):
    for _sinks in (("Note",), ("Sms",)):
        _make((_key, _key), _sinks, _combine)


@functools.cache
def load_plus_suite() -> TaskSuite:
    """One suite entry per AndroidWorld+ template."""
    return TaskSuite((cls.placeholder() for cls in PLUS_TASKS.values()), name="androidworld_plus")
