"""SemiOnlineReplayEnv: Algorithm 1 of UI-S1 (matching, patching under epsilon, thoughts)."""

from __future__ import annotations

import math
import pickle
import warnings
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import gui_gym
from gui_gym.envs.replay import SAMPLE_DATASET, ExpertDataset, SemiOnlineReplayEnv
from gui_gym.rewards.semi_online import Rollout, discounted_returns, dual_level_advantages
from tests.replay_data import make_dataset

ID = "GuiGym/SemiOnlineReplay-v0"
# expert: CLICK(0) on state 0, INPUT(1, "hello") on state 1, SCROLL(down) on state 2
EXPERT = ["CLICK(0)", 'INPUT(1, "hello")', "SCROLL(down)"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> ExpertDataset:
    root = make_dataset(tmp_path_factory.mktemp("ds") / "d", [EXPERT])
    return ExpertDataset.load(root)


def make(dataset: ExpertDataset, **kwargs: object) -> SemiOnlineReplayEnv:
    # These tests send bare actions: score them without the paper's <think> block unless a
    # test asks for it (test_format_score checks the paper's default).
    kwargs.setdefault("require_think", False)
    env = SemiOnlineReplayEnv(dataset, **kwargs)  # type: ignore[arg-type]
    env.reset(seed=0)
    return env


def run(env: SemiOnlineReplayEnv, actions: list[str]) -> list[tuple]:
    out = []
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        out.append((obs, reward, terminated, truncated, info))
        if terminated or truncated:
            break
    return out


def test_replay_id_is_registered_outside_env_ids() -> None:
    assert ID in gym.registry and ID in gui_gym.REPLAY_ENV_IDS and ID not in gui_gym.ENV_IDS
    with pytest.raises(TypeError, match="dataset"):
        gym.make(ID)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"screenshot": True},
        {"render_mode": "ansi"},
        {"render_mode": "rgb_array", "screenshot": True},
        {"patch": "on_policy_thought", "epsilon": math.inf, "history": False},
    ],
    ids=["text", "screenshot", "ansi", "rgb_array", "on_policy"],
)
def test_check_env_on_the_bundled_sample(kwargs: dict) -> None:
    env = gym.make(ID, dataset=SAMPLE_DATASET, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


def test_check_env_on_a_dataset_made_in_the_test(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "d", [EXPERT, EXPERT[:2]], screenshots=True)
    env = gym.make(ID, dataset=str(root), screenshot=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


def test_oracle_replays_every_sample_trajectory() -> None:
    env = gym.make(ID, dataset=SAMPLE_DATASET, require_think=False)
    base = env.unwrapped
    for index in range(len(base.dataset)):
        obs, info = env.reset(options={"trajectory": index})
        done = False
        while not done:
            obs, reward, terminated, truncated, info = env.step(str(base.oracle_action()))
            assert reward == 1.0 and info["semi_online"]["matched"]
            done = terminated or truncated
        assert terminated and info["success"] and info["task_reward"] == 1.0
        assert info["semi_online"]["matched_prefix"] == len(base.trajectory)


def test_a_matching_action_advances_to_the_next_expert_state(dataset: ExpertDataset) -> None:
    env = make(dataset)
    obs, reward, terminated, truncated, info = env.step("CLICK(0)")
    assert (reward, terminated, truncated) == (1.0, False, False)
    assert "Next 1" in obs["screen"] and env.expert_step == 1
    assert info["milestones"] == ["m0"]  # the recorded milestones of the expert step
    assert info["action_target"] == ("button", "Next 0", "")  # as GuiEnv reports it
    assert obs["history"] == "Step 1: CLICK(0)"


def test_epsilon_zero_ends_at_the_first_mismatch(dataset: ExpertDataset) -> None:
    env = make(dataset, epsilon=0)
    obs, reward, terminated, truncated, info = env.step("CLICK(1)")
    assert terminated and not truncated
    assert reward == 0.5  # right type, wrong element
    details = info["semi_online"]
    assert details["patched"] is False and details["executed_action"] is None
    assert details["matched_prefix"] == 0 and not info["success"]
    assert details["rollout"] == {
        "rewards": [0.5],
        "matched": [False],
        "type_matched": [True],
        "patched": [False],
    }
    assert "Next 0" in obs["screen"]  # no next state (Eq. 7: None)


def test_epsilon_one_patches_once(dataset: ExpertDataset) -> None:
    env = make(dataset, epsilon=1)
    steps = run(env, ["GOBACK()", 'INPUT(1, "hello")', "SCROLL(up)"])
    assert len(steps) == 3
    first, second, third = (s[4]["semi_online"] for s in steps)
    assert first["patched"] and first["executed_action"] == "CLICK(0)"
    assert steps[0][1] == pytest.approx(0.1)  # wrong type
    assert second["matched"] and not second["patched"] and second["patches_used"] == 1
    assert not third["patched"] and third["executed_action"] is None  # budget spent: end
    assert steps[2][2] is True and not third["completed"]
    # the history holds the expert action where the patch went in, the policy's elsewhere
    assert steps[1][0]["history"] == 'Step 1: CLICK(0)\nStep 2: INPUT(1, "hello")'
    assert third["matched_prefix"] == 0
    assert third["rollout"]["patched"] == [True, False, False]


def test_epsilon_one_second_mismatch_in_a_row_ends(dataset: ExpertDataset) -> None:
    env = make(dataset, epsilon=1)
    steps = run(env, ["GOBACK()", "GOBACK()", "GOBACK()"])
    assert len(steps) == 2 and steps[-1][2]


def test_unlimited_patches_reach_the_end(dataset: ExpertDataset) -> None:
    env = make(dataset, epsilon=math.inf)
    steps = run(env, ["GOBACK()"] * 5)
    assert len(steps) == 3
    info = steps[-1][4]
    assert info["semi_online"]["completed"] and info["semi_online"]["patches_used"] == 3
    assert not info["success"] and info["task_reward"] == 0.0
    assert steps[-1][0]["screen"] == "<text id=0>done</text>"  # the final state


def test_patch_none_never_patches(dataset: ExpertDataset) -> None:
    env = make(dataset, patch="none", epsilon=5)
    steps = run(env, ["GOBACK()", "CLICK(0)"])
    assert len(steps) == 1 and steps[0][2]


def test_thought_free_patch_keeps_no_thought(dataset: ExpertDataset) -> None:
    env = make(dataset, patch="thought_free")
    _, _, _, _, info = env.step("<think>go back</think><action>GOBACK()</action>")
    assert info["semi_online"]["thought"] is None
    assert not info["semi_online"]["regenerate_thought"]
    assert env.history_entries[0].thought is None and env.history_entries[0].patched


def test_own_thought_is_kept_when_the_action_matches(dataset: ExpertDataset) -> None:
    env = make(dataset)
    obs, *_ = env.step("<think>press next</think>\n<action>CLICK(0)</action>")
    assert obs["history"] == "Step 1: CLICK(0)\nThought: press next"


def test_off_policy_patch_uses_the_expert_thought(dataset: ExpertDataset) -> None:
    env = make(dataset, patch="off_policy_thought")
    obs, _, _, _, info = env.step("GOBACK()")
    assert info["semi_online"]["thought"] == "expert thought 0.0"
    assert obs["history"].endswith("Thought: expert thought 0.0")


def test_off_policy_patch_without_a_thought_asks_for_one(tmp_path: Path) -> None:
    root = make_dataset(tmp_path / "d", [EXPERT], thoughts=False)
    env = make(ExpertDataset.load(root), patch="off_policy_thought")
    _, _, _, _, info = env.step("GOBACK()")
    assert info["semi_online"]["regenerate_thought"] is True


def test_on_policy_patch_requests_a_regenerated_thought(dataset: ExpertDataset) -> None:
    env = make(dataset, patch="on_policy_thought")
    _, _, _, _, info = env.step("GOBACK()")
    details = info["semi_online"]
    assert details["regenerate_thought"] and details["thought"] is None
    assert "CLICK(0)" in details["thought_prompt"] and "Do task 0" in details["thought_prompt"]
    env.set_patch_thought("<think>The next button moves on.</think>")
    assert env.history_entries[0].thought == "The next button moves on."
    obs, *_ = env.step("CLICK(1)")  # input expected: patch budget spent, episode ends
    with pytest.raises(ValueError, match="not patched"):
        env.set_patch_thought("x")


def test_thought_fn_writes_patch_thoughts(dataset: ExpertDataset) -> None:
    calls = []

    def thought_fn(instruction, expert_action, screen, history):  # type: ignore[no-untyped-def]
        calls.append((instruction, expert_action, history))
        return f"I should {expert_action}"

    env = make(dataset, patch="on_policy_thought", thought_fn=thought_fn, epsilon=2)
    env.step("CLICK(0)")
    _, _, _, _, info = env.step("GOBACK()")
    assert info["semi_online"]["thought"] == 'I should INPUT(1, "hello")'
    assert calls == [("Do task 0", 'INPUT(1, "hello")', [("CLICK(0)", None)])]


def test_format_score(dataset: ExpertDataset) -> None:
    env = make(dataset, epsilon=0)
    _, reward, terminated, _, info = env.step("PRESS(the big button)")
    assert reward == 0.0 and terminated and info["action_valid"] is False
    assert info["semi_online"]["format_ok"] is False
    # UI-S1's output format (App. H) is <think> ... </think> <action> ... </action>: by default
    # a bare action earns no format, type or exact reward, but it still matches the expert's,
    # so the rollout continues unpatched and SOP counts it.
    env = SemiOnlineReplayEnv(dataset)
    env.reset(seed=0)
    assert env.require_think is True
    _, reward, _, _, info = env.step("CLICK(0)")
    assert reward == 0.0 and info["semi_online"]["format_ok"] is False
    assert info["semi_online"]["matched"] and not info["semi_online"]["patched"]
    _, reward, _, _, info = env.step('<think>type it</think><action>INPUT(1, "hello")</action>')
    assert reward == 1.0 and info["semi_online"]["format_ok"]


def test_code_reward_scheme(dataset: ExpertDataset) -> None:
    env = make(dataset, reward_scheme="code")
    _, reward, *_ = env.step("CLICK(1)")
    assert reward == pytest.approx(0.55)


def test_returns_and_rollout_feed_the_advantages(dataset: ExpertDataset) -> None:
    group = []
    for actions in (EXPERT, ["CLICK(1)", 'INPUT(1, "hello")', "SCROLL(down)"], ["HOME()"] * 3):
        env = make(dataset, epsilon=1)
        info = run(env, actions)[-1][4]
        rollout = Rollout.from_info(info)
        assert info["semi_online"]["returns"] == pytest.approx(
            discounted_returns(rollout.rewards, rollout.matched, gamma=0.5)
        )
        group.append(rollout)
    assert group[1].rewards == (0.5, 1.0, 1.0) and group[1].patched == (True, False, False)
    assert group[2].rewards == (0.1, 0.1)  # patched, then ended
    adv = dual_level_advantages(group)
    assert adv.combined[0][0] > adv.combined[1][0] > adv.combined[2][0]


def test_max_steps_truncates(dataset: ExpertDataset) -> None:
    env = make(dataset, max_steps=2)
    steps = run(env, EXPERT)
    assert len(steps) == 2 and steps[-1][3] and not steps[-1][2]


def test_reset_options_and_seeding() -> None:
    env = gym.make(ID, dataset=SAMPLE_DATASET)
    ids = {env.reset(seed=s)[1]["semi_online"]["trajectory_id"] for s in range(20)}
    assert len(ids) > 1
    assert env.reset(seed=3)[0] == env.reset(seed=3)[0]
    first = env.unwrapped.dataset[2]
    _, info = env.reset(options={"trajectory": first.trajectory_id})
    assert info["semi_online"]["trajectory_index"] == 2
    _, info = env.reset(options={"task": first.task_id})
    assert info["task_id"] == first.task_id
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"trajectroy": 1})
    with pytest.raises(KeyError, match="unknown trajectory"):
        env.reset(options={"trajectory": "nope"})


