"""The Ray env pool: SyncVectorEnv semantics, worker restarts, exact episode collection.

Bars (issue 21): a test kills a Ray env actor mid-episode and ``collect_episodes`` still
returns exactly n distinct episodes; ``RayVectorEnv`` passes the same step/reset/autoreset
tests as ``SyncVectorEnv``; no Ray worker outlives ``close()``. Ray starts once for the
module (two CPUs, no dashboard) and is shut down at the end.
"""

from __future__ import annotations

import os
import signal
import time
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.distributed import (
    RayVectorEnv,
    WorkerRestartWarning,
    collect_episodes,
    episode_stats,
)
from tests.conftest import require

pytestmark = pytest.mark.timeout(180)

ACTIONS = ["CLICK(1)", "SCROLL(down)", "CLICK(2)", "GOBACK()", "CLICK(0)", "DONE()"]


@pytest.fixture(scope="module")
def ray_session():
    ray = require("ray", "distributed")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


def make_android(max_steps: int = 3) -> gym.Env:
    return gym.make("GuiGym/AndroidWorld-v0", max_steps=max_steps)


def pids_alive(pids: list[int], timeout: float = 20.0) -> list[int]:
    """The pids still running (zombies count as gone) after waiting up to ``timeout``."""
    import psutil

    def running(pid: int) -> bool:
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    deadline = time.monotonic() + timeout
    alive = [p for p in pids if running(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [p for p in alive if running(p)]
    return alive


def assert_same_batch(a, b) -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            assert_same_batch(a[key], b[key])
    elif isinstance(a, np.ndarray) and a.dtype != object:
        np.testing.assert_array_equal(a, b)
    else:
        assert list(a) == list(b)


COMPARED_INFO = ("task_id", "step", "action_valid", "action_error", "success", "task_reward")


def assert_same_infos(a: dict, b: dict) -> None:
    assert set(a) == set(b)
    for key in COMPARED_INFO:
        assert_same_batch(a[key], b[key])
    for key in ("final_obs", "final_info"):
        if key in a:
            np.testing.assert_array_equal(a["_" + key], b["_" + key])


@pytest.mark.parametrize("mode", list(gym.vector.AutoresetMode))
def test_step_reset_and_autoreset_match_sync_vector_env(ray_session, mode):
    sync = gym.vector.SyncVectorEnv([make_android, make_android], autoreset_mode=mode)
    remote = RayVectorEnv(make_android, 2, autoreset_mode=mode)
    try:
        assert remote.single_observation_space == sync.single_observation_space
        assert remote.single_action_space == sync.single_action_space
        assert remote.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"]
        observations = [sync.reset(seed=5), remote.reset(seed=5)]
        assert_same_batch(observations[0][0], observations[1][0])
        assert_same_infos(observations[0][1], observations[1][1])
        ended = np.zeros(2, dtype=bool)
        for t in range(9):
            actions = (ACTIONS[t % len(ACTIONS)], ACTIONS[(t + 2) % len(ACTIONS)])
            if mode == gym.vector.AutoresetMode.DISABLED and ended.any():
                mask = ended.copy()
                results = [
                    env.reset(seed=100 + t, options={"reset_mask": mask}) for env in (sync, remote)
                ]
                assert_same_batch(results[0][0], results[1][0])
                ended[:] = False
            s, r = sync.step(actions), remote.step(actions)
            for part_s, part_r in zip(s[:4], r[:4]):
                assert_same_batch(part_s, part_r)
            assert_same_infos(s[4], r[4])
            ended |= s[2] | s[3]
        # max_steps=3: episodes ended (and were reset) along the way
        assert ended.any() or mode == gym.vector.AutoresetMode.DISABLED
    finally:
        sync.close()
        remote.close()


def test_partial_reset_with_reset_mask_and_attribute_calls(ray_session):
    remote = RayVectorEnv("GuiGym/WikiHow-v0", 2, max_steps=4)
    try:
        _, infos = remote.reset(seed=[3, 4])
        first = list(infos["task_id"])
        remote.step(("SCROLL(down)", "SCROLL(down)"))
        _, infos = remote.reset(seed=[7, 4], options={"reset_mask": np.array([False, True])})
        assert list(infos["_task_id"]) == [False, True]
        assert infos["task_id"][1] == first[1]  # same seed, same task
        assert remote.get_attr("steps_taken") == (1, 0)
        assert remote.call("steps_taken") == (1, 0)
        remote.set_attr("max_steps", [9, 11])
        assert remote.get_attr("max_steps") == (9, 11)
        with pytest.raises(ValueError, match="length must match num_envs=2"):
            remote.reset(seed=[1, 2, 3])
    finally:
        remote.close()


def test_a_worker_killed_mid_step_is_restarted_and_its_episode_ends_flagged(ray_session):
    remote = RayVectorEnv(make_android, 2, autoreset_mode=gym.vector.AutoresetMode.NEXT_STEP)
    try:
        remote.reset(seed=0)
        remote.step(("CLICK(1)", "CLICK(1)"))
        old_pids = remote.worker_pids()
        os.kill(old_pids[1], signal.SIGKILL)
        with pytest.warns(WorkerRestartWarning, match="env worker 1 worker died"):
            _, rewards, terminated, truncated, infos = remote.step(("CLICK(1)", "CLICK(1)"))
        assert truncated.tolist() == [False, True] and not terminated[1] and rewards[1] == 0
        assert infos["_infra_error"].tolist() == [False, True]
        assert "worker died" in infos["infra_error"][1]
        assert remote.restarts == 1 and remote.worker_pids()[0] == old_pids[0]
        # as after any episode end under NEXT_STEP, the next step resets the sub-env
        _, rewards, terminated, truncated, infos = remote.step(("CLICK(1)", "CLICK(1)"))
        assert infos["step"][1] == 0 and rewards[1] == 0 and not truncated[1]
    finally:
        remote.close()


def first_candidate_policy(observations, infos):
    """Deterministic: the first action on the screen that is not GOBACK, by step number."""
    return [ACTIONS[(info["episode_step"] + info["episode"]) % 5] for info in infos]


def test_collect_episodes_after_a_kill_returns_exactly_n_distinct_episodes(ray_session):
    remote = RayVectorEnv(make_android, 2, step_timeout=30)
    try:
        undisturbed = collect_episodes(remote, first_candidate_policy, 6, base_seed=20)
        assert remote.restarts == 0
        pids = remote.worker_pids()
        calls = {"n": 0}

        def killing_policy(observations, infos):
            calls["n"] += 1
            if calls["n"] == 2:  # mid-episode: both workers have one step done
                os.kill(pids[0], signal.SIGKILL)
            return first_candidate_policy(observations, infos)

        with pytest.warns(WorkerRestartWarning, match="during episode"):
            episodes = collect_episodes(remote, killing_policy, 6, base_seed=20)
    finally:
        remote.close()
    assert [e.index for e in episodes] == list(range(6))
    assert [e.seed for e in episodes] == list(range(20, 26))
    assert sum(e.attempts for e in episodes) == 7  # one episode ran twice, counted once
    assert not any(e.lost for e in episodes)
    # the rerun, from its seed, is the episode an undisturbed run gives
    for got, want in zip(episodes, undisturbed):
        assert got.actions == want.actions and got.rewards == want.rewards
        assert got.final_info["task_id"] == want.final_info["task_id"]


class _HangOnce(gym.Wrapper):
    """Hangs on its first step ever (a marker file records it), like a stuck browser."""

    def __init__(self, env: gym.Env, marker: str):
        super().__init__(env)
        self.marker = marker

    def step(self, action):
        if not Path(self.marker).exists():
            Path(self.marker).touch()
            time.sleep(3600)
        return self.env.step(action)


def test_a_hung_worker_is_killed_after_the_timeout_and_its_episode_rerun(ray_session, tmp_path):
    marker = str(tmp_path / "hung")
    remote = RayVectorEnv(lambda: _HangOnce(make_android(), marker), 1, step_timeout=3)
    try:
        with pytest.warns(WorkerRestartWarning, match="no answer within step_timeout=3 s"):
            episodes = collect_episodes(remote, first_candidate_policy, 2)
        pid = remote.worker_pids()[0]
    finally:
        remote.close()
    assert [e.attempts for e in episodes] == [2, 1]
    assert all(e.length == 3 and not e.lost for e in episodes)
    assert not pids_alive([pid])


class _BrokenOnSeed(gym.Wrapper):
    """Raises on every step of episodes reset with ``seed`` (an env bug or a dead backend)."""

    def __init__(self, env: gym.Env, seed: int):
        super().__init__(env)
        self.bad_seed = seed
        self.current = None

    def reset(self, *, seed=None, options=None):
        self.current = seed
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        if self.current == self.bad_seed:
            raise ConnectionError("emulator went away")
        return self.env.step(action)


def test_an_episode_that_keeps_failing_is_flagged_lost_never_scored_zero(ray_session):
    remote = RayVectorEnv(lambda: _BrokenOnSeed(make_android(), seed=2), 2, max_restarts=5)
    try:
        with pytest.warns(WorkerRestartWarning, match="episode 2 lost after 2 attempts"):
            episodes = collect_episodes(remote, first_candidate_policy, 4, max_attempts=2)
    finally:
        remote.close()
    lost = episodes[2]
    assert lost.lost and "ConnectionError: emulator went away" in lost.infra_error
    assert lost.total_reward is None and lost.success is None and lost.attempts == 2
    assert all(not e.lost and e.total_reward is not None for i, e in enumerate(episodes) if i != 2)
    stats = episode_stats(episodes)
    assert stats["episodes"] == 4 and stats["scored"] == 3 and stats["lost"] == 1
    assert stats["mean_return"] == np.mean([episodes[i].total_reward for i in (0, 1, 3)])


def test_no_worker_outlives_close(ray_session):
    remote = RayVectorEnv("GuiGym/WikiHow-v0", 2)
    pids = remote.worker_pids()
    assert len(set(pids)) == 2 and os.getpid() not in pids
    remote.close()
    assert pids_alive(pids) == []
    remote.close()  # idempotent


def test_bad_arguments_get_clear_errors(ray_session):
    with pytest.raises(ValueError, match="num_envs must be a positive int"):
        RayVectorEnv("GuiGym/WikiHow-v0", 0)
    with pytest.raises(ValueError, match="step_timeout must be > 0"):
        RayVectorEnv("GuiGym/WikiHow-v0", 1, step_timeout=0)
    with pytest.raises(TypeError, match="only apply to an env id"):
        RayVectorEnv(make_android, 1, max_steps=3)
    remote = RayVectorEnv(make_android, 1)
    try:
        with pytest.raises(ValueError, match="seeds has 1 entries for n=2"):
            collect_episodes(remote, first_candidate_policy, 2, seeds=[1])
        with pytest.raises(ValueError, match="returned 0 actions for 1 observations"):
            collect_episodes(remote, lambda observations, infos: [], 1)
    finally:
        remote.close()


def test_sb3_adapted_envs_batch_as_arrays_with_masks(ray_session):
    from gui_gym.wrappers.sb3 import make_sb3_env

    remote = RayVectorEnv(lambda: make_sb3_env("GuiGym/WikiHow-v0", max_candidates=40), 2)
    try:
        observations, infos = remote.reset(seed=0)
        assert observations.shape == (2, remote.single_observation_space.shape[0])
        masks = np.stack(infos["action_mask"])
        actions = np.array([np.flatnonzero(m)[0] for m in masks])
        observations, _, _, _, infos = remote.step(actions)
        assert observations.dtype == np.float32 and np.stack(infos["action_mask"]).shape == (2, 40)
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            remote.close()


@pytest.mark.slow
def test_no_browser_outlives_close(ray_session):
    """A MiniWoB++ env in a worker runs Chromium as the worker's descendants: close() quits
    the browser before it kills the worker, and nothing of either is left running."""
    require("miniwob", "miniwob")
    import psutil

    remote = RayVectorEnv("GuiGym/MiniWoB-click-test-2-v0", 1, start_timeout=120)
    try:
        remote.reset(seed=0)
        (pid,) = remote.worker_pids()
        descendants = [p.pid for p in psutil.Process(pid).children(recursive=True)]
        names = {psutil.Process(p).name() for p in descendants if psutil.pid_exists(p)}
        assert any("chrom" in name for name in names), names  # the browser is running
    finally:
        remote.close()
    assert pids_alive([pid, *descendants]) == []


def test_vector_reward_wrappers_work_over_the_pool_as_over_sync(ray_session):
    from gui_gym.models.progress import MilestoneProgress
    from gui_gym.wrappers import ProgressRewardVectorWrapper

    model = MilestoneProgress.from_env_id("GuiGym/WikiHow-v0")

    def make() -> gym.Env:
        return gym.make("GuiGym/WikiHow-v0", max_steps=4)

    wrapped = [
        ProgressRewardVectorWrapper(gym.vector.SyncVectorEnv([make, make]), model),
        ProgressRewardVectorWrapper(RayVectorEnv(make, 2), model),
    ]
    try:
        for envs in wrapped:
            envs.reset(seed=11)
        for t in range(6):
            actions = ('INPUT(0, "pigeon pose")', "CLICK(1)") if t % 3 == 0 else ("CLICK(1)",) * 2
            sync_result, ray_result = (envs.step(actions) for envs in wrapped)
            np.testing.assert_array_equal(sync_result[1], ray_result[1])
            np.testing.assert_array_equal(
                sync_result[4]["progress"]["value"], ray_result[4]["progress"]["value"]
            )
    finally:
        for envs in wrapped:
            envs.close()


def make_sb3_android() -> gym.Env:
    from gui_gym.wrappers.sb3 import make_sb3_env

    return make_sb3_env("GuiGym/AndroidWorld-v0", max_steps=3, max_candidates=64)


def test_sb3_vec_env_over_the_pool_steps_as_dummy_vec_env(ray_session):
    """Same observations, rewards, dones, terminal observations, truncation flags, reset
    infos and action masks as SB3's DummyVecEnv, through several auto-resets."""
    require("stable_baselines3", "rl")
    from stable_baselines3.common.vec_env import DummyVecEnv

    from gui_gym.distributed.sb3 import RaySB3VecEnv

    dummy = DummyVecEnv([make_sb3_android, make_sb3_android])
    remote = RaySB3VecEnv.make(make_sb3_android, 2)
    try:
        assert remote.observation_space == dummy.observation_space
        assert remote.action_space == dummy.action_space
        assert remote.has_attr("action_masks") and not remote.has_attr("no_such_attribute")
        dummy.seed(7)
        remote.seed(7)
        np.testing.assert_array_equal(dummy.reset(), remote.reset())
        assert [i["task_id"] for i in dummy.reset_infos] == [
            i["task_id"] for i in remote.reset_infos
        ]
        ends = 0
        for t in range(10):
            masks = np.stack(dummy.env_method("action_masks"))
            np.testing.assert_array_equal(masks, np.stack(remote.env_method("action_masks")))
            # a changing pick among the valid candidates (DONE() among them ends episodes)
            actions = np.array(
                [np.flatnonzero(m)[(t * 3 + k) % m.sum()] for k, m in enumerate(masks)]
            )
            want, got = dummy.step(actions), remote.step(actions)
            for part_want, part_got in zip(want[:3], got[:3]):
                np.testing.assert_array_equal(part_want, part_got)
            for info_want, info_got in zip(want[3], got[3]):
                assert info_want["TimeLimit.truncated"] == info_got["TimeLimit.truncated"]
                assert info_want["task_id"] == info_got["task_id"]
                assert ("terminal_observation" in info_want) == ("terminal_observation" in info_got)
                if "terminal_observation" in info_want:
                    np.testing.assert_array_equal(
                        info_want["terminal_observation"], info_got["terminal_observation"]
                    )
            assert [i.get("task_id") for i in dummy.reset_infos] == [
                i.get("task_id") for i in remote.reset_infos
            ]
            ends += int(want[2].sum())
        assert ends >= 4  # max_steps=3: every env auto-reset more than once
        assert remote.get_attr("max_candidates", indices=[1]) == [64]
        assert remote.env_is_wrapped(gym.wrappers.TimeLimit) == dummy.env_is_wrapped(
            gym.wrappers.TimeLimit
        )
    finally:
        dummy.close()
        remote.close()


@pytest.mark.slow
def test_maskable_ppo_trains_on_ray_workers_and_a_dead_worker_ends_its_episode(ray_session):
    require("sb3_contrib", "rl")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    from gui_gym.distributed.sb3 import RaySB3VecEnv

    envs = RaySB3VecEnv.make(make_sb3_android, 2)
    try:
        model = MaskablePPO("MlpPolicy", envs, n_steps=8, batch_size=16, n_epochs=1, seed=0)
        model.learn(16)
        assert model.num_timesteps == 16
        observations = envs.reset()
        masks = get_action_masks(envs)
        actions, _ = model.predict(observations, action_masks=masks, deterministic=True)
        assert all(masks[k, a] for k, a in enumerate(actions))  # only real candidates
        os.kill(envs.envs.worker_pids()[0], signal.SIGKILL)
        with pytest.warns(WorkerRestartWarning, match="env worker 0 worker died"):
            observations, rewards, dones, infos = envs.step(actions)
        assert dones.tolist()[0] and infos[0]["TimeLimit.truncated"] and rewards[0] == 0
        assert "worker died" in infos[0]["infra_error"]
        assert observations.shape == (2, *envs.observation_space.shape)
        model.learn(16, reset_num_timesteps=False)  # the pool goes on training
        assert model.num_timesteps == 32
        pids = envs.envs.worker_pids()
    finally:
        envs.close()
    assert pids_alive(pids) == []
