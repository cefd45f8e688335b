"""Learning evidence for the RL trainers: SFT, then RL with each algorithm and each reward.

1. A tiny GPT-2 (built from a config, BPE tokenizer trained on WikiHow text) is SFT'd
   (:func:`gui_gym.train.sft.train_sft`) on oracle trajectories of a small subset of WikiHow
   train tasks (the shortest ones), recorded with :func:`gui_gym.runs.record.record_dataset`.
2. From that SFT checkpoint, each arm trains with ``gui_gym.train.runner.make_trainer`` for
   ``--iterations`` iterations on the same train tasks, with ``--seeds`` seeds. Arms
   (``ALGO:REWARD`` or ``ALGO:REWARD:k=N``): every algorithm (outcome reward; UI-S1 and
   offline GRPO on the recorded dataset); step-level GRPO with outcome alone against progress
   (ProgRM-Env), milestone (ADMIRE, refined once per batch) and PRM (the rule-based reference
   judge) rewards; and ProgRM's Table 4 ablation, REINFORCE++ (ProgRM's algorithm) with the
   progress reward's history length ``k`` = 1, 2, 3 (Eq. 2) beside its outcome-only run.
3. Every ``--eval-every`` iterations, greedy success rate on the train tasks; at the end, also
   on held-out test-split tasks (never seen in SFT or RL; a model of this size answers none
   of them, see docs/training.md, so they are measured at the start and the end only).
4. For each shaped arm, the first iteration at which its mean success reaches the final
   success of the same algorithm's outcome-only arm (``reach`` in the JSON).

Runs go ``--workers`` at a time, one process each (single-threaded: a tiny model gains
nothing from threads), so a 2-core machine runs two at once.

The generation budget ``--max-new-tokens`` must hold the longest oracle completion (checked
before training): cut shorter, right answers come out unparsable.

Writes ``benchmarks/results/llm_learning.json`` and ``llm_learning.png``: success against
training iterations per arm (mean over seeds), with the SFT starting point.

Usage::

    nice -n 10 python benchmarks/llm_learning.py                  # every arm, 3 seeds
    python benchmarks/llm_learning.py --arms grpo:outcome grpo:outcome+progress --seeds 0
    python benchmarks/llm_learning.py --device cuda
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import tyro

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the harness, when loaded by path too
import harness
from harness import first_reaching, pick_tasks, split_success, write_json

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
    "reinforce_pp:outcome+progress",  # ProgRM Table 4: k = 1 (the paper's setting), 2, 3
    "reinforce_pp:outcome+progress:k=2",
    "reinforce_pp:outcome+progress:k=3",
]


@dataclass
class Args:
    arms: list[str] = field(default_factory=lambda: list(DEFAULT_ARMS))
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    # 12 tasks: each is 1/12 of the success rate (6 made every step a sixth)
    train_tasks: int = 12

    held_out_tasks: int = 6
    max_oracle_steps: int = 3  # the subset: tasks the oracle solves in at most this many steps
    max_steps: int = 5
    # short of memorising the oracle (a long SFT leaves RL nothing to raise)
    sft_epochs: int = 15

    sft_lr: float = 3e-3
    iterations: int = 10
    eval_every: int = 2  # fine enough to see when a shaped arm reaches the outcome arm
    group_size: int = 4
    learning_rate: float = 5e-4
    max_new_tokens: int = 48
    workers: int = 2  # runs at once (each single-threaded): one per core
    # rollout sampling: at 1.0 the SFT model's sampled actions are 88% unparsable and solve
    # 0 of 24 episodes (greedy: 58%), so outcome-only groups carry no signal; 0.5 is the
    # highest of 1.0/0.7/0.5/0.3 whose sampled success (33%) is at least half the greedy one
    temperature: float = 0.5

    device: str = "cpu"
    embedder: str = "hashing"  # the milestone embedder: hashing, or a sentence-transformers name
    out: str = "benchmarks/results"  # folder of the results JSON
    work: str | None = None  # keep the SFT model and runs here (default: a temp folder)


ARM_FORM = "ALGO:REWARD[:k=N][:NAME=VALUE...]"


def parse_arm(arm: str) -> tuple[str, str, int, dict[str, Any]]:
    """``"ALGO:REWARD[:k=N][:NAME=VALUE...]"`` -> ``(algo, reward, progress k, settings)``.

    ``k`` is the history length of ProgRM's progress reward (Eq. 2; Table 4 ablates 1-3); any
    other ``NAME=VALUE`` is a trainer setting of the arm (e.g. ``baseline=rloo`` for GRPO's
    leave-one-out baseline), read as an int, a float or else a string
    (:func:`harness.parse_arm`).

    Raises:
        ValueError: for another form.
    """
    algo, reward, settings = harness.parse_arm(arm, ARM_FORM)
    k = settings.pop("k", 1)
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"arm {arm!r} must be {ARM_FORM} with an int N >= 1")
    return algo, reward, k, settings


def outcome_arm(arm: str) -> str:
    """The outcome-only arm a shaped arm is compared with: same algorithm and settings."""
    algo, _, _, settings = parse_arm(arm)
    return ":".join([algo, "outcome", *(f"{n}={v}" for n, v in settings.items())])


def longest_completion(dataset: Path, model: Path) -> int:
    """Tokens (end token included) of the longest SFT target of ``dataset``: what the policy
    must be allowed to generate to reproduce the expert.

    A generation budget below it truncates right answers into unparsable text (an earlier
    version of this benchmark capped generation at 24 tokens while half the oracle actions
    need 26 with the tiny BPE tokenizer, so SFT looked weak and RL "gained" by finding shorter
    outputs)."""
    from gui_gym.agents.llm import LLMAgent
    from gui_gym.envs.replay.dataset import ExpertDataset
    from gui_gym.models.llm import TransformersLLM
    from gui_gym.train.sft import build_examples

    llm = TransformersLLM(model, device="cpu")
    examples = build_examples(ExpertDataset.load(dataset).trajectories, LLMAgent(llm))
    tokenizer = llm.tokenizer
    return max(
        len(tokenizer(e.completion, add_special_tokens=False)["input_ids"]) + 1 for e in examples
    )


def success(llm: Any, tasks: dict[str, list[str]], args: Args) -> dict[str, float]:
    """Greedy success of ``llm`` on each split of ``tasks`` (:func:`harness.split_success`)."""
    return split_success(
        llm, ENV_ID, tasks, max_steps=args.max_steps, max_new_tokens=args.max_new_tokens
    )


def run_arm(
    arm: str, seed: int, sft_model: Path, dataset: Path, tasks: dict[str, list[str]], args: Args
) -> dict[str, Any]:
    from gui_gym.models.llm import TransformersLLM
    from gui_gym.train.runner import make_trainer

    algo, reward, progress_k, overrides = parse_arm(arm)
    replay = reward == "replay"
    settings: dict[str, Any] = {
        "out": str(
            Path(args.work or tempfile.mkdtemp())
            / f"{arm.replace(':', '_').replace('=', '')}_{seed}"
        ),
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
    settings.update(overrides)
    trainer = make_trainer(
        algo,
        REPLAY_ID if replay else ENV_ID,
        model=sft_model,
        reward="outcome" if replay else reward,
        settings=settings,
        # the default prompt writes no <think> block: UI-S1's format term must not need one
        env_kwargs={"dataset": str(dataset), "require_think": False}
        if replay
        else {"split": "train", "max_steps": args.max_steps},
        tasks=None if replay else tasks["train"],
        embedder=args.embedder,
        progress_k=progress_k,
        resume=False,
    )
    llm = TransformersLLM(
        trainer.policy.model, trainer.policy.tokenizer, device=trainer.policy.device
    )
    curve = []

    def evaluate(iteration: int) -> None:
        # held-out tasks at the end only (see the docstring)
        splits = tasks if iteration == args.iterations else {"train": tasks["train"]}
        point = {"iteration": iteration, **success(llm, splits, args)}
        curve.append(point)
        print(f"  {arm} seed {seed} iteration {iteration}: {curve[-1]}", flush=True)

    import torch

    torch.set_num_threads(1)  # in a worker process too: tiny models, threads only contend

    def on_iteration(metrics: dict[str, Any]) -> None:
        done = metrics["iteration"] + 1
        if done % args.eval_every == 0 or done == args.iterations:
            evaluate(done)

    started, cpu_started = time.perf_counter(), time.process_time()
    history = trainer.train(on_iteration=on_iteration)
    return {
        "arm": arm,
        "seed": seed,
        "curve": curve,
        "rollout_success": [m["success_rate"] for m in history],
        "seconds": time.perf_counter() - started,
        # CPU time of the run: on a loaded machine the wall time says little about an idle one
        "cpu_seconds": time.process_time() - cpu_started,
    }


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, split in zip(axes, ("train", "held_out")):
        for arm, summary in result["arms"].items():
            points = [p for p in summary["mean_curve"] if split in p]
            xs = [0] + [p["iteration"] for p in points]
            ys = [result["sft"][split]] + [p[split] for p in points]
            ax.plot(xs, ys, marker="o", label=arm, linestyle="--" if ":k=" in arm else "-")
        ax.set_title(f"{split.replace('_', '-')} tasks")
        ax.set_xlabel("RL iterations (from the SFT model)")
        ax.set_ylim(-0.05, 1.05)
    axes[0].set_ylabel("greedy success rate")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def mean_curve(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs' success curves averaged point by point."""
    curve = []
    for point in sorted({p["iteration"] for r in runs for p in r["curve"]}):
        rows = [p for r in runs for p in r["curve"] if p["iteration"] == point]
        mean = {"iteration": point, "train": sum(p["train"] for p in rows) / len(rows)}
        held_out = [p["held_out"] for p in rows if "held_out" in p]
        if held_out:
            mean["held_out"] = sum(held_out) / len(held_out)
        curve.append(mean)
    return curve


