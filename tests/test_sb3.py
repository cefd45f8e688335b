"""The SB3/TorchRL adapters: CandidateActions, FeaturizedObservation, TaskSubset.

Bars (issue 21): SB3's and Gymnasium's ``check_env`` pass on every simulated id;
``action_space.sample()`` gives valid actions; TorchRL's random policy plays valid actions;
MaskablePPO learns on a small WikiHow subset (success clearly above random).
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

import gui_gym
from gui_gym.core.actions import Action
from gui_gym.envs.replay import SAMPLE_DATASET
from gui_gym.wrappers.sb3 import (
    CANDIDATE_TYPES,
    CandidateActions,
    FeaturizedObservation,
    make_sb3_env,
)
from gui_gym.wrappers.task_subset import TaskSubset
from tests.conftest import require

SIMULATED = [*gui_gym.ENV_IDS, "GuiGym/SemiOnlineReplay-v0"]


def env_kwargs(env_id: str) -> dict:
    return {"dataset": SAMPLE_DATASET} if "Replay" in env_id else {}


class RecordValidity(gym.Wrapper):
    """Below the adapters: remembers whether each action the env received was valid."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.valid: list[bool] = []
        self.received: list[object] = []

    def step(self, action):
        self.received.append(action)
        result = self.env.step(action)
        self.valid.append(bool(result[4]["action_valid"]))
        return result


@pytest.mark.parametrize("env_id", SIMULATED)
def test_check_env_of_gymnasium_and_sb3_pass_on_every_simulated_id(env_id):
    require("stable_baselines3", "rl")
    from gymnasium.utils.env_checker import check_env as gym_check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = make_sb3_env(env_id, **env_kwargs(env_id))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # check_env says it is best run on the unwrapped env; the adapters are the point here
        warnings.filterwarnings("ignore", message=".*different from the unwrapped")
        gym_check_env(env, skip_render_check=True)
        sb3_check_env(env, warn=True)
    env.close()


@pytest.mark.parametrize("env_id", SIMULATED)
def test_sampled_actions_are_real_candidates_the_env_accepts(env_id):
    recorder: list[RecordValidity] = []
    env = make_sb3_env(
        env_id,
        wrappers=[lambda e: recorder.append(RecordValidity(e)) or recorder[-1]],
        **env_kwargs(env_id),
    )
    env.action_space.seed(0)
    env.reset(seed=0)
    for _ in range(40):
        mask = env.action_masks()
        action = env.action_space.sample()
        assert mask[action], f"sample() gave padding index {action}"
        _, _, terminated, truncated, info = env.step(action)
        assert np.array_equal(info["action_mask"], env.action_masks())
        if terminated or truncated:
            env.reset()
    validity = recorder[0].valid
    assert len(validity) == 40
    # every candidate is an action the screen offers (WebShop/AndroidWorld may refuse a few
    # context-dependent ones, e.g. GOBACK on the first screen)
    assert np.mean(validity) >= 0.9


def test_candidates_are_the_envs_own_list_then_done_when_the_env_needs_it():
    aw = CandidateActions(gym.make("GuiGym/AndroidWorld-v0"), max_candidates=48)
    aw.reset(seed=0)
    base = aw.unwrapped.candidate_actions()
    assert aw.candidates[: len(base)] == base
    assert str(aw.candidates[-1]) == "DONE()"  # AndroidWorld scores only episodes the agent ends
    assert aw.action_masks().sum() == len(aw.candidates)
    assert not aw.action_masks()[len(aw.candidates) :].any()

    wikihow = CandidateActions(gym.make("GuiGym/WikiHow-v0"))
    wikihow.reset(seed=0)
    assert all(a.type.value != "DONE" for a in wikihow.candidates)  # it ends on success
    none = CandidateActions(gym.make("GuiGym/AndroidWorld-v0"), done_action=None)
    none.reset(seed=0)
    assert all(a.type.value != "DONE" for a in none.candidates)


def test_instruction_quotes_are_typed_where_the_env_offers_typing():
    env = CandidateActions(gym.make("GuiGym/WikiHow-v0", max_steps=5))
    observation, _ = env.reset(seed=0)
    inputs = [a for a in env.candidates if a.type.value == "INPUT"]
    assert inputs, "the WikiHow home screen offers typing into the search box"
    # The instruction's own quoted phrase is not in WikiHow's vocabulary list form: wrap the
    # env's instruction with a quote to see it offered.
    env._refresh(observation["instruction"] + ' "pigeon pose stretch"')
    typed = {a.text for a in env.candidates if a.type.value == "INPUT"}
    assert "pigeon pose stretch" in typed


def test_a_crowded_screen_keeps_the_first_candidates_and_done_and_warns_once():
    env = CandidateActions(gym.make("GuiGym/AndroidWorld-v0"), max_candidates=4)
    with pytest.warns(UserWarning, match="more than max_candidates=4"):
        env.reset(seed=0)
    full = env.unwrapped.candidate_actions()
    assert env.candidates[:3] == full[:3]
    assert str(env.candidates[3]) == "DONE()"
    assert env.dropped == len(full) - 3
    dropped_here = env.dropped
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once, not again
        _, _, _, _, info = env.step(0)
    # info describes the screen the action was chosen on
    assert info["candidates"]["dropped"] == dropped_here


