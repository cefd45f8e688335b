"""``gui-gym label`` and ``gui-gym train-progress``."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest
from typer.testing import CliRunner

import gui_gym  # noqa: F401
from gui_gym.agents import OracleAgent, RandomAgent, run_episode
from gui_gym.cli import app
from gui_gym.core.trajectory import write_trajectories
from gui_gym.rewards.progress import read_labeled_trajectories
from tests.conftest import require

runner = CliRunner()


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Tiny models train far faster on one thread than on two contended ones."""
    try:
        import torch
    except ImportError:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


TASKS = ["pack_for_a_camping_trip-category_name", "sew_on_a_button-references"]


@pytest.fixture(scope="module")
def episodes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = gym.make("GuiGym/WikiHow-v0", max_steps=6)
    trajectories = []
    for task in TASKS:
        for seed in range(2):
            trajectories.append(
                run_episode(env, OracleAgent(env), seed=seed, options={"task": task})
            )
        trajectories.append(
            run_episode(env, RandomAgent(env, seed=0), seed=0, options={"task": task})
        )
    path = tmp_path_factory.mktemp("cli") / "episodes.jsonl"
    write_trajectories(path, trajectories)
    return path


def test_label_env_uses_the_suite_milestone_totals(episodes: Path, tmp_path: Path) -> None:
    out = tmp_path / "env.jsonl"
    result = runner.invoke(
        app, ["label", "--trajectories", str(episodes), "--method", "env", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "labelled 6 trajectories" in result.output
    trajectories, labels = read_labeled_trajectories(out)
    assert labels[0] is not None and labels[0].progress[-1] == 1.0  # oracle success
    assert labels[0].labels[0].reason.startswith("key step: milestone query_typed")
    # QA task: five milestones; typing the query reaches two of them.
    assert labels[0].progress[0] == pytest.approx(2 / 5)
    assert trajectories[0].task_id == TASKS[0]


def test_label_lcs_writes_reasons(episodes: Path, tmp_path: Path) -> None:
    out = tmp_path / "lcs.jsonl"
    result = runner.invoke(
        app,
        [
            "label",
            "--trajectories",
            str(episodes),
            "--out",
            str(out),
            "--embedder",
            "hashing",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    record = json.loads(out.read_text().splitlines()[0])
    assert record["progress"]["method"] == "lcs"
    assert record["progress"]["labels"][-1] == 1.0
    assert record["progress"]["reasons"][0].startswith("key step: matches step 1/")


def test_label_rejects_bad_input(episodes: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["label", "--trajectories", str(episodes), "--method", "magic", "--out", "x"]
    )
    assert result.exit_code == 2 and "allowed: lcs, env" in result.output
    result = runner.invoke(
        app, ["label", "--trajectories", str(tmp_path / "none.jsonl"), "--out", "x"]
    )
    assert result.exit_code != 0 and "no such file" in result.output


def test_train_progress_and_resume(episodes: Path, tmp_path: Path) -> None:
    require("torch", "llm")
    labels = tmp_path / "env.jsonl"
    runner.invoke(
        app, ["label", "--trajectories", str(episodes), "--method", "env", "--out", str(labels)]
    )

    def args(epochs: int) -> list[str]:
        return [
            "train-progress",
            "--labels",
            str(labels),
            "--eval",
            str(labels),
            "--out",
            str(tmp_path / "run"),
            "--epochs",
            str(epochs),
            "--batch-size",
            "8",
            "--hidden",
            "16",
            "--layers",
            "1",
            "--max-length",
            "64",
            "--no-progress",
        ]

    result = runner.invoke(app, args(1))
    assert result.exit_code == 0, result.output
    assert "eval MAE" in result.output
    assert (tmp_path / "run" / "model" / "model.safetensors").is_file()
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    steps = metrics["global_step"]
    resumed = runner.invoke(app, [*args(2), "--resume"])
    assert resumed.exit_code == 0, resumed.output
    again = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert again["global_step"] == 2 * steps and len(again["epochs"]) == 2


def test_train_orm_on_plain_trajectories_and_progrm_needs_labels(
    episodes: Path, tmp_path: Path
) -> None:
    require("torch", "llm")
    base = ["--out", str(tmp_path / "orm"), "--epochs", "1", "--hidden", "16", "--layers", "1"]
    orm = runner.invoke(
        app,
        ["train-progress", "--labels", str(episodes), "--kind", "orm", *base, "--no-progress"],
    )
    assert orm.exit_code == 0, orm.output
    bad = runner.invoke(app, ["train-progress", "--labels", str(episodes), *base])
    message = " ".join(bad.output.replace("│", " ").split())
    assert bad.exit_code != 0 and "no progress labels" in message
