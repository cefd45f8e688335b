"""The Gymnasium contract, checked for every registered id."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gui_gym

IDS = list(gui_gym.ENV_IDS)
INFO_KEYS = {
    "task_id",
    "step",
    "action_valid",
    "action_error",
    "action_description",
    "milestones",
    "success",
    "task_reward",
}


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"screenshot": True},
        {"render_mode": "ansi"},
        {"render_mode": "rgb_array", "screenshot": True},
    ],
    ids=["text", "screenshot", "ansi", "rgb_array"],
)
def test_check_env_with_warnings_as_errors(env_id: str, kwargs: dict) -> None:
    env = gym.make(env_id, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


def rollout(env: gym.Env, seed: int, steps: int = 30) -> list:
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = [(obs, info["task_id"])]
    for _ in range(steps):
        candidates = env.unwrapped.candidate_actions()
        action = str(candidates[int(rng.integers(len(candidates)))])
        obs, reward, terminated, truncated, info = env.step(action)
        out.append((action, obs, reward, terminated, truncated, info["milestones"]))
        if terminated or truncated:
            obs, info = env.reset()
            out.append((obs, info["task_id"]))
    return out


def same(a: object, b: object) -> bool:
    return pickle.dumps(a) == pickle.dumps(b)


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_actions_same_trajectory(env_id: str) -> None:
    first = rollout(gym.make(env_id, screenshot=True), seed=7)
    second = rollout(gym.make(env_id, screenshot=True), seed=7)
    assert same(first, second)
    other = rollout(gym.make(env_id, screenshot=True), seed=8)
    assert not same(first, other)


@pytest.mark.parametrize("env_id", IDS)
def test_recreatable_from_spec_and_picklable(env_id: str) -> None:
    env = gym.make(env_id, split="test", max_steps=7)
    again = gym.make(env.spec)
    assert again.unwrapped.split == "test" and again.unwrapped.max_steps == 7
    assert same(rollout(env, seed=3, steps=10), rollout(again, seed=3, steps=10))
    env.reset(seed=5)
    env.step("SCROLL(down)")
    clone = pickle.loads(pickle.dumps(env.unwrapped))
    assert clone.max_steps == 7
    assert (
        clone.ui_tree == env.unwrapped.ui_tree and clone.task.task_id == env.unwrapped.task.task_id
    )
    assert same(clone.step("GOBACK()"), env.unwrapped.step("GOBACK()"))


@pytest.mark.parametrize("env_id", IDS)
def test_async_vector_env(env_id: str) -> None:
    envs = gym.make_vec(env_id, num_envs=4, vectorization_mode="async")
    try:
        obs, info = envs.reset(seed=0)
        # a rendered UI tree, or WebShop's text observation (GuiGym/WebShop-Text-v0)
        screens = obs["screen"]
        assert len(screens) == 4 and all(s.startswith(("<", "WebShop [SEP]")) for s in screens)
        assert len(set(obs["instruction"])) > 1  # different tasks per sub-env
        obs, reward, terminated, truncated, info = envs.step(
            ["GOBACK()", "WAIT()", "junk", "SCROLL(down)"]
        )
        assert reward.shape == (4,)
        assert list(info["action_valid"]) == [True, True, False, True]
        assert all(isinstance(s, str) and s for s in obs["screen"])
    finally:
        envs.close()


@pytest.mark.parametrize("env_id", IDS)
def test_sync_vector_env(env_id: str) -> None:
    envs = gym.make_vec(env_id, num_envs=3, vectorization_mode="sync")
    obs, _ = envs.reset(seed=0)
    assert len(obs["screen"]) == 3
    _, reward, *_ = envs.step(["GOBACK()"] * 3)
    assert reward.tolist() == [0.0, 0.0, 0.0]
    envs.close()


@pytest.mark.parametrize("env_id", IDS)
def test_async_vector_env_with_screenshots(env_id: str) -> None:
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode="async", screenshot=True)
    try:
        obs, _ = envs.reset(seed=0)
        assert obs["screenshot"].shape[0] == 2 and obs["screenshot"].dtype == np.uint8
    finally:
        envs.close()


@pytest.mark.parametrize("env_id", IDS)
def test_info_keys_on_reset_and_step(env_id: str) -> None:
    env = gym.make(env_id)
    _, info = env.reset(seed=0)
    assert set(info) >= INFO_KEYS
    _, _, _, _, info = env.step("DO_NOTHING()")
    assert set(info) >= INFO_KEYS
    assert info["action_valid"] is True and info["action_error"] is None
    assert info["action_description"] == "do nothing"


@pytest.mark.parametrize("env_id", IDS)
def test_render_modes(env_id: str) -> None:
    env = gym.make(env_id, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and env.unwrapped.task.instruction in text
    env = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    image = env.render()
    width, height = env.unwrapped.screen_size
    assert image.shape == (height, width, 3) and image.dtype == np.uint8
    assert image.std() > 0  # something is drawn
    with pytest.raises(ValueError, match="render_mode must be one of"):
        gym.make(env_id, render_mode="bogus")


@pytest.mark.parametrize("env_id", IDS)
def test_fork_is_independent(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(seed=1)
    base = env.unwrapped
    base.step(str(base.oracle_action()))
    fork = base.fork()
    before = (base.ui_tree, base.milestones, base.steps_taken)
    assert (fork.ui_tree, fork.milestones, fork.steps_taken) == before
    for action in ("SCROLL(down)", "GOBACK()", "CLICK(0)"):
        fork.step(action)
    assert (base.ui_tree, base.milestones, base.steps_taken) == before
    assert fork.steps_taken == before[2] + 3


@pytest.mark.parametrize("env_id", IDS)
def test_fork_does_not_go_through_pickling(env_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fork copies the env's attributes and forks its backend; __getstate__/__setstate__
    are for pickling and rebuild the suite, app and backend (ALFWorld: 0.8 s a fork)."""
    env = gym.make(env_id)
    env.reset(seed=1)
    base = env.unwrapped
    base.step(str(base.oracle_action()))
    for name in ("__getstate__", "__setstate__", "__reduce_ex__"):

        def refuse(*args: object, _name: str = name, **kwargs: object) -> None:
            raise AssertionError(f"fork() called {_name}")

        monkeypatch.setattr(type(base), name, refuse, raising=False)
    fork = base.fork()
    assert fork.suite is base.suite and fork.task is base.task
    assert (fork.ui_tree, fork.milestones) == (base.ui_tree, base.milestones)


