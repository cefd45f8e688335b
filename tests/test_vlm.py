"""The vision path: a tiny vision-language model built from a config (no download) reads the
screenshots an LLMAgent puts in its prompt; servers get them as base64 data URLs."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gui_gym  # noqa: F401
from gui_gym.agents import LLMAgent
from gui_gym.models.llm import OpenAICompatLLM, TransformersLLM
from gui_gym.models.llm.stub_server import StubChatServer
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine
from tests.conftest import require
from tests.tiny_llm import tiny_llava

ENV = "GuiGym/WikiHow-v0"
IMAGE_TOKENS = 16  # (32 / 8) ** 2 patches of the tiny CLIP tower


@pytest.fixture(scope="module")
def vlm(tmp_path_factory: pytest.TempPathFactory) -> TransformersLLM:
    require("transformers", "llm")
    folder = tmp_path_factory.mktemp("vlm")
    tiny_llava(folder)
    return TransformersLLM(Path(folder), device="cpu")


def test_a_folder_with_a_processor_loads_as_a_vision_language_model(vlm: TransformersLLM) -> None:
    assert vlm.processor is not None
    black = np.zeros((64, 48, 3), np.uint8)
    white = np.full((64, 48, 3), 255, np.uint8)

    def prompt(image: np.ndarray) -> list[dict[str, Any]]:
        parts = [{"type": "text", "text": "click the button"}, {"type": "image", "image": image}]
        return [{"role": "user", "content": parts}]

    [[a], [b]] = vlm.generate_with_tokens([prompt(black), prompt(white)], max_new_tokens=4)
    image_id = vlm.tokenizer.convert_tokens_to_ids("<image>")
    assert a.prompt_ids.count(image_id) == IMAGE_TOKENS
    assert a.prompt_ids == b.prompt_ids  # same text: only the pixels differ
    assert a.logprobs != b.logprobs  # the model sees the pixels


def test_agent_shows_the_current_and_two_earlier_screenshots(vlm: TransformersLLM) -> None:
    agent = LLMAgent(vlm, "ui_s1", screenshot=True, images=2, max_new_tokens=3)
    engine = RolloutEngine(
        ENV, agent, num_envs=2, env_kwargs={"split": "train", "screenshot": True, "max_steps": 4}
    )
    with engine:
        out = engine.run([EpisodeSpec(None, 0), EpisodeSpec(None, 1)])
    image_id = vlm.tokenizer.convert_tokens_to_ids("<image>")
    for trajectory in out:
        assert trajectory.infra_error is None and len(trajectory.steps) == 4
        counts = [s.prompt_ids.count(image_id) // IMAGE_TOKENS for s in trajectory.steps]
        assert counts == [1, 2, 3, 3]
        kinds = [p["type"] for p in trajectory.steps[3].prompt[1]["content"]]
        assert kinds.count("image") == 3  # stored as placeholders, not pixels


def test_images_without_a_processor_are_a_clear_error() -> None:
    require("transformers", "llm")
    from tests.tiny_llm import tiny_gpt2, tiny_tokenizer

    tok = tiny_tokenizer()
    llm = TransformersLLM(tiny_gpt2(len(tok)), tok, device="cpu")
    image = [{"type": "image", "image": np.zeros((4, 4, 3), np.uint8)}]
    with pytest.raises(ValueError, match="no processor"):
        llm.generate([[{"role": "user", "content": image}]])


def test_servers_get_screenshots_as_base64_png_data_urls() -> None:
    from PIL import Image

    server = StubChatServer(latency=0.0)
    with server.running() as url:
        llm = OpenAICompatLLM("stub", url)
        agent = LLMAgent(llm, screenshot=True)
        with RolloutEngine(
            ENV,
            agent,
            num_envs=1,
            env_kwargs={"split": "train", "screenshot": True, "max_steps": 1},
        ) as engine:
            [trajectory] = engine.run([EpisodeSpec(None, 0)])
    assert trajectory.infra_error is None
    parts = server.last_request["messages"][1]["content"]
    [image] = [p for p in parts if p["type"] == "image_url"]
    prefix = "data:image/png;base64,"
    assert image["image_url"]["url"].startswith(prefix)
    png = base64.b64decode(image["image_url"]["url"][len(prefix) :])
    with Image.open(io.BytesIO(png)) as decoded:
        width, height = decoded.size
    import gymnasium as gym

    env = gym.make(ENV, split="train", screenshot=True)
    observation, _ = env.reset(seed=0)
    assert (height, width) == observation["screenshot"].shape[:2]


def test_a_vlm_with_its_chat_template_off_names_that_setting(tmp_path: Path) -> None:
    require("transformers", "llm")
    tiny_llava(tmp_path)
    llm = TransformersLLM(tmp_path, device="cpu", use_chat_template=False)
    assert llm.processor is not None
    image = [{"type": "image", "image": np.zeros((4, 4, 3), np.uint8)}]
    with pytest.raises(ValueError, match="use_chat_template=False"):
        llm.generate([[{"role": "user", "content": image}]])
