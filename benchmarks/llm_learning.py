"""Learning evidence for the RL trainers: SFT, then RL with each algorithm and each reward.

1. A tiny GPT-2 (built from a config, BPE tokenizer trained on WikiHow text) is SFT'd
   (:func:`gui_gym.train.sft.train_sft`) on oracle trajectories of a small subset of WikiHow
   train tasks (the shortest ones), recorded with :func:`gui_gym.recording.record_dataset`.
2. From that SFT checkpoint, each arm trains with ``gui_gym.train.runner.make_trainer`` for
   ``--iterations`` iterations on the same train tasks, with ``--seeds`` seeds. Arms:
   every algorithm (outcome reward; UI-S1 and offline GRPO on the recorded dataset), and
   step-level GRPO with outcome alone against progress (ProgRM-Env), milestone (ADMIRE,
   refined once per batch) and PRM (the rule-based reference judge) rewards.
3. Every ``--eval-every`` iterations, greedy success rate on the train tasks and on held-out
   test-split tasks (never seen in SFT or RL).

Writes ``benchmarks/results/llm_learning.json`` and ``llm_learning.png``: success against
training iterations per arm (mean over seeds), with the SFT starting point.

Usage::

    nice -n 10 python benchmarks/llm_learning.py                  # every arm, 3 seeds
    python benchmarks/llm_learning.py --arms grpo:outcome grpo:outcome+progress --seeds 0
    python benchmarks/llm_learning.py --device cuda
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import tyro

ENV_ID = "GuiGym/WikiHow-v0"
REPLAY_ID = "GuiGym/SemiOnlineReplay-v0"

DEFAULT_ARMS = [
    "grpo:outcome",
    "grpo:outcome+progress",
    "grpo:outcome+milestone",
    "grpo:outcome+prm",
    "reinforce_pp:outcome",
    "ppo:outcome",
    "semi_online:replay",
    "offline_grpo:replay",
]


@dataclass
class Args:
    arms: list[str] = field(default_factory=lambda: list(DEFAULT_ARMS))
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    train_tasks: int = 6
    held_out_tasks: int = 6
    max_oracle_steps: int = 3  # the subset: tasks the oracle solves in at most this many steps
    max_steps: int = 5
    sft_epochs: int = 12
    sft_lr: float = 2e-3
    iterations: int = 10
    eval_every: int = 5
    group_size: int = 4
    learning_rate: float = 1e-3
    max_new_tokens: int = 24
    temperature: float = 1.0
    device: str = "cpu"
    embedder: str = "hashing"
    out: str = "benchmarks/results"
    work: str | None = None  # keep the SFT model and runs here (default: a temp folder)


def short_tasks(split: str, max_oracle_steps: int, count: int) -> list[str]:
    """The first ``count`` tasks of ``split`` (sorted ids) the oracle solves within
    ``max_oracle_steps`` steps."""
    import gymnasium as gym

    import gui_gym  # noqa: F401

    env = gym.make(ENV_ID, split=split, max_steps=max_oracle_steps)
    chosen = []
    for task in sorted(env.unwrapped.task_ids):
        env.reset(seed=0, options={"task": task})
        info: dict[str, Any] = {}
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
            done = terminated or truncated
        if info.get("success"):
            chosen.append(task)
        if len(chosen) == count:
            break
    env.close()
    return chosen


def success_rate(llm: Any, tasks: list[str], max_steps: int, max_new_tokens: int) -> float:
    """Greedy success of ``llm`` (the default agent prompt) on each task, seed 0."""
    import gymnasium as gym

    from gui_gym.agents.llm import LLMAgent
    from gui_gym.train.rollout import EpisodeSpec, RolloutEngine

    agent = LLMAgent(llm, temperature=0.0, max_new_tokens=max_new_tokens)
    engine = RolloutEngine(
        lambda: gym.make(ENV_ID, split="all", max_steps=max_steps), agent, num_envs=len(tasks)
    )
    try:
        episodes = engine.run([EpisodeSpec(task, 0) for task in tasks])
    finally:
        engine.close()
    clean = [t for t in episodes if t.infra_error is None]
    return sum(t.success for t in clean) / max(1, len(clean))


def run_arm(
    arm: str, seed: int, sft_model: Path, dataset: Path, tasks: dict[str, list[str]], args: Args
) -> dict[str, Any]:
    from gui_gym.models.llm import TransformersLLM
    from gui_gym.train.runner import make_trainer

    algo, reward = arm.split(":", 1)
    replay = reward == "replay"
    settings: dict[str, Any] = {
        "out": str(Path(args.work or tempfile.mkdtemp()) / f"{arm.replace(':', '_')}_{seed}"),
        "iterations": args.iterations,
        "seed": seed,
        "learning_rate": args.learning_rate,
        "max_new_tokens": args.max_new_tokens,
        "temperature": args.temperature,
        "device": args.device,
        "update_epochs": 1,
        "mini_batch_turns": 64,
        "micro_batch_turns": 8,
        "progress": False,
        "save_every": 1000,
    }
    if algo == "grpo":
        settings.update(group_size=args.group_size, tasks_per_iteration=2)
    elif algo in ("reinforce_pp", "ppo"):
        settings.update(tasks_per_iteration=2 * args.group_size)
    elif algo == "semi_online":
        settings.update(group_size=args.group_size, trajectories_per_iteration=2)
    elif algo == "offline_grpo":
        settings.update(group_size=args.group_size, states_per_iteration=4)
    trainer = make_trainer(
        algo,
        REPLAY_ID if replay else ENV_ID,
        model=sft_model,
        reward="outcome" if replay else reward,
        settings=settings,
        env_kwargs={"dataset": str(dataset)}
        if replay
        else {"split": "train", "max_steps": args.max_steps},
        tasks=None if replay else tasks["train"],
        embedder=args.embedder,
        resume=False,
    )
    llm = TransformersLLM(
        trainer.policy.model, trainer.policy.tokenizer, device=trainer.policy.device
    )
    curve = []

    def evaluate(iteration: int) -> None:
        curve.append(
            {
                "iteration": iteration,
                "train": success_rate(llm, tasks["train"], args.max_steps, args.max_new_tokens),
                "held_out": success_rate(
                    llm, tasks["held_out"], args.max_steps, args.max_new_tokens
                ),
            }
        )
        print(f"  {arm} seed {seed} iteration {iteration}: {curve[-1]}", flush=True)

    def on_iteration(metrics: dict[str, Any]) -> None:
        done = metrics["iteration"] + 1
        if done % args.eval_every == 0 or done == args.iterations:
            evaluate(done)

    started = time.perf_counter()
    history = trainer.train(on_iteration=on_iteration)
    return {
        "arm": arm,
        "seed": seed,
        "curve": curve,
        "rollout_success": [m["success_rate"] for m in history],
        "seconds": time.perf_counter() - started,
    }


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, split in zip(axes, ("train", "held_out")):
        for arm, summary in result["arms"].items():
            xs = [0] + [p["iteration"] for p in summary["mean_curve"]]
            ys = [result["sft"][split]] + [p[split] for p in summary["mean_curve"]]
            ax.plot(xs, ys, marker="o", label=arm)
        ax.set_title(f"{split.replace('_', '-')} tasks")
        ax.set_xlabel("RL iterations (from the SFT model)")
        ax.set_ylim(-0.05, 1.05)
    axes[0].set_ylabel("greedy success rate")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(args: Args) -> dict[str, Any]:
    import torch

    from gui_gym.models.llm import TransformersLLM
    from gui_gym.recording import record_dataset
    from gui_gym.train.runner import build_tiny_policy, env_texts
    from gui_gym.train.sft import SFTConfig, train_sft

    torch.set_num_threads(1)  # tiny models: threads only contend
    started = time.perf_counter()
    work = Path(args.work or tempfile.mkdtemp())
    args.work = str(work)
    tasks = {
        "train": short_tasks("train", args.max_oracle_steps, args.train_tasks),
        "held_out": short_tasks("test", args.max_oracle_steps, args.held_out_tasks),
    }
    print(f"tasks: {tasks}", flush=True)
    dataset = work / "oracle"
    record_dataset(
        ENV_ID,
        "oracle",
        episodes=len(tasks["train"]),
        out=dataset,
        tasks=tasks["train"],
        env_kwargs={"split": "train", "max_steps": args.max_steps},
        progress=False,
    )
    base = build_tiny_policy(work / "base", env_texts(ENV_ID), n_positions=2048)
    sft_model = work / "sft"
    report = train_sft(
        dataset,
        base,
        sft_model,
        SFTConfig(epochs=args.sft_epochs, lr=args.sft_lr, eval_fraction=0.0, batch_size=4),
        device=args.device,
        progress=False,
    )
    llm = TransformersLLM(sft_model, device=args.device)
    sft = {
        "train": success_rate(llm, tasks["train"], args.max_steps, args.max_new_tokens),
        "held_out": success_rate(llm, tasks["held_out"], args.max_steps, args.max_new_tokens),
        "losses": report.losses[-3:],
    }
    base_llm = TransformersLLM(base, device=args.device)
    before_sft = {
        "train": success_rate(base_llm, tasks["train"], args.max_steps, args.max_new_tokens),
        "held_out": success_rate(base_llm, tasks["held_out"], args.max_steps, args.max_new_tokens),
    }
    print(f"before SFT {before_sft}; after SFT {sft}", flush=True)
    runs = [
        run_arm(arm, seed, sft_model, dataset, tasks, args)
        for arm in args.arms
        for seed in args.seeds
    ]
    arms: dict[str, Any] = {}
    for arm in args.arms:
        mine = [r for r in runs if r["arm"] == arm]
        points = sorted({p["iteration"] for r in mine for p in r["curve"]})
        mean_curve = []
        for point in points:
            rows = [p for r in mine for p in r["curve"] if p["iteration"] == point]
            mean_curve.append(
                {
                    "iteration": point,
                    "train": sum(p["train"] for p in rows) / len(rows),
                    "held_out": sum(p["held_out"] for p in rows) / len(rows),
                }
            )
        arms[arm] = {"mean_curve": mean_curve, "final": mean_curve[-1] if mean_curve else None}
    result = {
        "args": asdict(args),
        "tasks": tasks,
        "before_sft": before_sft,
        "sft": sft,
        "arms": arms,
        "runs": runs,
        "seconds": time.perf_counter() - started,
        "device": args.device,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "llm_learning.json").write_text(json.dumps(result, indent=2) + "\n")
    plot(result, out / "llm_learning.png")
    print(json.dumps({"sft": sft, "final": {a: s["final"] for a, s in arms.items()}}, indent=1))
    return result


if __name__ == "__main__":
    main(tyro.cli(Args))