def test_bad_arguments_fail_early(dataset: ExpertDataset) -> None:
    for kwargs, message in [
        ({"patch": "thoughtful"}, "patch must be one of"),
        ({"epsilon": -1}, "epsilon"),
        ({"epsilon": 0.5}, "epsilon"),
        ({"max_steps": 0}, "max_steps"),
        ({"reward_scheme": "mine"}, "reward_scheme"),
        ({"render_mode": "human"}, "render_mode"),
        ({"matcher": "fuzzy"}, "unknown matcher"),
    ]:
        with pytest.raises(ValueError, match=message):
            SemiOnlineReplayEnv(dataset, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(gym.error.ResetNeeded):
        SemiOnlineReplayEnv(dataset).step("CLICK(0)")


def test_spec_pickle_fork_and_vector_env() -> None:
    env = gym.make(ID, dataset=str(SAMPLE_DATASET), epsilon=2, require_think=False)
    again = gym.make(env.spec)
    assert again.unwrapped.epsilon == 2
    env.reset(seed=1)
    env.step("GOBACK()")
    clone = pickle.loads(pickle.dumps(env.unwrapped))
    fork = env.unwrapped.fork()
    step = env.unwrapped.step("GOBACK()")
    assert pickle.dumps(clone.step("GOBACK()")) == pickle.dumps(step)
    assert pickle.dumps(fork.step("GOBACK()")) == pickle.dumps(step)
    fork.reset(seed=5)
    assert env.unwrapped.steps_taken == 2
    envs = gym.make_vec(ID, num_envs=2, vectorization_mode="async", dataset=str(SAMPLE_DATASET))
    try:
        obs, _ = envs.reset(seed=0)
        assert len(obs["screen"]) == 2
        obs, reward, _, _, info = envs.step(
            ["<think>back</think><action>GOBACK()</action>", "junk"]
        )
        assert reward.tolist() == [0.1, 0.0] and list(info["action_valid"]) == [True, False]
        assert all(h.startswith("Step 1: INPUT(0,") for h in obs["history"])  # patched
    finally:
        envs.close()


def test_candidate_actions_serve_the_random_agent(dataset: ExpertDataset) -> None:
    env = make(dataset)
    actions = [str(a) for a in env.candidate_actions()]
    assert "CLICK(0)" in actions and "SCROLL(down)" in actions and "GOBACK()" in actions
    assert any(a.startswith("INPUT(1,") for a in actions)


def test_bundled_sample_matches_a_fresh_recording(tmp_path: Path) -> None:
    from scripts.make_replay_sample import build

    fresh = ExpertDataset.load(build(tmp_path / "sample"))
    bundled = ExpertDataset.load(SAMPLE_DATASET)
    assert fresh.manifest == bundled.manifest
    for a, b in zip(fresh, bundled, strict=True):
        assert (a.task_id, a.instruction, a.final_screen) == (
            b.task_id,
            b.instruction,
            b.final_screen,
        )
        assert [(s.action, s.screen, s.tree, s.thought) for s in a.steps] == [
            (s.action, s.screen, s.tree, s.thought) for s in b.steps
        ]


_FUZZ_ENV = SemiOnlineReplayEnv(SAMPLE_DATASET, epsilon=math.inf)


@settings(max_examples=150, deadline=None)
@given(
    text=st.one_of(
        st.text(max_size=80),
        st.sampled_from(["CLICK(3)", "<think>x</think><action>SCROLL(down)</action>", "{}"]),
    ),
    seed=st.integers(0, 7),
)
def test_no_string_makes_step_raise(text: str, seed: int) -> None:
    _FUZZ_ENV.reset(seed=seed)
    obs, reward, terminated, truncated, info = _FUZZ_ENV.step(text)
    assert _FUZZ_ENV.observation_space.contains(obs)
    assert reward in (0.0, 0.1, 0.5, 1.0)
    assert isinstance(info["action_valid"], bool)
