"""ARPO (Lu et al. 2025) on WikiHow: trajectory-level GRPO on the task outcome, with a replay
buffer of successful episodes mixed into groups that have none (GUI-Shepherd's ORM baseline,
Table 1 and App. B.3: one task per iteration, a group of 8 episodes).

One file, top to bottom: arguments, the policy, the env (the outcome reward, plus the
per-step format reward of GUI-Shepherd's ORM runs with ``--reward outcome+format``), the
algorithm, the loop. On CPU with ``--model tiny`` it builds a small random GPT-2 and runs in
minutes (it learns little from scratch: SFT it first, see ``gui-gym sft``); on CUDA point
``--model`` at a Hugging Face folder (bf16 is automatic)::

    python examples/train_arpo.py --model tiny --iterations 3
    python examples/train_arpo.py --model runs/sft/model --iterations 200 --max-steps 15

The same run from the command line: ``gui-gym train --algo arpo --env GuiGym/WikiHow-v0
--model runs/sft/model --reward outcome+format``.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import tyro

import gui_gym  # noqa: F401  (registers the GuiGym/* ids)
from gui_gym.train.arpo import ARPO, TRAIN_DEFAULTS, ARPOConfig
from gui_gym.train.config import TrainConfig
from gui_gym.train.reward_stack import RewardStack
from gui_gym.train.runner import build_tiny_policy, env_texts
from gui_gym.train.trainer import Trainer


@dataclass
class Args:
    model: str = "tiny"  # a Hugging Face folder, or "tiny" for a random GPT-2 built here
    env_id: str = "GuiGym/WikiHow-v0"
    split: str = "train"
    max_steps: int = 8  # GUI-Shepherd caps episodes at 15 steps (App. B.2)
    reward: str = "outcome+format"  # the ORM reward of GUI-Shepherd's baselines (App. B.2)
    iterations: int = 3
    group_size: int = 8  # GUI-Shepherd App. B.3
    tasks_per_iteration: int = 1  # GUI-Shepherd App. B.3
    replay_capacity: int = 4  # successes kept per task
    learning_rate: float = 1e-5  # GUI-Shepherd's actor uses 1e-6 on a 7B model
    max_new_tokens: int = 48
    prompt: str = "gui_shepherd"  # gui_gym.agents.prompts
    lora: bool = False
    out: str = "runs/example_arpo"
    seed: int = 0


def main(args: Args) -> None:
    model = args.model
    if model == "tiny":
        model = str(build_tiny_policy(Path(tempfile.mkdtemp()) / "tiny", env_texts(args.env_id)))

    stack = RewardStack.from_text(args.reward)

    def make_env() -> gym.Env:
        return stack.wrap(gym.make(args.env_id, split=args.split, max_steps=args.max_steps))

    probe = make_env()
    tasks = probe.unwrapped.task_ids
    probe.close()
    algorithm = ARPO(
        make_env,
        tasks,
        ARPOConfig(
            group_size=args.group_size,
            tasks_per_iteration=args.tasks_per_iteration,
            replay_capacity=args.replay_capacity,
        ),
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
    trainer = Trainer(config, algorithm, prompt=args.prompt)
    for metrics in trainer.train():
        print(
            f"iteration {metrics['iteration']}: success {metrics['success_rate']:.2f} "
            f"return {metrics['mean_return']:.3f} turns {metrics['turns']} "
            f"replayed groups {metrics['replayed_groups']} "
            f"buffer {metrics['replay_buffer_episodes']}"
        )
    print(f"weights in {Path(args.out) / 'model'}")


if __name__ == "__main__":
    main(tyro.cli(Args))
