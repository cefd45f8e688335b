"""Tasks and task suites: schema-validated JSON task files, declarative checks, oracles.

A task file is data::

    {
      "format": "gui-gym/tasks", "version": 1, "suite": "wikihow",
      "tasks": [
        {
          "task_id": "bake_lobster_tails-refs", "instruction": "...", "category": "Cross-Page",
          "split": "train", "params": {...}, "vocabulary": ["bake", "lobster"],
          "milestones": [{"name": "query_typed", "predicate": {...}}, ...],
          "success": {...predicate...},
          "plan": [{...oracle step...}, ...]
        }
      ]
    }

Loading validates every field; a bad file raises :class:`TaskFileError` naming the file, the
field (``tasks[3].milestones[0].predicate.state.op``) and the reason. ``plan`` is opaque to the
core: each benchmark's :class:`Task` subclass interprets it in :meth:`Task.oracle`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from gui_gym.core.predicates import (
    Predicate,
    PredicateContext,
    PredicateError,
    compile_predicate,
)

if TYPE_CHECKING:
    from gui_gym.core.actions import Action

__all__ = [
    "TASK_FILE_FORMAT",
    "Milestone",
    "Task",
    "TaskFileError",
    "TaskSuite",
]

TASK_FILE_FORMAT = "gui-gym/tasks"
TASK_FILE_VERSION = 1
_TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:\-]*$")


class TaskFileError(ValueError):
    """A task file that cannot be loaded: which file, which field, and why."""

    def __init__(self, path: str | Path, field: str, reason: str):
        self.path = str(path)
        self.field = field
        self.reason = reason
        where = f"{self.path}: {field}" if field else self.path
        super().__init__(f"{where}: {reason}")


@dataclass(frozen=True, slots=True)
class Milestone:
    """A named, ordered sub-goal checked by a declarative predicate.

    ``reward`` is what reaching it pays in suites whose benchmark rewards each milestone
    event (Mobile-Env's WikiHow ``reward_listener`` pays +1 per event; a task file marks its
    own intermediate checks with ``"reward": 0``); envs that pay only the outcome ignore it.
    """

    name: str
    predicate: Predicate
    description: str = ""
    reward: float = 1.0


@dataclass(eq=False)
class Task:
    """One task: the instruction, its parameters, its milestones and success check.

    Benchmarks subclass this to add :meth:`setup` (put the task's data into a fresh app state)
    and :meth:`oracle` (a scripted expert that solves the task from any reachable state).

    Attributes:
        task_id: Unique id within the suite.
        instruction: What the agent is asked to do.
        category: Benchmark-specific category (WikiHow: Cross-Page, In-Page, QA).
        split: ``train`` or ``test``.
        params: Task parameters (sampled values for templated tasks).
        milestones: Ordered sub-goals, reported in ``info["milestones"]`` when reached.
        success: Predicate that holds when the task is done; None means "all milestones".
        vocabulary: Words the task may need typed (random agents draw INPUT text from it).
        plan: Oracle plan data, interpreted by the benchmark's subclass.
    """

    task_id: str
    instruction: str
    category: str = ""
    split: str = "train"
    params: dict[str, Any] = field(default_factory=dict)
    milestones: tuple[Milestone, ...] = ()
    success: Predicate | None = None
    vocabulary: tuple[str, ...] = ()
    plan: tuple[dict[str, Any], ...] = ()

    spec_keys: ClassVar[frozenset[str]] = frozenset()
    """Extra top-level keys a subclass accepts in task files (kept in ``params``)."""

    def validate(self, where: str) -> None:
        """Benchmark-specific checks at load time (e.g. the oracle plan's shape).

        Raises:
            PredicateError: ``PredicateError(f"{where}.plan[0]", reason)`` for a bad field.
        """

    def setup(self, state: Any, rng: np.random.Generator) -> Any:
        """Prepare a fresh app ``state`` for this task; returns the (possibly new) state."""
        return state

    def is_successful(self, ctx: PredicateContext) -> float:
        """Outcome in [0, 1]: 1.0 when the success predicate holds (or, without one, when
        every milestone predicate holds now)."""
        if self.success is not None:
            return 1.0 if self.success.evaluate(ctx) else 0.0
        if not self.milestones:
            return 0.0
        return 1.0 if all(m.predicate.evaluate(ctx) for m in self.milestones) else 0.0

    def milestone_reward(self, names: Iterable[str]) -> float:
        """The summed ``reward`` of the named milestones (unknown names pay 0)."""
        rewards = {m.name: m.reward for m in self.milestones}
        return float(sum(rewards.get(name, 0.0) for name in names))

    def new_milestones(self, ctx: PredicateContext, reached: Sequence[str]) -> list[str]:
        """Names of milestones that hold in ``ctx`` and are not in ``reached``, in task order."""
        done = set(reached)
        new: list[str] = []
        for m in self.milestones:
            # a milestone may require an earlier one (``{"milestone": name}``), reached
            # before this step or by this same step
            ctx.milestones = (*reached, *new)
            if m.name not in done and m.predicate.evaluate(ctx):
                new.append(m.name)
        ctx.milestones = (*reached, *new)
        return new

    def oracle(self, ctx: PredicateContext) -> Action:
        """The expert's next action from the situation in ``ctx``.

        Raises:
            NotImplementedError: for tasks without a scripted expert.
        """
        raise NotImplementedError(f"task {self.task_id!r} has no oracle")

    def to_spec(self) -> dict[str, Any]:
        """The task as task-file data (inverse of loading)."""
        spec: dict[str, Any] = {
            "task_id": self.task_id,
            "instruction": self.instruction,
            "category": self.category,
            "split": self.split,
            "params": self.params,
            "vocabulary": list(self.vocabulary),
            "milestones": [
                {
                    "name": m.name,
                    "description": m.description,
                    "predicate": dict(m.predicate.spec),
                    **({"reward": m.reward} if m.reward != 1.0 else {}),
                }
                for m in self.milestones
            ],
            "plan": [dict(p) for p in self.plan],
        }
        if self.success is not None:
            spec["success"] = dict(self.success.spec)
        return spec


_TASK_KEYS = {
    "task_id": (str, True),
    "instruction": (str, True),
    "category": (str, False),
    "split": (str, False),
    "params": (dict, False),
    "vocabulary": (list, False),
    "milestones": (list, False),
    "success": (dict, False),
    "plan": (list, False),
}
_SPLITS = ("train", "test")


def _type_name(kind: type) -> str:
    return {str: "a string", dict: "an object", list: "a list"}[kind]


def _build_task(raw: Any, where: str, task_cls: type[Task]) -> Task:
    if not isinstance(raw, dict):
        raise PredicateError(where, "must be an object")
    allowed = set(_TASK_KEYS) | set(task_cls.spec_keys)
    extra = set(raw) - allowed
    if extra:
        raise PredicateError(
            where, f"unknown field(s) {sorted(extra)}; allowed: {', '.join(sorted(allowed))}"
        )
    for key, (kind, required) in _TASK_KEYS.items():
        if key not in raw:
            if required:
                raise PredicateError(f"{where}.{key}", "field required")
            continue
        if not isinstance(raw[key], kind):
            raise PredicateError(
                f"{where}.{key}", f"must be {_type_name(kind)}, got {type(raw[key]).__name__}"
            )
    task_id = raw["task_id"]
    if not _TASK_ID.match(task_id):
        raise PredicateError(
            f"{where}.task_id",
            f"{task_id!r} is not a valid id (letters, digits and _.:- ; starting alphanumeric)",
        )
    if not raw["instruction"].strip():
        raise PredicateError(f"{where}.instruction", "must not be empty")
    split = raw.get("split", "train")
    if split not in _SPLITS:
        raise PredicateError(
            f"{where}.split", f"must be one of {', '.join(_SPLITS)}, got {split!r}"
        )
    vocabulary = raw.get("vocabulary", [])
    for i, word in enumerate(vocabulary):
        if not isinstance(word, str):
            raise PredicateError(f"{where}.vocabulary[{i}]", "must be a string")
    milestones = []
    names: set[str] = set()
    for i, m in enumerate(raw.get("milestones", [])):
        at = f"{where}.milestones[{i}]"
        if not isinstance(m, dict):
            raise PredicateError(at, "must be an object with 'name' and 'predicate'")
        extra = set(m) - {"name", "predicate", "description", "reward"}
        if extra:
            raise PredicateError(at, f"unknown field(s) {sorted(extra)}")
        name = m.get("name")
        if not isinstance(name, str) or not name:
            raise PredicateError(f"{at}.name", "must be a non-empty string")
        if name in names:
            raise PredicateError(f"{at}.name", f"duplicate milestone name {name!r}")
        names.add(name)
        if "predicate" not in m:
            raise PredicateError(f"{at}.predicate", "field required")
        reward = m.get("reward", 1.0)
        if (
            isinstance(reward, bool)
            or not isinstance(reward, int | float)
            or not math.isfinite(reward)
        ):
            raise PredicateError(f"{at}.reward", f"must be a finite number, got {reward!r}")
        milestones.append(
            Milestone(
                name=name,
                predicate=compile_predicate(m["predicate"], f"{at}.predicate"),
                description=str(m.get("description", "")),
                reward=float(reward),
            )
        )
    success = compile_predicate(raw["success"], f"{where}.success") if "success" in raw else None
    if success is None and not milestones:
        raise PredicateError(where, "needs a 'success' predicate or at least one milestone")
    plan = raw.get("plan", [])
    for i, step in enumerate(plan):
        if not isinstance(step, dict):
            raise PredicateError(f"{where}.plan[{i}]", "must be an object")
    params = dict(raw.get("params", {}))
    for key in task_cls.spec_keys:
        if key in raw:
            params[key] = raw[key]
    task = task_cls(
        task_id=task_id,
        instruction=raw["instruction"],
        category=raw.get("category", ""),
        split=split,
        params=params,
        milestones=tuple(milestones),
        success=success,
        vocabulary=tuple(vocabulary),
        plan=tuple(plan),
    )
    task.validate(where)
    return task


class TaskSuite:
    """An ordered, immutable collection of tasks with split and category views.

    Args:
        tasks: The tasks; ids must be unique.
        name: Suite name (``wikihow``, ``androidworld``, ...).
        source: Where the tasks came from (a file path), for messages.
    """

    def __init__(self, tasks: Iterable[Task], name: str = "", source: str = ""):
        self.name = name
        self.source = source
        self._tasks: tuple[Task, ...] = tuple(tasks)
        self._by_id: dict[str, Task] = {}
        for t in self._tasks:
            if t.task_id in self._by_id:
                raise ValueError(f"duplicate task id {t.task_id!r} in suite {name or source!r}")
            self._by_id[t.task_id] = t

    # -- loading ------------------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path, task_cls: type[Task] = Task) -> TaskSuite:
        """Load and validate a task file.

        Raises:
            TaskFileError: with the file, the field and the reason, for any problem.
        """
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as err:
            raise TaskFileError(path, "", f"cannot read: {err.strerror or err}") from None
        except UnicodeDecodeError as err:
            raise TaskFileError(path, "", f"not UTF-8 text: {err}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise TaskFileError(
                path, f"line {err.lineno} column {err.colno}", f"invalid JSON: {err.msg}"
            ) from None
        except RecursionError:
            raise TaskFileError(path, "", "invalid JSON: nested too deeply") from None
        return cls.from_data(data, source=str(path), task_cls=task_cls)

    @classmethod
    def from_data(cls, data: Any, source: str = "<data>", task_cls: type[Task] = Task) -> TaskSuite:
        """Validate already-parsed task-file data (see :meth:`load`)."""
        if not isinstance(data, dict):
            raise TaskFileError(source, "", "the top level must be an object")
        fmt = data.get("format")
        if fmt != TASK_FILE_FORMAT:
            raise TaskFileError(source, "format", f"expected {TASK_FILE_FORMAT!r}, got {fmt!r}")
        version = data.get("version")
        if version != TASK_FILE_VERSION:
            raise TaskFileError(
                source,
                "version",
                f"unsupported version {version!r}; this gui-gym reads {TASK_FILE_VERSION}",
            )
        extra = set(data) - {"format", "version", "suite", "tasks", "metadata"}
        if extra:
            raise TaskFileError(source, "", f"unknown top-level field(s) {sorted(extra)}")
        raw_tasks = data.get("tasks")
        if not isinstance(raw_tasks, list) or not raw_tasks:
            raise TaskFileError(source, "tasks", "must be a non-empty list of tasks")
        tasks = []
        seen: dict[str, int] = {}
        for i, raw in enumerate(raw_tasks):
            try:
                task = _build_task(raw, f"tasks[{i}]", task_cls)
            except PredicateError as err:
                raise TaskFileError(source, err.path, err.reason) from None
            if task.task_id in seen:
                raise TaskFileError(
                    source,
                    f"tasks[{i}].task_id",
                    f"duplicate id {task.task_id!r} (first at tasks[{seen[task.task_id]}])",
                )
            seen[task.task_id] = i
            tasks.append(task)
        return cls(tasks, name=str(data.get("suite", "")), source=source)

    # -- views ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._tasks)

    def __iter__(self) -> Iterator[Task]:
        return iter(self._tasks)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._by_id

    def __getitem__(self, task_id: str) -> Task:
        """The task with this id.

        Raises:
            KeyError: naming close matches when the id is unknown.
        """
        if not isinstance(task_id, str):
            raise TypeError(f"a task id is a string, got {task_id!r} ({type(task_id).__name__})")
        try:
            return self._by_id[task_id]
        except KeyError:
            import difflib

            close = difflib.get_close_matches(task_id, list(self._by_id), n=3)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise KeyError(
                f"unknown task {task_id!r} in suite {self.name!r} ({len(self)} tasks){hint}"
            ) from None

    @property
    def task_ids(self) -> list[str]:
        return [t.task_id for t in self._tasks]

    @property
    def categories(self) -> list[str]:
        return sorted({t.category for t in self._tasks if t.category})

    def select(self, split: str = "all", category: str | None = None) -> list[Task]:
        """Tasks of a split (``train``, ``test`` or ``all``) and optionally one category.

        Raises:
            ValueError: for an unknown split or category, listing the allowed ones.
        """
        if split not in (*_SPLITS, "all"):
            raise ValueError(f"split must be 'train', 'test' or 'all', got {split!r}")
        if category is not None and category not in self.categories:
            raise ValueError(
                f"unknown category {category!r}; this suite has: {', '.join(self.categories)}"
            )
        return [
            t
            for t in self._tasks
            if (split == "all" or t.split == split) and (category is None or t.category == category)
        ]

    def counts(self) -> dict[str, dict[str, int]]:
        """Task counts per split and per category: ``{"train": {"QA": 12, ...}, ...}``."""
        out: dict[str, dict[str, int]] = {}
        for t in self._tasks:
            by_cat = out.setdefault(t.split, {})
            by_cat[t.category] = by_cat.get(t.category, 0) + 1
        return out

    def to_data(self) -> dict[str, Any]:
        """The suite as task-file data."""
        return {
            "format": TASK_FILE_FORMAT,
            "version": TASK_FILE_VERSION,
            "suite": self.name,
            "tasks": [t.to_spec() for t in self._tasks],
        }
