"""Advantage estimators (rewards.advantages) on hand-worked vectors."""

from __future__ import annotations

import math

import pytest

from gui_gym.rewards.advantages import (
    DEFAULT_GAE_GAMMA,
    DEFAULT_GAE_LAMBDA,
    gae,
    global_batch_normalise,
    rloo_advantages,
    token_level_returns,
)
from gui_gym.rewards.milestones import step_grpo_advantages


def test_gae_worked_example() -> None:
    # delta_2 = 2 - 0 = 2;  delta_1 = 0 + 0.9*0 - 1 = -1;  delta_0 = 1 + 0.9*1 - 0.5 = 1.4
    # A_2 = 2;  A_1 = -1 + 0.9*0.8*2 = 0.44;  A_0 = 1.4 + 0.72*0.44 = 1.7168
    advantages, returns = gae([1.0, 0.0, 2.0], [0.5, 1.0, 0.0], gamma=0.9, lam=0.8)
    assert advantages == pytest.approx([1.7168, 0.44, 2.0])
    assert returns == pytest.approx([2.2168, 1.44, 2.0])


def test_gae_lambda_one_is_monte_carlo_minus_value() -> None:
    advantages, returns = gae([1.0, 0.0, 2.0], [0.5, 1.0, 0.0], gamma=1.0, lam=1.0)
    assert advantages == pytest.approx([3.0 - 0.5, 2.0 - 1.0, 2.0 - 0.0])
    assert returns == pytest.approx([3.0, 2.0, 2.0])


def test_gae_lambda_zero_is_one_step_td() -> None:
    advantages, _ = gae([1.0, 0.0, 2.0], [0.5, 1.0, 0.0], gamma=0.9, lam=0.0)
    assert advantages == pytest.approx([1.4, -1.0, 2.0])


def test_gae_bootstraps_a_truncated_episode() -> None:
    # delta = 1 + 0.9 * 2 - 0.5
    assert gae([1.0], [0.5], gamma=0.9, lam=0.95, bootstrap=2.0)[0] == pytest.approx([2.3])


def test_gae_defaults_and_bad_input() -> None:
    assert (DEFAULT_GAE_GAMMA, DEFAULT_GAE_LAMBDA) == (1.0, 1.0)
    with pytest.raises(ValueError, match="differ in length"):
        gae([1.0, 2.0], [0.0])
    with pytest.raises(ValueError, match="lam must be in"):
        gae([1.0], [0.0], lam=1.5)


def test_rloo_leaves_each_sample_out() -> None:
    assert rloo_advantages([1.0, 0.0, 0.0, 1.0]) == pytest.approx([2 / 3, -2 / 3, -2 / 3, 2 / 3])
    assert rloo_advantages([3.0]) == [0.0]
    with pytest.raises(ValueError):
        rloo_advantages([])


def test_token_level_returns_discount_between_turns_only() -> None:
    # turn 1: last token 0.7 = -0.3 + 1.0
    # turn 0: last token 0.3 + 0.5 * 0.7 = 0.65 (inter-turn discount); first -0.1 + 0.65
    returns = token_level_returns([0.5, 1.0], [[-0.1, -0.2], [-0.3]], gamma_turn=0.5)
    assert returns == [pytest.approx([0.55, 0.65]), pytest.approx([0.7])]


def test_token_level_returns_with_no_penalty_is_reward_to_go() -> None:
    returns = token_level_returns([0.0, 0.0, 1.0], [[0.0] * 3, [0.0] * 2, [0.0]])
    assert [v for row in returns for v in row] == [1.0] * 6


def test_token_level_returns_rejects_an_empty_turn() -> None:
    with pytest.raises(ValueError, match="turn 0 has no tokens"):
        token_level_returns([1.0], [[]])
    with pytest.raises(ValueError, match="differ in length"):
        token_level_returns([1.0, 2.0], [[0.0]])


def test_global_batch_normalise_pools_every_token() -> None:
    std = math.sqrt(2 / 3)
    out = global_batch_normalise([[1.0, 2.0], [3.0]])
    assert out == [pytest.approx([-1 / std, 0.0], abs=1e-6), pytest.approx([1 / std], abs=1e-6)]
    assert global_batch_normalise([[2.0, 2.0]]) == [[0.0, 0.0]]


def test_global_differs_from_per_group_normalisation() -> None:
    # two groups with different reward levels: per group each would be (-1, 1); globally
    # the second group's tokens stay above the first's
    out = global_batch_normalise([[0.0, 1.0], [2.0, 3.0]])
    assert out[0][1] < 0 < out[1][0]


def test_step_level_grpo_normalises_over_all_steps_of_the_group() -> None:
    # ADMIRE Eq. 13: R = {1, 0, 0.5, 0.5}, mean 0.5, population std 0.35355
    adv = step_grpo_advantages([[1.0, 0.0], [0.5, 0.5]])
    assert list(adv[0]) == pytest.approx([1.41421, -1.41421], abs=1e-4)
    assert list(adv[1]) == pytest.approx([0.0, 0.0], abs=1e-9)
