"""Tasks app information-retrieval tasks (AndroidWorld ``information_retrieval/proto/
tasks.textproto``, the six ``Tasks*`` entries).

Each template seeds the tasks its question is about (titles, due dates, priorities and
completion as in the proto's ``relevant_state``) plus 20 random tasks that avoid the proto's
``exclusion_conditions`` (AndroidWorld's ``task_app_utils``: due within a week of the device
date, half of them completed about two weeks back). Date parameters are reworded into the
natural forms AndroidWorld uses ("today", "this Friday", "October 19"...). The answer is
checked with AndroidWorld's matching (titles: fuzzy, comma-separated; counts: exact).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from datetime import date, datetime, timedelta
from typing import Any, ClassVar

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps.tasks_app import TasksData, visible_task_ids
from gui_gym.envs.androidworld.data import ANSWER_TITLES, DEVICE_DATE, PROTO_TIMES
from gui_gym.envs.androidworld.phone import PhoneState
from gui_gym.envs.androidworld.tasks.base import (
    AndroidWorldTask,
    milestone,
    mix_with_noise,
    open_app,
    register,
    tap,
)

__all__ = ["NOISE_TASKS", "TASK_NOTES", "TASK_TITLES", "reword_date"]

TASK_TITLES = (
    "Complete project proposal",
    "Review code changes",
    "Schedule team meeting",
    "Submit expense report",
    "Update website content",
    "Review quarterly goals",
    "Organize files and folders",
    "Draft marketing email",
    "Attend networking event",
    "Prepare presentation for meeting",
    "Call client for follow-up",
    "Research market trends",
    "Follow up on support tickets",
    "Prepare agenda for weekly meeting",
    "Book flights for conference",
    "Plan team outing",
    "Participate in brainstorming session",
    "Review performance metrics",
    "Attend training session",
    "Send report to manager",
)
"""Titles of the proto's ``title`` parameters (the later entries add ``_EXTRA_TITLES``)."""
_EXTRA_TITLES = (
    "Dinner with friends",
    "Organize movie night",
    "Exercise session with coach",
    "Read book for book club",
    "Plan family reunion",
)
_HIGH_TITLES = (
    "Project Milestone Review",
    "Submit Budget Report",
    "Proposal Draft Submission",
    "Team Sync-Up Meeting",
    "Client Feedback Session",
    "Code Review",
    "Marketing Campaign Launch",
    "Product Design Review",
    "Stakeholder Update Meeting",
    "Quarterly Sales Review",
)
TASK_NOTES = (
    "Remember to complete this task.",
    "This task is important.",
    "Don't forget to follow up on this task.",
    "Double-check calculations.",
    "Confirm meeting location.",
    "Follow up with team members.",
    "Prepare presentation slides.",
    "Update project status.",
    "Check email for updates.",
    "Review feedback from client.",
    "Complete paperwork.",
    "Schedule follow-up meeting.",
)
_NOTES_B = (
    "This is high priority.",
    "This is urgent.",
    "Remember to review ahead of time.",
    "Double-check details.",
    "Schedule time on calendar.",
    "Follow up with others.",
    "Send emails to everyone.",
    "Send an update.",
    "Monitor email for updates on this.",
    "Check handwritten notes.",
    "Complete survey.",
    "Schedule follow-up tasks.",
)
_HIGH_TIMES = (
    "5:00pm",
    "12:00pm",
    "8:00am",
    "11:59pm",
    "2:00pm",
    "9:00am",
    "3:30pm",
    "10:00am",
    "4:45pm",
    "7:00pm",
)

