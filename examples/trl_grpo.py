"""TRL's GRPOTrainer on a gui-gym env, with gui-gym's reward stack, in one file.

TRL (>= 1.16) runs multi-turn rollouts itself when given an ``environment_factory``: each
rollout gets an env instance, ``reset(**row)`` fills the first user turn, the model calls the
env's methods as tools (click, input_text, scroll, go_back, answer, done, ...) and
``get_reward()`` scores the finished episode. ``gui_gym.integrations.trl`` builds that class
for any gui-gym id and any ``--reward`` expression of ``gui-gym train``
(``outcome+progress``, ``outcome+milestone``, ``outcome+prm``, ...); ``metric_functions``
logs success and reward components beside TRL's own metrics (weight 0: logged, not
optimised).

Without ``--model`` a tiny random Qwen2 (Qwen2.5's chat template, a tokenizer trained on the
template) is built from a config so the loop runs on CPU in a minute; it rarely writes a
well-formed tool call, so its rewards say nothing. With a local instruction model that
calls tools (Qwen2.5/Qwen3 instruct folders) it learns::

    python examples/trl_grpo.py                                        # tiny, CPU, a minute
    python examples/trl_grpo.py --model /models/Qwen3-0.6B --max-steps 200 \\
        --num-generations 8 --batch-size 8 --reward outcome+progress

On GPUs, TRL's vLLM paths and accelerate/DeepSpeed launch as usual (docs/engines.md)::

    accelerate launch examples/trl_grpo.py --model /models/Qwen3-4B --use-vllm --bf16

TRL's GRPO is episode-level: one reward per rollout, so ADMIRE's step-level advantages
(Eq. 13) and PPO's per-step credit stay in gui-gym's own trainer (``gui-gym train``).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import tyro


@dataclass
class Args:
    env_id: str = "GuiGym/WikiHow-v0"
    reward: str = "outcome+progress"
    split: str = "train"
    tasks: int = 8  # the first N tasks of the split (0: all)
    max_env_steps: int = 10
    model: str | None = None  # a local Hugging Face folder; None: a tiny random Qwen2
    max_steps: int = 2
    batch_size: int = 4
    num_generations: int = 4
    max_completion_length: int = 128
    max_tool_calling_iterations: int = 10
    learning_rate: float = 1e-5
    use_vllm: bool = False
    bf16: bool = False
    screenshot: bool = False
    out: str | None = None
    seed: int = 0


def tiny_qwen2(folder: Path) -> Path:
    """A random 2-layer Qwen2 with Qwen2.5's chat template, built from a config (no download)."""
    import torch
    import trl
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    from gui_gym.integrations.trl import SYSTEM_PROMPT

    template = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    core.train_from_iterator(
        [template, SYSTEM_PROMPT],
        trainers.BpeTrainer(
            vocab_size=500,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    tokenizer.chat_template = template
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(
        Qwen2Config(
            vocab_size=len(tokenizer),
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=8192,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
    )
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def main(args: Args) -> None:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOConfig, GRPOTrainer

    from gui_gym.integrations.trl import make_environment_factory, metric_functions, task_dataset

    out = Path(args.out or tempfile.mkdtemp(prefix="trl_grpo_"))
    model = args.model or str(tiny_qwen2(out / "tiny_model"))
    environment = make_environment_factory(
        args.env_id,
        reward=args.reward,
        screenshot=args.screenshot,
        split=args.split,
        max_steps=args.max_env_steps,
    )
    rows = task_dataset(args.env_id, split=args.split)
    if args.tasks:
        rows = rows.select(range(min(args.tasks, len(rows))))
    metrics = metric_functions(("success", "outcome", "steps"))
    trainer = GRPOTrainer(
        model=model,
        train_dataset=rows,
        environment_factory=environment,
        reward_funcs=metrics,
        args=GRPOConfig(
            output_dir=str(out / "run"),
            use_cpu=not args.use_vllm and not args.bf16,
            bf16=args.bf16,
            use_vllm=args.use_vllm,
            per_device_train_batch_size=args.batch_size,
            num_generations=args.num_generations,
            max_steps=args.max_steps,
            max_completion_length=args.max_completion_length,
            max_tool_calling_iterations=args.max_tool_calling_iterations,
            learning_rate=args.learning_rate,
            reward_weights=[0.0] * len(metrics),  # logged; the env's reward is optimised
            logging_steps=1,
            report_to=[],
            save_strategy="no",
            seed=args.seed,
        ),
    )
    trainer.train()
    for entry in trainer.state.log_history:
        if "reward" in entry:
            print(
                f"step {entry['step']}: reward {entry['reward']:.3f}, success "
                f"{entry['rewards/success/mean']:.2f}, steps {entry['rewards/steps/mean']:.1f}"
            )
    print(f"run folder: {out}")


if __name__ == "__main__":
    main(tyro.cli(Args))
