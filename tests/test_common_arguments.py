"""Every id accepts the common ``gym.make`` arguments, each with its documented meaning of
``category``; a missing optional extra is named; ``gui-gym bench`` never steps an ended
episode."""

from __future__ import annotations

import logging
import sys

import gymnasium as gym
import pytest

import gui_gym
from gui_gym.envs.replay import SAMPLE_DATASET

COMMON = {
    "task": None,
    "split": "all",
    "category": None,
    "screenshot": False,
    "max_steps": 5,
    "render_mode": "ansi",
}

# (id, extra kwargs, a category and what every task sampled under it must satisfy)
IDS = [
    *[(env_id, {}) for env_id in gui_gym.ENV_IDS],
    ("GuiGym/MiniWoB-v0", {}),
    ("GuiGym/MiniWoB-click-test-v0", {}),
    ("GuiGym/SemiOnlineReplay-v0", {"dataset": SAMPLE_DATASET}),
]


def _common(env_id: str) -> dict:
    common = dict(COMMON)
    if env_id.startswith("GuiGym/MiniWoB"):
        common["split"] = "train"  # miniwob's data mode: train or test, no "all"
    return common


@pytest.mark.parametrize(("env_id", "extra"), IDS, ids=[i for i, _ in IDS])
def test_every_id_accepts_the_common_arguments(env_id: str, extra: dict) -> None:
    env = gym.make(env_id, **_common(env_id), **extra)
    assert env.unwrapped.render_mode == "ansi"
    env.close()


@pytest.mark.parametrize(
    ("env_id", "category", "expected"),
    [
        ("GuiGym/WikiHow-v0", "QA", None),
        ("GuiGym/WebShop-Text-v0", "food", None),
        ("GuiGym/AndroidWorld-v0", "clock", {"ClockStopWatchRunning", "ClockTimerEntry"}),
        ("GuiGym/MiniWoB-v0", "email-inbox", {"email-inbox", "email-inbox-nl-turk"}),
        ("GuiGym/MiniWoB-v0", "flight", {"flight.Alaska", "flight.AA"}),
    ],
)
def test_category_restricts_the_sampled_tasks(
    env_id: str, category: str, expected: set[str] | None
) -> None:
    env = gym.make(env_id, category=category)
    pool = env.unwrapped._pool
    assert pool and all(t.category == category for t in pool)
    everything = gym.make(env_id).unwrapped._pool
    assert len(pool) < len(everything) or category == "flight"
    if expected is not None:
        assert expected <= {t.task_id for t in pool}
    env.close()


def test_androidworld_category_is_the_app_and_a_typo_names_the_apps() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", category="clock", split="test")
    obs, info = env.reset(seed=3)
    assert info["task_id"].startswith("Clock")
    with pytest.raises(ValueError, match=r"unknown category 'Clock'.*clock"):
        gym.make("GuiGym/AndroidWorld-v0", category="Clock")


def test_replay_category_task_and_split() -> None:
    env = gym.make("GuiGym/SemiOnlineReplay-v0", dataset=SAMPLE_DATASET)
    dataset = env.unwrapped.dataset
    category = next(t.category for t in dataset if t.category)
    env = gym.make("GuiGym/SemiOnlineReplay-v0", dataset=SAMPLE_DATASET, category=category)
    for seed in range(5):
        env.reset(seed=seed)
        assert env.unwrapped.trajectory.category == category
    task = dataset[1].task_id
    env = gym.make("GuiGym/SemiOnlineReplay-v0", dataset=SAMPLE_DATASET, task=task)
    env.reset(seed=0)
    assert env.unwrapped.trajectory.task_id == task
    with pytest.raises(ValueError, match="no splits"):
        gym.make("GuiGym/SemiOnlineReplay-v0", dataset=SAMPLE_DATASET, split="test")


def test_miniwob_without_its_extra_names_pip_and_chromium(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "selenium", None)  # as if not installed
    with pytest.raises(gym.error.DependencyNotInstalled) as err:
        gym.make("GuiGym/MiniWoB-click-test-v0")
    message = str(err.value)
    assert "pip install 'gui-gym[miniwob]'" in message and "selenium" in message
    assert "chromium chromium-driver" in message


def test_bench_fork_timing_never_steps_an_ended_episode(caplog) -> None:
    from gui_gym.cli.bench.envs import bench_gui_env

    caplog.set_level(logging.WARNING)
    # max_steps=1: every step ends the episode, the case that crashed `make bench` on
    # WebShop-Text (an ended episode has no candidate actions)
    row = bench_gui_env("GuiGym/WebShop-Text-v0", 20, 2, False, max_steps=1)
    assert row["fork_ms"] > 0
    assert "after the episode ended" not in caplog.text


@pytest.mark.parametrize("env_id", list(gui_gym.ENV_IDS))
def test_every_candidate_action_is_accepted(env_id: str) -> None:
    """candidate_actions() offers only actions step() accepts (issue 17: about 3.5% were
    refused before, e.g. clicks under WikiHow's share sheet or Save on an empty form)."""
    import numpy as np

    env = gym.make(env_id, max_steps=15)
    base = env.unwrapped
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    refused = []
    for i in range(100):
        candidates = base.candidate_actions()
        if i % 25 == 0:  # every candidate of this state, each on its own fork
            for action in candidates:
                error = base.fork().apply_action(action)
                if error is not None:
                    refused.append((str(action), error))
        action = candidates[int(rng.integers(len(candidates)))]
        _, _, terminated, truncated, info = env.step(action)
        if not info["action_valid"]:
            refused.append((str(action), info["action_error"]))
        if terminated or truncated:
            env.reset(seed=i)
    assert not refused, refused[:5]
