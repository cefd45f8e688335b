"""examples/admire_grpo.py runs end to end on CPU with a tiny config (a smoke test: the loop,
the wrapper's deferred rewards, Eq. 13 advantages and the PPO update fit together)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

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


def test_admire_learning_benchmark_compares_both_arms(tmp_path: Path, monkeypatch) -> None:
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
    )
    assert set(report["summary"]) == {"milestone", "outcome_only"}
    assert report["settings"]["arms"]["outcome_only"]["lambda0"] == 0.0
    for arm in ("milestone", "outcome_only"):
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
    bench.plot(report, tmp_path / "curves.png")
    assert (tmp_path / "curves.png").stat().st_size > 0
