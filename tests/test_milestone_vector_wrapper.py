"""MilestoneVectorWrapper: the same rewards as one MilestoneWrapper per env, one batched matcher
call per step, both autoreset modes, and clear errors."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.models.embeddings import HashingEmbedder
from gui_gym.models.llm import ScriptedLLM
from gui_gym.models.milestones import (
    CosineMatcher,
    LLMJudgeMatcher,
    TrajectoryMilestoneGenerator,
    score_pairs,
)
from gui_gym.rewards.milestone_store import MilestoneStore
from gui_gym.wrappers import MilestoneVectorWrapper, MilestoneWrapper

WIKIHOW = "GuiGym/WikiHow-v0"
TASK = "clean_oil_paint_brushes-bookmark"
KEY_STEPS = [
    'type "clean oil paint brushes" into "Search wikiHow" input',
    'click "How to Clean Oil Paint Brushes" link',
    'click "Bookmark" button',
]


class CountingMatcher:
    """A CosineMatcher that records how it is called."""

    def __init__(self) -> None:
        self.inner = CosineMatcher(HashingEmbedder(dim=512))
        self.batches: list[int] = []
        self.single = 0

    def prepare(self, milestones: Sequence[str]) -> None:
        self.inner.prepare(milestones)

    def score(self, description: str, milestone: str) -> float:
        self.single += 1
        return self.inner.score(description, milestone)

    def score_pairs(self, descriptions: Sequence[str], milestones: Sequence[str]) -> np.ndarray:
        self.batches.append(len(descriptions))
        return self.inner.score_pairs(descriptions, milestones)


def _sub_env(max_steps: int) -> gym.Env:
    return gym.make(WIKIHOW, task=TASK, max_steps=max_steps)


def _vector(
    store: MilestoneStore, n: int, max_steps: int, mode=AutoresetMode.NEXT_STEP, **kwargs
) -> MilestoneVectorWrapper:
    envs = SyncVectorEnv([lambda: _sub_env(max_steps) for _ in range(n)], autoreset_mode=mode)
    kwargs.setdefault("matcher", CountingMatcher())
    kwargs.setdefault("generator", TrajectoryMilestoneGenerator(HashingEmbedder(dim=512)))
    return MilestoneVectorWrapper(envs, store, **kwargs)


# Per sub-env scripts: the oracle's route, a route cut short, one with a detour and an
# invalid action. Run for 4 steps with max_steps 4.
SCRIPTS = [
    ['INPUT(0, "clean oil paint brushes")', "CLICK(4)", "SCROLL(down)", "SCROLL(down)"],
    ["SCROLL(down)", 'INPUT(0, "clean oil paint brushes")', "CLICK(999)", "SCROLL(up)"],
    ["SCROLL(down)", "SCROLL(down)", "SCROLL(up)", "SCROLL(down)"],
]


def _single_run(store: MilestoneStore, script: list[str], seed: int, **kwargs):
    kwargs.setdefault("matcher", CosineMatcher(HashingEmbedder(dim=512)))
    kwargs.setdefault("generator", TrajectoryMilestoneGenerator(HashingEmbedder(dim=512)))
    env = MilestoneWrapper(_sub_env(4), store, **kwargs)
    _, info = env.reset(seed=seed)
    rewards, infos = [], [info]
    for action in script:
        _, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        infos.append(info)
        if terminated or truncated:
            break
    return rewards, infos


def test_vector_rewards_equal_one_single_wrapper_per_env(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    store.commit(TASK, KEY_STEPS)
    for credit in ("deferred", "online"):
        vec = _vector(store, 3, 4, credit=credit, epoch=3)
        _, info = vec.reset(seed=10)
        assert info["_milestone"].all() and list(info["milestone"]["K"]) == [3, 3, 3]
        vec_rewards, vec_infos = [], []
        for t in range(4):
            _, reward, terminated, truncated, info = vec.step([s[t] for s in SCRIPTS])
            vec_rewards.append(reward)
            vec_infos.append(info)
        assert (terminated | truncated).all()
        end = vec_infos[-1]["milestone"]
        for i, script in enumerate(SCRIPTS):
            rewards, infos = _single_run(store, script, seed=10 + i, credit=credit, epoch=3)
            assert [r[i] for r in vec_rewards] == pytest.approx(rewards)
            assert [v["milestone"]["hit"][i] for v in vec_infos] == [
                x["milestone"]["hit"] for x in infos[1:]
            ]
            single_end = infos[-1]["milestone"]
            assert end["episode_rewards"][i] == pytest.approx(single_end["episode_rewards"])
            assert end["episode_total_rewards"][i] == pytest.approx(
                single_end["episode_total_rewards"]
            )
            assert end["hits"][i] == single_end["hits"]
        assert list(end["k"]) == [2, 1, 0]  # the first env typed and opened the article
        assert end["episode_rewards"][2] == [0.0] * 4


def test_one_batched_matcher_call_per_step(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    store.commit(TASK, KEY_STEPS)
    vec = _vector(store, 3, 4)
    matcher = vec.matcher
    vec.reset(seed=0)
    vec.step([s[0] for s in SCRIPTS])
    vec.step([s[1] for s in SCRIPTS])
    # step 0: all three valid and below K; step 1: env 0 and 1 valid and pending, and env 2
    assert matcher.batches == [3, 3] and matcher.single == 0
    vec.step([s[2] for s in SCRIPTS])  # env 1's CLICK(999) is invalid: not matched
    assert matcher.batches[-1] == 2


def test_next_step_autoreset_starts_a_fresh_episode_with_the_learned_milestones(
    tmp_path: Path,
) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    vec = _vector(store, 2, 3)
    _, info = vec.reset(seed=0)
    assert list(info["milestone"]["K"]) == [0, 0]  # nothing learned yet
    oracle = ['INPUT(0, "clean oil paint brushes")', "CLICK(4)", "CLICK(2)"]
    for t in range(3):
        _, reward, terminated, truncated, info = vec.step([oracle[t], "SCROLL(down)"])
    assert terminated[0] and truncated[1]
    end = info["milestone"]
    assert end["success"][0] and not end["success"][1]
    assert end["update"]["status"][0] == "initialized" and end["milestones"][0] == KEY_STEPS
    assert end["update"]["status"][1] == "skipped"
    assert store.milestones(TASK) == KEY_STEPS
    # the reset step pays nothing and starts both episodes with the stored milestones
    _, reward, terminated, truncated, info = vec.step(["SCROLL(down)", "SCROLL(down)"])
    assert (reward == 0).all() and not (terminated | truncated).any()
    assert list(info["milestone"]["K"]) == [3, 3] and list(info["milestone"]["pointer"]) == [0, 0]
    _, _, _, _, info = vec.step([oracle[0], "SCROLL(down)"])
    assert list(info["milestone"]["hit"]) == [True, False]
    assert vec.milestones == [KEY_STEPS, KEY_STEPS]


def test_same_step_autoreset_finishes_on_the_final_observation(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    vec = _vector(store, 2, 3, mode=AutoresetMode.SAME_STEP)
    vec.reset(seed=0)
    oracle = ['INPUT(0, "clean oil paint brushes")', "CLICK(4)", "CLICK(2)"]
    for t in range(3):
        _, _, terminated, truncated, info = vec.step([oracle[t], "SCROLL(down)"])
    end = info["milestone"]
    assert terminated[0] and end["success"][0] and end["hits"][0] == [0, 1, 2]
    assert end["episode_total_rewards"][0] == pytest.approx([1.3, 1.3, 1.3])
    # the next step already belongs to the new episodes, matched against the new milestones
    _, _, _, _, info = vec.step([oracle[0], oracle[0]])
    assert list(info["milestone"]["hit"]) == [True, True]
    assert list(info["milestone"]["K"]) == [3, 3]


def test_bad_setups_get_clear_errors(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    with pytest.raises(ValueError, match="autoreset"):
        _vector(store, 2, 3, mode=AutoresetMode.DISABLED)
    with pytest.raises(ValueError, match="delta"):
        _vector(store, 2, 3, delta=1.5)
    vec = _vector(store, 2, 3)
    with pytest.raises(gym.error.ResetNeeded):
        vec.step(["SCROLL(down)", "SCROLL(down)"])
    recorded = vec.spec.additional_wrappers[-1] if vec.spec is not None else None
    assert recorded is None or recorded.name == "MilestoneVectorWrapper"


def test_score_pairs_batches_and_checks_lengths() -> None:
    matcher = CosineMatcher(HashingEmbedder(dim=512))
    pairs = [(KEY_STEPS[0], KEY_STEPS[0]), ('type "pie" into "Search" input', KEY_STEPS[1])]
    scores = score_pairs(matcher, [p[0] for p in pairs], [p[1] for p in pairs])
    assert scores == pytest.approx([matcher.score(d, m) for d, m in pairs])
    assert scores[0] == pytest.approx(1.0) and scores[1] < 0.75
    # a placeholder milestone matches any value in its place
    template = 'type "<Query>" into "Search wikiHow" input'
    assert score_pairs(matcher, [KEY_STEPS[0]], [template]) == pytest.approx([1.0])
    with pytest.raises(ValueError, match="pairs"):
        score_pairs(matcher, ["a", "b"], ["a"])

    class PairwiseOnly:  # a matcher without score_pairs falls back to score()
        def score(self, description: str, milestone: str) -> float:
            return float(description == milestone)

    assert list(score_pairs(PairwiseOnly(), ["a", "b"], ["a", "c"])) == [1.0, 0.0]


def test_llm_judge_scores_uncached_pairs_in_one_generate_call() -> None:
    calls: list[int] = []

    def answer(prompt) -> str:
        return "yes" if "Bookmark" in str(prompt).split("Action (Sentence B):")[1] else "no"

    class Recording(ScriptedLLM):
        def generate(self, prompts, max_new_tokens=256, temperature=0.0, n=1):
            calls.append(len(prompts))
            return super().generate(prompts, max_new_tokens, temperature, n)

    judge = LLMJudgeMatcher(Recording(answer))
    descriptions = ['click "Bookmark" button', "scroll down", 'click "Bookmark" button']
    scores = judge.score_pairs(descriptions, [KEY_STEPS[2]] * 3)
    assert list(scores) == [1.0, 0.0, 1.0] and calls == [2]  # the repeated pair is asked once
    assert judge.score('click "Bookmark" button', KEY_STEPS[2]) == 1.0 and calls == [2]


def test_async_vector_envs_work_too(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    store.commit(TASK, KEY_STEPS)
    envs = gym.make_vec(WIKIHOW, num_envs=2, vectorization_mode="async", task=TASK, max_steps=3)
    vec = MilestoneVectorWrapper(
        envs,
        store,
        matcher=CosineMatcher(HashingEmbedder(dim=512)),
        generator=TrajectoryMilestoneGenerator(HashingEmbedder(dim=512)),
    )
    try:
        vec.reset(seed=0)
        oracle = ['INPUT(0, "clean oil paint brushes")', "CLICK(4)", "CLICK(2)"]
        for t in range(3):
            _, _, terminated, _, info = vec.step([oracle[t], "SCROLL(down)"])
        assert terminated[0] and info["milestone"]["hits"][0] == [0, 1, 2]
        assert info["milestone"]["episode_rewards"][1] == [0.0, 0.0, 0.0]
    finally:
        vec.close()
