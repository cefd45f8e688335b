"""``gui-gym plot`` and the learning-curves summary it renders.

The summary's worked numbers (``tests/data/learning_curves_sample.json`` was built by
``summarise`` from the same train curves): outcome-only train success 0.4 at the end (mean of 0.4 and 0.4), reached at
step 2048; the progress arm's mean curve (0, 0.45, 0.7) reaches 0.4 at step 1024, half the
steps; the PRM arm (0, 0.1, 0.25) never does.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gui_gym.cli import app
from gui_gym.cli.plot import KINDS, detect_kind

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests/data/learning_curves_sample.json"
runner = CliRunner()


def load_benchmark():
    spec = importlib.util.spec_from_file_location(
        "learning_curves_bench", ROOT / "benchmarks/learning_curves.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["learning_curves_bench"] = module
    spec.loader.exec_module(module)
    return module


def run(reward: str, seed: int, train: list[float], env: str = "GuiGym/WikiHow-v0") -> dict:
    return {
        "env_id": env,
        "reward": reward,
        "seed": seed,
        "train_tasks": ["a"],
        "test_tasks": ["b"],
        "random": {"train_success": 0.05, "test_success": 0.0},
        "curve": [
            {"steps": s, "train_success": v, "test_success": v / 2, "seconds": 1.0}
            for s, v in zip((0, 1024, 2048), train)
        ],
        "wall_seconds": 5.0,
    }


def test_steps_to_reach_the_outcome_only_final_success():
    bench = load_benchmark()
    table = bench.summarise(
        [
            run("outcome", 0, [0.0, 0.2, 0.4]),
            run("outcome", 1, [0.0, 0.2, 0.4]),
            run("progress", 0, [0.0, 0.4, 0.8]),
            run("progress", 1, [0.0, 0.5, 0.6]),
            run("prm", 0, [0.0, 0.1, 0.2]),
            run("prm", 1, [0.0, 0.1, 0.3]),
        ]
    )["GuiGym/WikiHow-v0"]
    assert table["target_train_success"] == pytest.approx(0.4)
    assert table["rewards"]["progress"]["train_mean"] == pytest.approx([0.0, 0.45, 0.7])
    assert table["rewards"]["progress"]["train_std"] == pytest.approx([0.0, 0.05, 0.1])
    reach = table["steps_to_target"]
    assert reach["outcome"] == {"steps_to_outcome_final": 2048, "fraction_of_outcome_steps": 1.0}
    assert reach["progress"] == {"steps_to_outcome_final": 1024, "fraction_of_outcome_steps": 0.5}
    assert reach["prm"]["steps_to_outcome_final"] is None
    assert table["note"] is None


def test_a_saved_run_is_reused_only_with_the_same_settings(tmp_path):
    """An interrupted benchmark resumes from its per-run files; a changed setting reruns."""
    bench = load_benchmark()
    settings = bench.run_settings("GuiGym/WikiHow-v0", {"eval_every": 1024})
    assert settings["n_steps"] == 64 and settings["eval_every"] == 1024
    path = bench.run_path(tmp_path, "GuiGym/WikiHow-v0", "progress", 2)
    assert path.name == "WikiHow-v0_progress_seed2.json"
    assert bench.saved_run(path, settings) is None  # not there yet
    path.write_text(json.dumps({**run("progress", 2, [0.0, 0.5, 1.0]), "settings": settings}))
    assert bench.saved_run(path, settings)["seed"] == 2
    other = bench.run_settings("GuiGym/WikiHow-v0", {"eval_every": 2048})
    assert bench.saved_run(path, other) is None
    path.write_text("{truncated")  # a file cut short is run again, not trusted
    assert bench.saved_run(path, settings) is None


def test_an_outcome_run_that_never_improved_is_flagged_not_reported_as_zero_steps():
    bench = load_benchmark()
    table = bench.summarise(
        [run("outcome", 0, [0.1, 0.0, 0.0]), run("progress", 0, [0.1, 0.3, 0.5])]
    )["GuiGym/WikiHow-v0"]
    assert "no better than they started" in table["note"]


def test_plot_renders_the_learning_curves_and_prints_the_table(tmp_path):
    result = runner.invoke(app, ["plot", str(SAMPLE), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    png = tmp_path / "learning_curves_sample.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "(learning curves)" in result.output
    assert "progress         0.700      0.200            1024     0.500" in result.output


def test_plot_knows_every_benchmark_result_kind(tmp_path):
    best_of_n = {
        "best_of_n": {
            "wikihow": {"RulePRM": {"1": {"success_rate": 0.5}, "4": {"success_rate": 0.75}}}
        }
    }
    judges = {
        "benchmark": "judge_accuracy",
        "accuracy": {
            "summary": {
                "wikihow": {
                    "episodes": 3,
                    "judges": {"prore-1": {"accuracy": 0.9, "precision": 1.0, "recall": None}},
                }
            }
        },
        "test_time_scaling": {"n": [1, 2], "judges": {"prore-1": {"measured": [0.5, None]}}},
    }
    progrm = {
        "table": {
            "table": {
                "ProgRM": {
                    "key_step_mae": 0.1,
                    "final_score_success": 0.9,
                    "final_score_failure": 0.3,
                }
            }
        }
    }
    admire = {"summary": {"milestone": {"curves_mean_over_seeds": {"success_rate": [0.0, 0.5]}}}}
    for name, data in {
        "bon": best_of_n,
        "judges": judges,
        "progrm": progrm,
        "admire": admire,
    }.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data))
        result = runner.invoke(app, ["plot", str(path)])
        assert result.exit_code == 0, result.output
        assert path.with_suffix(".png").stat().st_size > 1000
    assert [detect_kind(d) for d in (best_of_n, judges, progrm, admire)] == [
        "best-of-N",
        "judge accuracy",
        "ProgRM table",
        "ADMIRE learning",
    ]
    assert set(KINDS) == {
        "learning curves",
        "best-of-N",
        "judge accuracy",
        "ProgRM table",
        "ADMIRE learning",
    }


def test_unknown_or_malformed_results_are_one_line_errors(tmp_path):
    unknown = tmp_path / "other.json"
    unknown.write_text(json.dumps({"hello": 1}))
    result = runner.invoke(app, ["plot", str(unknown)])
    assert result.exit_code == 2
    assert "not a result plot knows (top-level keys ['hello'])" in result.output
    malformed = tmp_path / "broken.json"
    malformed.write_text(json.dumps({"benchmark": "learning_curves", "table": {"x": {}}}))
    result = runner.invoke(app, ["plot", str(malformed)])
    assert result.exit_code == 2
    assert "malformed learning curves result (KeyError: 'rewards')" in result.output
    assert "Traceback" not in result.output
