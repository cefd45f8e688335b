"""Expert success per MiniWoB++ task: each task's scripted expert (``gui_gym.envs.miniwob.
oracle.ORACLES``) plays ``--seeds`` episodes through ``GuiGym/MiniWoB-v0`` with miniwob's own
time limits, acting only through gui-gym actions. Writes one JSON record per task (success
rate, mean steps, the first failure's reason) and the summary.

    nice -n 10 python benchmarks/bench_miniwob_experts.py --seeds 10 \\
        --out benchmarks/results/miniwob_experts.json
    python benchmarks/bench_miniwob_experts.py --markdown benchmarks/results/miniwob_experts.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import gymnasium as gym

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.core.trajectory import atomic_write_text
from gui_gym.envs.miniwob import MINIWOB_TASKS
from gui_gym.envs.miniwob.oracles import ORACLES


def run_task(env: gym.Env, name: str, seeds: list[int], max_steps: int) -> dict:
    """Play the expert of ``name`` once per seed; its success rate and failure reasons."""
    unwrapped = env.unwrapped
    wins, steps, failures = 0, [], []
    start = time.perf_counter()
    for seed in seeds:
        if name not in ORACLES:
            failures.append("no expert")
            continue
        unwrapped.reset(seed=seed, options={"task": name})
        info: dict = {}
        reason = None
        for _ in range(max_steps):
            try:
                action = unwrapped.oracle_action()
            except Exception as err:  # an expert that gives up says why
                reason = f"{type(err).__name__}: {err}"
                break
            _, _, terminated, truncated, info = unwrapped.step(action)
            if terminated or truncated:
                break
        else:
            reason = f"no end after {max_steps} steps"
        if info.get("success"):
            wins += 1
            steps.append(unwrapped.steps_taken)
        else:
            failures.append(
                reason
                or f"raw reward {info.get('task_reward')} ({info.get('miniwob', {}).get('reason')})"
            )
    return {
        "task": name,
        "episodes": len(seeds),
        "success_rate": wins / len(seeds),
        "mean_steps": sum(steps) / len(steps) if steps else None,
        "failures": failures[:3],
        "seconds": round(time.perf_counter() - start, 2),
    }


def markdown_table(result: dict) -> str:
    """The result as docs/miniwob.md's table: one row per task, the worst first."""
    lines = [
        f"| task | success ({len(result['seeds'])} seeds) | mean steps | first failure |",
        "|---|---|---|---|",
    ]
    for row in sorted(result["rows"], key=lambda r: (r["success_rate"], r["task"])):
        steps = f"{row['mean_steps']:.1f}" if row["mean_steps"] is not None else "-"
        failure = (row["failures"] or [""])[0].replace("|", "/")[:90]
        lines.append(f"| {row['task']} | {row['success_rate']:.0%} | {steps} | {failure} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10, help="episodes per task (seeds 0..N-1)")
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: all)")
    parser.add_argument("--max-steps", type=int, default=60)
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here")
    parser.add_argument(
        "--markdown", type=Path, default=None, help="print this result JSON as a table, run nothing"
    )
    args = parser.parse_args(argv)
    if args.markdown is not None:
        print(markdown_table(json.loads(args.markdown.read_text())))
        return 0
    names = [n for n in args.tasks.split(",") if n] or list(MINIWOB_TASKS)
    unknown = [n for n in names if n not in MINIWOB_TASKS]
    if unknown:
        print(f"unknown MiniWoB++ task(s) {unknown}", file=sys.stderr)
        return 2
    seeds = list(range(args.seeds))
    rows = []
    envs: dict[bool, gym.Env] = {}
    try:
        for name in names:
            flight = name.startswith("flight.")
            if flight not in envs:
                tasks = [n for n in MINIWOB_TASKS if n.startswith("flight.") == flight]
                envs[flight] = gym.make("GuiGym/MiniWoB-v0", tasks=tasks, max_steps=args.max_steps)
            row = run_task(envs[flight], name, seeds, args.max_steps)
            rows.append(row)
            print(
                f"{name:32s} {row['success_rate']:5.0%}  {row['seconds']:6.1f}s  "
                f"{'; '.join(row['failures'][:1])[:90]}",
                flush=True,
            )
    finally:
        for env in envs.values():
            env.close()
    solved = [r["task"] for r in rows if r["success_rate"] >= 0.9]
    result = {
        "seeds": seeds,
        "tasks": len(rows),
        "tasks_at_90_percent": len(solved),
        "mean_success": sum(r["success_rate"] for r in rows) / max(len(rows), 1),
        "rows": rows,
    }
    print(f"{len(solved)}/{len(rows)} tasks at >= 90% over {len(seeds)} seeds")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(args.out, json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