NOISE_TASKS: dict[str, str] = {
    "Grocery Shopping": (
        "Don't forget milk, eggs, and bread. Also need to pick up snacks for the kids."
    ),
    "Finish Project Proposal": "Deadline is Friday. Need to finalize budget and timeline sections.",
    "Schedule Dentist Appointment": "Teeth cleaning overdue. Call Dr. Smith's office.",
    "Water Plants": "Check moisture level before watering. Fertilize succulents.",
    "Meal Prep for the Week": (
        "Make a grocery list based on planned meals. Cook chicken and chop veggies on Sunday."
    ),
    "Research Vacation Destinations": (
        "Looking for beach destinations with family-friendly activities."
    ),
    "Read 'The Martian'": "Started last week. Aim to finish by next weekend.",
    "Call Grandma": "Catch up on family news. Ask for her famous cookie recipe.",
    "Change Air Filter": "Last changed 3 months ago. Buy a new filter at the hardware store.",
    "Brainstorm Blog Post Ideas": "Need 5 new topics for the next month's content calendar.",
    "Renew Driver's License": "Expires next month. Check DMV website for requirements.",
    "Organize Closet": "Donate old clothes and shoes. Put winter clothes in storage.",
    "Submit Expense Report": "Deadline is Wednesday. Attach receipts for all purchases.",
    "Attend Team Meeting": "Agenda includes project updates and brainstorming new initiatives.",
    "Learn to Play Guitar": "Practice chords for 30 minutes every day. Find online tutorials.",
    "Reply to Emails": (
        "Inbox is overflowing. Prioritize urgent messages and unsubscribe from unwanted lists."
    ),
    "Clean Out Fridge": "Check expiration dates and discard old food. Wipe down shelves.",
    "Create Budget for Next Month": "Track income and expenses. Set savings goals.",
    "Back Up Computer Files": "Use external hard drive or cloud storage. Schedule regular backups.",
    "Take Dog to the Vet": "Annual checkup and vaccinations due.",
}
"""Titles and notes of the random tasks (AndroidWorld's ``task_app_utils._TASKS``)."""

_NOW = datetime(2023, 10, 15, 15, 34)


def _days(first: int, last: int) -> tuple[str, ...]:
    return tuple(date(2023, 10, d).isoformat() for d in range(first, last + 1))


def reword_date(rng: random.Random, iso: str) -> str:
    """A natural wording of a day as AndroidWorld's ``generate_reworded_date`` picks it:
    "October 16", "October 16 2023", today/tomorrow/yesterday, "<Weekday>" or
    "this <Weekday>" within a week ahead, "the <Weekday> after next" 8-14 days ahead, or
    "<Weekday>" within a week back."""
    d = date.fromisoformat(iso)
    today = DEVICE_DATE
    options = [d.strftime("%B %d"), d.strftime("%B %d %Y")]
    if d == today:
        options.append("today")
    if d == today + timedelta(days=1):
        options.append("tomorrow")
    if d == today - timedelta(days=1):
        options.append("yesterday")
    weekday = d.strftime("%A")
    if d > today:
        if d - today <= timedelta(days=7):
            options += [weekday, f"this {weekday}"]
        elif d - today <= timedelta(days=14):
            options.append(f"the {weekday} after next")
    elif d < today and today - d <= timedelta(days=7):
        options.append(weekday)
    return rng.choice(options)


def _hhmm(text: str) -> str:
    """``"3:15pm"``/``"12pm"``/``"21:45"`` -> ``"HH:MM"`` (24 h)."""
    compact = text.strip().lower().replace(" ", "")
    for fmt in ("%H:%M", "%I:%M%p", "%I%p"):
        try:
            return datetime.strptime(compact, fmt).strftime("%H:%M")
        except ValueError:
            continue
    raise ValueError(f"bad time {text!r}")


def _task(
    title: str,
    due: str = "",
    due_time: str = "",
    importance: int = 2,
    completed: str = "",
    completed_time: str = "",
    notes: str = "",
) -> dict[str, Any]:
    return {
        "title": title,
        "importance": importance,
        "due": due,
        "due_time": due_time,
        "completed": completed,
        "completed_time": completed_time,
        "notes": notes,
    }


def _random_noise(rng: random.Random) -> dict[str, Any]:
    """A random task (``task_app_utils._generate_random_task``): due within a week either
    side of the device time, half of them completed around two weeks before it."""
    title = rng.choice(list(NOISE_TASKS))
    notes = NOISE_TASKS[title] if rng.random() < 0.5 else ""
    importance = rng.randint(0, 3)
    due = _NOW - timedelta(days=7) + timedelta(minutes=rng.randrange(14 * 24 * 60))
    completed = completed_time = ""
    if rng.random() < 0.5:
        done = _NOW - timedelta(days=21) + timedelta(minutes=rng.randrange(14 * 24 * 60))
        completed, completed_time = done.date().isoformat(), done.strftime("%H:%M")
    return _task(
        title,
        due.date().isoformat(),
        due.strftime("%H:%M"),
        importance,
        completed,
        completed_time,
        notes,
    )


