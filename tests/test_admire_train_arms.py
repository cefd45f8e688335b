"""ADMIRE's comparison arms from ``gui-gym train`` (issue 20 item 7): Table 3's static
milestones (generated once, never refined) and Table 4's RLOO and DAPO as ``--algo`` presets."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

from tests.conftest import require

torch = require("torch", "llm")
torch.set_num_threads(1)

import gui_gym  # noqa: E402, F401
from gui_gym.agents.oracle import OracleAgent  # noqa: E402
from gui_gym.rewards.milestone_store import MilestoneStore  # noqa: E402
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine  # noqa: E402
from gui_gym.train.reward_stack import RewardStack  # noqa: E402
from gui_gym.train.runner import PRESETS, make_trainer, resolve_algorithm  # noqa: E402

TASK_ENV = "GuiGym/WikiHow-v0"


def _task() -> str:
    env = gym.make(TASK_ENV, split="train")
    task = env.unwrapped.task_ids[0]
    env.close()
    return task


def _oracle_batch(stack: RewardStack, task: str, seeds: tuple[int, ...]) -> list:
    def make_env() -> gym.Env:
        return stack.wrap(gym.make(TASK_ENV, task=task, max_steps=6))

    engine = RolloutEngine(
        make_env, lambda env, seed: OracleAgent(env), num_envs=1, info_keys=("milestone",)
    )
    batch = engine.run([EpisodeSpec(task, seed) for seed in seeds])
    engine.close()
    return batch


def test_static_milestones_are_generated_once_and_never_refined(tmp_path: Path) -> None:
    task = _task()
    for mode, second in (("static", "static"), ("adaptive", "unchanged")):
        store = tmp_path / f"{mode}.json"
        stack = RewardStack.from_text(
            "outcome+milestone", embedder="hashing", milestone_store=store, milestone_mode=mode
        )
        probe = stack.wrap(gym.make(TASK_ENV, task=task, max_steps=6))
        first = stack.refine_milestones(probe, [_oracle_batch(stack, task, (0,))], epoch=0)
        assert first[task]["status"] == "initialized"  # both modes generate them once
        # a later success: adaptive refines (the same path: unchanged), static never tries
        later = stack.refine_milestones(probe, [_oracle_batch(stack, task, (1,))], epoch=1)
        assert later[task]["status"] == second, mode
        assert MilestoneStore(store).version(task) == 1
        batch = _oracle_batch(stack, task, (2,))
        stack.refine_milestones(probe, [batch], epoch=2)
        assert batch[0].steps[-1].info["milestone"]["K"] > 0  # scored with the kept milestones
    with pytest.raises(ValueError, match="milestone_mode must be one of adaptive, static"):
        RewardStack.from_text("milestone", milestone_mode="fixed")


def test_rloo_and_dapo_are_grpo_with_table4_settings_under_the_users() -> None:
    assert resolve_algorithm("rloo", {}) == ("grpo", {"baseline": "rloo"})
    module, settings = resolve_algorithm("dapo", {"clip_eps_high": 0.3})
    assert module == "grpo"
    assert settings == {
        "clip_eps_high": 0.3,  # the user's value wins over DAPO's 0.28
        "drop_flat_groups": True,
        "overlong_buffer": 0.2,  # DAPO Sec. 3.4: L_cache 4,096 of L_max 20,480
        "loss_agg": "token_mean",
        "kl_coef": 0.0,
    }
    assert PRESETS["dapo"][1]["clip_eps_high"] == 0.28  # DAPO Sec. 3.1
    assert resolve_algorithm("ppo", {"iterations": 2}) == ("ppo", {"iterations": 2})
    with pytest.raises(ValueError, match=r"allowed: grpo, .*rloo, dapo"):
        resolve_algorithm("dapoo", {})


def test_make_trainer_builds_a_dapo_run_from_a_given_milestone_store(tmp_path: Path) -> None:
    from tests.rl_helpers import policy_folder

    given = tmp_path / "human.json"
    MilestoneStore(given).commit("some-task", ["open the app", "search"])
    before = given.read_text()
    out = tmp_path / "run"
    trainer = make_trainer(
        "dapo",
        TASK_ENV,
        model=policy_folder(tmp_path / "policy"),
        reward="outcome+milestone",
        embedder="hashing",
        milestone_mode="static",
        milestone_store=given,
        settings={"out": str(out), "iterations": 1, "device": "cpu", "progress": False},
    )
    assert trainer.algorithm.name == "dapo"  # names its checkpoints
    assert trainer.algorithm.config.drop_flat_groups and trainer.algorithm.config.level == "step"
    assert trainer.config.clip_eps_high == 0.28 and trainer.config.loss_agg == "token_mean"
    copied = json.loads((out / "milestones.json").read_text())
    assert copied["tasks"]["some-task"]["versions"][0]["milestones"] == ["open the app", "search"]
    assert given.read_text() == before  # the given store is copied, never written
    trainer.close()
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a milestone store"):
        make_trainer(
            "grpo",
            TASK_ENV,
            model=tmp_path / "policy",
            milestone_store=bad,
            settings={"out": str(tmp_path / "run2")},
        )
