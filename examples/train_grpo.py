"""Step-level GRPO (ADMIRE Eq. 12-13) on WikiHow with the outcome + milestone reward.

One file, top to bottom: arguments, the policy, the env with its reward wrappers, the
algorithm, the loop. On CPU with ``--model tiny`` it builds a small random GPT-2 and runs in
minutes (it learns little from scratch: SFT it first, see ``gui-gym sft``); on CUDA point
``--model`` at a Hugging Face folder (bf16 is automatic) and raise the sizes::

    python examples/train_grpo.py --model tiny --iterations 3
    python examples/train_grpo.py --model /models/Qwen2.5-1.5B-Instruct --lora \\
        --group-size 8 --tasks-per-iteration 4 --iterations 200 --max-new-tokens 256

Multi-GPU on one node: the rollout engine and the update run in one process per GPU under
``accelerate launch`` only for data-parallel replicas of this script with different seeds;
sharded training of one model is not wired up (see docs/training.md).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import tyro

import gui_gym  # noqa: F401  (registers the GuiGym/* ids)
from gui_gym.train.config import TrainConfig
from gui_gym.train.grpo import GRPO, TRAIN_DEFAULTS, GRPOConfig
from gui_gym.train.reward_stack import RewardStack
from gui_gym.train.runner import build_tiny_policy, env_texts
from gui_gym.train.trainer import Trainer


@dataclass
class Args:
    model: str = "tiny"  # a Hugging Face folder, or "tiny" for a random GPT-2 built here
    env_id: str = "GuiGym/WikiHow-v0"
    split: str = "train"
    max_steps: int = 8
    reward: str = "outcome+0.3*milestone"  # ADMIRE: lambda0 = 0.3 (App. A.1.2)
    embedder: str = "hashing"  # "minilm" is the paper's SBERT; hashing needs no weights
    iterations: int = 3
    group_size: int = 8  # ADMIRE App. A.1.2
    tasks_per_iteration: int = 2  # ADMIRE uses 4
    learning_rate: float = 1e-5  # ADMIRE uses 1e-6 on 3B-7B models
    max_new_tokens: int = 48
    prompt: str = "admire"  # ADMIRE Figs. 17-19 (gui_gym.agents.prompts)
    lora: bool = False
    out: str = "runs/example_grpo"
    seed: int = 0


def main(args: Args) -> None:
    model = args.model
    if model == "tiny":
        model = str(build_tiny_policy(Path(tempfile.mkdtemp()) / "tiny", env_texts(args.env_id)))

    stack = RewardStack.from_text(
        args.reward, milestone_store=Path(args.out) / "milestones.json", embedder=args.embedder
    )

    def make_env() -> gym.Env:
        return stack.wrap(gym.make(args.env_id, split=args.split, max_steps=args.max_steps))

    probe = make_env()
    tasks = probe.unwrapped.task_ids
    algorithm = GRPO(
        make_env,
        tasks,
        GRPOConfig(group_size=args.group_size, tasks_per_iteration=args.tasks_per_iteration),
    )
    config = TrainConfig.for_algorithm(
        TRAIN_DEFAULTS,
        model=model,
        out=args.out,
        iterations=args.iterations,
        learning_rate=args.learning_rate,
        max_new_tokens=args.max_new_tokens,
        lora=args.lora,
        seed=args.seed,
    )

    def refine(groups: list, iteration: int) -> None:
        # ADMIRE Algorithm 1: refine once per batch, score the whole batch with one version
        stack.refine_milestones(probe, groups, epoch=iteration)

    trainer = Trainer(config, algorithm, prompt=args.prompt, on_batch=refine)
    for metrics in trainer.train():
        print(
            f"iteration {metrics['iteration']}: success {metrics['success_rate']:.2f} "
            f"return {metrics['mean_return']:.3f} turns {metrics['turns']}"
        )
    print(f"weights in {Path(args.out) / 'model'}")


if __name__ == "__main__":
    main(tyro.cli(Args))