def reach_outcome_final(runs: list[dict[str, Any]], sft_train: float) -> dict[str, Any]:
    """For each shaped arm: the first iteration at which its mean success on the trained tasks
    reaches the final mean success of the same algorithm's outcome-only arm (None: never),
    and whether that is within half the outcome-only run's iterations (the issue's aim).
    Both means are over the seeds the two arms share (an interrupted benchmark may hold more
    seeds of one); iteration 0 is the SFT model every arm starts from."""
    out: dict[str, Any] = {}
    for arm in dict.fromkeys(r["arm"] for r in runs):
        _, reward, _, _ = parse_arm(arm)
        if reward in ("outcome", "replay"):
            continue
        shaped = {r["seed"]: r for r in runs if r["arm"] == arm}
        outcome = {r["seed"]: r for r in runs if r["arm"] == outcome_arm(arm)}
        seeds = sorted(set(shaped) & set(outcome))
        if not seeds:
            continue
        start = [{"iteration": 0, "train": sft_train}]
        baseline = start + mean_curve([outcome[seed] for seed in seeds])
        target, total = baseline[-1]["train"], baseline[-1]["iteration"]

        def first(points: list[dict[str, Any]], level: float = target) -> int | None:
            return first_reaching(((p["iteration"], p["train"]) for p in points), level)

        reached = first(start + mean_curve([shaped[seed] for seed in seeds]))
        out[arm] = {
            "outcome_arm": outcome_arm(arm),
            "seeds": seeds,
            "outcome_final_train": target,
            "outcome_iterations": total,
            "reached_at": reached,
            # when the outcome-only arm itself first stood at its final success: a shaped arm
            # is only faster if it got there sooner
            "outcome_reached_at": first(baseline),
            "within_half": reached is not None and reached <= total / 2,
        }
    return out