class _TasksQuestion(AndroidWorldTask):
    """A question about the Tasks list, answered with ANSWER.

    Class attributes:
        sort: The list order in which the answer rows sit together ("due"), or None.
        needs_completed: Whether the answer rows are completed (hidden until shown).
    """

    app = "tasks_app"
    answer_mode = "string"
    sort: ClassVar[str | None] = "due"
    needs_completed: ClassVar[bool] = False

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        """The proto's exclusion conditions: random tasks for which this holds are redrawn."""
        return lambda row: False

    def initialize_task(self, phone: PhoneState, rng: random.Random) -> None:
        rows = mix_with_noise(
            rng, self.params["tasks"], 20, _random_noise, self.excluded(self.params)
        )
        data: TasksData = phone.apps["tasks_app"]
        data.tasks = []
        data.next_id = 1
        for row in rows:
            data.add(**row)

    def expected_answer(self) -> list[str]:
        return [t["title"] for t in self.params["tasks"]]

    def answer_text(self) -> str:
        return ", ".join(self.expected_answer())

    def _answer_ids(self, phone: PhoneState) -> set[int]:
        """Ids of the rows the answer is read from (the seeded tasks)."""
        wanted = {(t["title"], t["due"]) for t in self.params["tasks"]}
        data: TasksData = phone.apps["tasks_app"]
        return {t.id for t in data.tasks if (t.title, t.due) in wanted}

    def _answer_in_view(self, phone: PhoneState) -> bool:
        ids = self._answer_ids(phone)
        return bool(ids) and ids <= visible_task_ids(phone)

    def milestone_checks(self):
        return [
            self.opened_milestone(),
            milestone("answer_in_view", self._answer_in_view),
        ]

    def expert(self, phone: PhoneState, screen: UITree) -> Action:
        data: TasksData = phone.apps["tasks_app"]
        if phone.dialog is not None:
            if self.sort is not None and data.sort != self.sort:
                action = tap(screen, handler="tasks_app.set_sort", handler_arg=self.sort)
                if action is not None:
                    return action
            return Action(ActionType.GOBACK)
        action = open_app(phone, "tasks_app", "Tasks")
        if action is not None:
            return action
        current = phone.screen
        assert current is not None
        if phone.focus or current.name != "main":
            return Action(ActionType.GOBACK)
        if self.needs_completed and not data.show_completed:
            return _tap_or_back(screen, "tasks_app.toggle_completed")
        if self.sort is not None and data.sort != self.sort:
            return _tap_or_back(screen, "tasks_app.sort_menu")
        ids = self._answer_ids(phone)
        open_tasks, done = data.shown()
        rank = {t.id: k for k, t in enumerate(open_tasks + done)}
        if not ids <= rank.keys() and not data.show_completed:
            # an answer row was marked completed meanwhile: it only shows in that section
            return _tap_or_back(screen, "tasks_app.toggle_completed")
        shown = {int(e.handler_arg) for e in screen.find(handler="tasks_app.open")}
        answer = Action(ActionType.ANSWER, text=self.answer_text())
        wanted = sorted(rank[i] for i in ids if i in rank)
        seen = sorted(rank[i] for i in shown if i in rank)
        if ids <= shown or not wanted:
            return answer
        if seen and ids & shown and wanted[-1] - wanted[0] + 1 > len(seen):
            return answer  # the rows span more than a screen: read them in parts
        if seen and wanted[0] < seen[0]:
            up = screen.can_scroll_up
            return Action(ActionType.SCROLL, direction="up") if up else answer
        if screen.can_scroll_down:
            return Action(ActionType.SCROLL, direction="down")
        return Action(ActionType.SCROLL, direction="up") if screen.can_scroll_up else answer


def _three_due_on_a_day(
    rng: random.Random,
    titles: Sequence[str],
    importances: Sequence[int],
    notes: Sequence[str],
) -> dict[str, Any]:
    """Parameters of a question about three open tasks due on one day of October 15-29:
    distinct titles, importances and notes sampled from the given pools."""
    day = rng.choice(_days(15, 29))
    chosen = rng.sample(titles, 3)
    importance = rng.sample(importances, 3)
    picked_notes = rng.sample(notes, 3)
    return {
        "date": reword_date(rng, day),
        "due_date": day,
        "tasks": [
            _task(t, day, importance=i, notes=n)
            for t, i, n in zip(chosen, importance, picked_notes, strict=True)
        ],
    }


def _tap_or_back(screen: UITree, handler: str) -> Action:
    return tap(screen, handler=handler) or Action(ActionType.GOBACK)


