"""benchmarks/llm_learning.py: arm names, the "reaches the outcome arm's final" figure and the
generation budget that must hold every oracle completion."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "llm_learning.py"


def load_bench() -> Any:
    spec = importlib.util.spec_from_file_location("llm_learning_bench", PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


bench = load_bench()


def test_arms_name_algorithm_reward_progress_history_and_settings() -> None:
    assert bench.parse_arm("grpo:outcome+0.3*milestone") == (
        "grpo",
        "outcome+0.3*milestone",
        1,
        {},
    )
    assert bench.parse_arm("reinforce_pp:outcome+progress:k=3") == (
        "reinforce_pp",
        "outcome+progress",
        3,
        {},
    )
    assert bench.parse_arm("grpo:outcome+progress:k=2:baseline=rloo:learning_rate=1e-4") == (
        "grpo",
        "outcome+progress",
        2,
        {"baseline": "rloo", "learning_rate": 1e-4},
    )
    assert (
        bench.outcome_arm("grpo:outcome+progress:k=2:baseline=rloo") == "grpo:outcome:baseline=rloo"
    )
    for bad in ("grpo", "grpo:", ":outcome", "grpo:outcome:k=0", "grpo:outcome:k=1.5", "grpo:a:b"):
        with pytest.raises(ValueError, match="ALGO:REWARD"):
            bench.parse_arm(bad)


def run(arm: str, seed: int, *points: tuple[int, float]) -> dict[str, Any]:
    return {"arm": arm, "seed": seed, "curve": [{"iteration": i, "train": v} for i, v in points]}


def test_reach_is_the_first_iteration_at_the_outcome_arms_final_success() -> None:
    runs = [
        run("grpo:outcome", 0, (2, 0.5), (4, 0.5), (6, 0.6), (8, 0.7)),
        run("grpo:outcome", 1, (2, 0.5), (4, 0.5), (6, 0.6), (8, 0.7)),
        run("grpo:outcome+progress", 0, (2, 0.6), (4, 0.8), (6, 0.7), (8, 0.8)),
        run("grpo:outcome+progress", 1, (2, 0.6), (4, 0.6), (6, 0.7), (8, 0.8)),
        run("grpo:outcome+milestone", 0, (2, 0.4), (4, 0.5), (6, 0.6), (8, 0.65)),
        run("reinforce_pp:outcome+progress:k=2", 0, (2, 0.9), (8, 0.9)),  # no outcome arm
        run("semi_online:replay", 0, (8, 0.9)),
        run("grpo:outcome:baseline=rloo", 0, (8, 0.5)),
        run("grpo:outcome+prm:baseline=rloo", 0, (2, 0.5), (8, 0.6)),
    ]
    reach = bench.reach_outcome_final(runs, sft_train=0.4)
    assert set(reach) == {
        "grpo:outcome+progress",
        "grpo:outcome+milestone",
        "grpo:outcome+prm:baseline=rloo",
    }
    # the mean over seeds 0 and 1 is 0.7 at iteration 4 (0.8 and 0.6)
    assert reach["grpo:outcome+progress"] == {
        "outcome_arm": "grpo:outcome",
        "seeds": [0, 1],
        "outcome_final_train": 0.7,
        "outcome_iterations": 8,
        "reached_at": 4,
        "outcome_reached_at": 8,
        "within_half": True,
    }
    assert reach["grpo:outcome+prm:baseline=rloo"]["outcome_arm"] == "grpo:outcome:baseline=rloo"
    assert reach["grpo:outcome+prm:baseline=rloo"]["reached_at"] == 2
    # compared on the seeds both arms have: seed 0 only (the outcome arm also has seed 1)
    assert reach["grpo:outcome+milestone"]["seeds"] == [0]
    assert reach["grpo:outcome+milestone"]["reached_at"] is None
    assert reach["grpo:outcome+milestone"]["within_half"] is False
    # an SFT start already at the target counts as iteration 0
    assert (
        bench.reach_outcome_final(runs, sft_train=0.7)["grpo:outcome+milestone"]["reached_at"] == 0
    )


@pytest.mark.slow
def test_generation_budget_is_measured_on_the_oracle_completions(tmp_path: Path) -> None:
    from gui_gym.runs.record import record_dataset
    from gui_gym.train.runner import build_tiny_policy, env_texts

    task = "address_a_letter_to_england-article"  # INPUT(0, "address a letter to england")
    record_dataset(
        bench.ENV_ID,
        "oracle",
        episodes=1,
        out=tmp_path / "oracle",
        tasks=[task],
        env_kwargs={"split": "train", "max_steps": 5},
        progress=False,
    )
    model = build_tiny_policy(tmp_path / "policy", env_texts(bench.ENV_ID, count=5))
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model)
    target = '<action>INPUT(0, "address a letter to england")</action>'
    expected = len(tokenizer(target, add_special_tokens=False)["input_ids"]) + 1
    assert bench.longest_completion(tmp_path / "oracle", model) == expected
