"""Tasks (``org.tasks``, Tasks.org): a to-do list with due dates, priorities and completion.

The list shows open tasks sorted by due date, priority or title (the Sort menu); completed
tasks are hidden until "Show completed" is switched on, then listed in a section of their own.
Tapping a task opens its details, where it can be marked completed or not.

Priorities follow the app's ``importance`` column: 0 high, 1 medium, 2 low, 3 none.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from gui_gym.core.actions import Action
from gui_gym.core.sim import Block
from gui_gym.core.ui import UIElement
from gui_gym.envs.androidworld.apps.rows import ImmutableRow, RowTable
from gui_gym.envs.androidworld.phone import (
    AppView,
    Dialog,
    PhoneApp,
    PhoneState,
    Screen,
    icon,
    visible_args,
)

__all__ = [
    "PRIORITIES",
    "SORTS",
    "TasksApp",
    "TasksData",
    "TodoTask",
    "visible_task_ids",
]

PRIORITIES = {0: "High", 1: "Medium", 2: "Low", 3: "None"}
SORTS = {"due": "Due date", "priority": "Priority", "title": "Title"}
NOW_DAY, NOW_TIME = "2023-10-15", "15:34"


def _day(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d:%a}, {d:%b} {d.day}"


def _long_day(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d:%A}, {d:%B} {d.day} {d.year}"


def _clock(hhmm: str) -> str:
    hour, minute = (int(x) for x in hhmm.split(":"))
    return f"{(hour % 12) or 12}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


@dataclass(frozen=True)
class TodoTask(ImmutableRow):
    """One row of the app's ``tasks`` table (dates as ISO days, times as ``HH:MM``)."""

    id: int
    title: str
    importance: int = 2
    due: str = ""
    due_time: str = ""
    completed: str = ""
    completed_time: str = ""
    notes: str = ""

    @property
    def done(self) -> bool:
        return bool(self.completed)

    @property
    def priority(self) -> str:
        return PRIORITIES.get(self.importance, "None")


@dataclass
class TasksData(RowTable[TodoTask]):
    """The app's data: tasks plus the list's sort order and completed-tasks switch."""

    rows_attr = "tasks"
    row_type = TodoTask

    tasks: list[TodoTask] = field(default_factory=list)
    next_id: int = 1
    sort: str = "due"
    show_completed: bool = False

    def _key(self, t: TodoTask) -> tuple[Any, ...]:
        due = (t.due or "9999-12-31", t.due_time or "99:99")
        if self.sort == "priority":
            return (t.importance, *due, t.title.lower(), t.id)
        if self.sort == "title":
            return (t.title.lower(), *due, t.id)
        return (*due, t.importance, t.title.lower(), t.id)

    def shown(self) -> tuple[list[TodoTask], list[TodoTask]]:
        """(open tasks, completed tasks) in list order; the second is empty when hidden."""
        open_tasks = sorted((t for t in self.tasks if not t.done), key=self._key)
        done = (
            sorted((t for t in self.tasks if t.done), key=self._key) if self.show_completed else []
        )
        return open_tasks, done


@functools.lru_cache(maxsize=4096)
def _row(t: TodoTask) -> Block:
    """A task's list row (rows are immutable, so they are cached)."""
    parts = [t.title, f"Due {_day(t.due)}" if t.due else "No due date"]
    parts.append(f"{t.priority} priority" if t.importance < 3 else "No priority")
    if t.done:
        parts.append(f"Completed {_day(t.completed)}")
    return Block(
        "listitem",
        " · ".join(parts),
        resource_id="task_row",
        clickable=True,
        handler="tasks_app.open",
        handler_arg=str(t.id),
        gap=2,
    )


class TasksApp(PhoneApp):
    key = "tasks_app"
    title = "Tasks"
    package = "org.tasks"
    aliases = ("tasks", "tasks app", "tasks.org", "to-do", "todo")
    launcher_order = 50

    def initial_data(self) -> TasksData:
        return TasksData()

    def view(self, phone: PhoneState, screen: Screen) -> AppView:
        data: TasksData = self.data(phone)
        if screen.name == "detail":
            return self._detail(data, screen)
        open_tasks, done = data.shown()
        content: list[Block] = [_row(t) for t in open_tasks]
        if not open_tasks:
            content.append(Block("text", "No open tasks. Enjoy your day!"))
        if data.show_completed:
            content.append(Block("heading", f"Completed ({len(done)})", resource_id="completed"))
            content.extend(_row(t) for t in done)
        return AppView(
            "My Tasks",
            content,
            actions=[
                icon(f"Sort: {SORTS.get(data.sort, 'Due date')}", "tasks_app.sort_menu", "sort"),
                icon(
                    "Hide completed" if data.show_completed else "Show completed",
                    "tasks_app.toggle_completed",
                    "show_completed",
                    checkable=True,
                    checked=data.show_completed,
                ),
            ],
        )

    def _detail(self, data: TasksData, screen: Screen) -> AppView:
        t = data.get(int(screen.arg))
        if t is None:
            return AppView("Task", [Block("text", "This task was deleted.")])
        due = "No due date"
        if t.due:
            due = f"Due: {_long_day(t.due)}" + (f", {_clock(t.due_time)}" if t.due_time else "")
        status = "Not completed"
        if t.done:
            status = f"Completed: {_long_day(t.completed)}" + (
                f", {_clock(t.completed_time)}" if t.completed_time else ""
            )
        return AppView(
            "Task",
            [
                Block("heading", t.title, resource_id="task_title"),
                Block("text", due, resource_id="task_due"),
                Block("text", f"Priority: {t.priority}", resource_id="task_priority"),
                Block("text", status, resource_id="task_status"),
                Block("text", f"Notes: {t.notes or '-'}", resource_id="task_notes"),
                self.button(
                    "Mark as not completed" if t.done else "Mark as completed",
                    "toggle_done",
                    screen.arg,
                ),
            ],
        )

    # -- handlers ------------------------------------------------------------------------------

    def on_click_open(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        self.push(phone, "detail", element.handler_arg)

    def on_click_sort_menu(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        phone.dialog = Dialog(
            "Sort by", buttons=[(label, "tasks_app.set_sort", key) for key, label in SORTS.items()]
        )

    def on_click_set_sort(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: TasksData = self.data(phone)
        data.sort = element.handler_arg
        phone.dialog = None
        phone.stacks[self.key][-1].scroll = 0

    def on_click_toggle_completed(
        self, phone: PhoneState, element: UIElement, action: Action
    ) -> None:
        data: TasksData = self.data(phone)
        data.show_completed = not data.show_completed

    def on_click_toggle_done(self, phone: PhoneState, element: UIElement, action: Action) -> None:
        data: TasksData = self.data(phone)
        task_id = int(element.handler_arg)

        def flip(t: TodoTask) -> TodoTask:
            if t.done:
                return replace(t, completed="", completed_time="")
            return replace(t, completed=NOW_DAY, completed_time=NOW_TIME)

        data.tasks = [flip(t) if t.id == task_id else t for t in data.tasks]
        phone.toast = "Task updated"


_APP = TasksApp()


def visible_task_ids(phone: PhoneState) -> set[int]:
    """Ids of the task rows on screen now (at least partly, as the phone cuts its window),
    computed from the state alone: empty unless the Tasks list is in front, unobstructed."""
    return {int(arg) for arg in visible_args(phone, _APP, "tasks_app.open") if arg}
