"""PPO with GAE and a PRM-initialised critic (GUI-Shepherd Sec. 4.1, Algorithm 1) on WikiHow.

One file, top to bottom: arguments, the policy, the env with the PRM + format reward (Eq. 3),
the critic (initialised from a ``gui-gym train-prm`` folder when given), the loop.
``--model tiny`` runs on CPU in minutes; a Hugging Face folder runs in bf16 on CUDA::

    python examples/train_ppo.py --model tiny --iterations 3
    python examples/train_ppo.py --model runs/sft/model --prm-model runs/prm \\
        --critic-from-prm --tasks-per-iteration 8

Without ``--prm-model`` the PRM term is the rule-based reference judge (the env's expert and
milestones), and the critic starts as a copy of the policy with a zero head.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import tyro

import gui_gym  # noqa: F401  (registers the GuiGym/* ids)
from gui_gym.train.config import TrainConfig
from gui_gym.train.ppo import PPO, TRAIN_DEFAULTS, PPOConfig
from gui_gym.train.reward_stack import RewardStack
from gui_gym.train.runner import build_tiny_policy, env_texts
from gui_gym.train.trainer import Trainer


@dataclass
class Args:
    model: str = "tiny"
    env_id: str = "GuiGym/WikiHow-v0"
    split: str = "train"
    max_steps: int = 8  # GUI-Shepherd caps episodes at 15 steps (App. B.2)
    reward: str = "outcome+prm"
    prm_model: str | None = None  # gui-gym train-prm output
    critic_from_prm: bool = False  # GUI-Shepherd Algorithm 1: value model from the PRM
    iterations: int = 3
    tasks_per_iteration: int = 8  # GUI-Shepherd: 8 tasks, 8 trajectories per iteration
    learning_rate: float = 1e-5
    critic_learning_rate: float = 1e-5
    max_new_tokens: int = 48
    prompt: str = "gui_shepherd"  # GUI-Shepherd's policy format (gui_gym.agents.prompts)
    lora: bool = False
    out: str = "runs/example_ppo"
    seed: int = 0


def main(args: Args) -> None:
    model = args.model
    if model == "tiny":
        model = str(build_tiny_policy(Path(tempfile.mkdtemp()) / "tiny", env_texts(args.env_id)))
    stack = RewardStack.from_text(args.reward, prm_model=args.prm_model)

    def make_env() -> gym.Env:
        return stack.wrap(gym.make(args.env_id, split=args.split, max_steps=args.max_steps))

    tasks = make_env().unwrapped.task_ids
    critic_init = args.prm_model if args.critic_from_prm and args.prm_model else "policy"
    algorithm = PPO(
        make_env,
        tasks,
        PPOConfig(
            tasks_per_iteration=args.tasks_per_iteration,
            critic_learning_rate=args.critic_learning_rate,
            critic_init=critic_init,
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
            f"return {metrics['mean_return']:.3f} value loss {metrics.get('value_loss', 0.0):.4f}"
        )
    print(f"weights in {Path(args.out) / 'model'}")


if __name__ == "__main__":
    main(tyro.cli(Args))
