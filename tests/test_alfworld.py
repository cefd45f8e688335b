"""GuiGym/ALFWorld-v0 on alfworld's engine: the planner oracle wins one game of each task
type, and observations/rewards equal raw alfworld's (TextWorld PddlEnv) on the same actions."""

from __future__ import annotations

import gymnasium as gym
import pytest

from tests.conftest import require

require("alfworld", "alfworld")

from gui_gym.envs.alfworld.env import ALFWorldEnv  # noqa: E402
from gui_gym.envs.alfworld.generate import TASK_TYPES  # noqa: E402


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("GUI_GYM_CACHE", str(tmp_path_factory.mktemp("cache")))
    e = ALFWorldEnv(num_games={"train": 6, "test": 0})
    yield e
    mp.undo()


@pytest.mark.timeout(600)
def test_oracle_wins_one_game_of_each_type(env):
    seen = set()
    for i in range(6):
        obs, info = env.reset(seed=0, options={"task": f"train/{i:04d}"})
        assert info["success"] is False and "Your task is to:" in obs["screen"]
        seen.add(env.task.category)
        reward, done, steps = 0.0, False, 0
        while not done:
            obs, reward, term, trunc, info = env.step(env.oracle_action())
            done, steps = term or trunc, steps + 1
        assert reward == 1.0 and term, (env.task.task_id, steps)
        assert "object_taken" in info["milestones"]
    assert seen == set(TASK_TYPES)


@pytest.mark.timeout(300)
def test_matches_raw_alfworld_and_look_forever_scores_zero(env):
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler
    from textworld.envs.pddl import PddlEnv

    def flat(text):
        return " ".join(text.split())

    obs, _ = env.reset(seed=0, options={"task": "train/0000"})
    raw = AlfredDemangler(PddlEnv(textworld.EnvInfos(won=True, admissible_commands=True)))
    raw.load(str(env.game_path(env.task)))
    state = raw.reset()
    assert flat(state.feedback) in flat(obs["screen"])
    for _ in range(5):  # "look" by name, as raw alfworld takes it: never wins
        obs, reward, term, trunc, info = env.step("look")
        state, raw_reward, _ = raw.step("look")
        assert info["action_valid"] and flat(state.feedback) in flat(obs["screen"])
        assert reward == 0.0 == float(state["won"]) and not term
    assert env.step("fly to the moon")[4]["action_valid"] is False


def test_registered():
    assert "GuiGym/ALFWorld-v0" in gym.registry