@register
class TasksDueOnDate(_TasksQuestion):
    """Titles of the three tasks due on a day (no other task is due that day)."""

    name = "TasksDueOnDate"
    template = "What tasks do I have due {date} in Tasks app?" + ANSWER_TITLES

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return _three_due_on_a_day(rng, TASK_TITLES, (0, 0, 1, 1, 2, 2, 3, 3), TASK_NOTES)

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        day = params["due_date"]
        return lambda row: row["due"] == day


@register
class TasksHighPriorityTasks(_TasksQuestion):
    """Title of the only high-priority task (no random task is high priority)."""

    name = "TasksHighPriorityTasks"
    template = "What are my high priority tasks in Tasks app?" + ANSWER_TITLES
    sort = None

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {
            "tasks": [
                _task(
                    rng.choice(TASK_TITLES),
                    rng.choice(_days(16, 22)),
                    _hhmm(rng.choice(PROTO_TIMES)),
                    importance=0,
                    notes=rng.choice(TASK_NOTES),
                )
            ]
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        return lambda row: row["importance"] == 0


@register
class TasksHighPriorityTasksDueOnDate(_TasksQuestion):
    """Title of the one high-priority task due on a day (no other high-priority task is due
    that day)."""

    name = "TasksHighPriorityTasksDueOnDate"
    template = (
        "Which tasks with high priority are due {date} in the Tasks app? Answer with the title "
        "only. If there are multiples titles, format your answer in a comma separated list."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        day = rng.choice(_days(15, 29))
        time = _hhmm(rng.choice(_HIGH_TIMES))
        return {
            "date": reword_date(rng, day),
            "due_date": day,
            "tasks": [_task(rng.choice(_HIGH_TITLES), day, time, importance=0)],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        day = params["due_date"]
        return lambda row: row["due"] == day and row["importance"] == 0


@register
class TasksDueNextWeek(_TasksQuestion):
    """How many tasks are due Monday October 16 to Sunday October 22 (no random task is).

    Adapted: AndroidWorld always seeds 6 such tasks, so its answer is always 6; here 3-6 are
    seeded (distinct due days) so the count has to be read off the list."""

    name = "TasksDueNextWeek"
    complexity = 1.2
    answer_mode = "number"
    template = (
        "How many tasks do I have due next week in Tasks app? Assume the week starts from "
        "Monday. Express your answer as a single integer."
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        n = rng.randint(3, 6)
        titles = rng.sample(TASK_TITLES + _EXTRA_TITLES, n)
        days = rng.sample(_days(16, 22), n)
        notes = rng.sample(_NOTES_B, n)
        return {
            "count": n,
            "tasks": [_task(t, d, notes=x) for t, d, x in zip(titles, days, notes, strict=True)],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        return lambda row: "2023-10-16" <= row["due"] <= "2023-10-22"

    def expected_answer(self) -> list[str]:
        return [str(len(self.params["tasks"]))]

    def answer_text(self) -> str:
        return str(len(self.params["tasks"]))


@register
class TasksCompletedTasksForDate(_TasksQuestion):
    """Titles of the three completed tasks due on a day (no other task is due that day);
    completed tasks only show once "Show completed" is on."""

    name = "TasksCompletedTasksForDate"
    template = "Which tasks have I completed for {date} in Tasks app?" + ANSWER_TITLES
    needs_completed = True

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        day = rng.choice(_days(10, 20))
        done = rng.choice(_days(10, 15))
        titles = rng.sample(TASK_TITLES + _EXTRA_TITLES, 3)
        times = [_hhmm(t) for t in rng.sample(PROTO_TIMES, 3)]
        notes = rng.sample(_NOTES_B, 3)
        return {
            "date": reword_date(rng, day),
            "due_date": day,
            "tasks": [
                _task(t, day, completed=done, completed_time=tm, notes=n)
                for t, tm, n in zip(titles, times, notes, strict=True)
            ],
        }

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        day = params["due_date"]
        return lambda row: row["due"] == day


@register
class TasksIncompleteTasksOnDate(_TasksQuestion):
    """Titles of the three open tasks due by a day (every random task due by then is
    completed)."""

    name = "TasksIncompleteTasksOnDate"
    template = (
        "What incomplete tasks do I have still have to do by {date} in Tasks app?" + ANSWER_TITLES
    )

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return _three_due_on_a_day(rng, TASK_TITLES + _EXTRA_TITLES, (0, 1, 2, 3), _NOTES_B)

    @classmethod
    def excluded(cls, params: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        day = params["due_date"]
        return lambda row: row["due"] <= day and not row["completed"]
