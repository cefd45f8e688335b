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


# ------------------------------------------------ screenshots and bad input (issue 47)


def _decode(url: str):
    """An ``image_url`` data URL as a PIL image, as SkyRL's VLM generator decodes it."""
    import base64
    import io

    from PIL import Image

    head, data = url.split(",", 1)
    assert head == "data:image/png;base64"
    return Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")


def test_screenshots_reach_a_tiny_vlm_as_image_url_parts(tmp_path) -> None:
    require("transformers", "llm")
    from gui_gym.models.llm import TransformersLLM
    from tests.tiny_llm import tiny_llava

    env = skyrl_gym.make(
        "gui_gym",
        env_config={
            "env_id": "GuiGym/WikiHow-v0",
            "screenshot": True,
            "env_kwargs": {"split": "train"},
        },
        extras={"seed": 0},
    )
    messages, _ = env.init([])
    first = messages[-1]["content"]
    assert [p["type"] for p in first] == ["text", "image_url"]
    out = env.step("<action>SCROLL(down)</action>")
    later = out["observations"][0]["content"]
    assert [p["type"] for p in later] == ["text", "image_url"]
    assert later[0]["text"].startswith("Done: ")
    images = [_decode(c[1]["image_url"]["url"]) for c in (first, later)]
    assert images[0].size == (360, 720)
    # what a VLM generator does with them: image parts into the processor
    folder = tmp_path / "vlm"
    tiny_llava(folder)
    vlm = TransformersLLM(folder, device="cpu")

    def prompt(content, image):
        return [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": content[0]["text"][:200]},
                    {"type": "image", "image": image},
                ],
            }
        ]

    [[a], [b]] = vlm.generate_with_tokens(
        [prompt(first, images[0]), prompt(first, images[1])], max_new_tokens=2
    )
    image_id = vlm.tokenizer.convert_tokens_to_ids("<image>")
    assert a.prompt_ids.count(image_id) == 16 and a.prompt_ids == b.prompt_ids
    assert a.logprobs != b.logprobs  # the model sees the screens' pixels
    env.close()


def test_bad_model_output_and_steps_after_the_end_never_raise_or_hang() -> None:
    env = skyrl_gym.make(
        "gui_gym",
        env_config={
            "env_id": "GuiGym/WikiHow-v0",
            "env_kwargs": {"split": "train", "max_steps": 3},
        },
        extras={"seed": 0},
    )
    before = env.step("<action>DONE()</action>")  # before init: nothing stepped
    assert before["done"] and "call init() first" in before["metadata"]["action_error"]
    env.init([])
    for output in ("\x00garbage ))(( <action>", "x" * 5_000_000 + "<action>WAIT()</action>"):
        out = env.step(output)
        assert out["reward"] == 0.0 or out["done"]
    assert env.step("<action>WAIT()</action>")["done"]  # the third step: the step limit
    after = env.step("<action>DONE()</action>")
    assert after["done"] and after["reward"] == 0.0 and after["observations"] == []
    assert env.get_metrics()["steps"] == 3


def test_a_failed_reset_is_a_clear_error(monkeypatch) -> None:
    env = skyrl_gym.make(
        "gui_gym", env_config={"env_id": "GuiGym/WikiHow-v0"}, extras={"task_id": "no-such-task"}
    )
    with pytest.raises(
        RuntimeError, match="GuiGym/WikiHow-v0 failed to reset \\(task 'no-such-task'"
    ):
        env.init([])
    assert "call init() first" in env.step("<action>WAIT()</action>")["metadata"]["action_error"]
