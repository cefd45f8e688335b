"""UI-S1 semi-online RL (Sec. 3.2-3.4) over recorded expert trajectories.

One file, top to bottom: arguments, the policy, the semi-online replay env (the policy keeps
its own history; mismatches are patched with the expert action within the budget), the
algorithm (dual-level advantages, dynamic sampling with resampling, token-level objective),
the loop. The bundled sample dataset runs on CPU in minutes with ``--model tiny``; record
your own with ``gui-gym record`` / ``gui-gym convert``::

    python examples/train_semi_online.py --model tiny --iterations 3
    python examples/train_semi_online.py --model runs/sft/model --dataset data/expert \\
        --group-size 8 --trajectories-per-iteration 32
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import tyro

from gui_gym.envs.replay import SAMPLE_DATASET, SemiOnlineReplayEnv
from gui_gym.envs.replay.dataset import ExpertDataset
from gui_gym.train.config import TrainConfig
from gui_gym.train.runner import build_tiny_policy
from gui_gym.train.semi_online import TRAIN_DEFAULTS, SemiOnline, SemiOnlineConfig
from gui_gym.train.trainer import Trainer


@dataclass
class Args:
    model: str = "tiny"
    dataset: str = str(SAMPLE_DATASET)
    patch: str = "thought_free"  # UI-S1's final choice (Table 5)
    epsilon: int = 1  # patch budget (UI-S1 ablation)
    iterations: int = 3
    group_size: int = 4
    trajectories_per_iteration: int = 4  # UI-S1: 32
    eta: float = 0.3  # dynamic-sampling threshold (Table 9)
    learning_rate: float = 1e-5  # UI-S1: 1e-6 on a 7B model
    max_new_tokens: int = 48
    prompt: str = "ui_s1"  # UI-S1's system prompt (gui_gym.agents.prompts)
    lora: bool = False
    out: str = "runs/example_semi_online"
    seed: int = 0


def main(args: Args) -> None:
    dataset = ExpertDataset.load(args.dataset)
    model = args.model
    if model == "tiny":
        texts = [t.instruction for t in dataset] + [str(s.action) for t in dataset for s in t.steps]
        model = str(build_tiny_policy(Path(tempfile.mkdtemp()) / "tiny", texts))

    def make_env() -> SemiOnlineReplayEnv:
        return SemiOnlineReplayEnv(dataset, patch=args.patch, epsilon=args.epsilon)

    algorithm = SemiOnline(
        make_env,
        list(range(len(dataset))),
        SemiOnlineConfig(
            group_size=args.group_size,
            trajectories_per_iteration=args.trajectories_per_iteration,
            eta=args.eta,
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
            f"iteration {metrics['iteration']}: return {metrics['mean_return']} "
            f"groups kept {metrics['episodes']} dropped so far {algorithm.dropped_groups}"
        )
    print(f"weights in {Path(args.out) / 'model'}")


if __name__ == "__main__":
    main(tyro.cli(Args))
