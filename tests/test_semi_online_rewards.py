"""UI-S1 reward math (rewards.semi_online) on hand-computed vectors."""

from __future__ import annotations

import math
import random

import pytest

from gui_gym.rewards.semi_online import (
    DEFAULT_ETA,
    DEFAULT_GAMMA,
    DEFAULT_OMEGA,
    Rollout,
    discounted_returns,
    dual_level_advantages,
    dynamic_sampling,
    episode_level_advantages,
    episode_return,
    passes_dynamic_sampling,
    sop_metrics,
    step_level_advantages,
    step_reward,
    step_reward_code,
)


def test_defaults_are_the_papers() -> None:
    # UI-S1 Table 9: gamma 0.5, omega 1.0, eta 0.3
    assert (DEFAULT_GAMMA, DEFAULT_OMEGA, DEFAULT_ETA) == (0.5, 1.0, 0.3)


@pytest.mark.parametrize(
    ("fmt", "typ", "exact", "expected"),
    [
        (1, 1, 1, 1.0),  # 0.1 + 0.4 + 0.5
        (1, 1, 0, 0.5),  # right type, wrong arguments
        (1, 0, 0, 0.1),  # well formed, wrong type
        (1, 0, 1, 0.1),  # exact without the type is gated off: [f * r_type = 1]
        (0, 1, 1, 0.0),  # malformed: nothing counts
        (0, 0, 0, 0.0),
    ],
)
def test_step_reward_is_eq_8(fmt: int, typ: int, exact: int, expected: float) -> None:
    assert step_reward(fmt, typ, exact) == pytest.approx(expected)


def test_step_reward_takes_custom_weights() -> None:
    assert step_reward(True, True, False, weights=(0.2, 0.3, 0.5)) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("fmt", "typ", "exact", "expected"),
    [(1, 1, 1, 1.0), (1, 1, 0, 0.55), (1, 0, 0, 0.19), (0, 1, 1, 0.0)],
)
def test_step_reward_code_variant(fmt: int, typ: int, exact: int, expected: float) -> None:
    # public code: 0.1 format + 0.9 x (1.0 exact / 0.5 type only / 0.1 wrong type)
    assert step_reward_code(fmt, typ, exact) == pytest.approx(expected)


def test_step_reward_rejects_non_binary_scores() -> None:
    with pytest.raises(ValueError, match="format_ok must be 0 or 1"):
        step_reward(0.5, 1, 1)


def test_discounted_returns_stop_after_the_first_mismatch() -> None:
    # Eq. 9 with gamma 0.5; step 2 mismatched (and was patched)
    rewards = [1.0, 1.0, 0.5, 1.0]
    matched = [True, True, False, True]
    assert discounted_returns(rewards, matched) == pytest.approx([1.625, 1.25, 0.5, 1.0])


def test_discounted_returns_to_the_end_of_the_rollout() -> None:
    # Table 8's t_end = T row
    rewards = [1.0, 1.0, 0.5, 1.0]
    matched = [True, True, False, True]
    got = discounted_returns(rewards, matched, truncate="rollout")
    assert got == pytest.approx([1.75, 1.5, 1.0, 1.0])


def test_gamma_zero_gives_the_step_rewards() -> None:
    assert discounted_returns([0.1, 1.0, 0.5], [False, True, False], gamma=0.0) == [0.1, 1.0, 0.5]


def _eq9_literal(rewards: list[float], matched: list[bool], gamma: float) -> list[float]:
    """Eq. 9 as written: t_end = min(max{k >= t | all of t..k match} + 1, T)."""
    last = len(rewards) - 1
    out = []
    for t in range(len(rewards)):
        ks = [k for k in range(t, last + 1) if all(matched[t : k + 1])]
        t_end = min((max(ks) if ks else t - 1) + 1, last)
        out.append(sum(gamma ** (k - t) * rewards[k] for k in range(t, t_end + 1)))
    return out


def test_backward_recursion_equals_eq_9_as_written() -> None:
    rng = random.Random(0)
    for _ in range(200):
        n = rng.randint(1, 8)
        rewards = [rng.choice([0.0, 0.1, 0.5, 1.0]) for _ in range(n)]
        matched = [rng.random() < 0.6 for _ in range(n)]
        gamma = rng.choice([0.0, 0.5, 0.9])
        assert discounted_returns(rewards, matched, gamma=gamma) == pytest.approx(
            _eq9_literal(rewards, matched, gamma)
        )


def test_discounted_returns_check_their_arguments() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        discounted_returns([1.0], [True, False])
    with pytest.raises(ValueError, match="gamma"):
        discounted_returns([1.0], [True], gamma=1.5)
    with pytest.raises(ValueError, match="truncate"):
        discounted_returns([1.0], [True], truncate="episode")  # type: ignore[arg-type]


def test_episode_return_readings() -> None:
    rewards, returns = [1.0, 0.5, 1.0], [1.25, 0.5, 1.0]
    assert episode_return(rewards, returns, "sum") == 2.5
    assert episode_return(rewards, returns, "mean") == pytest.approx(2.5 / 3)
    assert episode_return(rewards, returns, "first") == 1.25


# Two rollouts of one expert trajectory (gamma 0.5):
#   A: all three steps match              -> R = [1.75, 1.5, 1.0], total 3.0
#   B: step 1 mismatched and was patched  -> R = [1.25, 0.5, 1.0], total 2.5
A = Rollout((1.0, 1.0, 1.0), (True, True, True))
B = Rollout((1.0, 0.5, 1.0), (True, False, True), (False, True, False))


