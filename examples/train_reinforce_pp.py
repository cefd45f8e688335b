"""REINFORCE++ (ProgRM Sec. 2.4) on WikiHow with the outcome + progress reward.

One file, top to bottom: arguments, the policy, the env with ProgRM's progress reward, the
algorithm (KL folded into token rewards, turn-level discount, global normalisation), the
loop. ``--model tiny`` runs on CPU in minutes; a Hugging Face folder runs in bf16 on CUDA::

    python examples/train_reinforce_pp.py --model tiny --iterations 3
    python examples/train_reinforce_pp.py --model runs/sft/model --tasks-per-iteration 32
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import tyro

import gui_gym  # noqa: F401  (registers the GuiGym/* ids)
from gui_gym.train.config import TrainConfig
from gui_gym.train.reinforce_pp import TRAIN_DEFAULTS, ReinforcePP, ReinforcePPConfig
from gui_gym.train.reward_stack import RewardStack
from gui_gym.train.runner import build_tiny_policy, env_texts
from gui_gym.train.trainer import Trainer


@dataclass
class Args:
    model: str = "tiny"  # a Hugging Face folder (ProgRM SFTs the actor first), or "tiny"
    env_id: str = "GuiGym/WikiHow-v0"
    split: str = "train"
    max_steps: int = 8
    reward: str = "outcome+progress"  # ProgRM-Env: progress from the env's milestones
    progress_model: str | None = None  # a ProgRM folder (gui-gym train-progress) instead
    iterations: int = 3
    tasks_per_iteration: int = 8
    reward_kl_coef: float = 0.01  # OpenRLHF's default; ProgRM states none
    learning_rate: float = 1e-5
    max_new_tokens: int = 48
    prompt: str = "progrm"  # ProgRM's actor prompt (gui_gym.agents.prompts)
    lora: bool = False
    out: str = "runs/example_reinforce_pp"
    seed: int = 0


def main(args: Args) -> None:
    model = args.model
    if model == "tiny":
        model = str(build_tiny_policy(Path(tempfile.mkdtemp()) / "tiny", env_texts(args.env_id)))
    stack = RewardStack.from_text(args.reward, progress_model=args.progress_model)

    def make_env() -> gym.Env:
        return stack.wrap(gym.make(args.env_id, split=args.split, max_steps=args.max_steps))

    tasks = make_env().unwrapped.task_ids
    algorithm = ReinforcePP(
        make_env,
        tasks,
        ReinforcePPConfig(
            tasks_per_iteration=args.tasks_per_iteration, reward_kl_coef=args.reward_kl_coef
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
            f"return {metrics['mean_return']:.3f} kl {metrics.get('kl', 0.0):.4f}"
        )
    print(f"weights in {Path(args.out) / 'model'}")


if __name__ == "__main__":
    main(tyro.cli(Args))
