"""Token-exact multimodal samples (issue 29, items 1 and 6): a VLM step keeps its exact ids
(image placeholder tokens included) and content keys of the screenshots it showed; scoring
rebuilds the pixel inputs from those and gets the sampler's log-probs, and ids that do not fit
the images (a re-tokenised prompt, a processor that re-processes at another size) are refused.

Two architectures: a tiny LLaVA (CLIP tower, a fixed 16 tokens per image) and a tiny Qwen2-VL
(M-RoPE, a number of image tokens that depends on the screenshot's size), its processor the
image-only one of ``vision_inputs.load_processor`` (no torchvision here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gui_gym  # noqa: F401
from gui_gym.agents import LLMAgent
from gui_gym.core.trajectory import Trajectory
from gui_gym.models.llm import TransformersLLM
from gui_gym.models.llm.vision_inputs import (
    ImageStore,
    VisionMismatch,
    VisionRef,
    image_key,
    image_token_id,
    processor_settings,
    rebuild_inputs,
)
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine
from gui_gym.train.losses import TurnSample, score_completions, turns_from_trajectory
from tests.conftest import require
from tests.tiny_llm import tiny_llava, tiny_qwen2_vl

ENV = "GuiGym/WikiHow-v0"
ARCHS = {"llava": tiny_llava, "qwen2_vl": tiny_qwen2_vl}

# image tokens of the first test's six samples (prompts of 1, 3 and 2 screenshots, two samples
# each): LLaVA's 16 per image; Qwen2-VL's grid_h * grid_w / 4 of each screenshot's resize to
# multiples of 28 scaled up to min_pixels 4 * 28 * 28 (40x30 (HxW) -> 84x56: 6x4 patches, 6)
IMAGE_TOKENS = {"llava": [16, 16, 48, 48, 32, 32], "qwen2_vl": [6, 6, 18, 18, 12, 12]}


@pytest.fixture(scope="module", params=sorted(ARCHS))
def vlm(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> TransformersLLM:
    require("transformers", "llm")
    folder = tmp_path_factory.mktemp(f"vlm_{request.param}")
    ARCHS[request.param](folder)
    llm = TransformersLLM(Path(folder), device="cpu")
    llm.arch = request.param  # type: ignore[attr-defined]
    return llm


def _screens(seed: int, count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    # screens of different sizes: the processor resizes each to the tower's 32x32
    return [rng.integers(0, 256, (40 + 8 * i, 30 + 4 * i, 3), dtype=np.uint8) for i in range(count)]


def _prompt(images: list[np.ndarray]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": "click the button"}]
    parts += [{"type": "image", "image": i} for i in images]
    return [{"role": "user", "content": parts}]


def _turns(generations: list[Any]) -> list[TurnSample]:
    return [
        TurnSample(
            prompt_ids=g.prompt_ids,
            completion_ids=g.completion_ids,
            advantages=[0.0] * len(g.completion_ids),
            sampled_logprobs=g.logprobs,
            vision=g.vision,
        )
        for g in generations
    ]


def _score(vlm: TransformersLLM, turns: list[TurnSample]) -> list[np.ndarray]:
    import torch

    with torch.no_grad():
        scored = score_completions(
            vlm.model,
            turns,
            pad_id=vlm.tokenizer.pad_token_id,
            temperature=1.0,
            vision=(vlm.processor, vlm.image_store),
        )
    return [s.numpy() for s in scored]


def test_stored_ids_and_rebuilt_pixels_give_the_samplers_logprobs(vlm: TransformersLLM) -> None:
    import torch

    torch.manual_seed(0)
    prompts = [_prompt(_screens(1, 1)), _prompt(_screens(2, 3)), _prompt(_screens(3, 2))]
    rows = vlm.generate_with_tokens(prompts, max_new_tokens=6, temperature=1.0, n=2)
    generations = [g for row in rows for g in row]
    image_id = image_token_id(vlm.processor)
    counts = [g.prompt_ids.count(image_id) for g in generations]
    assert counts == IMAGE_TOKENS[vlm.arch]  # type: ignore[attr-defined]
    assert [len(g.vision["images"]) for g in generations] == [1, 1, 3, 3, 2, 2]
    for generation, scored in zip(generations, _score(vlm, _turns(generations))):
        np.testing.assert_allclose(scored, generation.logprobs, atol=1e-5, rtol=0)
    # the pixels matter: the same ids scored with another screenshot give other log-probs
    other = dict(generations[0].vision)
    other["images"] = [vlm.image_store.put(_screens(9, 1)[0])]
    [moved] = _score(vlm, _turns([_with_vision(generations[0], other)]))
    assert np.abs(moved - np.asarray(generations[0].logprobs)).max() > 1e-4


def _with_vision(generation: Any, vision: dict[str, Any]) -> Any:
    from dataclasses import replace

    return replace(generation, vision=vision)


def test_a_retokenised_prompt_is_refused_not_scored(vlm: TransformersLLM) -> None:
    [[generation]] = vlm.generate_with_tokens([_prompt(_screens(4, 2))], max_new_tokens=3)
    # what a trainer that re-tokenises the rendered text gets: one <image> per screenshot
    text = vlm.format_prompt(_prompt(_screens(4, 2)))
    retokenised = vlm.tokenizer(text, add_special_tokens=False)["input_ids"]
    assert retokenised != generation.prompt_ids
    turn = _turns([generation])[0]
    turn.prompt_ids = retokenised
    with pytest.raises(VisionMismatch, match="hold 2 image tokens but its 2 screenshot"):
        _score(vlm, [turn])
    # and a record claiming another number of screenshots than the ids show
    extra = dict(generation.vision, images=generation.vision["images"] * 2)
    with pytest.raises(VisionMismatch, match=r"hold \d+ image tokens but its 4 screenshot"):
        _score(vlm, _turns([_with_vision(generation, extra)]))


def test_a_processor_that_reprocesses_at_another_size_is_refused(
    vlm: TransformersLLM, tmp_path: Path
) -> None:
    from transformers import CLIPImageProcessor
    from transformers.models.qwen2_vl import Qwen2VLImageProcessorPil

    [[generation]] = vlm.generate_with_tokens([_prompt(_screens(5, 1))], max_new_tokens=3)
    processor = _copy_processor(vlm.processor)
    if vlm.arch == "llava":  # type: ignore[attr-defined]
        processor.image_processor = CLIPImageProcessor(
            size={"shortest_edge": 64}, crop_size={"height": 64, "width": 64}
        )
    else:  # Qwen2-VL at a larger minimum size: more image tokens for the same screenshot
        processor.image_processor = Qwen2VLImageProcessorPil(
            min_pixels=16 * 28 * 28, max_pixels=64 * 28 * 28, patch_size=14, merge_size=2
        )
    with pytest.raises(VisionMismatch, match=r"settings differ.*image_processor"):
        rebuild_inputs(processor, vlm.image_store, generation.vision, generation.prompt_ids)
    # unchanged settings rebuild the pixels the sampler used
    pixels = rebuild_inputs(
        vlm.processor, vlm.image_store, generation.vision, generation.prompt_ids
    )
    if vlm.arch == "llava":  # type: ignore[attr-defined]
        assert tuple(pixels["pixel_values"].shape) == (1, 3, 32, 32)
    else:  # a 40x30 screenshot resized to 84x56: 6x4 patches of 2x3x14x14, merged 2x2
        assert pixels["image_grid_thw"].tolist() == [[1, 6, 4]]
        assert tuple(pixels["pixel_values"].shape) == (24, 3 * 2 * 14 * 14)


def _copy_processor(processor: Any) -> Any:
    import copy

    return copy.copy(processor)


def test_vision_turns_without_the_processor_are_a_clear_error(vlm: TransformersLLM) -> None:
    [[generation]] = vlm.generate_with_tokens([_prompt(_screens(6, 1))], max_new_tokens=3)
    with pytest.raises(ValueError, match=r"vision=\(processor, image_store\)"):
        score_completions(vlm.model, _turns([generation]), pad_id=0)
    with pytest.raises(VisionMismatch, match=r"settings .* are not in the store"):
        rebuild_inputs(vlm.processor, ImageStore(), generation.vision, generation.prompt_ids)
    empty = ImageStore()
    empty.put_settings(processor_settings(vlm.processor))
    with pytest.raises(VisionMismatch, match="not in the image store"):
        rebuild_inputs(vlm.processor, empty, generation.vision, generation.prompt_ids)
    with pytest.raises(ValueError, match="vision record must be"):
        VisionRef.from_dict({"images": "abc", "settings": "x"})


def test_image_store_keeps_each_screenshot_once_by_content() -> None:
    store = ImageStore()
    a, b = _screens(7, 2)
    key = store.put(a)
    assert store.put(a.copy()) == key == image_key(a)
    assert store.put(b) != key and len(store) == 2
    assert store.nbytes == a.nbytes + b.nbytes
    assert not store.get(key).flags.writeable
    with pytest.raises(ValueError, match="HxWx3 uint8"):
        store.put(np.zeros((4, 4), np.float32))


def test_rollouts_with_three_earlier_screenshots_score_exactly_and_share_pixels(
    vlm: TransformersLLM,
) -> None:
    """UI-S1's prompt (current screenshot + 3 earlier ones) through the rollout engine: every
    step's stored ids and screenshot keys rebuild its log-probs; the store holds each screen
    once, so a step costs one screenshot, not four."""
    import torch

    torch.manual_seed(0)
    vlm.image_store = ImageStore()
    agent = LLMAgent(vlm, "ui_s1", screenshot=True, images=3, max_new_tokens=4, temperature=1.0)
    engine = RolloutEngine(
        ENV, agent, num_envs=2, env_kwargs={"split": "train", "screenshot": True, "max_steps": 5}
    )
    with engine:
        out = engine.run([EpisodeSpec(None, 0), EpisodeSpec(None, 1)])
    steps = [s for t in out for s in t.steps]
    assert len(steps) == 10
    assert [len(s.vision["images"]) for s in out[0].steps] == [1, 2, 3, 4, 4]
    for trajectory in out:
        turns = turns_from_trajectory(trajectory, [0.0] * len(trajectory.steps))
        for step, scored in zip(trajectory.steps, _score(vlm, turns)):
            np.testing.assert_allclose(scored, step.logprobs, atol=1e-5, rtol=0)
        # the record is JSON-safe and survives a round trip
        again = Trajectory.from_dict(trajectory.to_dict())
        assert again.steps[-1].vision == trajectory.steps[-1].vision
    shown = sum(len(s.vision["images"]) for s in steps)
    one = vlm.image_store.get(steps[0].vision["images"][0]).nbytes
    assert len(vlm.image_store) <= len(steps) + len(out)  # at most one new screen a step
    assert vlm.image_store.nbytes < 0.5 * shown * one  # shared, not a copy per prompt


def test_the_rl_trainer_loads_a_vlm_policy_and_scores_its_samples_exactly(
    tmp_path: Path,
) -> None:
    """The shared trainer path (every algorithm's scoring) with ``screenshot=True``: the
    policy loads with its processor, and Trainer.score rebuilds pixels for VLM samples."""
    require("peft", "llm")
    import torch

    from gui_gym.train import grpo
    from gui_gym.train.config import TrainConfig
    from gui_gym.train.trainer import Trainer
    from tests.rl_helpers import TASK, make_env

    tiny_llava(tmp_path / "vlm")
    settings = dict(out=str(tmp_path / "run"), device="cpu", progress=False, iterations=1)
    config = TrainConfig.for_algorithm(
        grpo.TRAIN_DEFAULTS, model=str(tmp_path / "vlm"), screenshot=True, images=1, **settings
    )
    trainer = Trainer(config, grpo.GRPO(make_env, [TASK], grpo.GRPOConfig()))
    assert trainer.policy.processor is not None and trainer.agent.images == 1
    torch.manual_seed(1)
    rows = trainer.agent.llm.generate_with_tokens(
        [_prompt(_screens(8, 2))], max_new_tokens=5, temperature=1.0, n=3
    )
    turns = _turns(rows[0])
    for turn, scored in zip(turns, trainer.score(trainer.policy.model, turns)):
        np.testing.assert_allclose(scored.numpy(), turn.sampled_logprobs, atol=1e-5, rtol=0)
    from tests.tiny_llm import tiny_gpt2, tiny_tokenizer

    tok = tiny_tokenizer()
    tiny_gpt2(len(tok)).save_pretrained(tmp_path / "text")
    tok.save_pretrained(tmp_path / "text")
    text = TrainConfig.for_algorithm(
        grpo.TRAIN_DEFAULTS, model=str(tmp_path / "text"), screenshot=True, **settings
    )
    with pytest.raises(ValueError, match="text-only model"):
        Trainer(text, grpo.GRPO(make_env, [TASK], grpo.GRPOConfig()))
    with pytest.raises(ValueError, match="needs screenshot=True"):
        TrainConfig(model="x", images=2)
