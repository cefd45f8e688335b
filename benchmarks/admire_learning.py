"""Does ADMIRE's milestone reward give a learning signal where the outcome alone gives none?

Runs ``examples/admire_grpo.py`` (step-level GRPO, Eq. 12-13) with the tiny CPU policy on a
few WikiHow tasks, in arms that each change one thing of the first:

* ``milestone``: ``R_total = R_outcome + eta * R_format + lambda0 * gamma**epoch * R_mil``
  with ``lambda0 = 0.3`` (the paper's), adaptive milestones, GRPO;
* ``outcome_only``: the same with ``lambda0 = 0``: a random tiny policy almost never
  succeeds, and the candidate actions are well-formed, so almost every step of a group gets
  the same reward and the GRPO advantages carry next to no signal;
* ``static``: milestones from the expert's episode, never refined (Table 3's static arm);
* ``rloo``, ``dapo``: the milestone reward with RLOO's leave-one-out baseline or DAPO's
  clip-higher and dropped flat groups (Table 4's algorithms); ``rloo_outcome`` and
  ``dapo_outcome`` are the same algorithms with the outcome alone (Table 4's other row).

Both arms are measured the same way, per iteration: success rate, ``k/K`` (milestones of the
store reached, the same oracle-seeded milestones in both arms), and the env's own
ground-truth milestones reached (WikiHow's ``info["milestones"]``, which neither arm is paid
for). Writes JSON and a plot of both curves (mean over seeds).

Usage::

    python benchmarks/admire_learning.py [--iterations 30] [--seeds 0 1]
        [--out benchmarks/results/admire_learning.json]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from gui_gym.core.trajectory import read_jsonl

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the harness, when loaded by path too
from harness import load_script, write_json

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "admire_grpo.py"
ARMS: dict[str, dict[str, Any]] = {
    "milestone": {},
    "outcome_only": {"lambda0": 0.0},
    "static": {"milestones": "static"},
    "rloo": {"algo": "rloo"},
    "dapo": {"algo": "dapo"},
    "rloo_outcome": {"algo": "rloo", "lambda0": 0.0},
    "dapo_outcome": {"algo": "dapo", "lambda0": 0.0},
}
"""Each arm's changes to the example's defaults (lambda0 0.3, adaptive milestones, GRPO)."""
DEFAULT_ARMS = ("milestone", "outcome_only", "static", "rloo", "dapo")
CURVES = ("success_rate", "milestone_progress", "env_milestones", "mean_step_reward")


def run(
    iterations: int,
    seeds: list[int],
    num_tasks: int,
    group_size: int,
    max_steps: int,
    embedder: str,
    verbose: bool = True,
    arms: tuple[str, ...] = DEFAULT_ARMS,
    partial: Path | None = None,
) -> dict[str, Any]:
    """Run the arms; with ``partial``, each finished (arm, seed) is appended to that JSONL
    file and a rerun with the same settings skips the ones it holds (a killed run resumes)."""
    unknown = sorted(set(arms) - set(ARMS))
    if unknown:
        raise ValueError(f"unknown arm(s) {unknown}; allowed: {', '.join(ARMS)}")
    example = load_script(EXAMPLE, "admire_grpo")
    started = time.perf_counter()
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {arm: {} for arm in arms}
    key = [iterations, num_tasks, group_size, max_steps, embedder]
    if partial is not None and partial.exists():
        for record in read_jsonl(partial):
            if record.get("key") == key and record.get("arm") in runs:
                runs[record["arm"]][str(record["seed"])] = record["history"]
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            for arm in arms:
                if str(seed) in runs[arm]:
                    continue  # done by an earlier, interrupted run
                args = example.Args(
                    num_tasks=num_tasks,
                    tasks_per_iteration=num_tasks,
                    group_size=group_size,
                    iterations=iterations,
                    max_steps=max_steps,
                    embedder=embedder,
                    seed=seed,
                    store=str(Path(tmp) / f"{arm}-{seed}.json"),
                    **ARMS[arm],
                )
                t = time.perf_counter()
                quiet = io.StringIO()
                with contextlib.redirect_stdout(quiet):
                    history = example.main(args)
                runs[arm][str(seed)] = history
                if partial is not None:
                    partial.parent.mkdir(parents=True, exist_ok=True)
                    with open(partial, "a", encoding="utf-8") as f:
                        record = {"key": key, "arm": arm, "seed": seed, "history": history}
                        f.write(json.dumps(record) + "\n")
                if verbose:
                    last = history[-5:]
                    print(
                        f"{arm:13s} seed {seed}: last-5 k/K "
                        f"{np.mean([h['milestone_progress'] for h in last]):.2f}, env milestones "
                        f"{np.mean([h['env_milestones'] for h in last]):.2f}, success "
                        f"{np.mean([h['success_rate'] for h in last]):.2f} "
                        f"({time.perf_counter() - t:.0f} s)",
                        flush=True,
                    )
    summary: dict[str, Any] = {}
    for arm, by_seed in runs.items():
        curves = {
            name: np.mean([[h[name] for h in hist] for hist in by_seed.values()], axis=0).tolist()
            for name in CURVES
        }
        window = max(1, iterations // 5)
        summary[arm] = {
            "curves_mean_over_seeds": curves,
            "first_window": {n: float(np.mean(curves[n][:window])) for n in CURVES},
            "last_window": {n: float(np.mean(curves[n][-window:])) for n in CURVES},
            "window": window,
        }
    return {
        "settings": {
            "env_id": "GuiGym/WikiHow-v0",
            "iterations": iterations,
            "seeds": seeds,
            "num_tasks": num_tasks,
            "group_size": group_size,
            "max_steps": max_steps,
            "embedder": embedder,
            "arms": {
                arm: {"lambda0": 0.3, "milestones": "adaptive", "algo": "grpo", **ARMS[arm]}
                for arm in arms
            },
            "policy": "tiny random GPT-2 (char tokenizer) ranking candidate actions, CPU",
        },
        "summary": summary,
        "runs": runs,
        "seconds": round(time.perf_counter() - started, 1),
        "machine": {"cpus": os.cpu_count(), "load_average_1_5_15": list(os.getloadavg())},
    }


def plot(report: dict[str, Any], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is missing (pip install 'gui-gym[examples]'); no plot", file=sys.stderr)
        return
    names = {
        "milestone_progress": "store milestones reached (k/K)",
        "env_milestones": "env ground-truth milestones reached",
        "success_rate": "success rate",
    }
    fig, axes = plt.subplots(1, len(names), figsize=(13, 3.8))
    for ax, (key, title) in zip(axes, names.items()):
        for arm, row in report["summary"].items():
            ax.plot(row["curves_mean_over_seeds"][key], label=arm)
        ax.set_title(title)
        ax.set_xlabel("GRPO iteration")
        ax.grid(alpha=0.3)
    axes[0].legend()
    seeds = len(report["settings"]["seeds"])
    fig.suptitle(f"Tiny policy on WikiHow, step-level GRPO, mean of {seeds} seeds")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    print(f"plot written to {path}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--num-tasks", type=int, default=2)
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--embedder", choices=["minilm", "hashing"], default="minilm")
    parser.add_argument("--arms", nargs="+", choices=list(ARMS), default=list(DEFAULT_ARMS))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/admire_learning.json"))
    parser.add_argument("--plot", type=Path, default=Path("benchmarks/results/admire_learning.png"))
    args = parser.parse_args()
    report = run(
        args.iterations,
        args.seeds,
        args.num_tasks,
        args.group_size,
        args.max_steps,
        args.embedder,
        arms=tuple(args.arms),
        partial=args.out.with_suffix(".partial.jsonl"),
    )
    write_json(args.out, report)
    args.out.with_suffix(".partial.jsonl").unlink(missing_ok=True)
    for arm, row in report["summary"].items():
        first, last = row["first_window"], row["last_window"]
        print(
            f"{arm:13s} k/K {first['milestone_progress']:.2f} -> {last['milestone_progress']:.2f}, "
            f"env milestones {first['env_milestones']:.2f} -> {last['env_milestones']:.2f}, "
            f"success {first['success_rate']:.2f} -> {last['success_rate']:.2f}"
        )
    print(f"written to {args.out} in {report['seconds']} s")
    plot(report, args.plot)


if __name__ == "__main__":
    main()
