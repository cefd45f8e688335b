"""Task files: valid files load; every malformed file fails with its path, field and reason."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from gui_gym.core.task import TaskFileError, TaskSuite
from gui_gym.envs.wikihow.tasks import WikiHowTask

VALID = {
    "format": "gui-gym/tasks",
    "version": 1,
    "suite": "demo",
    "tasks": [
        {
            "task_id": "open_about",
            "instruction": "Open the about page.",
            "category": "Cross-Page",
            "split": "train",
            "milestones": [
                {
                    "name": "about",
                    "predicate": {"state": {"path": "page.kind", "op": "eq", "value": "about"}},
                }
            ],
        },
        {
            "task_id": "answer_three",
            "instruction": "How many?",
            "category": "QA",
            "split": "test",
            "success": {"answer": {"value": "3", "mode": "numeric"}},
        },
    ],
}


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_valid_file_loads_with_splits_and_categories(tmp_path: Path) -> None:
    suite = TaskSuite.load(write(tmp_path, VALID))
    assert len(suite) == 2
    assert [t.task_id for t in suite.select("test")] == ["answer_three"]
    assert suite.categories == ["Cross-Page", "QA"]
    assert suite.counts() == {"train": {"Cross-Page": 1}, "test": {"QA": 1}}
    assert TaskSuite.from_data(suite.to_data()).task_ids == suite.task_ids


def mutate(path: str, value: object) -> dict:
    data = copy.deepcopy(VALID)
    target = data
    keys = path.split(".")
    for key in keys[:-1]:
        target = target[int(key)] if isinstance(target, list) else target[key]
    last = keys[-1]
    if value is KeyError:
        del target[last]
    elif isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return data


@pytest.mark.parametrize(
    ("data", "field", "reason"),
    [
        ("{not json", "line 1 column 2", "invalid JSON"),
        ("[]", "", "top level must be an object"),
        (mutate("format", "other"), "format", "expected 'gui-gym/tasks'"),
        (mutate("version", 9), "version", "unsupported version 9"),
        (mutate("tasks", []), "tasks", "non-empty list"),
        (mutate("tasks.0.task_id", KeyError), "tasks[0].task_id", "field required"),
        (mutate("tasks.0.task_id", "bad id!"), "tasks[0].task_id", "not a valid id"),
        (mutate("tasks.0.instruction", 5), "tasks[0].instruction", "must be a string"),
        (mutate("tasks.0.split", "dev"), "tasks[0].split", "must be one of train, test"),
        (mutate("tasks.0.colour", "red"), "tasks[0]", "unknown field(s) ['colour']"),
        (
            mutate("tasks.0.milestones.0.name", ""),
            "tasks[0].milestones[0].name",
            "non-empty string",
        ),
        (
            mutate("tasks.0.milestones.0.predicate.state.op", "eqq"),
            "tasks[0].milestones[0].predicate.state.op",
            "unknown operator 'eqq'",
        ),
        (
            mutate("tasks.0.milestones.0.reward", "one"),
            "tasks[0].milestones[0].reward",
            "must be a finite number, got 'one'",
        ),
        (
            mutate("tasks.0.milestones.0.reward", float("nan")),
            "tasks[0].milestones[0].reward",
            "must be a finite number",
        ),
        (mutate("tasks.1.success", {"answer": {}}), "tasks[1].success.answer", "needs 'value'"),
        (mutate("tasks.1.task_id", "open_about"), "tasks[1].task_id", "duplicate id 'open_about'"),
        (
            mutate("tasks.0.milestones", []),
            "tasks[0]",
            "needs a 'success' predicate or at least one milestone",
        ),
    ],
)
def test_malformed_files_fail_with_path_field_and_reason(
    tmp_path: Path, data: object, field: str, reason: str
) -> None:
    path = write(tmp_path, data)
    with pytest.raises(TaskFileError) as err:
        TaskSuite.load(path)
    assert err.value.path == str(path)
    assert err.value.field == field
    assert reason in err.value.reason
    assert str(path) in str(err.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match="cannot read"):
        TaskSuite.load(tmp_path / "absent.json")


def test_wikihow_plan_is_validated(tmp_path: Path) -> None:
    data = copy.deepcopy(VALID)
    data["tasks"][0]["plan"] = [{"op": "teleport"}]
    with pytest.raises(TaskFileError) as err:
        TaskSuite.load(write(tmp_path, data), task_cls=WikiHowTask)
    assert err.value.field == "tasks[0].plan[0].op"
    data["tasks"][0]["plan"] = [{"op": "click", "page": "search"}]
    with pytest.raises(
        TaskFileError, match=r"tasks\[0\]\.plan\[0\]: op 'click' needs \['target'\]"
    ):
        TaskSuite.load(write(tmp_path, data), task_cls=WikiHowTask)


def test_unknown_task_id_suggests_close_matches(tmp_path: Path) -> None:
    suite = TaskSuite.load(write(tmp_path, VALID))
    with pytest.raises(KeyError, match="did you mean 'open_about'"):
        suite["open_abuot"]
