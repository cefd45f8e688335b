"""UI-S1's Patch Module as the policy sees it (Sec. 3.3, Algorithm 1, Table 5): a patched step
enters the prompt history as the expert's action with its kept thought, and the on-policy
thought patch is written by the policy being trained, before the next prompt is built."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from gui_gym.agents.base import history_description
from gui_gym.agents.llm import LLMAgent
from gui_gym.core.actions import describe, parse_action
from gui_gym.envs.replay import SAMPLE_DATASET, SemiOnlineReplayEnv
from gui_gym.envs.replay.dataset import ExpertDataset
from gui_gym.models.llm import ScriptedLLM
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine
from tests.conftest import require

WRONG = "GOBACK()"


@pytest.fixture(scope="module")
def dataset() -> ExpertDataset:
    return ExpertDataset.load(SAMPLE_DATASET)


def replay(dataset: ExpertDataset, **kwargs: Any) -> SemiOnlineReplayEnv:
    settings: dict[str, Any] = dict(trajectory=0, epsilon=math.inf, require_think=False)
    return SemiOnlineReplayEnv(dataset, **{**settings, **kwargs})


@pytest.mark.parametrize("thoughts", [False, True])
def test_history_shows_the_executed_action_and_kept_thought(
    dataset: ExpertDataset, thoughts: bool
) -> None:
    env = replay(dataset, patch="off_policy_thought", history_thoughts=thoughts)
    env.reset(seed=0)
    first, second = dataset[0].steps[0], dataset[0].steps[1]
    _, _, _, _, info = env.step(f"<think>go back</think><action>{WRONG}</action>")
    # the policy's own action is what it did (recorded), the expert's is what the replay
    # moved on with (the history, H_{t+1} of Algorithm 1)
    assert info["action_description"] == describe(parse_action(WRONG), first.tree)
    shown = describe(first.action, first.tree)
    assert first.thought  # the sample dataset records expert thoughts
    expected = f"{shown} (thought: {first.thought})" if thoughts else shown
    assert info["history_description"] == expected
    assert history_description(info) == expected
    right = f"<think>as planned</think><action>{second.action}</action>"
    _, _, _, _, info = env.step(right)
    assert info["semi_online"]["matched"]
    shown = describe(second.action, second.tree)
    assert info["history_description"] == (f"{shown} (thought: as planned)" if thoughts else shown)
    # the env's own H_t keeps the thoughts either way
    assert [e.thought for e in env.history_entries] == [first.thought, "as planned"]


def test_an_unkept_step_has_no_history_entry(dataset: ExpertDataset) -> None:
    env = replay(dataset, epsilon=0)
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(WRONG)
    assert terminated and "history_description" not in info
    # agents then fall back to the action description, as for every other env
    assert history_description(info) == info["action_description"]


def test_prompt_history_is_the_patched_history(dataset: ExpertDataset) -> None:
    """Through the rollout engine: the second prompt lists the expert's first action, not
    the policy's rejected one."""
    llm = ScriptedLLM([], default=f"<action>{WRONG}</action>")
    agent = LLMAgent(llm, prompt="default", temperature=0.0)
    engine = RolloutEngine(
        lambda: replay(dataset, max_steps=2), agent, num_envs=1, info_keys=("semi_online",)
    )
    [trajectory] = engine.run([EpisodeSpec(seed=0)])
    engine.close()
    assert [s.info["semi_online"]["patched"] for s in trajectory.steps] == [True, True]
    first = dataset[0].steps[0]
    second_prompt = llm.calls[1]
    assert describe(first.action, first.tree) in second_prompt
    assert describe(parse_action(WRONG), first.tree) not in second_prompt


def test_policy_thought_patch_asks_the_policy_with_the_expert_action() -> None:
    from gui_gym.train.semi_online import PolicyThoughtPatch

    llm = ScriptedLLM([], default="<think>The search box comes first.</think>")
    patch = PolicyThoughtPatch(llm, max_new_tokens=16, temperature=1.0)
    text = patch("Find cookies", "CLICK(3)", "<button id=3>Search</button>", [("CLICK(1)", "t")])
    assert text == "<think>The search box comes first.</think>" and patch.calls == 1
    [asked] = llm.calls
    for part in ("Find cookies", "CLICK(3)", "<button id=3>Search</button>", "Step 1: CLICK(1)"):
        assert part in asked
    env = replay(
        ExpertDataset.load(SAMPLE_DATASET),
        patch="on_policy_thought",
        thought_fn=patch,
        history_thoughts=True,
    )
    env.reset(seed=0)
    _, _, _, _, info = env.step(WRONG)
    # the <think> block's content is kept, as set_patch_thought keeps it
    assert info["semi_online"]["thought"] == "The search box comes first."
    assert not info["semi_online"]["regenerate_thought"]
    assert info["history_description"].endswith("(thought: The search box comes first.)")


def test_semi_online_trainer_writes_on_policy_thoughts_with_its_policy(tmp_path: Path) -> None:
    torch = require("torch", "llm")
    torch.set_num_threads(1)
    from gui_gym.train import semi_online
    from gui_gym.train.config import TrainConfig
    from gui_gym.train.trainer import Trainer
    from tests.rl_helpers import policy_folder

    data = ExpertDataset.load(SAMPLE_DATASET)

    def make_env() -> SemiOnlineReplayEnv:
        return replay(data, patch="on_policy_thought", max_steps=2, history_thoughts=True)

    algorithm = semi_online.SemiOnline(make_env, [0])
    train_config = TrainConfig.for_algorithm(
        semi_online.TRAIN_DEFAULTS,
        model=str(policy_folder(tmp_path / "policy")),
        out=str(tmp_path / "run"),
        max_new_tokens=2,
        device="cpu",
        progress=False,
    )
    trainer = Trainer(train_config, algorithm)
    assert algorithm.thought_patch is not None
    assert algorithm.thought_patch.llm is trainer.agent.llm  # the policy being trained
    # the policy's thought text is whatever the tiny model samples: script it to read it back
    algorithm.thought_patch.llm = ScriptedLLM([], default="<think>next I search</think>")
    group = trainer.run_episodes(
        algorithm.rollout_make_env, [{"seed": s, "options": {"trajectory": 0}} for s in (0, 1)]
    )
    patched = [s for t in group for s in t.steps if s.info["semi_online"]["patched"]]
    assert patched and algorithm.thought_patch.calls == len(patched)
    assert all(s.info["semi_online"]["thought"] == "next I search" for s in patched)
    # the next prompt (built after the patched step) already holds the thought
    following = [
        t.steps[1].prompt
        for t in group
        if t.steps[0].info["semi_online"]["patched"] and len(t.steps) > 1
    ]
    assert following and all("(thought: next I search)" in str(p) for p in following)
    trainer.close()
