"""GUI-Shepherd's baselines (issue 20 item 14): the ORM reward of its ORM-based PPO (the task's
outcome on the final step plus a per-step format reward, App. B.2)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401
from gui_gym.rewards.prm import format_step_reward
from gui_gym.train.rewards import RewardStack, parse_reward
from gui_gym.wrappers import FormatRewardWrapper

WIKIHOW = "GuiGym/WikiHow-v0"


def test_format_reward_pays_parsed_actions_and_penalises_the_rest() -> None:
    assert format_step_reward(parsed=True, valid=True).total == pytest.approx(0.1)
    rejected = format_step_reward(parsed=True, valid=False, invalid_penalty=-0.3)
    assert (rejected.format, rejected.invalid, rejected.prm) == (0.1, -0.3, 0.0)
    assert format_step_reward(parsed=False, valid=False).total == pytest.approx(-0.1)
    with pytest.raises(ValueError, match="implies parsed"):
        format_step_reward(parsed=False, valid=True)


def test_orm_reward_is_the_outcome_on_the_last_step_plus_format_on_each() -> None:
    env = FormatRewardWrapper(gym.make(WIKIHOW, split="test", max_steps=20))
    env.reset(seed=0)
    _, garbage, *_ = env.step("make me a sandwich")
    _, rejected, _, _, info = env.step("CLICK(999)")
    assert (garbage, rejected) == (pytest.approx(-0.1), pytest.approx(0.0))
    assert info["format"]["components"] == {"format": 0.1, "invalid": -0.1}
    rewards, done = [], False
    while not done:
        _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        rewards.append(reward)
        done = terminated or truncated
    assert info["success"] and info["task_reward"] == 1.0
    assert rewards == pytest.approx([0.1] * (len(rewards) - 1) + [1.1])
    with pytest.raises(ValueError, match="weight must be a finite number"):
        FormatRewardWrapper(gym.make(WIKIHOW), weight=float("nan"))


def test_format_is_a_reward_term_and_not_twice_with_the_prm() -> None:
    assert parse_reward("outcome+format") == {"outcome": 1.0, "format": 1.0}
    with pytest.raises(ValueError, match="already holds GUI-Shepherd's format term"):
        parse_reward("prm+format")
    env = RewardStack.from_text("outcome+format").wrap(gym.make(WIKIHOW))
    assert isinstance(env, FormatRewardWrapper)
