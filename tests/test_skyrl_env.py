"""gui-gym as a skyrl-gym ``BaseTextEnv``: made with ``skyrl_gym.make``, rewarded per step by
the reward stack exactly as ``gui-gym train`` stacks it."""

from __future__ import annotations

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401
from gui_gym.agents.prompts import PromptInput, get_prompt
from gui_gym.train.reward_stack import RewardStack
from tests.conftest import require

skyrl_gym = require("skyrl_gym", "skyrl")
from gui_gym.integrations.skyrl import SKYRL_ENV_ID, GuiGymTextEnv, register  # noqa: E402

ENV_ID = "GuiGym/WikiHow-v0"
TASK = "change_a_flat_tire-references"  # the expert solves it in 3 steps
EXPERT = ['INPUT(0, "change a flat tire")', "CLICK(4)", "SCROLL(down)"]


def _outputs(actions: list[str]) -> list[str]:
    """Model outputs in the default prompt format."""
    fmt = get_prompt("default")
    return [fmt.completion(f"step {k}", a) for k, a in enumerate(actions)]


def _stack_rewards(reward: str, actions: list[str]) -> list[float]:
    """What the reward stack gives the same actions on an env made as gui-gym train makes it."""
    env = RewardStack.from_text(reward).wrap(gym.make(ENV_ID))
    env.reset(seed=0, options={"task": TASK})
    rewards = [float(env.step(a)[1]) for a in actions]
    env.close()
    return rewards


@pytest.mark.parametrize(
    "reward", ["outcome+progress", "outcome+prm", "outcome+progress+prm", "outcome+0.5*format"]
)
def test_a_three_turn_episode_gets_the_stack_rewards_step_by_step(reward: str) -> None:
    register()
    env = skyrl_gym.make(
        SKYRL_ENV_ID,
        env_config={"env_id": ENV_ID, "reward": reward},
        extras={"task_id": TASK, "seed": 0, "data_source": "gui_gym"},
    )
    assert isinstance(env, GuiGymTextEnv)
    messages, meta = env.init([{"role": "user", "content": "ignored: the env builds it"}])
    local = gym.make(ENV_ID)
    observation, _ = local.reset(seed=0, options={"task": TASK})
    expected = get_prompt("default").build(
        PromptInput(instruction=observation["instruction"], screen=observation["screen"])
    )
    assert messages == expected and meta["task_id"] == TASK

    outs = [env.step(text) for text in _outputs(EXPERT)]
    rewards = [o["reward"] for o in outs]
    assert rewards == pytest.approx(_stack_rewards(reward, EXPERT), abs=1e-12)
    assert [o["done"] for o in outs] == [False, False, True]
    for out in outs:
        parts = out["metadata"]["reward_components"]
        assert sum(parts.values()) == pytest.approx(out["reward"], abs=1e-12)
    # the next screen is the observation of each turn but the last
    local.step(EXPERT[0])
    second_screen = local.step(EXPERT[1])[0]["screen"]
    assert second_screen in outs[1]["observations"][0]["content"]
    assert outs[2]["observations"] == [] and outs[2]["metadata"]["success"] is True
    assert [o["postprocessed_action"] for o in outs] == EXPERT
    metrics = env.get_metrics()
    assert metrics["success"] == 1.0 and metrics["steps"] == 3
    env.close()


def test_components_name_each_term() -> None:
    env = skyrl_gym.make(
        SKYRL_ENV_ID,
        env_config={"env_id": ENV_ID, "reward": "outcome+progress"},
        extras={"task_id": TASK, "seed": 0},
    )
    env.init([])
    outs = [env.step(a) for a in EXPERT]
    first, last = (
        outs[0]["metadata"]["reward_components"],
        outs[-1]["metadata"]["reward_components"],
    )
    assert set(first) == {"outcome", "progress"}
    assert first["outcome"] == 0.0 and first["progress"] > 0
    assert last["outcome"] == 1.0  # the task's outcome, paid at the end


def test_a_bad_action_is_a_counted_invalid_step_not_an_error() -> None:
    env = skyrl_gym.make(
        SKYRL_ENV_ID,
        env_config={"env_id": ENV_ID, "reward": "outcome+format"},
        extras={"task_id": TASK, "seed": 0},
    )
    env.init([])
    out = env.step("I am not sure what to do")
    assert out["done"] is False and out["metadata"]["action_valid"] is False
    assert out["metadata"]["reward_components"]["format"] < 0
    assert "refused" in out["observations"][0]["content"]


def test_bad_configs_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="give env_id"):
        GuiGymTextEnv(env_config={}, extras={})
    with pytest.raises(ValueError, match=r"unknown env_config key\(s\) \['rewrd'\]"):
        GuiGymTextEnv(env_config={"env_id": ENV_ID, "rewrd": "outcome"})
    with pytest.raises(ValueError, match="unknown reward 'nope'"):
        GuiGymTextEnv(env_config={"env_id": ENV_ID, "reward": "nope"})
    with pytest.raises(ValueError, match="seed must be an int"):
        GuiGymTextEnv(env_config={"env_id": ENV_ID}, extras={"seed": "0"})


def test_omegaconf_configs_work_as_skyrl_passes_them() -> None:
    from omegaconf import OmegaConf

    config = OmegaConf.create({"env_id": ENV_ID, "max_turns": 2})
    env = GuiGymTextEnv(env_config=config, extras={"task_id": TASK, "seed": 0})
    env.init([])
    assert env.step(EXPERT[0])["done"] is False
    assert env.step(EXPERT[1])["done"] is True  # truncated at max_steps=2
    assert env.get_metrics()["success"] == 0.0


@pytest.mark.parametrize(
    ("module", "engine", "extra"),
    [
        ("gui_gym.integrations.skyrl", "skyrl_gym", "skyrl"),
        ("gui_gym.integrations.openenv", "openenv", "openenv"),
    ],
)
def test_a_missing_engine_names_its_extra(monkeypatch, module: str, engine: str, extra: str):
    import importlib
    import sys

    monkeypatch.delitem(sys.modules, module, raising=False)
    for name in [m for m in sys.modules if m == engine or m.startswith(engine + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, engine, None)  # import of it fails as if not installed
    with pytest.raises(gym.error.DependencyNotInstalled, match=rf"gui-gym\[{extra}\]"):
        importlib.import_module(module)
