"""RecordTrajectories writes each finished episode, crash-safely, with the true steps."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

import gui_gym  # noqa: F401
from gui_gym.agents import OracleAgent
from gui_gym.core.trajectory import read_trajectories
from gui_gym.core.ui import UITree
from gui_gym.wrappers import RecordTrajectories


def test_records_each_finished_episode(tmp_path: Path) -> None:
    path = tmp_path / "eps.jsonl"
    env = RecordTrajectories(
        gym.make("GuiGym/WikiHow-v0", split="test"), path, record_trees=True, agent_name="oracle"
    )
    agent = OracleAgent(env)
    screens = []
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        done = False
        episode_screens = []
        while not done:
            episode_screens.append(obs["screen"])
            obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
            done = terminated or truncated
        screens.append(episode_screens)
    env.reset(seed=9)
    env.step("SCROLL(down)")  # unfinished: not written
    env.close()
    trajectories = list(read_trajectories(path))
    assert len(trajectories) == 3 == env.episodes_written
    for t, episode_screens in zip(trajectories, screens):
        assert t.success and t.agent == "oracle" and t.env_id == "GuiGym/WikiHow-v0"
        assert [s.screen for s in t.steps] == episode_screens
        assert t.steps[-1].terminated and t.steps[-1].reward == 1.0
        assert UITree.from_dict(t.steps[0].tree).text == t.steps[0].screen
        assert t.metadata["category"] in ("Cross-Page", "In-Page", "QA")


def test_wrapper_is_recreatable_from_its_spec(tmp_path: Path) -> None:
    env = RecordTrajectories(gym.make("GuiGym/WikiHow-v0"), tmp_path / "a.jsonl")
    spec = env.spec
    assert spec is not None
    names = [w.name for w in spec.additional_wrappers]
    assert "RecordTrajectories" in names
    env.close()


def test_appends_to_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "eps.jsonl"
    for _ in range(2):
        env = RecordTrajectories(gym.make("GuiGym/WikiHow-v0"), path)
        env.reset(seed=0)
        agent = OracleAgent(env)
        done = False
        while not done:
            *_, terminated, truncated, _ = env.step(agent.act({}, {}))
            done = terminated or truncated
        env.close()
    assert len(list(read_trajectories(path))) == 2
