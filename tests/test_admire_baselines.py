"""ADMIRE's Table 1 process-reward baseline (an LLM judging each step, Fig. 16) as a PRM,
and the base-reward ablation switches of App. B.3 (issue 20 item 7)."""

from __future__ import annotations

import warnings
from pathlib import Path

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.agents import OracleAgent
from gui_gym.models.embeddings import HashingEmbedder
from gui_gym.models.llm import LLMError, ScriptedLLM
from gui_gym.models.milestones import CosineMatcher, TrajectoryMilestoneGenerator
from gui_gym.models.prm import (
    ADMIRE_PROCESS_REWARD_WEIGHT,
    LLMStepJudgePRM,
    PRMResponseWarning,
    parse_step_verdict,
)
from gui_gym.rewards.milestone_store import MilestoneStore
from gui_gym.rewards.milestones import milestone_step_rewards
from gui_gym.rewards.prm import PRMQuery
from gui_gym.wrappers import MilestoneWrapper, PRMWrapper

WIKIHOW = "GuiGym/WikiHow-v0"


def _query(action: str = "CLICK(3)", description: str = 'click "Add" button') -> PRMQuery:
    return PRMQuery("Fill out an expense report", "[3] button Add", action, description)


# --------------------------------------------------------------- the step judge (Fig. 16)


def test_step_verdict_parser_is_strict_and_linear() -> None:
    assert parse_step_verdict("yes") is True
    assert parse_step_verdict(" **No.** ") is False
    assert parse_step_verdict('"Yes"') is True
    assert parse_step_verdict("The Add button is tapped.\nAnswer: yes") is True
    for bad in ("maybe", "yes, mostly", "", "no\n\nbut actually yes please"):
        with pytest.raises(ValueError, match="yes' or 'no"):
            parse_step_verdict(bad)
    with pytest.raises(ValueError):
        parse_step_verdict(" " * 300_000 + "y" + "\n" * 300_000)


def test_llm_step_judge_scores_yes_1_and_no_0_from_the_fig16_prompt() -> None:
    llm = ScriptedLLM([(r"Step action text: CLICK\(3\)", "yes"), (r"CLICK\(1\)", "No.")])
    prm = LLMStepJudgePRM(llm)
    scores = prm.score([_query(), _query("CLICK(1)", 'click "Delete" button')])
    assert scores.tolist() == [1.0, 0.0] and prm.last_errors == [None, None]
    prompt = llm.calls[0]
    assert "Goal: Fill out an expense report" in prompt
    assert 'Step action description: click "Add" button' in prompt
    assert "Answer with exactly one word, yes or no" in prompt
    # an empty action description is "no" without asking (Fig. 16's last rule)
    assert prm.score([_query(description="")]).tolist() == [0.0] and len(llm.calls) == 2


def test_garbage_gets_a_neutral_score_with_a_warning_or_raises_llm_error() -> None:
    llm = ScriptedLLM([], default="I think the step is fine")
    prm = LLMStepJudgePRM(llm, retries=2)
    with pytest.warns(PRMResponseWarning, match="neutral score 0.5"):
        assert prm.score([_query()]).tolist() == [0.5]
    assert len(llm.calls) == 3 and "after 3 attempts" in (prm.last_errors[0] or "")
    with pytest.raises(LLMError, match="step judge failed"):
        LLMStepJudgePRM(llm, on_error="raise", retries=0).score([_query()])

    def down(prompt: str) -> str:
        raise LLMError("http://judge/v1 failed 5 times")

    with pytest.warns(PRMResponseWarning, match="judge/v1"):
        assert LLMStepJudgePRM(ScriptedLLM(down)).score([_query()]).tolist() == [0.5]
    with pytest.raises(ValueError, match="on_error"):
        LLMStepJudgePRM(llm, on_error="ignore")
    with pytest.raises(TypeError, match="generate"):
        LLMStepJudgePRM(object())  # type: ignore[arg-type]


