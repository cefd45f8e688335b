"""benchmarks/real_model.py: its ``--quick`` mode runs every stage on a tiny model, writes
the figures with their intervals and precision, and a rerun resumes instead of retraining."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))  # as a script has
import harness

script = harness.load_script(Path(harness.__file__).parent / "real_model.py", "real_model_script")


def test_wilson_interval_brackets_the_rate_and_stays_in_zero_one() -> None:
    assert script.wilson(0, 20)[0] == 0.0 and 0.15 < script.wilson(0, 20)[1] < 0.17
    low, high = script.wilson(10, 20)
    assert low < 0.5 < high and high - low < 0.45
    assert script.wilson(20, 20)[1] == 1.0
    assert script.wilson(0, 0) == [0.0, 1.0]


def test_seeds_of_an_arm_are_summarised_together() -> None:
    runs = {
        "wikihow/record": {"episodes": 60},
        "wikihow/zero_shot": {"success": 0.0, "successes": 0, "episodes": 20},
        "wikihow/sft_lora/seed0": {"success": 0.25, "successes": 5, "episodes": 20},
        "wikihow/sft_lora/seed2": {"success": 0.10, "successes": 2, "episodes": 20},
        "wikihow/sft_lora/seed1": {"success": 0.40, "successes": 8, "episodes": 20},
        "wikihow/sft_full/seed0": {"success": 0.15, "successes": 3, "episodes": 20},
        "wikihow/grpo": {"success": 0.1, "successes": 2, "episodes": 20},
    }
    summary = script.seed_summary(runs)
    assert set(summary) == {"wikihow/sft_lora", "wikihow/sft_full"}
    lora = summary["wikihow/sft_lora"]
    assert lora["seeds"] == [0, 1, 2] and lora["success_per_seed"] == [0.25, 0.40, 0.10]
    assert lora["success_mean"] == 0.25 and lora["success_std"] == pytest.approx(0.1225, abs=1e-4)
    assert (lora["successes"], lora["episodes"]) == (15, 60)
    assert lora["pooled_interval_95"] == script.wilson(15, 60)
    assert summary["wikihow/sft_full"]["success_std"] == 0.0


def test_quick_mode_runs_sft_and_grpo_and_a_rerun_resumes(tmp_path: Path) -> None:
    out = tmp_path / "real_model.json"
    args = script.Args(
        quick=True,
        envs=["wikihow"],
        stages=["record", "sft_lora", "grpo", "train_eval"],
        out=out,
        work=tmp_path / "work",
        threads=1,
    )
    script.main(args)
    result = json.loads(out.read_text())
    runs = result["runs"]
    on_train = {"wikihow/sft_lora/seed0/train_tasks", "wikihow/grpo/train_tasks"}
    assert set(runs) == {"wikihow/record", "wikihow/sft_lora/seed0", "wikihow/grpo"} | on_train
    # the GRPO model and its start, on the train split's tasks GRPO sampled from
    for tag in on_train:
        assert runs[tag]["episodes"] == len(result["tasks"]["wikihow"]["train"])
    assert result["seeds"]["wikihow/sft_lora"]["seeds"] == [0]
    sft = runs["wikihow/sft_lora/seed0"]
    # the library's LoRA defaults, not the script's: what `gui-gym sft --lora` runs
    from gui_gym.train.sft import default_lr

    assert sft["config"]["lr"] == default_lr(lora=True) and sft["config"]["lora"]
    assert sft["episodes"] == 2 and 0.0 <= sft["interval_95"][0] <= sft["interval_95"][1] <= 1
    assert sft["precision"] == "fp32" and sft["optimizer_steps"] >= 1
    grpo = runs["wikihow/grpo"]
    assert grpo["success_before"] == sft["success"] and len(grpo["rollout_success"]) == 1
    assert set(result["tasks"]["wikihow"]["train"]).isdisjoint(result["tasks"]["wikihow"]["test"])
    stamp = (tmp_path / "work" / "wikihow" / "sft_lora_seed0" / "sft_report.json").stat()
    script.main(args)  # everything is there: nothing runs again
    assert json.loads(out.read_text())["runs"]["wikihow/sft_lora/seed0"] == sft
    after = (tmp_path / "work" / "wikihow" / "sft_lora_seed0" / "sft_report.json").stat()
    assert after.st_mtime_ns == stamp.st_mtime_ns


def test_an_unknown_stage_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="unknown stage or env 'nope'"):
        script.main(script.Args(quick=True, stages=["nope"], out=tmp_path / "r.json"))


def test_a_shaped_grpo_reward_is_its_own_run_key() -> None:
    assert script.grpo_key("wikihow", "outcome") == "wikihow/grpo"
    assert script.grpo_key("wikihow", "outcome+progress") == "wikihow/grpo_outcome_progress"
    assert (
        script.grpo_key("alfworld", "outcome+0.3*milestone")
        == "alfworld/grpo_outcome_0_3_milestone"
    )


def test_an_unknown_grpo_reward_is_one_line_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="--grpo-reward: unknown reward 'progres'"):
        script.main(script.Args(quick=True, grpo_reward="outcome+progres", out=tmp_path / "r.json"))
    assert not (tmp_path / "r.json").exists()
