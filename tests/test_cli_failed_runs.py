"""A failed command leaves nothing, or a state the same command resumes; never a folder that
refuses the corrected rerun (the rule in gui_gym/cli/_common.py, "A failed run")."""

from __future__ import annotations

import inspect
import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import gui_gym.runs.record
from gui_gym.cli import app
from gui_gym.cli._common import UsageError
from gui_gym.envs.replay import ExpertDataset

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "androidcontrol_sample.jsonl"
runner = CliRunner()


def _one_line_error(result) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    return lines[0]


def _expert_gives_up_after_one_episode(monkeypatch: pytest.MonkeyPatch) -> None:
    # `record GuiGym/MiniWoB-v0 --agent oracle` meets a task without an expert mid-run: one
    # episode is on disk when the error comes
    real = gui_gym.runs.record.record_dataset

    def gives_up(env_id, agent="oracle", **kwargs):
        real(env_id, agent, **{**kwargs, "episodes": kwargs["episodes"] - 1})
        raise NotImplementedError("no oracle for MiniWoB task 'bisect-angle'")

    monkeypatch.setattr(gui_gym.runs.record, "record_dataset", gives_up)


def test_a_failed_record_into_a_new_folder_leaves_nothing(monkeypatch, tmp_path: Path) -> None:
    out = tmp_path / "runs" / "rec"
    argv = ["record", "GuiGym/WikiHow-v0", "--episodes", "2", "--no-progress", "--out", str(out)]
    with monkeypatch.context() as patch:
        _expert_gives_up_after_one_episode(patch)
        line = _one_line_error(runner.invoke(app, argv))
    assert "no oracle for MiniWoB task 'bisect-angle'" in line and "removed" in line
    assert not (tmp_path / "runs").exists()  # the folders this run made on the way too
    # the corrected command (other tasks: a dataset of other arguments) is accepted
    fixed = [*argv, "--task", "pack_for_a_camping_trip-category_name", "--split", "all"]
    result = runner.invoke(app, fixed)
    assert result.exit_code == 0, result.output
    assert len(ExpertDataset.load(out)) == 2


def test_a_failed_record_into_an_existing_dataset_keeps_it_to_resume(
    monkeypatch, tmp_path: Path
) -> None:
    out = tmp_path / "rec"
    argv = ["record", "GuiGym/WikiHow-v0", "--no-progress", "--out", str(out)]
    assert runner.invoke(app, [*argv, "--episodes", "1"]).exit_code == 0
    with monkeypatch.context() as patch:
        _expert_gives_up_after_one_episode(patch)
        line = _one_line_error(runner.invoke(app, [*argv, "--episodes", "3"]))
    assert "kept in" in line and "a rerun resumes" in line
    assert len(ExpertDataset.load(out)) == 2  # the earlier episode and the one this run added
    result = runner.invoke(app, [*argv, "--episodes", "3"])
    assert result.exit_code == 0, result.output
    assert "1 recorded now" in result.output and len(ExpertDataset.load(out)) == 3


def test_a_convert_that_meets_a_bad_episode_leaves_nothing(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE.parent / "shots", tmp_path / "shots")
    first = SAMPLE.read_text(encoding="utf-8").splitlines()[0]
    source = tmp_path / "episodes.jsonl"
    source.write_text(first + '\n{"episode_id": 7, "goal": 3}\n', encoding="utf-8")
    out = tmp_path / "data" / "ac"
    line = _one_line_error(runner.invoke(app, ["convert", str(source), "--out", str(out)]))
    assert "episodes.jsonl:2: goal" in line and not (tmp_path / "data").exists()
    source.write_text(first + "\n", encoding="utf-8")  # the user fixes the file
    result = runner.invoke(app, ["convert", str(source), "--out", str(out)])
    assert result.exit_code == 0 and "1 episodes converted" in result.output, result.output


def test_a_failed_eval_removes_its_new_summary_and_episode_log(monkeypatch, tmp_path) -> None:
    import gui_gym.runs.evaluate

    real = gui_gym.runs.evaluate.evaluate

    def fails_mid_run(env_id, agent, **kwargs):
        real(env_id, agent, **{**kwargs, "episodes": 1})  # one episode streamed to the log
        raise UsageError("the agent's server answered 401: check --api-key")

    out = tmp_path / "results.json"
    argv = ["eval", "GuiGym/WikiHow-v0", "--agent", "random", "--episodes", "2"]
    argv += ["--no-progress", "--out", str(out)]
    with monkeypatch.context() as patch:
        patch.setattr(gui_gym.runs.evaluate, "evaluate", fails_mid_run)
        line = _one_line_error(runner.invoke(app, argv))
    assert "401" in line and "removed" in line
    assert list(tmp_path.iterdir()) == []  # neither results.json nor its episodes log
    result = runner.invoke(app, argv)
    assert result.exit_code == 0 and out.is_file(), result.output


def test_a_failed_label_leaves_no_labels_file(monkeypatch, tmp_path: Path) -> None:
    import gui_gym.rewards.progress

    trajectories = tmp_path / "episodes.jsonl"
    record = ["record", "GuiGym/WikiHow-v0", "--episodes", "2", "--no-progress"]
    assert runner.invoke(app, [*record, "--out", str(tmp_path / "wh")]).exit_code == 0
    shutil.copy(tmp_path / "wh" / "trajectories.jsonl", trajectories)
    out = tmp_path / "labels" / "labels.jsonl"
    argv = ["label", "--trajectories", str(trajectories), "--out", str(out)]
    argv += ["--embedder", "hashing", "--no-progress"]

    def half_written(path, *args, **kwargs):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text('{"partial": ', encoding="utf-8")
        raise UsageError("disk quota exceeded")

    with monkeypatch.context() as patch:
        patch.setattr(gui_gym.rewards.progress, "write_labeled_trajectories", half_written)
        _one_line_error(runner.invoke(app, argv))
    assert not (tmp_path / "labels").exists()
    result = runner.invoke(app, argv)
    assert result.exit_code == 0 and out.is_file(), result.output


def test_every_command_that_writes_declares_its_output() -> None:
    # the rule applies to a command through output_dir / output_file: one that writes an
    # --out path without declaring it would leave a failed run's output behind
    group = typer.main.get_command(app)
    writers = []
    for name, command in group.commands.items():
        if not any(param.name == "out" for param in command.params):
            continue
        source = inspect.getsource(command.callback)
        assert "output_dir(" in source or "output_file(" in source, name
        writers.append(name)
    assert {"record", "convert", "label", "train-progress", "train-prm", "sft", "train"} <= set(
        writers
    )
    assert {"eval", "view", "bench"} <= set(writers)
