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
