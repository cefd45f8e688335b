"""PPO bootstraps ``V(s_T)`` at a step-limit cut (truncated) and not at a real end
(terminated): the rollout keeps the last state's prompt, exactly as the policy would see it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import require

torch = require("torch", "llm")
torch.set_num_threads(1)

from gui_gym.rewards.advantages import gae  # noqa: E402
from gui_gym.train import ppo  # noqa: E402
from gui_gym.train.config import TrainConfig  # noqa: E402
from gui_gym.train.reward_stack import reward_stream  # noqa: E402
from gui_gym.train.trainer import Trainer  # noqa: E402
from tests.rl_helpers import TASK, make_env, one_step_prompt, policy_folder  # noqa: E402


def cut_env() -> Any:
    """WikiHow with a one-step limit: every episode the policy does not end is truncated."""
    import gymnasium as gym

    return gym.make("GuiGym/WikiHow-v0", max_steps=1)


def _trainer(tmp_path: Path, env: Any = cut_env) -> tuple[Trainer, ppo.PPO]:
    folder = policy_folder(tmp_path / "policy")
    algorithm = ppo.PPO(
        env, [TASK], ppo.PPOConfig(tasks_per_iteration=4, normalize_advantages=False)
    )
    config = TrainConfig.for_algorithm(
        ppo.TRAIN_DEFAULTS,
        model=str(folder),
        out=str(tmp_path / "run"),
        max_new_tokens=1,
        temperature=1.0,
        device="cpu",
        progress=False,
    )
    trainer = Trainer(config, algorithm, prompt=one_step_prompt)
    # a critic that is not 0 everywhere (its head starts at zero, which would hide a
    # missing bootstrap)
    with torch.no_grad():
        torch.manual_seed(0)
        algorithm.critic.head.weight.normal_(0.0, 1.0)
        algorithm.critic.head.bias.fill_(0.7)
    return trainer, algorithm


def test_a_truncated_episode_bootstraps_the_last_states_value(tmp_path: Path) -> None:
    trainer, algorithm = _trainer(tmp_path)
    groups = algorithm.collect(trainer, 0)
    episodes = [g[0] for g in groups]
    cut = [t for t in episodes if t.steps[-1].truncated and not t.steps[-1].terminated]
    assert cut, "the one-step env cuts the multi-step expert task at its step limit"
    policy_text = trainer.agent.llm.format_prompt(one_step_prompt(None))
    expected_ids = trainer.policy.tokenizer(policy_text)["input_ids"]
    for trajectory in cut:
        final = trajectory.metadata["final_prompt"]
        # the ids the policy would be conditioned on at the last state, as generation makes them
        assert final["prompt_ids"] == expected_ids
        assert final["prompt_ids"] == trajectory.steps[0].prompt_ids  # a fixed prompt here
    turns = algorithm.advantages(trainer, groups, 0)
    value = float(algorithm.values(turns[:1])[0])
    assert abs(value) > 0.05  # the check below tells the two rules apart
    for trajectory, turn in zip(episodes, turns, strict=True):
        rewards = reward_stream(trajectory)
        last = trajectory.steps[-1]
        bootstrap = value if (last.truncated and not last.terminated) else 0.0
        advantages, returns = gae(rewards, [value], bootstrap=bootstrap)
        # one step: A = r + gamma V(s_T) - V(s_0), with V(s_T) = V(s_0) here (same prompt)
        assert turn.advantages[0] == pytest.approx(advantages[0], abs=1e-5)
        assert turn.returns == pytest.approx(returns[0], abs=1e-5)
        if bootstrap:
            assert turn.advantages[0] == pytest.approx(rewards[0], abs=1e-5)


def test_a_terminated_episode_is_not_bootstrapped(tmp_path: Path) -> None:
    # the semi-online replay env ends the episode on a wrong action (terminated)
    trainer, algorithm = _trainer(tmp_path, make_env)
    groups = algorithm.collect(trainer, 0)
    turns = algorithm.advantages(trainer, groups, 0)
    value = float(algorithm.values(turns[:1])[0])
    ended = 0
    for group, turn in zip(groups, turns, strict=True):
        last = group[0].steps[-1]
        if last.terminated:
            ended += 1
            assert "final_prompt" not in group[0].metadata
            assert turn.advantages[0] == pytest.approx(reward_stream(group[0])[0] - value, abs=1e-5)
    assert ended


def test_a_truncated_episode_without_the_kept_prompt_falls_back_to_zero(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    trainer, algorithm = _trainer(tmp_path)
    groups = algorithm.collect(trainer, 0)
    for group in groups:
        group[0].metadata.pop("final_prompt", None)
    with caplog.at_level("WARNING", logger="gui_gym.train.ppo"):
        turns = algorithm.advantages(trainer, groups, 0)
    value = float(algorithm.values(turns[:1])[0])
    for group, turn in zip(groups, turns, strict=True):
        rewards = reward_stream(group[0])
        assert turn.advantages[0] == pytest.approx(rewards[0] - value, abs=1e-5)
    assert "bootstrapping V(s_T) with 0" in caplog.text


def test_encode_prompts_gives_the_ids_generation_conditions_on(tmp_path: Path) -> None:
    from gui_gym.models.llm import TransformersLLM
    from tests.tiny_llm import tiny_llava

    folder = tmp_path / "vlm"
    tiny_llava(folder)
    vlm = TransformersLLM(str(folder), device="cpu")
    rng = np.random.default_rng(0)
    shots = [rng.integers(0, 255, (40 + 8 * i, 48, 3), dtype=np.uint8) for i in range(2)]
    prompt = [
        {
            "role": "user",
            "content": [
                {"type": "image", "image": shots[0]},
                {"type": "image", "image": shots[1]},
                {"type": "text", "text": "Task: open the menu"},
            ],
        }
    ]
    [[generated]] = vlm.generate_with_tokens([prompt], max_new_tokens=2)
    [encoded] = vlm.encode_prompts([prompt])
    assert encoded.prompt_ids == generated.prompt_ids
    assert encoded.vision == generated.vision
    assert encoded.completion_ids == []
