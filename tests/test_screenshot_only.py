"""Screenshot-only agents (issue 29 item 4): the coordinate spaces and Qwen2.5-VL's resize rule
with worked numbers, the expert acting by pixels on every suite, an LLM agent mapping its
coordinates to the screen and its SFT targets back, and the CLI's one-line refusals."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from typer.testing import CliRunner

import gui_gym  # noqa: F401
from gui_gym.agents import LLMAgent
from gui_gym.agents.oracle import ScreenshotOracleAgent
from gui_gym.agents.screen_space import CoordinateSpace, qwen_smart_resize
from gui_gym.cli import app
from gui_gym.core.actions import ActionType, parse_action
from gui_gym.models.llm import ScriptedLLM, prompt_text

runner = CliRunner()


# ------------------------------------------------------------------------- the resize rule


def test_qwen_smart_resize_worked_numbers() -> None:
    # WikiHow's 360x720 screen: 720/28 = 25.7 -> 26*28 = 728; 360/28 = 12.9 -> 13*28 = 364
    assert qwen_smart_resize(720, 360) == (728, 364)
    # a 1080x2400 phone: 2400/28 = 85.7 -> 2408; 1080/28 = 38.6 -> 1092 (2.6 MP < max)
    assert qwen_smart_resize(2400, 1080) == (2408, 1092)
    # over max_pixels: beta = sqrt(1e6 / 5e5) = 1.414; floor(1000 / 1.414 / 28) = 25 -> 700
    assert qwen_smart_resize(1000, 1000, max_pixels=500_000) == (700, 700)
    # under min_pixels: beta = sqrt(3136 / 1200) = 1.617; ceil(30 * 1.617 / 28) = 2 -> 56,
    # ceil(40 * 1.617 / 28) = 3 -> 84
    assert qwen_smart_resize(30, 40) == (56, 84)
    with pytest.raises(ValueError, match="at least 28 pixels"):
        qwen_smart_resize(10, 400)
    with pytest.raises(ValueError, match="aspect ratio 300 exceeds 200"):
        qwen_smart_resize(28, 8400)


def test_coordinate_spaces_map_to_and_from_the_screen() -> None:
    qwen = CoordinateSpace("qwen2_5_vl")
    assert qwen.image_size(360, 720) == (364, 728)
    # the middle of the resized image is the middle of the screen
    assert qwen.to_screen(182, 364, 360, 720) == (180, 360)
    assert qwen.from_screen(180, 360, 360, 720) == (182, 364)
    grid = CoordinateSpace("relative_1000")
    assert grid.to_screen(500, 500, 360, 720) == (180, 360)
    assert grid.to_screen(1000, 1000, 360, 720) == (359, 719)  # clamped onto the screen
    assert grid.from_screen(359, 719, 360, 720) == (997, 999)
    assert CoordinateSpace().to_screen(17, 23, 360, 720) == (17, 23)
    with pytest.raises(ValueError, match="coordinate space must be one of"):
        CoordinateSpace("pixels")


# ---------------------------------------------------------------- the expert by coordinates


def _play(env: gym.Env, task: str) -> tuple[bool, list[str]]:
    observation, info = env.reset(seed=0, options={"task": task})
    agent = ScreenshotOracleAgent(env)
    actions, done = [], False
    while not done:
        action = agent.act(observation, info)
        actions.append(action.to_string())
        observation, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    return bool(info.get("success")), actions


@pytest.mark.parametrize(
    ("env_id", "count"), [("GuiGym/WikiHow-v0", 30), ("GuiGym/AndroidWorld-v0", 116)]
)
def test_the_pixel_expert_solves_every_task_sampled(env_id: str, count: int) -> None:
    env = gym.make(env_id, max_steps=40)
    tasks = env.unwrapped.task_ids[:count]
    for task in tasks:
        success, actions = _play(env, task)
        assert success, (task, actions)
        for text in actions:
            action = parse_action(text)
            # no element index: every target is a point (a typed text goes to the focus)
            assert action.index is None and action.end_index is None, (task, text)
    env.close()


def test_the_pixel_expert_solves_miniwob_tasks_in_chromium() -> None:
    from tests.conftest import require

    require("selenium", "miniwob")
    env = gym.make("GuiGym/MiniWoB-v0", max_steps=20)
    try:
        for task in ("click-button", "enter-text", "login-user", "click-checkboxes"):
            success, actions = _play(env, task)
            assert success, (task, actions)
            assert any(a.startswith("CLICK_XY(") for a in actions)
    finally:
        env.close()


# --------------------------------------------------------------------------- the LLM agent


def _observation(height: int = 720, width: int = 360) -> dict:
    return {
        "instruction": "open the menu",
        "screen": "<button id=0 clickable>Menu</button>",
        "screenshot": np.zeros((height, width, 3), np.uint8),
    }


def test_an_llm_agent_acts_in_its_image_space_and_the_env_gets_screen_pixels() -> None:
    llm = ScriptedLLM(lambda text: "<think>menu</think> <action>CLICK_XY(182, 364)</action>")
    agent = LLMAgent(llm, prompt="screenshot", screenshot=True, coordinates="qwen2_5_vl")
    [step] = agent.act_batch([_observation()], [{}])
    assert step.action == "CLICK_XY(180, 360)"
    # the prompt shows the image and no UI tree
    assert "<button" not in prompt_text(step.prompt)
    assert any(
        p.get("type") == "image"
        for m in step.prompt
        for p in m["content"]
        if isinstance(m["content"], list)
    )
    assert agent.to_model_action("CLICK_XY(180, 360)", _observation()["screenshot"]) == (
        "CLICK_XY(182, 364)"
    )
    drag = agent.to_screen_action("DRAG_XY(0, 0, 364, 728)", _observation())
    assert drag == "DRAG_XY(0, 0, 359, 719)"
    assert agent.to_screen_action("GOBACK()", _observation()) == "GOBACK()"
    with pytest.raises(ValueError, match="needs screenshot=True"):
        LLMAgent(llm, prompt="screenshot")
    with pytest.raises(ValueError, match="needs screenshot=True"):
        LLMAgent(llm, coordinates="relative_1000")


def test_sft_targets_of_a_pixel_dataset_are_written_in_the_models_space(tmp_path: Path) -> None:
    from gui_gym.envs.replay.dataset import ExpertDataset
    from gui_gym.runs.record import record_dataset
    from gui_gym.train.sft import build_examples

    record_dataset(
        "GuiGym/WikiHow-v0",
        "oracle-xy",
        episodes=2,
        out=tmp_path / "data",
        screenshots=True,
        progress=False,
    )
    data = ExpertDataset.load(tmp_path / "data")
    agent = LLMAgent(
        ScriptedLLM(lambda t: ""), prompt="screenshot", screenshot=True, coordinates="relative_1000"
    )
    examples = build_examples(data.trajectories, agent)
    recorded = [s for t in data.trajectories for s in t.steps]
    assert len(examples) == len(recorded)
    clicks = 0
    for example, step in zip(examples, recorded, strict=True):
        target = parse_action(example.action)
        if step.action.type is ActionType.CLICK and step.action.x is not None:
            clicks += 1
            # screen pixels (360x720) -> the 0..1000 grid the model writes
            assert (target.x, target.y) == (
                round(step.action.x * 1000 / 360),
                round(step.action.y * 1000 / 720),
            )
        assert "<button" not in prompt_text(example.prompt)
        assert example.images  # the screenshot is in every prompt
    assert clicks


# --------------------------------------------------------------------------------- the CLI


def test_cli_refuses_a_screenshot_only_policy_without_screenshots(tmp_path: Path) -> None:
    from tests.rl_helpers import policy_folder

    model = policy_folder(tmp_path / "policy")
    result = runner.invoke(
        app,
        [
            "sft",
            "--dataset",
            str(tmp_path),
            "--model",
            str(model),
            "--out",
            str(tmp_path / "o"),
            "--prompt",
            "screenshot",
        ],
    )
    assert result.exit_code == 2
    assert "--prompt screenshot shows the policy only the screenshot: it needs --screenshot" in (
        result.output
    )
    result = runner.invoke(
        app,
        [
            "train",
            "--algo",
            "grpo",
            "--env",
            "GuiGym/WikiHow-v0",
            "--model",
            str(model),
            "--out",
            str(tmp_path / "r"),
            "--coordinates",
            "pixels",
        ],
    )
    assert result.exit_code == 2
    assert "--coordinates" in result.output and "qwen2_5_vl" in result.output
    assert not (tmp_path / "o").exists() and not (tmp_path / "r").exists()
