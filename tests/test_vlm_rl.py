"""RL with a VLM policy (issue 29, item 3): GRPO, RLOO, ARPO and REINFORCE++ on the one-step env of tests/rl_helpers.py
with the screenshot in the prompt raises a tiny LLaVA's probability of the right action; every
update scores the sampled ids with pixels rebuilt from the sampler's image store."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from tests.conftest import require

torch = require("torch", "llm")
torch.set_num_threads(1)

from gui_gym.train import arpo, grpo, reinforce_pp  # noqa: E402
from gui_gym.train.core import TrainConfig, Trainer, TurnSample  # noqa: E402
from tests.rl_helpers import ACTIONS, PROMPT, RIGHT, TASK, make_env  # noqa: E402

SCREEN = np.random.default_rng(0).integers(0, 256, (48, 40, 3), dtype=np.uint8)
TEMPLATE = (
    "{% for m in messages %}{% for p in m['content'] %}{% if p['type'] == 'image' %}"
    "<image>\n{% else %}{{ p['text'] }}\n{% endif %}{% endfor %}{% endfor %}"
)


class _WithScreenshot(gym.Wrapper):
    """The one-step env with a fixed screenshot in every observation."""

    def reset(self, **kwargs: Any) -> Any:
        observation, info = self.env.reset(**kwargs)
        return {**observation, "screenshot": SCREEN}, info

    def step(self, action: Any) -> Any:
        observation, *rest = self.env.step(action)
        return ({**observation, "screenshot": SCREEN}, *rest)


def make_screenshot_env() -> Any:
    return _WithScreenshot(make_env())


def screenshot_prompt(prompt_input: Any) -> list[dict[str, Any]]:
    content = [
        {"type": "image", "image": prompt_input.screenshot},
        {"type": "text", "text": PROMPT},
    ]
    return [{"role": "user", "content": content}]


def vlm_folder(path: Path) -> Path:
    """A tiny LLaVA whose tokenizer has one token per line (so an action is one token)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    specials = ["<pad>", "<eos>", "<unk>", "<image>"]
    vocab = {w: i for i, w in enumerate(specials + ACTIONS + [PROMPT])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("\n"), behavior="removed")
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token="<pad>",
        eos_token="<eos>",
        unk_token="<unk>",
        extra_special_tokens={"image_token": "<image>"},
    )
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(
            size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
        ),
        tokenizer=tokenizer,
        patch_size=8,
        vision_feature_select_strategy="default",
        chat_template=TEMPLATE,
        num_additional_image_tokens=1,
    )
    torch.manual_seed(0)
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=32,
            patch_size=8,
            projection_dim=32,
        ),
        text_config=LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=256,
            pad_token_id=0,
            eos_token_id=1,
            bos_token_id=1,
        ),
        image_token_id=vocab["<image>"],
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    LlavaForConditionalGeneration(config).save_pretrained(path)
    processor.save_pretrained(path)
    return path


def right_action_logprob(trainer: Trainer) -> float:
    """log p(RIGHT | the screenshot prompt), scored through the trainer's VLM path."""
    llm = trainer.agent.llm
    prompt = screenshot_prompt(type("P", (), {"screenshot": SCREEN})())
    [[generation]] = llm.generate_with_tokens([prompt], max_new_tokens=1)
    right = llm.tokenizer.convert_tokens_to_ids(RIGHT)
    turn = TurnSample(generation.prompt_ids, [right], [0.0], vision=generation.vision)
    return float(trainer.score(trainer.policy.model, [turn])[0].sum())


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return vlm_folder(tmp_path_factory.mktemp("vlm_policy") / "tiny")


def _algorithm(name: str) -> tuple[Any, dict[str, Any]]:
    env = make_screenshot_env
    if name == "grpo":
        return grpo.GRPO(env, [TASK], grpo.GRPOConfig(tasks_per_iteration=1)), grpo.TRAIN_DEFAULTS
    if name == "rloo":
        config = grpo.GRPOConfig(tasks_per_iteration=1, level="episode", baseline="rloo")
        return grpo.GRPO(env, [TASK], config), grpo.TRAIN_DEFAULTS
    if name == "arpo":
        return arpo.ARPO(env, [TASK], arpo.ARPOConfig()), arpo.TRAIN_DEFAULTS
    config = reinforce_pp.ReinforcePPConfig(tasks_per_iteration=8)
    return reinforce_pp.ReinforcePP(env, [TASK], config), reinforce_pp.TRAIN_DEFAULTS


@pytest.mark.parametrize("name", ["grpo", "rloo", "arpo", "reinforce_pp"])
def test_rl_raises_a_vlms_probability_of_the_right_action(
    name: str, folder: Path, tmp_path: Path
) -> None:
    settings = dict(
        model=str(folder),
        out=str(tmp_path),
        iterations=8,
        learning_rate=2e-2,
        update_epochs=1,
        mini_batch_turns=8,
        micro_batch_turns=4,
        max_new_tokens=1,
        device="cpu",
        progress=False,
        save_every=100,
        screenshot=True,
    )
    algorithm, defaults = _algorithm(name)
    config = TrainConfig.for_algorithm(defaults, **settings)
    trainer = Trainer(config, algorithm, prompt=screenshot_prompt)
    before = math.exp(right_action_logprob(trainer))
    metrics = trainer.train()
    after = math.exp(right_action_logprob(trainer))
    assert before < 0.3
    assert after > max(0.5, 2 * before), (name, before, after)
    updated = [m for m in metrics if m["turns"]]
    assert updated and all(math.isfinite(m["pg_loss"]) for m in updated)
    assert trainer.agent.llm.image_store.nbytes < 2 * SCREEN.nbytes + 4096  # one screen kept
