"""gui-gym envs in TRL's own GRPOTrainer loop (``environment_factory``), and the adapter's
parts: task rows, tools, the reward stack's episode reward, logged metrics, clear errors."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401
from tests.conftest import require

require("trl", "trl")
torch = require("torch", "llm")

from gui_gym.integrations.trl import (  # noqa: E402
    SYSTEM_PROMPT,
    make_environment_factory,
    metric_functions,
    task_dataset,
)
from gui_gym.train.reward_stack import RewardStack  # noqa: E402

ENV = "GuiGym/WikiHow-v0"


def _first_task() -> tuple[str, object]:
    env = gym.make(ENV, split="train")
    task = env.unwrapped.task_ids[0]
    env.reset(seed=0, options={"task": task})
    return task, env.unwrapped.oracle_action()


def test_an_episode_through_the_tools_earns_the_reward_stacks_return() -> None:
    task, first = _first_task()
    env_class = make_environment_factory(ENV, reward="outcome+progress", split="train", max_steps=3)
    env = env_class()  # zero arguments, as TRL builds it
    shown = env.reset(task_id=task, seed=0, prompt=[])
    assert shown.startswith("Task: ") and "Screen:\n<" in shown
    after = env.input_text(first.index, first.text)
    assert isinstance(after, str) and "Screen:" in after
    env.go_back()
    # the same actions straight through the reward stack
    stack = RewardStack.from_text("outcome+progress", embedder="hashing").wrap(
        gym.make(ENV, split="train", max_steps=3)
    )
    stack.reset(seed=0, options={"task": task})
    total = sum(stack.step(a)[1] for a in (first.to_string(), "GOBACK()"))
    assert env.get_reward() == pytest.approx(total) and total > 0
    ended = env.go_back()  # the third step hits the step limit
    assert "cut by the step limit" in ended
    assert env.click(0) == "The episode has ended; no more actions are taken."
    success, progress, steps = (
        f([env])[0] for f in metric_functions(("success", "progress", "steps"))
    )
    assert (success, steps) == (0.0, 3.0) and progress == pytest.approx(total)


def test_bad_arguments_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="unknown env id 'GuiGym/Wikihow-v0'"):
        make_environment_factory("GuiGym/Wikihow-v0")
    with pytest.raises(ValueError, match="unknown reward 'progres'"):
        make_environment_factory(ENV, reward="outcome+progres")
    with pytest.raises(ValueError, match="unknown metric"):
        metric_functions(("succes",))
    with pytest.raises(ValueError, match="seeds and repeat must be >= 1"):
        task_dataset(ENV, seeds=0)


def test_the_task_dataset_holds_a_row_per_task_and_seed() -> None:
    rows = task_dataset(ENV, split="test", seeds=2)
    env = gym.make(ENV, split="test")
    assert len(rows) == 2 * len(env.unwrapped.task_ids)
    assert rows[0]["task_id"] == env.unwrapped.task_ids[0] and rows[1]["seed"] == 1
    assert rows[0]["prompt"][0] == {"role": "system", "content": SYSTEM_PROMPT}


def test_a_screenshot_env_returns_an_image_block() -> None:
    task, _ = _first_task()
    env = make_environment_factory(ENV, screenshot=True, split="train")()
    blocks = env.reset(task_id=task, seed=0)
    assert [b["type"] for b in blocks] == ["text", "image"]
    assert blocks[1]["image"].size == (360, 720)


def test_a_missing_trl_is_a_dependency_error_naming_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "trl", None)
    with pytest.raises(gym.error.DependencyNotInstalled, match=r"gui-gym\[trl\]"):
        make_environment_factory(ENV)


# ------------------------------------------------------------------- TRL's own training loop


def _policy(tmp_path: Path, call: str, other: str) -> tuple[object, object, int, int]:
    """A tiny Qwen2 whose weights make it answer one of two tool calls (50/50), then end.

    Attention and MLP outputs are zeroed, so the last hidden state is the current token's
    embedding: after a tool-call token the output layer picks the end token, anywhere else
    one of the two tool calls (each an added token that decodes to the whole call)."""
    import trl
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    template = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    core.train_from_iterator(
        [template, SYSTEM_PROMPT, call, other],
        trainers.BpeTrainer(
            vocab_size=400,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    tok.add_tokens([call, other])
    tok.chat_template = template  # TRL recognises it and parses <tool_call> blocks
    a, b = tok.convert_tokens_to_ids(call), tok.convert_tokens_to_ids(other)
    eos = tok.eos_token_id
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
        eos_token_id=eos,
        pad_token_id=tok.pad_token_id,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = tok.pad_token_id
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        embed = model.model.embed_tokens.weight
        embed.zero_()
        embed[:, 1] = 1.0
        embed[[a, b]] = torch.tensor([1.0] + [0.0] * 31)
        head = model.lm_head.weight
        head.zero_()
        head[eos, 0] = 20.0
        head[a, 1] = head[b, 1] = 20.0
    return model, tok, a, b


@pytest.mark.timeout(300)
def test_grpo_trainer_trains_on_the_envs_rewards(tmp_path: Path) -> None:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from datasets import concatenate_datasets
    from trl import GRPOConfig, GRPOTrainer

    task, first = _first_task()
    call = (
        "<tool_call>\n"
        + json.dumps(
            {"name": "input_text", "arguments": {"element_id": first.index, "text": first.text}}
        )
        + "\n</tool_call>"
    )
    other = '<tool_call>\n{"name": "go_back", "arguments": {}}\n</tool_call>'
    model, tok, _, _ = _policy(tmp_path, call, other)
    before = model.lm_head.weight.detach().clone()

    env_class = make_environment_factory(ENV, reward="outcome+progress", split="train", max_steps=3)
    earned: list[float] = []

    class Recorded(env_class):  # type: ignore[misc, valid-type]
        def get_reward(self) -> float:
            earned.append(super().get_reward())
            return earned[-1]

    rows = task_dataset(ENV, split="train")
    rows = concatenate_datasets([rows.filter(lambda r: r["task_id"] == task)] * 8)
    metrics = metric_functions(("success", "progress"))
    trainer = GRPOTrainer(
        model=model,
        processing_class=tok,
        train_dataset=rows,
        environment_factory=Recorded,
        reward_funcs=metrics,
        args=GRPOConfig(
            output_dir=str(tmp_path / "out"),
            use_cpu=True,
            per_device_train_batch_size=8,
            num_generations=8,
            max_steps=2,
            max_completion_length=64,
            max_tool_calling_iterations=1,
            logging_steps=1,
            learning_rate=1e-2,
            reward_weights=[0.0] * len(metrics),  # logged, not optimised
            report_to=[],
            save_strategy="no",
            seed=0,
        ),
    )
    trainer.train()
    logged = [h for h in trainer.state.log_history if "reward" in h]
    assert len(logged) == 2 and len(earned) == 16
    for step, entry in enumerate(logged):
        mine = earned[8 * step : 8 * step + 8]
        # TRL's logged reward is the env's: the reward stack's return per rollout
        assert entry["reward"] == pytest.approx(sum(mine) / 8, abs=1e-6)
        assert entry["rewards/Recorded/mean"] == pytest.approx(sum(mine) / 8, abs=1e-6)
        assert entry["rewards/progress/mean"] == pytest.approx(sum(mine) / 8, abs=1e-6)
    assert any(r > 0 for r in earned) and any(r == 0 for r in earned)
    # rewards that differ within a group reached the loss: the policy moved
    assert not torch.equal(before, model.lm_head.weight.detach())