def test_step_level_advantages_normalise_per_step_index() -> None:
    got = step_level_advantages([[1.75, 1.5, 1.0], [1.25, 0.5, 1.0]])
    # t=0: mean 1.5, std 0.25; t=1: mean 1.0, std 0.5; t=2: equal returns -> 0
    assert got[0] == pytest.approx([1.0, 1.0, 0.0], abs=1e-5)
    assert got[1] == pytest.approx([-1.0, -1.0, 0.0], abs=1e-5)


def test_step_level_statistics_use_only_rollouts_that_reached_the_step() -> None:
    # C ended at its first step; steps 1 and 2 are compared between A and B only
    got = step_level_advantages([[1.75, 1.5, 1.0], [1.25, 0.5, 1.0], [0.1]])
    assert len(got[2]) == 1
    assert got[0][1:] == pytest.approx([1.0, 0.0], abs=1e-5)
    assert got[1][1:] == pytest.approx([-1.0, 0.0], abs=1e-5)
    mean = (1.75 + 1.25 + 0.1) / 3
    std = math.sqrt(((1.75 - mean) ** 2 + (1.25 - mean) ** 2 + (0.1 - mean) ** 2) / 3)
    assert got[2][0] == pytest.approx((0.1 - mean) / std, rel=1e-5)


def test_a_step_only_one_rollout_reached_has_zero_advantage() -> None:
    got = step_level_advantages([[1.0, 2.0], [3.0]])
    assert got[0] == pytest.approx([-1.0, 0.0], abs=1e-5)
    assert got[1] == pytest.approx([1.0], abs=1e-5)


def test_episode_level_advantages() -> None:
    assert episode_level_advantages([3.0, 2.5]) == pytest.approx([1.0, -1.0], abs=1e-5)
    assert episode_level_advantages([2.0, 2.0, 2.0]) == [0.0, 0.0, 0.0]


def test_dual_level_advantages_hand_vector() -> None:
    adv = dual_level_advantages([A, B])
    assert adv.returns[0] == pytest.approx([1.75, 1.5, 1.0])
    assert adv.returns[1] == pytest.approx([1.25, 0.5, 1.0])
    assert adv.episode_returns == [3.0, 2.5]
    assert adv.episode == pytest.approx([1.0, -1.0], abs=1e-5)
    # Eq. 12 with omega 1: A = A^E + A^S
    assert adv.combined[0] == pytest.approx([2.0, 2.0, 1.0], abs=1e-5)
    assert adv.combined[1] == pytest.approx([-2.0, -2.0, -1.0], abs=1e-5)
    half = dual_level_advantages([A, B], omega=0.5)
    assert half.combined[0] == pytest.approx([1.5, 1.5, 1.0], abs=1e-5)
    episode_only = dual_level_advantages([A, B], omega=0.0)
    assert episode_only.combined[1] == pytest.approx([-1.0, -1.0, -1.0], abs=1e-5)


def test_identical_rollouts_get_zero_advantage() -> None:
    adv = dual_level_advantages([A, A, A])
    assert all(a == 0.0 for row in adv.combined for a in row)
    assert adv.std == 0.0


def test_dynamic_sampling_keeps_diverse_groups_only() -> None:
    # the diverse group's combined advantages [2, 2, 1, -2, -2, -1] have std sqrt(3) > 0.3
    assert passes_dynamic_sampling([2, 2, 1, -2, -2, -1], eta=0.3)
    assert not passes_dynamic_sampling([0.0, 0.0, 0.0])
    assert not passes_dynamic_sampling([1.0, 1.5], eta=0.3)  # std 0.25
    kept, dropped = dynamic_sampling([[A, B], [A, A, A]])
    assert (kept, dropped) == ([0], [1])


def test_dynamic_sampling_on_episode_returns() -> None:
    # the reward-std reading: returns 3.0 and 2.5 have std 0.25 < 0.3, so the group goes
    kept, dropped = dynamic_sampling([[A, B]], statistic="return")
    assert (kept, dropped) == ([], [0])
    kept, _ = dynamic_sampling([[A, B]], statistic="return", eta=0.2)
    assert kept == [0]
    with pytest.raises(ValueError, match="statistic"):
        dynamic_sampling([[A]], statistic="reward")  # type: ignore[arg-type]


def test_rollout_validates_and_reads_env_info() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        Rollout((1.0, 0.5), (True,))
    with pytest.raises(ValueError, match="at least one step"):
        Rollout((), ())
    info = {"semi_online": {"rollout": {"rewards": [1.0], "matched": [True], "patched": [False]}}}
    assert Rollout.from_info(info) == Rollout((1.0,), (True,), (False,))


def test_sop_metrics_appendix_c() -> None:
    sop = sop_metrics([3, 0, 2, 5], [3, 4, 4, 5])
    assert sop.pg == pytest.approx((1 + 0 + 0.5 + 1) / 4)
    assert sop.tsr == pytest.approx(0.5)
    assert sop.score == pytest.approx((0.625 + 0.5) / 2)
    assert sop.tasks == 4


def test_sop_metrics_check_their_arguments() -> None:
    with pytest.raises(ValueError, match="at least one task"):
        sop_metrics([], [])
    with pytest.raises(ValueError, match="task 1"):
        sop_metrics([1, 5], [2, 4])
    with pytest.raises(ValueError, match="differ in length"):
        sop_metrics([1], [1, 2])