def summarise(
    args: Args,
    tasks: dict[str, list[str]],
    before_sft: dict[str, float],
    sft: dict[str, Any],
    runs: list[dict[str, Any]],
    seconds: float,
) -> dict[str, Any]:
    """Mean curves per arm over its seeds; writes the JSON and the figure."""
    arms: dict[str, Any] = {}
    for arm in dict.fromkeys(r["arm"] for r in runs):
        mine = [r for r in runs if r["arm"] == arm]
        curve = mean_curve(mine)
        arms[arm] = {
            "seeds": [r["seed"] for r in mine],
            "mean_curve": curve,
            "final": curve[-1] if curve else None,
        }
    result = {
        "reach": reach_outcome_final(runs, sft["train"]),
        "args": asdict(args),
        "tasks": tasks,
        "before_sft": before_sft,
        "sft": sft,
        "arms": arms,
        "runs": runs,
        "seconds": seconds,
        # SFT and evaluation in the main process, plus every run's own
        "cpu_seconds": time.process_time() + sum(r.get("cpu_seconds", 0.0) for r in runs),
        "device": args.device,
    }
    out = Path(args.out)
    write_json(out / "llm_learning.json", result)
    plot(result, out / "llm_learning.png")
    return result


def main(args: Args) -> dict[str, Any]:
    import torch

    from gui_gym.models.llm import TransformersLLM
    from gui_gym.runs.record import record_dataset
    from gui_gym.train.runner import build_tiny_policy, env_texts
    from gui_gym.train.sft import SFTConfig, train_sft

    torch.set_num_threads(1)  # tiny models: threads only contend
    started = time.perf_counter()
    work = Path(args.work or tempfile.mkdtemp())
    args.work = str(work)
    tasks = pick_tasks(ENV_ID, args.max_oracle_steps, args.train_tasks, args.held_out_tasks)
    print(f"tasks: {tasks}", flush=True)
    dataset = work / "oracle"
    if not (dataset / "manifest.json").exists():  # a --work folder is reused as it is
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
    needed = longest_completion(dataset, base)
    if needed > args.max_new_tokens:
        raise SystemExit(
            f"--max-new-tokens {args.max_new_tokens} cannot hold the longest oracle completion "
            f"({needed} tokens with the end token): raise it to at least {needed}"
        )
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
    sft = {**success(llm, tasks, args), "losses": report.losses[-3:]}
    before_sft = success(TransformersLLM(base, device=args.device), tasks, args)
    print(f"before SFT {before_sft}; after SFT {sft}", flush=True)
    runs: list[dict[str, Any]] = []
    result: dict[str, Any] = {}
    # seed-major: an interrupted benchmark has every arm at its first seeds
    jobs = [(arm, seed) for seed in args.seeds for arm in args.arms]
    # one process per core: each run is single-threaded (tiny model), so two cores run two
    # arms at once; spawn, not fork, as torch and the tokenizers hold threads
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=args.workers, mp_context=context) as pool:
        pending = [
            pool.submit(run_arm, arm, seed, sft_model, dataset, tasks, args) for arm, seed in jobs
        ]
        for future in as_completed(pending):
            runs.append(future.result())
            runs.sort(key=lambda r: (args.arms.index(r["arm"]), r["seed"]))
            # written after every run, so an interrupted benchmark keeps what it measured
            result = summarise(args, tasks, before_sft, sft, runs, time.perf_counter() - started)
    print(json.dumps({"sft": sft, "final": {a: s["final"] for a, s in result["arms"].items()}}))
    return result


if __name__ == "__main__":
    main(tyro.cli(Args))
