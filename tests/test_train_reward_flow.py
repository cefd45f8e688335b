"""From per-step rewards to advantages: a shaped reward reaches the trainers' advantages.

Two hand-made episodes of the WikiHow task ``apologize_to_a_friend-category`` (four
milestones: ``query_typed``, ``results_shown``, ``article_opened``, ``category_opened``) run
through a real env wrapped by :class:`~gui_gym.train.reward_stack.RewardStack`:

* success: ``INPUT`` (query typed and results shown, Prog = 2/4), ``CLICK(4)`` (article,
  3/4), ``CLICK(7)`` (category, 4/4, outcome 1);
* failure: ``INPUT``, ``CLICK(4)``, ``SCROLL(down)`` (still 3/4; truncated at 3 steps).

ProgRM Eq. 2 with history ``k`` pays ``Prog(s_t) - Prog(s_{t-k})`` (``s_0`` the reference
while ``t < k``), worked out below for k = 1, 2, 3; then ADMIRE's step-level GRPO (Eq. 13:
outcome on every step, normalised over all steps of the group) and REINFORCE++'s returns
(ProgRM Sec. 2.4: sums of the rewards to come, gamma = 1).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import gui_gym  # noqa: F401
from gui_gym.agents.base import run_episode
from gui_gym.rewards.advantages import token_level_returns
from gui_gym.rewards.milestones import step_grpo_advantages
from gui_gym.train.reward_stack import RewardStack, admire_step_rewards, reward_stream

TASK = "apologize_to_a_friend-category"
SUCCESS = ['INPUT(0, "apologize to a friend")', "CLICK(4)", "CLICK(7)"]
FAILURE = ['INPUT(0, "apologize to a friend")', "CLICK(4)", "SCROLL(down)"]


class Script:
    """Sends a fixed list of actions."""

    name = "script"

    def __init__(self, actions: list[str]):
        self.actions = actions
        self.position = 0

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        self.position = 0

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        self.position += 1
        return self.actions[self.position - 1]


def episodes(k: int) -> tuple[Any, Any]:
    stack = RewardStack.from_text("outcome+progress", embedder="hashing", progress_k=k)
    env = stack.wrap(gym.make("GuiGym/WikiHow-v0", split="train", max_steps=3))
    try:
        won = run_episode(env, Script(SUCCESS), seed=0, options={"task": TASK})
        lost = run_episode(env, Script(FAILURE), seed=0, options={"task": TASK})
    finally:
        env.close()
    assert won.success and not lost.success
    return won, lost


# per k: (success rewards, failure rewards), Prog = 0.5, 0.75, 1.0 (success) / 0.75 (failure)
WORKED = {
    1: ([0.5, 0.25, 0.25 + 1.0], [0.5, 0.25, 0.0]),
    2: ([0.5, 0.75, 0.5 + 1.0], [0.5, 0.75, 0.25]),
    3: ([0.5, 0.75, 1.0 + 1.0], [0.5, 0.75, 0.75]),
}

# step-level GRPO over the six steps of the group (hand-computed mean and population std)
STEP_GRPO = {
    1: [1.249865, 0.808736, 0.808736, -0.51465, -0.955779, -1.396908],
    2: [0.808736, 1.249865, 0.808736, -0.955779, -0.51465, -1.396908],
    3: [0.51465, 0.955779, 1.396908, -1.249865, -0.808736, -0.808736],
}


@pytest.mark.parametrize("k", [1, 2, 3])
def test_progress_history_k_reaches_step_grpo_and_reinforce_pp(k: int) -> None:
    won, lost = episodes(k)
    assert reward_stream(won) == pytest.approx(WORKED[k][0])
    assert reward_stream(lost) == pytest.approx(WORKED[k][1])
    # step-level GRPO: R_total(t) = outcome + progress term of step t
    assert admire_step_rewards(won) == pytest.approx(
        [r + (i < 2) for i, r in enumerate(WORKED[k][0])]
    )
    assert admire_step_rewards(lost) == pytest.approx(WORKED[k][1])
    advantages = step_grpo_advantages([admire_step_rewards(won), admire_step_rewards(lost)])
    assert np.concatenate(advantages) == pytest.approx(STEP_GRPO[k], abs=1e-5)
    # REINFORCE++: each turn's tokens carry the return to go (no KL penalty here)
    returns = token_level_returns(reward_stream(won), [[0.0, 0.0]] * 3)
    expected = [sum(WORKED[k][0][t:]) for t in range(3)]
    assert [row[0] for row in returns] == pytest.approx(expected)
    assert [row[1] for row in returns] == pytest.approx(expected)


def test_k1_returns_telescope_to_outcome_plus_progress_made() -> None:
    # with k = 1 the progress terms telescope: G_0 = outcome + Prog(s_T) - Prog(s_0)
    won, lost = episodes(1)
    assert sum(reward_stream(won)) == pytest.approx(1.0 + 1.0)
    assert sum(reward_stream(lost)) == pytest.approx(0.0 + 0.75)


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_reward_stack_rejects_a_bad_history_length(k: Any) -> None:
    with pytest.raises(ValueError, match="progress_k"):
        RewardStack.from_text("outcome+progress", embedder="hashing", progress_k=k)


def test_a_solved_group_still_moves_step_grpo_when_progress_varies_by_step() -> None:
    # Two successes of the same task: the outcome alone gives every step the same reward,
    # so step-level GRPO makes no update. With the progress term (k = 1: 0.5, 0.25, 0.25 as
    # the INPUT step completes two of the four milestones) ADMIRE's std normalisation blows
    # the 0.25 gap up to unit scale: the right CLICKs of a solved task are pushed down as
    # hard as a failure would be. RLOO (no std) keeps the gap at its own size.
    from gui_gym.rewards.advantages import rloo_advantages

    won, _ = episodes(1)
    outcome_only = [[1.0] * 3, [1.0] * 3]
    assert np.concatenate(step_grpo_advantages(outcome_only)) == pytest.approx([0.0] * 6)
    shaped = [admire_step_rewards(won)] * 2  # [1.5, 1.25, 1.25] twice
    grpo = np.concatenate(step_grpo_advantages(shaped))
    assert grpo == pytest.approx([2**0.5, -(0.5**0.5), -(0.5**0.5)] * 2, abs=1e-4)  # eps 1e-6
    rloo = rloo_advantages([r for row in shaped for r in row])
    assert rloo == pytest.approx([0.2, -0.1, -0.1] * 2)


def prm_episodes() -> tuple[Any, Any]:
    stack = RewardStack.from_text("outcome+prm")
    env = stack.wrap(gym.make("GuiGym/WikiHow-v0", split="train", max_steps=3))
    try:
        won = run_episode(env, Script(SUCCESS), seed=0, options={"task": TASK})
        lost = run_episode(env, Script(FAILURE), seed=0, options={"task": TASK})
    finally:
        env.close()
    assert won.success and not lost.success
    return won, lost


def test_prm_under_step_grpo_gives_the_outcome_to_every_step_of_a_success() -> None:
    # GUI-Shepherd Eq. 3: the PRM wrapper's reward holds no outcome (r_t = r_PRM + r_format),
    # so R_total(t) of step-level GRPO is the outcome plus each step's PRM reward, the
    # completing step included. Before the fix the completing step lost the outcome:
    # a success read [1 + p0, 1 + p1, p2].
    won, lost = prm_episodes()
    prm_won = [float(s.info["prm"]["reward"]) for s in won.steps]
    prm_lost = [float(s.info["prm"]["reward"]) for s in lost.steps]
    assert [float(s.reward) for s in won.steps] == pytest.approx(prm_won)  # no outcome in r_t
    assert admire_step_rewards(won) == pytest.approx([1.0 + p for p in prm_won])
    assert admire_step_rewards(lost) == pytest.approx(prm_lost)
    # PPO / REINFORCE++ read the wrapper's reward as it is: Eq. 3 has no outcome term
    assert reward_stream(won) == pytest.approx(prm_won)


def test_prm_step_grpo_pushes_up_the_completing_step_of_a_success() -> None:
    # a group of 2 successes and 2 failures: every step of a success, the one that completes
    # the task included, is above the group mean
    won, lost = prm_episodes()
    advantages = step_grpo_advantages([admire_step_rewards(t) for t in (won, won, lost, lost)])
    assert all(a > 0 for a in advantages[0])
    assert advantages[0][-1] == pytest.approx(advantages[1][-1])
    assert advantages[0][-1] > max(advantages[2])


def test_judge_plus_milestone_learns_milestones_from_the_judges_verdict(tmp_path: Any) -> None:
    # Under judge+milestone the ProRe judge's verdict is the outcome: a ground-truth success
    # the judge failed teaches no milestones and is credited as a failure (ADMIRE Eq. 11).
    stack = RewardStack.from_text(
        "judge+milestone", embedder="hashing", milestone_store=tmp_path / "m.json"
    )
    env = stack.wrap(gym.make("GuiGym/WikiHow-v0", split="train", max_steps=3))
    try:
        won = run_episode(env, Script(SUCCESS), seed=0, options={"task": TASK})
        assert won.success and won.steps[-1].info["judge"]["reward"] == 1.0
        last = won.steps[-1]
        last.info = {**last.info, "judge": {**last.info["judge"], "reward": 0.0}}
        updates = stack.refine_milestones(env, [[won]])
        assert updates == {}  # the judge saw no success: nothing to learn from
        assert won.steps[-1].info["milestone"]["success"] is False
        again = run_episode(env, Script(SUCCESS), seed=0, options={"task": TASK})
        updates = stack.refine_milestones(env, [[again]])
        assert list(updates) == [TASK]
        assert again.steps[-1].info["milestone"]["success"] is True
    finally:
        env.close()
