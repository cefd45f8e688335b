"""benchmarks/harness.py: the benchmarks' shared task picking, greedy success, arm parsing,
bootstrap intervals and atomic JSON, with the numbers the scripts gave before they shared it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.agents.prompts import get_prompt
from gui_gym.models.llm import ScriptedLLM

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))  # as a script has
import harness

BENCHMARKS = Path(harness.__file__).parent
WIKIHOW = "GuiGym/WikiHow-v0"


def test_bootstrap_intervals_keep_the_numbers_of_paper_comparisons_before_the_harness() -> None:
    """Computed with paper_comparisons.py's own bootstrap_difference and mean_interval before
    they moved here: the same seed draws the same resamples in the same order."""
    gain = harness.bootstrap_difference(
        [0.6, 0.7, 0.65, 0.7, 0.6], [0.3, 0.35, 0.3, 0.4, 0.3], 2000
    )
    assert gain == {
        "difference": 0.3199999999999999,
        "interval": [0.26000000000000006, 0.37],
        "agrees_with_paper": True,
        "excludes_zero": True,
        "seeds": [5, 5],
    }
    small = harness.bootstrap_difference([0.25, 0.5, 0.75], [0.0, 0.25, 0.5], 200, seed=3)
    assert small["difference"] == 0.25
    assert small["interval"] == [-0.08333333333333331, 0.5833333333333334]
    assert not small["excludes_zero"]
    assert harness.mean_interval([0.0, 0.25, 0.5, 0.75, 1.0], 2000) == {
        "mean": 0.5,
        "interval": [0.2, 0.8],
        "n": 5,
    }
    assert harness.mean_interval([0.125, 0.5, 0.875], 200, seed=3)["interval"] == [0.125, 0.875]
    with pytest.raises(ValueError, match="at least one run"):
        harness.bootstrap_difference([0.5], [], 10)


def test_arms_parse_into_algorithm_reward_and_typed_settings() -> None:
    assert harness.parse_arm("grpo:outcome+0.3*milestone") == ("grpo", "outcome+0.3*milestone", {})
    assert harness.parse_arm(
        "grpo:outcome+milestone:milestone_mode=static:learning_rate=1e-4:group_size=8"
    ) == (
        "grpo",
        "outcome+milestone",
        {"milestone_mode": "static", "learning_rate": 1e-4, "group_size": 8},
    )
    for bad in ("grpo", "grpo:", ":outcome", "grpo:outcome:oops", "grpo:outcome:=1", "a:b:x="):
        with pytest.raises(ValueError) as error:
            harness.parse_arm(bad)
        assert str(error.value) == f"arm {bad!r} must be ALGO:REWARD[:NAME=VALUE...]"
        assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match=r"must be ALGO:REWARD\[:k=N\]"):
        harness.parse_arm("grpo", "ALGO:REWARD[:k=N][:NAME=VALUE...]")


def test_first_reaching_is_the_first_point_at_the_target() -> None:
    assert harness.first_reaching([(0, 0.1), (2, 0.5), (4, 0.7), (6, 0.7)], 0.7) == 4
    assert harness.first_reaching(zip([0, 1024], [0.2, 0.7 - 1e-12]), 0.7) == 1024  # rounding
    assert harness.first_reaching([(0, 0.1), (2, 0.5)], 0.7) is None
    assert harness.first_reaching([], 0.0) is None


def test_task_picking_is_deterministic_disjoint_and_the_reference_runs_own() -> None:
    """The same lists on every call, trained and held-out apart (AndroidWorld's splits share
    their templates), and the lists the reference runs trained on."""
    reference = BENCHMARKS / "reference"
    llm_learning = json.loads((reference / "llm_learning.json").read_text())
    settings = llm_learning["args"]
    tasks = harness.pick_tasks(
        WIKIHOW, settings["max_oracle_steps"], settings["train_tasks"], settings["held_out_tasks"]
    )
    assert tasks == llm_learning["tasks"]
    comparisons = json.loads((reference / "paper_comparisons.json").read_text())["comparisons"]
    start = comparisons["admire_table1_3"]["start"]
    android = harness.pick_tasks("GuiGym/AndroidWorld-v0", 3, 8, 8)
    assert android == start["tasks"]
    assert android == harness.pick_tasks("GuiGym/AndroidWorld-v0", 3, 8, 8)
    for picked in (tasks, android):
        assert list(picked) == ["train", "held_out"]
        assert not set(picked["train"]) & set(picked["held_out"])
    wider = harness.pick_tasks(WIKIHOW, 3, 4, 2, train_oracle_steps=12)
    assert len(wider["train"]) == 4 and wider["held_out"] == tasks["held_out"][:2]


def test_split_success_scores_each_split_in_order() -> None:
    tasks = harness.pick_tasks(WIKIHOW, 2, 2, 1)
    env = gym.make(WIKIHOW, split="all", max_steps=2)
    plans: dict[str, list[str]] = {}  # instruction -> the oracle's actions
    for task in tasks["train"]:
        observation, _ = env.reset(seed=0, options={"task": task})
        plan, done = [], False
        while not done:
            plan.append(env.unwrapped.oracle_action())
            _, _, terminated, truncated, _ = env.step(plan[-1])
            done = terminated or truncated
        plans[observation["instruction"]] = plan
    env.close()
    prompt = get_prompt("default")
    asked = dict.fromkeys(plans, 0)

    def answer(text: str) -> str:  # the oracle on the train tasks, a wrong action elsewhere
        for instruction, plan in plans.items():
            if instruction in text:
                asked[instruction] += 1
                return prompt.completion(None, plan[asked[instruction] - 1])
        return prompt.completion(None, "BACK()")

    rates = harness.split_success(
        ScriptedLLM(answer), WIKIHOW, tasks, max_steps=2, max_new_tokens=16
    )
    assert rates == {"train": 1.0, "held_out": 0.0}
    assert list(rates) == ["train", "held_out"]
    only = harness.split_success(
        ScriptedLLM(lambda text: "no action"),
        WIKIHOW,
        {"held_out": tasks["held_out"]},
        max_steps=2,
        max_new_tokens=16,
    )
    assert only == {"held_out": 0.0}


def test_json_is_written_whole_with_the_scripts_endings(tmp_path: Path) -> None:
    path = tmp_path / "new" / "result.json"  # a folder not made yet
    harness.write_json(path, {"b": 1, "a": [0.5]})
    assert path.read_text() == json.dumps({"b": 1, "a": [0.5]}, indent=2) + "\n"
    harness.write_json(path, {"x": 2}, end="")
    assert path.read_text() == json.dumps({"x": 2}, indent=2)
    assert [p.name for p in path.parent.iterdir()] == ["result.json"]  # no temp file left


def test_a_script_loads_as_a_module_of_its_name(tmp_path: Path, monkeypatch) -> None:
    script = tmp_path / "example.py"
    script.write_text("import sys\nSELF = sys.modules[__name__]\n")
    monkeypatch.delitem(sys.modules, "harness_example", raising=False)
    module = harness.load_script(script, "harness_example")
    assert sys.modules["harness_example"] is module and module.SELF is module
    monkeypatch.delitem(sys.modules, "harness_example")
    with pytest.raises(ImportError, match="cannot load"):
        harness.load_script(tmp_path / "notes.txt", "harness_notes")  # not a Python file
    assert set(harness.machine_at_end()) == {"cpus", "python", "load_average_at_end"}


def test_llm_learning_reads_its_progress_k_through_the_harness() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "llm_learning_harness", BENCHMARKS / "llm_learning.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    assert bench.parse_arm("grpo:outcome+progress:k=2:baseline=rloo") == (
        "grpo",
        "outcome+progress",
        2,
        {"baseline": "rloo"},
    )
    for bad in ("grpo:outcome:k=0", "grpo:outcome:k=1.5", "grpo:outcome:k=x"):
        with pytest.raises(ValueError, match=r"with an int N >= 1"):
            bench.parse_arm(bad)