@pytest.mark.parametrize("env_id", IDS)
def test_bad_arguments_fail_early(env_id: str) -> None:
    with pytest.raises(ValueError, match="max_steps must be a positive int"):
        gym.make(env_id, max_steps=0)
    with pytest.raises(ValueError, match="split must be"):
        gym.make(env_id, split="dev")
    with pytest.raises(KeyError, match="unknown task"):
        gym.make(env_id, task="no-such-task")
    env = gym.make(env_id)
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"tsak": "x"})


@pytest.mark.parametrize("env_id", IDS)
def test_step_before_reset_is_an_error(env_id: str) -> None:
    env = gym.make(env_id, disable_env_checker=True)
    with pytest.raises((gym.error.ResetNeeded, gym.error.Error)):
        env.step("CLICK(0)")


@pytest.mark.parametrize("env_id", IDS)
def test_task_ids_lists_the_pool_and_each_can_be_asked_for(env_id: str) -> None:
    env = gym.make(env_id, split="test")
    ids = env.unwrapped.task_ids
    assert ids and len(set(ids)) == len(ids)
    assert set(ids) <= {t.task_id for t in env.unwrapped.suite.select("all", None)}
    _, info = env.reset(seed=0, options={"task": ids[-1]})
    assert info["task_id"] == ids[-1]
    sampled = {env.reset(seed=s)[1]["task_id"] for s in range(20)}
    assert sampled <= set(ids)
    fixed = gym.make(env_id, task=ids[0])
    assert fixed.unwrapped.task_ids == [ids[0]]


