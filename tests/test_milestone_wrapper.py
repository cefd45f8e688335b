"""MilestoneWrapper on WikiHow: milestones learned from successes, deferred and online credit,
decay, static milestones, and garbage generator output that leaves the store unchanged."""

from __future__ import annotations

import logging
from pathlib import Path

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.agents import OracleAgent
from gui_gym.models.embeddings import HashingEmbedder
from gui_gym.models.llm import ScriptedLLM
from gui_gym.models.milestones import (
    CosineMatcher,
    LLMMilestoneGenerator,
    TrajectoryMilestoneGenerator,
)
from gui_gym.rewards.milestone_store import MilestoneStore
from gui_gym.rewards.milestones import milestone_step_rewards
from gui_gym.wrappers import MilestoneWrapper

TASK = "clean_oil_paint_brushes-bookmark"  # search, open the article, bookmark it
KEY_STEPS = [
    'type "clean oil paint brushes" into "Search wikiHow" input',
    'click "How to Clean Oil Paint Brushes" link',
    'click "Bookmark" button',
]


def _wrap(store: MilestoneStore | Path, max_steps: int = 20, **kwargs) -> MilestoneWrapper:
    env = gym.make("GuiGym/WikiHow-v0", task=TASK, max_steps=max_steps)
    embedder = HashingEmbedder(dim=512)
    kwargs.setdefault("generator", TrajectoryMilestoneGenerator(embedder))
    kwargs.setdefault("matcher", CosineMatcher(embedder))
    return MilestoneWrapper(env, store, **kwargs)


def _run(env: gym.Env, actions=None, seed: int = 0):
    """Run the oracle (or ``actions``); returns the per-step rewards and infos."""
    oracle = OracleAgent(env)
    _, info = env.reset(seed=seed)
    rewards, infos, done, t = [], [info], False, 0
    while not done:
        action = actions[t] if actions is not None and t < len(actions) else oracle.act({}, info)
        _, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        infos.append(info)
        done = terminated or truncated
        t += 1
    return rewards, infos


def test_a_first_success_initialises_the_store_and_is_paid_per_eq10(tmp_path: Path) -> None:
    env = _wrap(tmp_path / "m.json")
    rewards, infos = _run(env)
    end = infos[-1]["milestone"]
    assert infos[0]["milestone"]["K"] == 0  # nothing to match yet
    assert end["update"] == {"status": "initialized", "version": 1}
    assert end["milestones"] == KEY_STEPS
    # Algorithm 1 computes rewards after the update: every key step hits with cosine 1
    assert end["hits"] == [0, 1, 2]
    assert end["episode_rewards"] == pytest.approx([1.0, 1.0, 1.0])
    assert end["episode_total_rewards"] == pytest.approx([1.3, 1.3, 1.3])  # 1 + 0.3 * 1
    assert rewards == [0.0, 0.0, 1.0]  # deferred credit leaves the step rewards alone
    stored = MilestoneStore(tmp_path / "m.json")
    assert stored.milestones(TASK) == KEY_STEPS
    assert stored.history(TASK)[0].meta["seed"] == 0


