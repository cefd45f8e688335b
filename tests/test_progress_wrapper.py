"""ProgressRewardWrapper: reward += weight * (Prog(s_t) - Prog(s_{t-k})) (ProgRM Eq. 2) with
Prog(s_0) from reset; batched scoring in vector envs; the target identity the env records
for ProgRM's step similarity."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import gui_gym  # noqa: F401
from gui_gym.agents import OracleAgent, run_episode
from gui_gym.core.trajectory import Step, Trajectory, read_trajectories, write_trajectories
from gui_gym.models.progress import MilestoneProgress, ProgressQuery
from gui_gym.wrappers import ProgressRewardVectorWrapper, ProgressRewardWrapper

ENV_ID = "GuiGym/WikiHow-v0"
TASK = "pack_for_a_camping_trip-category_name"


class TableModel:
    """Progress by the number of actions taken so far, from a fixed table."""

    def __init__(self, table: Sequence[float]):
        self.table = list(table)
        self.calls: list[int] = []

    def predict(self, queries: Sequence[ProgressQuery]) -> list[float]:
        self.calls.append(len(queries))
        return [self.table[min(len(q.actions), len(self.table) - 1)] for q in queries]


def make(max_steps: int = 20) -> gym.Env:
    return gym.make(ENV_ID, task=TASK, max_steps=max_steps)


def run(env: gym.Env, actions: list[str]) -> list[tuple[float, dict]]:
    out = []
    for action in actions:
        _, reward, _, _, info = env.step(action)
        out.append((reward, info))
    return out


ACTIONS = ["SCROLL(down)", "SCROLL(up)", "DO_NOTHING()"]


def test_reward_is_progress_gain_over_one_step() -> None:
    model = TableModel([0.1, 0.3, 0.2, 0.9])
    env = ProgressRewardWrapper(make(), model, k=1, weight=2.0)
    _, info = env.reset(seed=0)
    assert info["progress"] == {
        "value": 0.1,
        "delta": 0.0,
        "reference": 0.1,
        "model_error": None,
    }
    results = run(env, ACTIONS)
    assert [r for r, _ in results] == pytest.approx([0.4, -0.2, 1.4])
    assert [i["progress"]["delta"] for _, i in results] == pytest.approx([0.2, -0.1, 0.7])
    assert [i["progress"]["value"] for _, i in results] == pytest.approx([0.3, 0.2, 0.9])
    assert [i["progress"]["reference"] for _, i in results] == pytest.approx([0.1, 0.3, 0.2])


def test_history_length_k_compares_with_k_steps_back_and_s0_early() -> None:
    model = TableModel([0.1, 0.3, 0.2, 0.9])
    env = ProgressRewardWrapper(make(), model, k=2)
    env.reset(seed=0)
    deltas = [i["progress"]["delta"] for _, i in run(env, ACTIONS)]
    assert deltas == pytest.approx([0.2, 0.1, 0.6])  # s_1 - s_0, s_2 - s_0, s_3 - s_1


def test_reset_restarts_the_history() -> None:
    model = TableModel([0.0, 0.5, 1.0])
    env = ProgressRewardWrapper(make(), model)
    env.reset(seed=0)
    run(env, ACTIONS[:2])
    env.reset(seed=1)
    ((_, info),) = run(env, ACTIONS[:1])
    assert info["progress"]["delta"] == pytest.approx(0.5)


def test_env_reward_and_task_reward_are_kept() -> None:
    expert = make()
    oracle_actions = run_episode(expert, OracleAgent(expert), seed=0).actions
    bare = make()
    bare.reset(seed=0)
    plain = [r for r, _ in run(bare, oracle_actions)]
    model = MilestoneProgress()  # the single-env wrapper reads the task's milestone count
    env = ProgressRewardWrapper(make(), model, weight=0.5)
    _, first = env.reset(seed=0)
    results = run(env, oracle_actions)
    deltas = [i["progress"]["delta"] for _, i in results]
    assert [r for r, _ in results] == pytest.approx([p + 0.5 * d for p, d in zip(plain, deltas)])
    assert results[-1][1]["task_reward"] == 1.0 and results[-1][1]["success"]
    assert results[-1][1]["progress"]["value"] == 1.0
    # k = 1 telescopes: the gains add up to Prog(s_T) - Prog(s_0).
    assert sum(deltas) == pytest.approx(1.0 - first["progress"]["value"])
    assert all(d >= 0 for d in deltas)


def test_wrapper_records_its_arguments() -> None:
    model = TableModel([0.0])
    env = ProgressRewardWrapper(make(), model, k=3, weight=0.25)
    kwargs = env.spec.additional_wrappers[-1].kwargs  # type: ignore[union-attr]
    assert kwargs["k"] == 3 and kwargs["weight"] == 0.25 and "model" in kwargs


def test_bad_arguments_give_clear_errors() -> None:
    with pytest.raises(TypeError, match="predict"):
        ProgressRewardWrapper(make(), object())  # type: ignore[arg-type]
    for k in (0, 1.5, True, -2):
        with pytest.raises(ValueError, match="k must be"):
            ProgressRewardWrapper(make(), TableModel([0.0]), k=k)  # type: ignore[arg-type]
    for weight in (float("nan"), float("inf"), "1", True):
        with pytest.raises(ValueError, match="weight"):
            ProgressRewardWrapper(make(), TableModel([0.0]), weight=weight)  # type: ignore[arg-type]
    with pytest.raises(gym.error.ResetNeeded):
        ProgressRewardWrapper(make(), TableModel([0.0])).step("DO_NOTHING()")


def test_model_values_are_checked() -> None:
    env = ProgressRewardWrapper(make(), TableModel([1.5]))
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        env.reset(seed=0)
    env = ProgressRewardWrapper(make(), TableModel([float("nan")]))
    with pytest.raises(ValueError, match=r"outside \[0, 1\]"):
        env.reset(seed=0)

    class Empty:
        def predict(self, queries: Sequence[ProgressQuery]) -> list[float]:
            return []

    with pytest.raises(ValueError, match="0 values for 1 states"):
        ProgressRewardWrapper(make(), Empty()).reset(seed=0)


def test_milestone_progress_without_totals_needs_the_env_task() -> None:
    with pytest.raises(ValueError, match="does not know"):
        MilestoneProgress().predict([ProgressQuery("g", (), "s", TASK)])


# ------------------------------------------------------------------------ vector envs


def vector(n: int, max_steps: int, mode: AutoresetMode = AutoresetMode.NEXT_STEP) -> SyncVectorEnv:
    return SyncVectorEnv(
        [lambda: gym.make(ENV_ID, task=TASK, max_steps=max_steps) for _ in range(n)],
        autoreset_mode=mode,
    )


def test_vector_env_scores_all_sub_envs_in_one_call() -> None:
    model = TableModel([0.0, 0.25, 0.5, 0.75, 1.0])
    envs = ProgressRewardVectorWrapper(vector(3, max_steps=10), model, weight=2.0)
    _, infos = envs.reset(seed=0)
    assert model.calls == [3]
    assert np.allclose(infos["progress"]["value"], 0.0) and infos["_progress"].all()
    _, rewards, _, _, infos = envs.step(["SCROLL(down)", "DO_NOTHING()", "SCROLL(up)"])
    assert model.calls == [3, 3]
    assert np.allclose(infos["progress"]["delta"], 0.25)
    assert np.allclose(rewards, 0.5)


def test_vector_env_restarts_progress_after_autoreset() -> None:
    model = TableModel([0.0, 0.25, 0.5, 0.75, 1.0])
    envs = ProgressRewardVectorWrapper(vector(2, max_steps=2), model)
    envs.reset(seed=0)
    envs.step(["DO_NOTHING()"] * 2)
    _, _, _, truncated, infos = envs.step(["DO_NOTHING()"] * 2)
    assert truncated.all() and np.allclose(infos["progress"]["delta"], 0.25)
    # NEXT_STEP: this step resets both sub-envs; their progress restarts from s_0.
    _, rewards, _, _, infos = envs.step(["DO_NOTHING()"] * 2)
    assert np.allclose(rewards, 0.0) and np.allclose(infos["progress"]["delta"], 0.0)
    assert np.allclose(infos["progress"]["value"], 0.0)
    _, _, _, _, infos = envs.step(["DO_NOTHING()"] * 2)
    assert np.allclose(infos["progress"]["delta"], 0.25)


def test_vector_env_same_step_autoreset_scores_the_final_observation() -> None:
    model = TableModel([0.0, 0.25, 0.5, 0.75, 1.0])
    envs = ProgressRewardVectorWrapper(vector(2, 2, AutoresetMode.SAME_STEP), model)
    envs.reset(seed=0)
    envs.step(["DO_NOTHING()"] * 2)
    _, _, _, truncated, infos = envs.step(["DO_NOTHING()"] * 2)
    assert truncated.all()
    assert np.allclose(infos["progress"]["delta"], 0.25)  # the ended step, from final_obs
    assert model.calls[-1] == 4  # two final states and two new s_0
    _, _, _, _, infos = envs.step(["DO_NOTHING()"] * 2)
    assert np.allclose(infos["progress"]["delta"], 0.25)  # from the new s_0


def test_vector_env_rejects_disabled_autoreset() -> None:
    with pytest.raises(ValueError, match="autoreset"):
        ProgressRewardVectorWrapper(vector(1, 2, AutoresetMode.DISABLED), TableModel([0.0]))
    with pytest.raises(TypeError):
        ProgressRewardVectorWrapper(make(), TableModel([0.0]))  # type: ignore[arg-type]


def test_vector_milestone_progress_with_suite_totals() -> None:
    model = MilestoneProgress.from_env_id(ENV_ID)
    envs = ProgressRewardVectorWrapper(vector(2, 10), model)
    envs.reset(seed=0)
    oracle = make()
    oracle.reset(seed=0)
    action = str(oracle.unwrapped.oracle_action())  # type the query: two milestones of five
    _, _, _, _, infos = envs.step([action, "DO_NOTHING()"])
    assert infos["progress"]["delta"] == pytest.approx([2 / 5, 0.0])


# ------------------------------------------------------- target identity in core


def test_env_reports_the_acted_on_element_identity() -> None:
    env = make()
    _, info = env.reset(seed=0)
    assert info["action_target"] is None
    _, _, _, _, info = env.step('INPUT(0, "camping")')
    assert info["action_target"] == ("input", "Search wikiHow", "search_src_text")
    _, _, _, _, info = env.step("SCROLL(down)")
    assert info["action_target"] is None
    _, _, _, _, info = env.step("CLICK(999)")
    assert info["action_target"] is None


def test_episodes_record_the_target_and_old_files_still_load(tmp_path: Path) -> None:
    env = make()
    trajectory = run_episode(env, OracleAgent(env), seed=0)
    assert trajectory.steps[1].target is not None
    assert trajectory.steps[1].target[0] == "link"
    path = tmp_path / "t.jsonl"
    write_trajectories(path, [trajectory])
    assert next(read_trajectories(path)).steps[1].target == trajectory.steps[1].target
    record = trajectory.to_dict()
    for step in record["steps"]:
        del step["target"]
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps(record) + "\n")
    loaded = next(read_trajectories(old))
    assert isinstance(loaded, Trajectory) and loaded.steps[1].target is None


def test_explicit_target_wins_over_info() -> None:
    info = {"action_target": ("link", "A", "")}
    step = Step.from_transition(0, "", "CLICK(1)", 0.0, False, False, info, target=["x", "y", "z"])
    assert step.target == ["x", "y", "z"]
    assert Step.from_transition(0, "", "CLICK(1)", 0.0, False, False, info).target == [
        "link",
        "A",
        "",
    ]
