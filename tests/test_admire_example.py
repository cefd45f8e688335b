"""examples/admire_grpo.py runs end to end on CPU with a tiny config (a smoke test: the loop,
the wrapper's deferred rewards, Eq. 13 advantages and the PPO update fit together)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from gui_gym.rewards.milestone_store import MilestoneStore
from tests.conftest import require

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "admire_grpo.py"


def test_admire_grpo_example_trains_a_tiny_model(tmp_path: Path, monkeypatch) -> None:
    require("torch", "llm")
    require("transformers", "llm")
    require("tyro", "examples")
    spec = importlib.util.spec_from_file_location("admire_grpo", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "admire_grpo", example)  # dataclasses look it up
    spec.loader.exec_module(example)
    store = tmp_path / "milestones.json"
    log = tmp_path / "log.jsonl"
    args = example.Args(
        num_tasks=1,
        tasks_per_iteration=1,
        group_size=2,
        iterations=2,
        max_steps=3,
        update_epochs=1,
        max_prompt_tokens=64,
        embedder="hashing",
        store=str(store),
        log=str(log),
    )
    history = example.main(args)
    assert [h["iteration"] for h in history] == [0, 1]
    assert all(h["episodes"] == 2 and h["steps"] > 0 for h in history)
    assert history[1]["milestone_weight"] < history[0]["milestone_weight"]  # decay per epoch
    assert len(log.read_text().splitlines()) == 2
    json.loads(log.read_text().splitlines()[0])
    assert len(MilestoneStore(store)) == 1  # the oracle's success initialised the milestones
    # Table 3's static arm: milestones a task already has are kept as they are (not refined
    # by the expert's episode nor by the policy's successes)
    task = MilestoneStore(store).task_ids()[0]
    given = tmp_path / "given.json"
    MilestoneStore(given).commit(task, ["open the app"])
    static = dataclasses.replace(args, store=str(given), log=None, iterations=1)
    example.main(dataclasses.replace(static, milestones="static"))
    assert MilestoneStore(given).get(task).milestones == ("open the app",)
    assert MilestoneStore(given).version(task) == 1


def _example(monkeypatch) -> object:
    spec = importlib.util.spec_from_file_location("admire_grpo", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "admire_grpo", example)  # dataclasses look it up
    spec.loader.exec_module(example)
    return example


def test_example_advantages_for_grpo_rloo_and_dapo(monkeypatch) -> None:
    require("torch", "llm")
    require("tyro", "examples")
    example = _example(monkeypatch)
    rewards = [[1.0, 0.0], [0.0]]
    # RLOO over the group's steps: 1 - (0 + 0) / 2, 0 - (1 + 0) / 2, 0 - (1 + 0) / 2
    assert example.group_advantages(rewards, "rloo") == [[1.0, -0.5], [-0.5]]
    # GRPO (Eq. 13): mean 1/3, std sqrt(2)/3 over all steps of the group
    grpo = example.group_advantages(rewards, "grpo")
    assert grpo[0][0] == pytest.approx((1 - 1 / 3) / (2**0.5 / 3), rel=1e-5)
    assert example.group_advantages(rewards, "dapo") == grpo
    # DAPO's dynamic sampling drops a group whose rewards are all equal
    assert example.group_advantages([[0.5, 0.5], [0.5]], "dapo") is None
    assert example.group_advantages([[0.5, 0.5], [0.5]], "grpo") == [[0.0, 0.0], [0.0]]


ARMS = ("outcome_only", "static", "dapo_outcome")


def test_admire_learning_benchmark_compares_its_arms(tmp_path: Path, monkeypatch) -> None:
    require("torch", "llm")
    require("transformers", "llm")
    require("tyro", "examples")
    require("matplotlib", "examples")
    bench_path = EXAMPLE.parent.parent / "benchmarks" / "admire_learning.py"
    spec = importlib.util.spec_from_file_location("admire_learning", bench_path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    monkeypatch.setitem(sys.modules, "admire_grpo", None)  # the benchmark loads it itself
    report = bench.run(
        iterations=2,
        seeds=[0],
        num_tasks=1,
        group_size=2,
        max_steps=3,
        embedder="hashing",
        verbose=False,
        arms=ARMS,  # the milestone arm is the example's default, run by the test above
    )
    assert set(report["summary"]) == set(ARMS)
    settings = report["settings"]["arms"]
    assert settings["outcome_only"]["lambda0"] == 0.0 and settings["static"]["lambda0"] == 0.3
    assert settings["static"]["milestones"] == "static"
    assert settings["dapo_outcome"] == {"lambda0": 0.0, "milestones": "adaptive", "algo": "dapo"}
    assert set(bench.DEFAULT_ARMS) <= set(bench.ARMS)
    for arm in ARMS:
        history = report["runs"][arm]["0"]
        assert [h["iteration"] for h in history] == [0, 1]
        curves = report["summary"][arm]["curves_mean_over_seeds"]
        assert len(curves["milestone_progress"]) == 2
        assert all(0.0 <= x <= 1.0 for x in curves["success_rate"])
    # outcome only: R_total = R_outcome + eta * R_format; R_format is 0, or -1 for an action
    # the env rejects, so without a success nothing is ever paid
    for h in report["runs"]["outcome_only"]["0"]:
        if h["success_rate"] == 0.0:
            assert -0.5 <= h["mean_step_reward"] <= 0.0
    # without a success, the outcome alone gives every step the same reward: DAPO drops it
    for h in report["runs"]["dapo_outcome"]["0"]:
        if h["success_rate"] == 0.0:
            assert h["dropped_groups"] == 1 and h["loss"] == 0.0
    with pytest.raises(ValueError, match="unknown arm"):
        bench.run(1, [0], 1, 2, 3, "hashing", verbose=False, arms=("ppo",))
    bench.plot(report, tmp_path / "curves.png")
    assert (tmp_path / "curves.png").stat().st_size > 0