def test_a_failure_gets_the_eq11_scaffold_and_does_not_touch_the_store(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    store.commit(TASK, KEY_STEPS)
    env = _wrap(store, max_steps=2)  # the oracle is cut off before it bookmarks
    rewards, infos = _run(env)
    end = infos[-1]["milestone"]
    assert not end["success"] and end["update"]["status"] == "skipped"
    assert [i["milestone"]["hit"] for i in infos[1:]] == [True, True]
    assert end["k"] == 2 and end["K"] == 3
    expected = milestone_step_rewards([True, True], [1.0, 1.0], 3, success=False, zeta=0.5)
    assert end["episode_rewards"] == pytest.approx(expected)
    assert end["episode_rewards"] == pytest.approx([1 / 3 + 0.5, 2 / 3 + 0.5])
    assert end["episode_total_rewards"] == pytest.approx([0.3 * r for r in expected])
    assert store.version(TASK) == 1


def test_a_failure_with_hits_earns_more_than_one_without(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    store.commit(TASK, KEY_STEPS)
    _, with_hits = _run(_wrap(store, max_steps=2))
    _, without = _run(_wrap(store, max_steps=2), actions=["SCROLL(down)", "SCROLL(down)"])
    assert sum(with_hits[-1]["milestone"]["episode_total_rewards"]) > sum(
        without[-1]["milestone"]["episode_total_rewards"]
    )
    assert without[-1]["milestone"]["episode_rewards"] == [0.0, 0.0]


def test_online_credit_pays_hits_and_format_as_they_happen(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    store.commit(TASK, KEY_STEPS)
    env = _wrap(store, credit="online", epoch=10)
    weight = 0.3 * 0.99**10
    actions = ["tap the search box"]  # malformed output first: format penalty, no hit
    rewards, infos = _run(env, actions=actions)
    assert infos[1]["milestone"]["hit"] is False
    assert rewards[0] == pytest.approx(-0.5)
    assert rewards[1:] == pytest.approx([weight, weight, 1.0 + weight])
    assert infos[-1]["milestone"]["weight"] == pytest.approx(weight)
    end = infos[-1]["milestone"]
    assert end["episode_total_rewards"][0] == pytest.approx(1.0 - 0.5)


def test_format_penalty_is_for_malformed_output_as_in_the_paper(tmp_path: Path) -> None:
    # ADMIRE Eq. 12: R_format = -1 "if the action syntax is invalid". CLICK(999) is
    # well-formed (the env rejects it: no element 999), so only "rejected" penalises it.
    store = MilestoneStore(tmp_path / "m.json")
    store.commit(TASK, KEY_STEPS)
    paper = _wrap(store, credit="online", epoch=10)
    assert paper.format_penalty == "malformed"
    rewards, infos = _run(paper, actions=["CLICK(999)"])
    assert infos[1]["action_valid"] is False and rewards[0] == pytest.approx(0.0)
    assert infos[-1]["milestone"]["episode_total_rewards"][0] == pytest.approx(1.0)
    ours = _wrap(store, credit="online", epoch=10, format_penalty="rejected")
    rewards, infos = _run(ours, actions=["CLICK(999)"])
    assert rewards[0] == pytest.approx(-0.5)
    assert infos[-1]["milestone"]["episode_total_rewards"][0] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="format_penalty must be one of"):
        _wrap(store, format_penalty="invalid")


def test_set_epoch_decays_the_milestone_weight(tmp_path: Path) -> None:
    env = _wrap(tmp_path / "m.json")
    assert env.weight == pytest.approx(0.3)
    env.set_epoch(100)
    assert env.weight == pytest.approx(0.3 * 0.99**100)
    _, infos = _run(env)
    end = infos[-1]["milestone"]
    assert end["episode_total_rewards"] == pytest.approx([1 + env.weight] * 3)
    with pytest.raises(ValueError, match="epoch"):
        env.set_epoch(-1)


def test_refinement_and_static_milestones(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    store = MilestoneStore(path)
    store.commit(TASK, [*KEY_STEPS[:2], 'click "Share" button', KEY_STEPS[2]])
    _, infos = _run(_wrap(store))
    assert infos[-1]["milestone"]["update"] == {"status": "refined", "version": 2}
    assert store.milestones(TASK) == KEY_STEPS
    _, infos = _run(_wrap(store))  # the same route again: nothing to refine
    assert infos[-1]["milestone"]["update"] == {"status": "unchanged", "version": 2}
    store.commit(TASK, ["something else"])
    _, infos = _run(_wrap(store, adaptive=False))
    assert infos[-1]["milestone"]["update"]["status"] == "skipped"
    assert store.version(TASK) == 3


def test_garbage_llm_output_leaves_the_store_unchanged_and_logs_why(tmp_path: Path, caplog) -> None:
    path = tmp_path / "m.json"
    llm = ScriptedLLM(lambda text: "Here are the milestones you asked for: search, open, bookmark.")
    env = _wrap(path, generator=LLMMilestoneGenerator(llm))
    with caplog.at_level(logging.WARNING):
        _, infos = _run(env)
    update = infos[-1]["milestone"]["update"]
    assert update["status"] == "rejected" and "expected a JSON array" in update["reason"]
    assert "left unchanged" in caplog.text
    assert not path.exists()  # nothing was written
    store = MilestoneStore(path)
    store.commit(TASK, KEY_STEPS)
    before = path.read_bytes()
    _run(_wrap(store, generator=LLMMilestoneGenerator(llm)))
    assert path.read_bytes() == before


def test_llm_generator_milestones_with_placeholders_reach_the_store(tmp_path: Path) -> None:
    answer = '["Search for <Topic>", "Open the article about <Topic>", "Bookmark the article"]'
    llm = ScriptedLLM(lambda text: answer)
    env = _wrap(tmp_path / "m.json", generator=LLMMilestoneGenerator(llm))
    _, infos = _run(env)
    assert infos[-1]["milestone"]["update"]["status"] == "initialized"
    assert MilestoneStore(tmp_path / "m.json").milestones(TASK)[0] == "Search for <Topic>"


def test_a_refinement_that_raced_another_worker_is_regenerated(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    store.commit(TASK, [*KEY_STEPS, 'click "Share" button'])
    other = MilestoneStore(tmp_path / "m.json")
    inner = TrajectoryMilestoneGenerator(HashingEmbedder(dim=512))
    calls = []

    class RacingGenerator:
        name = "racing"

        def initialize(self, trajectory):
            return inner.initialize(trajectory)

        def refine(self, trajectory, milestones):
            calls.append(list(milestones))
            if len(calls) == 1:  # another worker commits while we generate
                other.commit(TASK, [*KEY_STEPS, 'click "Share" button', "extra"])
            return inner.refine(trajectory, milestones)

    _, infos = _run(_wrap(store, generator=RacingGenerator()))
    assert infos[-1]["milestone"]["update"] == {"status": "refined", "version": 3}
    assert calls[1][-1] == "extra"  # regenerated from the other worker's version
    assert [v.generator for v in store.history(TASK)] == ["", "", "racing"]


def test_arguments_are_validated_and_recorded_in_the_spec(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="delta"):
        _wrap(tmp_path / "m.json", delta=1.0)
    with pytest.raises(ValueError, match="credit"):
        _wrap(tmp_path / "m.json", credit="later")
    with pytest.raises(ValueError, match="decay"):
        _wrap(tmp_path / "m.json", decay=0.0)
    with pytest.raises(TypeError, match="matcher"):
        _wrap(tmp_path / "m.json", matcher=object())
    env = _wrap(tmp_path / "m.json", zeta=0.25)
    assert env.spec is not None
    recorded = env.spec.additional_wrappers[-1]
    assert recorded.name == "MilestoneWrapper"
    assert recorded.kwargs["zeta"] == 0.25 and recorded.kwargs["store"] == str(tmp_path / "m.json")
    with pytest.raises(gym.error.ResetNeeded):
        env.step("CLICK(0)")


def test_a_vector_env_sets_the_epoch_on_every_copy(tmp_path: Path) -> None:
    envs = gym.vector.SyncVectorEnv([lambda: _wrap(tmp_path / "m.json") for _ in range(2)])
    envs.call("set_epoch", 5)
    assert envs.get_attr("weight") == pytest.approx((0.3 * 0.99**5,) * 2)
    envs.close()
