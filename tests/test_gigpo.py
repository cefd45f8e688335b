"""GiGPO (verl-agent, arXiv 2505.10978): its two-level advantages on hand-worked numbers, its
anchors from the screens of real episodes, and `gui-gym train --algo gigpo`."""

from __future__ import annotations

import math

import pytest

from gui_gym.rewards.advantages import discounted_returns, gigpo_advantages
from tests.conftest import require


def test_discounted_returns_run_backwards() -> None:
    assert discounted_returns([0.0, 0.0, 1.0], 0.5) == [0.25, 0.5, 1.0]
    assert discounted_returns([], 0.95) == []
    with pytest.raises(ValueError, match="gamma"):
        discounted_returns([1.0], 1.5)


def test_gigpo_advantages_on_a_worked_group() -> None:
    # Three episodes of one task from one seed; s0 is the shared start, s1 is reached twice.
    rewards = [[0.0, 1.0], [0.0, 0.0], [0.0, 0.0, 1.0]]
    anchors = [["s0", "s1"], ["s0", "s2"], ["s0", "s1", "s3"]]
    # gamma 0.5: step returns [0.5, 1], [0, 0], [0.25, 0.5, 1]; episode returns 1, 0, 1.
    # A^E = R - 2/3 (mean_norm). Step groups: s0 {0.5, 0, 0.25} mean 0.25 -> +0.25, -0.25, 0;
    # s1 {1, 0.5} mean 0.75 -> +0.25, -0.25; s2 and s3 are reached once -> 0.
    got = gigpo_advantages(rewards, anchors, gamma=0.5)
    want = [
        [1 / 3 + 0.25, 1 / 3 + 0.25],
        [-2 / 3 - 0.25, -2 / 3],
        [1 / 3, 1 / 3 - 0.25, 1 / 3],
    ]
    for row, expected in zip(got, want):
        assert row == pytest.approx(expected)
    # omega scales the step term only
    half = gigpo_advantages(rewards, anchors, gamma=0.5, step_weight=0.5)
    assert half[0] == pytest.approx([1 / 3 + 0.125, 1 / 3 + 0.125])
    # mean_std_norm: both levels divided by the sample standard deviation
    std = gigpo_advantages(rewards, anchors, gamma=0.5, std_norm=True, eps=0.0)
    episode_std = math.sqrt(((1 / 3) ** 2 * 2 + (2 / 3) ** 2) / 2)  # of 1, 0, 1
    s1_std = math.sqrt(2 * 0.25**2)  # of 1, 0.5 (n - 1 = 1)
    assert std[0][1] == pytest.approx(1 / 3 / episode_std + 0.25 / s1_std)
    assert std[1][1] == pytest.approx(-2 / 3 / episode_std)  # s2: a group of one


def test_gigpo_with_no_shared_state_is_episode_level_grpo_without_std() -> None:
    got = gigpo_advantages([[1.0], [0.0]], [["a"], ["b"]])
    assert got == [[0.5], [-0.5]]


def test_gigpo_refuses_ragged_input() -> None:
    with pytest.raises(ValueError, match="episode 0: 2 rewards but 1 anchors"):
        gigpo_advantages([[0.0, 1.0]], [["s0"]])
    with pytest.raises(ValueError, match="2 reward rows but 1 anchor rows"):
        gigpo_advantages([[0.0], [1.0]], [["s0"]])


def test_gigpo_config_refuses_bad_values() -> None:
    from gui_gym.train.gigpo import GiGPOConfig

    with pytest.raises(ValueError, match="group_size must be >= 2"):
        GiGPOConfig(group_size=1)
    with pytest.raises(ValueError, match="gamma must be in"):
        GiGPOConfig(gamma=-0.1)


def test_anchors_are_the_screens_so_a_shared_start_forms_a_step_group() -> None:
    """Two real WikiHow episodes from one seed start on the same screen (one anchor) and part
    once they act differently."""
    import gymnasium as gym

    import gui_gym  # noqa: F401
    from gui_gym.core.trajectory import Step
    from gui_gym.train.gigpo import anchor_key

    keys = []
    for action in ("SCROLL(down)", "GOBACK()"):
        env = gym.make("GuiGym/WikiHow-v0")
        obs, _ = env.reset(seed=3)
        first = Step(index=0, screen=obs["screen"], action=action)
        obs, *_ = env.step(action)
        second = Step(index=1, screen=obs["screen"], action="WAIT()")
        keys.append((anchor_key(first), anchor_key(second)))
        env.close()
    assert keys[0][0] == keys[1][0]
    assert keys[0][1] != keys[1][1]


def test_gui_gym_train_builds_gigpo(tmp_path) -> None:
    require("torch", "llm")
    from gui_gym.train.gigpo import GiGPO
    from gui_gym.train.runner import ALGORITHM_NAMES, make_trainer
    from tests.rl_helpers import policy_folder

    assert "gigpo" in ALGORITHM_NAMES
    trainer = make_trainer(
        "gigpo",
        "GuiGym/WikiHow-v0",
        model=policy_folder(tmp_path / "policy"),
        settings={"out": str(tmp_path / "run"), "device": "cpu", "step_weight": 0.5},
    )
    assert isinstance(trainer.algorithm, GiGPO)
    assert trainer.algorithm.config.step_weight == 0.5
    assert trainer.algorithm.config.gamma == 0.95
    assert trainer.config.loss_agg == "token_mean" and trainer.config.kl_coef == 0.01