def test_padding_wraps_by_default_and_is_an_invalid_step_when_asked():
    wrap = CandidateActions(gym.make("GuiGym/WikiHow-v0"), max_candidates=48)
    wrap.reset(seed=3)
    count = len(wrap.candidates)
    expected = str(wrap.candidates[(count + 1) % count])
    _, _, _, _, info = wrap.step(count + 1)
    assert info["candidates"]["chosen"] == expected
    assert info["action_valid"]

    invalid = CandidateActions(gym.make("GuiGym/WikiHow-v0"), max_candidates=48, padding="invalid")
    invalid.reset(seed=3)
    count = len(invalid.candidates)
    screen_before = invalid.unwrapped.ui_tree
    _, reward, _, _, info = invalid.step(count)
    assert not info["action_valid"]
    assert f"action {count} is padding" in info["action_error"]
    assert info["step"] == 1 and reward == 0.0
    assert invalid.unwrapped.ui_tree == screen_before


def test_bad_arguments_and_actions_get_clear_errors():
    base = gym.make("GuiGym/WikiHow-v0")
    with pytest.raises(ValueError, match="max_candidates must be >= 2"):
        CandidateActions(base, max_candidates=1)
    with pytest.raises(ValueError, match="padding must be"):
        CandidateActions(base, padding="drop")
    with pytest.raises(ValueError, match=r"done_action 'JUMP\(\)' is not an action"):
        CandidateActions(base, done_action="JUMP()")
    with pytest.raises(TypeError, match="needs CandidateActions below it"):
        FeaturizedObservation(base)
    env = CandidateActions(base)
    with pytest.raises(ValueError, match="features must be 'hash', 'minilm'"):
        FeaturizedObservation(env, features="tfidf")
    with pytest.raises(gym.error.ResetNeeded):
        env.action_masks()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"outside the action space \[0, 64\)"):
        env.step(64)
    with pytest.raises(ValueError, match="send action strings to the env without this wrapper"):
        env.step("CLICK(1)")
    with pytest.raises(TypeError, match="has no candidate_actions"):
        CandidateActions(gym.make("CartPole-v1"))


def test_features_hold_instruction_screen_and_scored_candidates():
    env = make_sb3_env("GuiGym/WikiHow-v0", max_candidates=40, dim=32)
    observation, _ = env.reset(seed=1)
    wrapper = env.env
    assert isinstance(wrapper, CandidateActions)
    d = 32
    width = d + 1 + len(CANDIDATE_TYPES) + 1 + 1
    assert observation.shape == (2 * d + 40 * width,)
    embed = env.embedder.encode
    instruction = env.unwrapped.task.instruction
    np.testing.assert_allclose(observation[:d], embed([instruction])[0], atol=1e-6)
    rows = observation[2 * d :].reshape(40, width)
    count = len(wrapper.candidates)
    descriptions = wrapper.candidate_descriptions()
    np.testing.assert_allclose(rows[:count, :d], embed(descriptions), atol=1e-6)
    np.testing.assert_allclose(
        rows[:count, d], embed(descriptions) @ embed([instruction])[0], atol=1e-5
    )
    assert (rows[:count, -1] == 1).all() and (rows[:count, d + 1 : -1].sum(axis=1) == 1).all()
    assert not rows[count:].any()  # padding rows are zero
    assert observation.min() >= -1 and observation.max() <= 1


@pytest.mark.slow
def test_sentence_embedding_features_pass_check_env():
    require("sentence_transformers", "llm")
    require("stable_baselines3", "rl")
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = make_sb3_env("GuiGym/WikiHow-v0", features="minilm", max_candidates=8)
    assert env.observation_space.shape == (2 * 384 + 8 * (384 + len(CANDIDATE_TYPES) + 3),)
    sb3_check_env(env, warn=True)
    observation, _ = env.reset(seed=0)
    assert np.isclose(np.linalg.norm(observation[:384]), 1.0, atol=1e-4)


def test_task_subset_draws_only_its_tasks_seeded():
    tasks = ["do_pigeon_pose-bookmark", "keep_a_cat_off_the_counter-bookmark"]
    env = TaskSubset(gym.make("GuiGym/WikiHow-v0"), tasks)
    drawn = [env.reset(seed=s)[1]["task_id"] for s in range(12)]
    assert set(drawn) == set(tasks)
    assert drawn == [env.reset(seed=s)[1]["task_id"] for s in range(12)]
    other = env.unwrapped.suite.task_ids[0]
    assert env.reset(options={"task": other})[1]["task_id"] == other
    with pytest.raises(ValueError, match="unknown task id"):
        TaskSubset(gym.make("GuiGym/WikiHow-v0"), ["no-such-task"])