# -- no string makes step raise ---------------------------------------------------------------

_ENVS = {env_id: gym.make(env_id, max_steps=10_000) for env_id in IDS}


def _mutate(text: str, data: st.DataObject) -> str:
    ops = data.draw(
        st.lists(
            st.tuples(st.sampled_from("idsr"), st.integers(0, 60), st.characters()), max_size=4
        )
    )
    chars = list(text)
    for op, pos, ch in ops:
        pos = pos % (len(chars) + 1)
        if op == "i":
            chars.insert(pos, ch)
        elif op == "d" and chars:
            del chars[pos % len(chars)]
        elif op == "s":
            chars = chars[:pos]
        elif op == "r" and chars:
            chars[pos % len(chars)] = ch
    return "".join(chars)


SEEDS = (
    "CLICK(3)",
    'INPUT(0, "lobster")',
    "SCROLL(down)",
    "GOBACK()",
    'ANSWER("3")',
    '{"action_type": "click", "index": 2}',
    "search[shoes]",
    "click[Yes]",
    "<action>CLICK(1)</action>",
    "CLICK_XY(10, 20)",
    "LONG_CLICK(5)",
    'OPEN_APP("Clock")',
    "DONE()",
)


@pytest.mark.parametrize("env_id", IDS)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=80), st.sampled_from(SEEDS)), data=st.data())
def test_no_string_makes_step_raise(env_id: str, text: str, data: st.DataObject) -> None:
    env = _ENVS[env_id]
    action = _mutate(text, data) if data.draw(st.booleans()) else text
    env.reset(seed=data.draw(st.integers(0, 5)))
    for _ in range(data.draw(st.integers(0, 3))):  # wander off the start screen first
        candidates = env.unwrapped.candidate_actions()
        env.step(candidates[data.draw(st.integers(0, len(candidates) - 1))])
    obs, reward, terminated, truncated, info = env.step(action)
    assert isinstance(obs["screen"], str)
    assert isinstance(info["action_valid"], bool)
    if not info["action_valid"]:
        assert isinstance(info["action_error"], str) and info["action_error"]
        assert reward == 0.0


def test_invalid_action_changes_nothing_but_counts_a_step() -> None:
    env = gym.make("GuiGym/WikiHow-v0")
    obs, _ = env.reset(seed=0)
    for bad in ("CLICK(999)", "JUMP()", "INPUT(2, 'x')", "", "CLICK_XY(-5, 3)"):
        new_obs, reward, terminated, truncated, info = env.step(bad)
        assert new_obs == obs
        assert info["action_valid"] is False and info["action_error"]
        assert reward == 0.0 and not terminated
    assert info["step"] == 5


@pytest.mark.parametrize("env_id", IDS)
def test_apply_action_changes_the_app_without_episode_bookkeeping(env_id: str) -> None:
    env = gym.make(env_id, split="test")
    with pytest.raises(gym.error.ResetNeeded):
        env.unwrapped.apply_action("CLICK(0)")
    env.reset(seed=3)
    base = env.unwrapped
    probe = base.fork()
    before = base.ui_tree.text
    action = base.oracle_action()
    assert probe.apply_action(action) is None
    assert probe.steps_taken == base.steps_taken == 0 and probe.milestones == []
    assert base.ui_tree.text == before  # the original is untouched
    if not action.is_terminal:
        _, _, _, _, info = env.step(action)  # the same action through step() ...
        assert probe.ui_tree.text == base.ui_tree.text  # ... gives the same screen
    assert probe.apply_action("CLICK(999)") is not None  # refused, with the reason
    assert probe.apply_action("not an action") is not None
    shown = probe.ui_tree.text
    assert probe.apply_action("DONE()") is None and probe.ui_tree.text == shown
