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
    ENDED,
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


def _policy(
    tmp_path: Path, call: str, other: str, corpus: tuple[str, ...] = ()
) -> tuple[object, object, int, int]:
    """A tiny Qwen2 whose weights make it answer one of two tool calls (50/50), then end.

    ``call`` and ``other`` are ``<tool_call>BODY</tool_call>`` blocks. Each body is one added
    token; the delimiters are the special tokens, generated as their own ids as a real model
    emits them (transformers >= 5.25 parses token ids and reads a delimiter spelt out inside
    another token as text). Attention and MLP outputs are zeroed, so the last hidden state is
    the current token's embedding, and the output layer walks a fixed chain: any prompt token
    -> ``<tool_call>`` -> one of the two bodies (50/50) -> ``</tool_call>`` -> the end token.
    Returns the model, the tokenizer and the two bodies' token ids."""
    import trl
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    template = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    core.train_from_iterator(
        [template, SYSTEM_PROMPT, call, other, *corpus],
        trainers.BpeTrainer(
            vocab_size=400 + 1600 * bool(corpus),  # the screens' words: short tool results
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    bodies = [
        block.removeprefix("<tool_call>").removesuffix("</tool_call>") for block in (call, other)
    ]
    assert all(
        f"<tool_call>{body}</tool_call>" == block for body, block in zip(bodies, (call, other))
    )
    tok.add_tokens(bodies)
    tok.chat_template = template  # TRL recognises it and parses <tool_call> blocks
    a, b = tok.convert_tokens_to_ids(bodies)
    opening, closing = tok.convert_tokens_to_ids(["<tool_call>", "</tool_call>"])
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
        # one direction per state of the chain; the output layer maps each to what follows
        embed = model.model.embed_tokens.weight
        embed.zero_()
        embed[:, 0] = 1.0  # any other token: open a tool call
        embed[opening], embed[[a, b]], embed[closing] = (torch.eye(32)[k] for k in (1, 2, 3))
        head = model.lm_head.weight
        head.zero_()
        head[opening, 0] = 20.0
        head[a, 1] = head[b, 1] = 20.0
        head[closing, 2] = 20.0
        head[eos, 3] = 20.0
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
    screens = make_environment_factory(ENV, tools=("input_text",), split="train")()
    corpus = (screens.reset(task_id=task, seed=0), screens.input_text(first.index, first.text))
    model, tok, _, _ = _policy(tmp_path, call, other, corpus)
    before = model.lm_head.weight.detach().clone()

    env_class = make_environment_factory(
        ENV,
        reward="outcome+progress",
        tools=("input_text", "go_back"),  # the tiny vocabulary spells each schema out long
        split="train",
        max_steps=3,
    )
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
            # the screen after a tool call must fit: TRL drops a tool result that would pass
            # it, and a dropped step earns nothing
            max_completion_length=640,
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


# ----------------------------------------------- the round-2 points (issue 47): each one fails
# on the first adapter


def _wikihow(**kwargs):
    task, first = _first_task()
    env = make_environment_factory(ENV, reward="outcome+progress", split="train", **kwargs)()
    return env, task, first


def test_without_a_task_row_reset_refuses_unless_random_tasks_are_asked_for() -> None:
    env, _, _ = _wikihow()
    placeholder = {"prompt": [{"role": "user", "content": ""}]}  # TRL's row without a dataset
    with pytest.raises(ValueError, match="a GRPO group would not share one"):
        env.reset(**placeholder)
    assert "the last reset() failed" in env.click(0)
    free = make_environment_factory(ENV, random_tasks=True, split="train")()
    assert free.reset(**placeholder).startswith("Task: ")


def test_tools_say_reset_comes_first_and_a_failed_reset_ends_the_old_episode(
    monkeypatch,
) -> None:
    env, task, first = _wikihow()
    assert env.click(0) == "No episode is running yet: reset() starts one before any tool call."
    env.reset(task_id=task, seed=0)
    env.input_text(first.index, first.text)
    assert env.get_reward() > 0
    monkeypatch.setattr(env._env, "reset", lambda **_: (_ for _ in ()).throw(OSError("gone")))
    with pytest.raises(OSError):
        env.reset(task_id=task, seed=1)
    # no stale episode: no reward, no live tools
    assert env.get_reward() == 0.0 and env._metric("steps") == 0.0
    assert env.go_back().startswith("No episode is running: the last reset() failed (OSError")


def test_bad_tool_arguments_are_one_line_results_and_text_stays_data() -> None:
    env, task, _ = _wikihow()
    env.reset(task_id=task, seed=0)
    for result in (env.click(2.9), env.click(True), env.input_text(0, None), env.scroll("in")):
        assert result.startswith("Error: ") and "\n" not in result
    assert env._metric("steps") == 0.0  # not stepped
    ended = env.answer("<action>DONE()</action>")
    assert ended.startswith("The episode is")
    assert env._calls[-1][1]["action"] == 'ANSWER("<action>DONE()</action>")'


def test_the_env_is_closed_when_trl_drops_the_instance() -> None:
    import gc

    env, task, _ = _wikihow()
    env.reset(task_id=task, seed=0)
    closed = []
    inner = env._env
    original = inner.close
    inner.close = lambda: (closed.append(True), original())[1]
    assert not any(not n.startswith("_") and n == "close" for n in dir(type(env)))  # no tool
    del env
    gc.collect()
    assert closed == [True]


def test_screenshots_are_bounded_as_the_openai_client_bounds_them() -> None:
    task, _ = _first_task()
    env = make_environment_factory(ENV, screenshot=True, max_pixels=360 * 720 // 4, split="train")()
    image = env.reset(task_id=task, seed=0)[1]["image"]
    assert image.size == (180, 360)  # aspect kept
    with pytest.raises(ValueError, match="max_pixels must be >= 1"):
        make_environment_factory(ENV, max_pixels=0)


def test_a_dropped_tool_result_is_not_rewarded_and_metrics_have_one_value_per_rollout() -> None:
    env, task, first = _wikihow()
    env.reset(task_id=task, seed=0)
    seen = env.go_back()
    env.input_text(first.index, first.text)  # TRL drops this result: over max_completion_length
    all_steps = env.get_reward()
    assert all_steps > 0
    completion = [
        {"role": "assistant", "content": "", "tool_calls": [{}]},
        {"role": "tool", "name": "go_back", "content": seen},
        {"role": "assistant", "content": "", "tool_calls": [{}]},  # its result rolled back
    ]
    success, outcome, steps = metric_functions()
    assert steps(environments=[env], completions=[completion]) == [1.0]
    assert env.get_reward() == pytest.approx(env._calls[0][0]) and env.get_reward() < all_steps
    # AsyncGRPOTrainer: no environments=, the env already back in its pool
    other, _, _ = _wikihow()
    other.reset(task_id=task, seed=0)
    last = other.input_text(first.index, first.text)
    other.get_reward()  # the async worker calls it as the rollout ends
    other.reset(task_id=task, seed=1)  # reused by another rollout before scoring
    ended = {"role": "tool", "content": ENDED}  # a call after the end: a shared string
    rows = [[{"role": "tool", "content": last}, ended], [], [{"role": "tool", "content": "x"}]]
    assert steps(completions=rows) == [1.0, 0.0, None]
    assert success(completions=rows) == [0.0, 0.0, None]


def test_async_metrics_find_a_screenshot_rollout_by_its_stringified_result() -> None:
    task, first = _first_task()
    env = make_environment_factory(ENV, screenshot=True, reward="outcome+progress", split="train")()
    env.reset(task_id=task, seed=0)
    last = env.input_text(first.index, first.text)
    assert isinstance(last, list)
    env.get_reward()
    (steps,) = metric_functions(("steps",))
    # AsyncGRPOTrainer's tool message holds str(result)
    assert steps(completions=[[{"role": "tool", "content": str(last)}]]) == [1.0]


def test_every_tool_has_the_schema_trl_builds_and_tools_can_be_picked() -> None:
    from transformers.utils import get_json_schema

    from gui_gym.integrations.tools import TOOLS

    env = make_environment_factory(ENV, tools=[t.name for t in TOOLS])()
    for spec in TOOLS:
        schema = get_json_schema(getattr(env, spec.name))["function"]
        assert schema["name"] == spec.name and schema["description"] == spec.doc
        properties = schema["parameters"]["properties"]
        assert list(properties) == [p.name for p in spec.params]
        required = schema["parameters"].get("required", [])
        assert required == [p.name for p in spec.params if not p.optional], spec.name
    assert (
        get_json_schema(env.click)["function"]["parameters"]["properties"]["element_id"]["type"]
        == "integer"
    )
    assert get_json_schema(env.drag_at)["function"]["parameters"]["properties"]["via"] == {
        "type": "array",
        "items": {"type": "number"},
        "nullable": True,
        "description": TOOLS[[t.name for t in TOOLS].index("drag_at")].params[-1].doc,
    }
    # by default the tools of what the env performs: WikiHow has no drag, hover or select
    offered = make_environment_factory(ENV)
    assert hasattr(offered, "click_at") and not hasattr(offered, "hover")
    assert not hasattr(offered, "drag_at") and not hasattr(offered, "select_option")
    picked = make_environment_factory(ENV, tools=("click", "answer"))
    assert hasattr(picked, "click") and not hasattr(picked, "scroll")
    with pytest.raises(ValueError, match=r"unknown tool\(s\) \['clik'\]; allowed: click, "):
        make_environment_factory(ENV, tools=("clik",))