def test_torchrl_random_rollout_plays_valid_actions():
    require("torchrl", "rl")
    from torchrl.envs import GymWrapper

    recorder: list[RecordValidity] = []
    env = make_sb3_env(
        "GuiGym/WikiHow-v0",
        wrappers=[lambda e: recorder.append(RecordValidity(e)) or recorder[-1]],
    )
    torchrl_env = GymWrapper(env)
    rollout = torchrl_env.rollout(25)  # TorchRL's own random policy (spec.rand())
    assert rollout["next", "observation"].shape[-1] == env.observation_space.shape[0]
    assert len(recorder[0].valid) == rollout.batch_size[0] > 0
    # every random action reached the env as one of the screen's candidate actions (the
    # issue saw the literal string "a string"); GOBACK on the home screen is one the app
    # refuses, hence not all valid
    assert all(isinstance(a, Action) for a in recorder[0].received)
    assert np.mean(recorder[0].valid) >= 0.8


def test_sb3_ppo_runs_on_the_adapted_env():
    sb3 = require("stable_baselines3", "rl")
    env = make_sb3_env("GuiGym/AndroidWorld-v0", max_steps=5)
    model = sb3.PPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0)
    model.learn(64)
    assert model.num_timesteps == 64


# The first four In-Page train tasks (search, open the article, bookmark it).
WIKIHOW_SUBSET = [
    "clean_a_burnt_pot-bookmark",
    "remove_waterproof_mascara-bookmark",
    "make_an_offer_on_a_house-bookmark",
    "detangle_hair_without_pain-bookmark",
]


def _success_rate(env, act, episodes: int) -> float:
    wins = 0
    for episode in range(episodes):
        observation, info = env.reset(seed=10_000 + episode)
        done = False
        while not done:
            observation, _, terminated, truncated, info = env.step(act(observation, env))
            done = terminated or truncated
        wins += bool(info["success"])
    return wins / episodes


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_maskable_ppo_learns_a_small_wikihow_subset_well_above_random():
    """Trained on ProgRM's milestone-progress reward, judged on the task outcome alone.

    With the outcome reward alone MaskablePPO learns these tasks on some seeds only (1 of 3
    within 10,240 steps in our runs; benchmarks/learning_curves.py measures it), so a test of
    "it learns" on one seed would be a coin toss; with the progress reward all three seeds
    reached 1.0 greedy success by 6,144 steps (seed 0: 0.8 at 4,096).
    """
    require("sb3_contrib", "rl")
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    from gui_gym.models.progress import MilestoneProgress
    from gui_gym.wrappers import ProgressRewardWrapper

    torch.set_num_threads(1)
    progress = MilestoneProgress.from_env_id("GuiGym/WikiHow-v0")

    def make(shaped: bool = True) -> FeaturizedObservation:
        wrappers = [lambda e: ProgressRewardWrapper(e, progress)] if shaped else []
        wrappers.append(lambda e: TaskSubset(e, WIKIHOW_SUBSET))
        return make_sb3_env("GuiGym/WikiHow-v0", max_steps=10, max_candidates=40, wrappers=wrappers)

    evaluation = make(shaped=False)
    evaluation.action_space.seed(0)
    random_rate = _success_rate(evaluation, lambda obs, env: env.action_space.sample(), 40)
    model = MaskablePPO(
        "MlpPolicy",
        make_vec_env(make, n_envs=4, seed=0),
        n_steps=128,
        batch_size=128,
        n_epochs=4,
        learning_rate=1e-3,
        ent_coef=0.01,
        policy_kwargs={"net_arch": [64, 64]},
        seed=0,
    )
    model.learn(6144)
    trained_rate = _success_rate(
        evaluation,
        lambda obs, env: model.predict(obs, action_masks=env.action_masks(), deterministic=True)[0],
        20,
    )
    assert random_rate <= 0.1
    assert trained_rate >= 0.5 and trained_rate >= 4 * random_rate, (random_rate, trained_rate)


@pytest.mark.slow
@pytest.mark.parametrize("reward", ["milestone", "prm"])
def test_the_maskable_ppo_example_runs_each_shaped_reward(reward, tmp_path):
    """The example end to end on a tiny budget (its store seeding, evaluation and JSON)."""
    require("sb3_contrib", "rl")
    import importlib.util
    import json
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "sb3_maskable_ppo.py"
    spec = importlib.util.spec_from_file_location("sb3_maskable_ppo", path)
    example = importlib.util.module_from_spec(spec)
    sys.modules["sb3_maskable_ppo"] = example
    spec.loader.exec_module(example)
    out = tmp_path / "curve.json"
    args = example.Args(
        reward=reward,
        total_timesteps=512,
        eval_every=512,
        eval_episodes=2,
        num_envs=2,
        n_steps=64,
        batch_size=64,
        out=out,
    )
    result = example.main(args)
    assert [row["steps"] for row in result["curve"]] == [0, 512]
    assert len(result["train_tasks"]) == 4 and len(result["test_tasks"]) == 8
    assert not set(result["train_tasks"]) & set(result["test_tasks"])
    assert json.loads(out.read_text())["reward"] == reward
