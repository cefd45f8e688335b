"""Offline GRPO on recorded single-step states (GUI-Shepherd App. C).

One file, top to bottom: arguments, the policy, the replay env over the recorded dataset, the
algorithm (G actions sampled from each identical recorded state, rewarded by the oracle
type/argument match or by a PRM, normalised over the group), the loop::

    python examples/train_offline_grpo.py --model tiny --iterations 3
    python examples/train_offline_grpo.py --model runs/sft/model --dataset data/expert \\
        --reward prm --prm-model runs/prm
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import tyro

from gui_gym.envs.replay import SAMPLE_DATASET, SemiOnlineReplayEnv
from gui_gym.envs.replay.dataset import ExpertDataset
from gui_gym.train.config import TrainConfig
from gui_gym.train.offline_grpo import TRAIN_DEFAULTS, OfflineGRPO, OfflineGRPOConfig
from gui_gym.train.runner import build_tiny_policy
from gui_gym.train.trainer import Trainer


@dataclass
class Args:
    model: str = "tiny"
    dataset: str = str(SAMPLE_DATASET)
    reward: str = "oracle"  # or "prm" with --prm-model
    prm_model: str | None = None
    iterations: int = 3
    group_size: int = 8  # App. C
    states_per_iteration: int = 4  # App. C: batch 32
    learning_rate: float = 1e-5
    max_new_tokens: int = 48
    prompt: str = "gui_shepherd"  # GUI-Shepherd's policy format (gui_gym.agents.prompts)
    lora: bool = False
    out: str = "runs/example_offline_grpo"
    seed: int = 0


def main(args: Args) -> None:
    dataset = ExpertDataset.load(args.dataset)
    model = args.model
    if model == "tiny":
        texts = [t.instruction for t in dataset] + [str(s.action) for t in dataset for s in t.steps]
        model = str(build_tiny_policy(Path(tempfile.mkdtemp()) / "tiny", texts))
    prm = None
    if args.reward == "prm":
        from gui_gym.models.prm import TransformersPRM

        prm = TransformersPRM.load(args.prm_model)

    def make_env() -> SemiOnlineReplayEnv:
        return SemiOnlineReplayEnv(dataset, epsilon=0)

    algorithm = OfflineGRPO(
        make_env,
        OfflineGRPOConfig(
            group_size=args.group_size,
            states_per_iteration=args.states_per_iteration,
            reward=args.reward,
        ),
        prm=prm,
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
        print(f"iteration {metrics['iteration']}: mean step reward {metrics['mean_return']}")
    print(f"weights in {Path(args.out) / 'model'}")


if __name__ == "__main__":
    main(tyro.cli(Args))