def test_in_prm_wrapper_it_is_admires_process_reward_baseline() -> None:
    # Table 1's "Process Reward": the outcome plus the judged step at weight 0.3.
    llm = ScriptedLLM([], default="yes")
    env = PRMWrapper(
        gym.make(WIKIHOW, split="test"),
        LLMStepJudgePRM(llm),
        weight=ADMIRE_PROCESS_REWARD_WEIGHT,
        outcome_weight=1.0,
        format_weight=0.0,
    )
    env.reset(seed=1)
    rewards, done = [], False
    while not done:
        _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        rewards.append(reward)
        done = terminated or truncated
    assert info["success"]
    assert rewards == pytest.approx([0.3] * (len(rewards) - 1) + [1.3])
    garbage = PRMWrapper(gym.make(WIKIHOW, split="test"), LLMStepJudgePRM(ScriptedLLM([], "?")))
    garbage.reset(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PRMResponseWarning)
        _, reward, *_, info = garbage.step(garbage.unwrapped.oracle_action())
    assert info["prm"]["score"] == 0.5 and "no yes/no verdict" in info["prm"]["error"]


# ------------------------------------------------------------- App. B.3 ablation switches


def test_base_reward_switches_worked_numbers() -> None:
    hits, r_mil = [False, True, False, True], [0.0, 0.8, 0.0, 0.9]
    # the paper's design: Eq. 10 on a success, Eq. 11 (k/K + zeta r) on a failure
    assert milestone_step_rewards(hits, r_mil, 2, True) == pytest.approx([0, 0.8, 0, 0.9])
    assert milestone_step_rewards(hits, r_mil, 2, False) == pytest.approx(
        [0, 0.5 + 0.4, 0.5, 1 + 0.45]
    )
    # "w/ Base Reward for Successful Traj.": k/K added on successes too
    assert milestone_step_rewards(hits, r_mil, 2, True, base_on_success=True) == pytest.approx(
        [0, 0.5 + 0.8, 0.5, 1 + 0.9]
    )
    # "w/o Base Reward for Fail Traj.": the hit bonus alone
    assert milestone_step_rewards(hits, r_mil, 2, False, base_on_failure=False) == pytest.approx(
        [0, 0.4, 0, 0.45]
    )


TASK = "clean_oil_paint_brushes-bookmark"
KEY_STEPS = [
    'type "clean oil paint brushes" into "Search wikiHow" input',
    'click "How to Clean Oil Paint Brushes" link',
    'click "Bookmark" button',
]


def _episode_rewards(store: MilestoneStore, max_steps: int, **kwargs: object) -> list[float]:
    embedder = HashingEmbedder(dim=512)
    env = MilestoneWrapper(
        gym.make(WIKIHOW, task=TASK, max_steps=max_steps),
        store,
        generator=TrajectoryMilestoneGenerator(embedder),
        matcher=CosineMatcher(embedder),
        adaptive=False,
        **kwargs,
    )
    agent = OracleAgent(env)
    _, info = env.reset(seed=0)
    done = False
    while not done:
        _, _, terminated, truncated, info = env.step(agent.act({}, info))
        done = terminated or truncated
    return info["milestone"]["episode_rewards"]


def test_milestone_wrapper_applies_the_ablation_switches(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    store.commit(TASK, KEY_STEPS)
    # a success hits all three milestones with cosine 1
    assert _episode_rewards(store, 20) == pytest.approx([1.0, 1.0, 1.0])
    assert _episode_rewards(store, 20, base_on_success=True) == pytest.approx(
        [1 / 3 + 1, 2 / 3 + 1, 1 + 1]
    )
    # a failure cut off after two hits
    assert _episode_rewards(store, 2) == pytest.approx([1 / 3 + 0.5, 2 / 3 + 0.5])
    assert _episode_rewards(store, 2, base_on_failure=False) == pytest.approx([0.5, 0.5])
