"""benchmarks/vlm_learning.py: its synthetic task holds the content only in the screenshot (one
instruction, no UI tree, screens that differ by task), rewards only the right click, and its
oracle dataset is the expert's action on recorded PNG screenshots."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np

PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "vlm_learning.py"


def load_bench() -> Any:
    spec = importlib.util.spec_from_file_location("vlm_learning_bench", PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_task_is_only_in_the_screenshot_and_only_the_right_click_pays() -> None:
    bench = load_bench()
    env = bench.BoxEnv()
    seen = []
    for k, task in enumerate(bench.TASKS):
        observation, _ = env.reset(seed=k, options={"task": task})
        assert observation["instruction"] == bench.INSTRUCTION and observation["screen"] == ""
        shot = observation["screenshot"].astype(int)
        # the bright box sits in quadrant k
        quadrants = [
            shot[16 * r : 16 * r + 16, 16 * c : 16 * c + 16].mean() for r in (0, 1) for c in (0, 1)
        ]
        assert int(np.argmax(quadrants)) == k
        seen.append(observation["screenshot"])
        rewards = [env.step(bench.PROMPT.completion(None, a))[1] for a in bench.ACTIONS]
        assert rewards == [1.0 if i == k else 0.0 for i in range(len(bench.ACTIONS))]
    assert len({s.tobytes() for s in seen}) == len(bench.TASKS)


def test_the_oracle_dataset_is_the_right_click_on_recorded_screenshots(tmp_path: Path) -> None:
    from PIL import Image

    bench = load_bench()
    data = bench.oracle_dataset(tmp_path, per_task=2, seed=0)
    assert len(data) == 2 * len(bench.TASKS)
    for trajectory in data:
        [step] = trajectory.steps
        k = bench.TASKS.index(trajectory.task_id)
        assert step.action.to_string() == f"CLICK({k})"
        assert step.screen == "" and trajectory.instruction == bench.INSTRUCTION
        shot = np.asarray(Image.open(step.screenshot)).astype(int)
        quadrants = [
            shot[16 * r : 16 * r + 16, 16 * c : 16 * c + 16].mean() for r in (0, 1) for c in (0, 1)
        ]
        assert int(np.argmax(quadrants)) == k
