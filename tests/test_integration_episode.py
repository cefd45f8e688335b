"""The engine-agnostic episode the verl adapter drives (``gui_gym.integrations.episode``):
prompts, actions, the next-screen message and rewards read with the reward stack's readers.
Runs in the main environment (no verl needed)."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401
from gui_gym.agents import OracleAgent, run_episode
from gui_gym.agents.prompts import get_prompt
from gui_gym.integrations.episode import ChatEpisode, observation_message
from gui_gym.train.reward_stack import RewardStack, episode_return
from gui_gym.train.runner import make_env_factory

ENV = "GuiGym/WikiHow-v0"


def _expert(task_id: str, max_steps: int = 10) -> list[str]:
    env = gym.make(ENV, task=task_id, max_steps=max_steps)
    return [s.action for s in run_episode(env, OracleAgent(env), seed=0).steps]


@pytest.fixture(scope="module")
def task_id() -> str:
    env = gym.make(ENV, split="test")
    for task in env.unwrapped.task_ids:
        if len(_expert(task)) >= 3:
            return task
    raise AssertionError("no test task takes the expert 3 steps")


def _completion(action: str) -> str:
    return get_prompt("default").completion("next step", action)


def test_an_expert_episode_earns_what_gui_gym_train_would(task_id: str) -> None:
    actions = _expert(task_id)
    episode = ChatEpisode(ENV, task_id=task_id, seed=0, reward="outcome+progress", max_steps=10)
    messages = episode.reset()
    assert [m["role"] for m in messages] == ["system", "user"]
    replies = [episode.step(_completion(a)) for a in actions]
    assert replies[-1] is None and all(r is not None for r in replies[:-1])
    assert replies[0]["role"] == "user" and "Screen:" in replies[0]["content"]
    result = episode.result()

    stack = RewardStack.from_text("outcome+progress", embedder="hashing")
    env = make_env_factory(ENV, {"task": task_id, "max_steps": 10}, stack)()
    reference = run_episode(env, OracleAgent(env), seed=0)
    assert result.reward_score == pytest.approx(episode_return(reference))
    assert result.reward_score > 1.0 and result.success and result.ended
    assert [s.action for s in result.trajectory.steps] == actions
    assert sum(c["progress"] for c in result.components) == pytest.approx(result.reward_score - 1.0)
    assert result.summary()["success"] == 1.0


def test_an_unparsable_completion_is_sent_as_is_and_penalised(task_id: str) -> None:
    episode = ChatEpisode(ENV, task_id=task_id, seed=0, reward="outcome+format", max_steps=2)
    episode.reset()
    reply = episode.step("I am not sure what to do")
    assert "not carried out" in reply["content"]
    assert episode.step("still nothing") is None  # the env's step limit
    result = episode.result()
    assert [c["format"] for c in result.components] == pytest.approx([-0.1, -0.1])
    assert result.reward_score == pytest.approx(-0.2)
    assert result.trajectory.steps[0].action == "I am not sure what to do"
    assert result.ended and result.trajectory.steps[-1].truncated


def test_a_stopped_episode_keeps_its_shaping_and_scores_no_outcome(task_id: str) -> None:
    actions = _expert(task_id)
    episode = ChatEpisode(ENV, task_id=task_id, seed=0, reward="outcome+progress")
    episode.reset()
    episode.step(_completion(actions[0]))
    episode.stop()
    result = episode.result()
    assert not result.ended and result.num_steps == 1
    assert result.reward_score == pytest.approx(result.components[0]["progress"])


def test_milestones_are_learned_from_a_success_and_credited(task_id: str, tmp_path: Path) -> None:
    store = tmp_path / "milestones.json"
    settings = {"embedder": "hashing", "milestone_store": str(store)}
    first = ChatEpisode(
        ENV, task_id=task_id, seed=0, reward="outcome+milestone", stack_settings=settings
    )
    first.reset()
    for action in _expert(task_id):
        first.step(_completion(action))
    first.result()
    assert store.is_file()  # the success initialised the task's milestones
    second = ChatEpisode(
        ENV, task_id=task_id, seed=0, reward="outcome+milestone", stack_settings=settings
    )
    second.reset()
    for action in _expert(task_id):
        second.step(_completion(action))
    result = second.result()
    credited = [c["milestone"] for c in result.components]
    assert len(credited) == result.num_steps and max(credited) > 0
    assert result.reward_score > 1.0


def test_screenshots_reach_the_messages_as_image_parts(task_id: str) -> None:
    episode = ChatEpisode(ENV, task_id=task_id, seed=0, screenshot=True)
    messages = episode.reset()
    kinds = [p["type"] for p in messages[1]["content"]]
    assert "image" in kinds
    reply = episode.step(_completion(_expert(task_id)[0]))
    [image] = [p["image"] for p in reply["content"] if p["type"] == "image"]
    assert image.ndim == 3 and image.shape[2] == 3


def test_observation_message_says_what_happened() -> None:
    ok = observation_message({"screen": "S"}, {"action_valid": True, "action_description": "tap"})
    assert ok["content"].startswith("Done: tap\nScreen:\nS")
    bad = observation_message({"screen": "S"}, {"action_valid": False, "action_error": "no id 9"})
    assert "not carried out: no id 9" in bad["content"]


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"reward": "outcome+nope"}, "unknown reward 'nope'"),
        ({"seed": "3"}, "seed must be an int"),
        ({"format_eta": -1.0}, "format_eta must be >= 0"),
        ({"prompt": "nope"}, "unknown prompt 'nope'"),
    ],
)
def test_bad_settings_are_clear_errors(kwargs: dict, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        ChatEpisode(ENV, **kwargs)


def test_step_before_reset_is_a_clear_error() -> None:
    episode = ChatEpisode(ENV, seed=0)
    with pytest.raises(RuntimeError, match="call reset"):
        episode.step("CLICK(1)")
    with pytest.raises(RuntimeError, match="finished episode"):
        episode.result()
