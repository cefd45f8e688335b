"""Speed of the UI-S1 pieces: recording, dataset loading, replay steps and SOP evaluation.

Records the WikiHow test split with the oracle (150 trajectories), then measures
``GuiGym/SemiOnlineReplay-v0`` steps/s with random actions (``epsilon = inf``, so every
mismatch is patched and episodes run to their end), text-only and with screenshots, beside
CartPole-v1 in the same run, screenshots again with 8 rollouts per trajectory in a row (as a
GRPO-style trainer samples a group), plus loading and SOP throughput.

Usage: python benchmarks/bench_replay.py [--out benchmarks/results/bench_replay.json]
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.cli.bench.envs import bench_cartpole, bench_gui_env, pin_to_one_core
from gui_gym.core.trajectory import atomic_write_text
from gui_gym.envs.replay import ExpertDataset, SemiOnlineReplayEnv
from gui_gym.runs.record import record_dataset
from gui_gym.runs.sop import evaluate_sop

REPLAY_ID = "GuiGym/SemiOnlineReplay-v0"


def bench_groups(
    data: ExpertDataset, cartpole_steps_per_s: float, trajectories: int = 40, group: int = 8
) -> dict[str, Any]:
    """Screenshot steps/s when each trajectory is rolled out ``group`` times in a row, as a
    GRPO-style trainer does (the screenshot cache then hits)."""
    env = SemiOnlineReplayEnv(data, epsilon=math.inf, screenshot=True)
    rng = np.random.default_rng(0)
    steps = 0
    elapsed = 0.0
    for index in range(trajectories):
        for _ in range(group):
            t0 = time.perf_counter()
            env.reset(options={"trajectory": index})
            elapsed += time.perf_counter() - t0
            done = False
            while not done:
                candidates = env.candidate_actions()
                action = str(candidates[int(rng.integers(len(candidates)))])
                t0 = time.perf_counter()
                _, _, terminated, truncated, _ = env.step(action)
                elapsed += time.perf_counter() - t0
                steps += 1
                done = terminated or truncated
    rate = steps / elapsed
    return {
        "id": REPLAY_ID,
        "screenshot": True,
        "grouped": f"{group} rollouts per trajectory",
        "steps": steps,
        "steps_per_s": rate,
        "resets_per_s": None,
        "ratio_to_cartpole": rate / cartpole_steps_per_s,
    }


def run(data_dir: Path, steps: int, screenshot_steps: int) -> dict[str, Any]:
    dataset = data_dir / "wikihow-test"
    t0 = time.perf_counter()
    record_dataset(
        "GuiGym/WikiHow-v0",
        "oracle",
        episodes=150,
        out=dataset,
        env_kwargs={"split": "test"},
        progress=False,
    )
    record_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    data = ExpertDataset.load(dataset)
    load_s = time.perf_counter() - t0
    cartpole = bench_cartpole(20_000)
    rows = []
    for screenshot, n in ((False, steps), (True, screenshot_steps)):
        row = bench_gui_env(REPLAY_ID, n, 100, screenshot, dataset=data, epsilon=math.inf)
        row["id"] = REPLAY_ID
        row["ratio_to_cartpole"] = row["steps_per_s"] / cartpole["steps_per_s"]
        rows.append(row)
    rows.append(bench_groups(data, cartpole["steps_per_s"]))
    sop = {}
    for agent in ("oracle", "random"):
        t0 = time.perf_counter()
        summary, _ = evaluate_sop(data, agent, progress=False)
        elapsed = time.perf_counter() - t0
        sop[agent] = {**summary.to_dict(), "trajectories_per_s": len(data) / elapsed}
    return {
        "cartpole": cartpole,
        "dataset": {
            "trajectories": len(data),
            "steps": data.total_steps,
            "record_s": record_s,
            "load_s": load_s,
            "bytes": sum(p.stat().st_size for p in dataset.rglob("*") if p.is_file()),
        },
        "results": rows,
        "sop": sop,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/bench_replay.json"))
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--screenshot-steps", type=int, default=2_000)
    args = parser.parse_args()
    cpu = pin_to_one_core()
    with tempfile.TemporaryDirectory() as tmp:
        report = run(Path(tmp), args.steps, args.screenshot_steps)
    report["pinned_cpu"] = cpu
    atomic_write_text(args.out, json.dumps(report, indent=1) + "\n")
    d = report["dataset"]
    print(
        f"recorded {d['trajectories']} trajectories ({d['steps']} steps, "
        f"{d['bytes'] / 1e6:.1f} MB) in {d['record_s']:.2f} s; loaded in {d['load_s']:.2f} s"
    )
    print(f"CartPole-v1: {report['cartpole']['steps_per_s']:,.0f} steps/s")
    for r in report["results"]:
        resets = f"{r['resets_per_s']:>9,.0f} resets/s" if r["resets_per_s"] else r["grouped"]
        print(
            f"replay screenshot={r['screenshot']!s:5s} {r['steps_per_s']:>9,.0f} steps/s "
            f"{resets}  ratio {r['ratio_to_cartpole']:.3f}"
        )
    for agent, s in report["sop"].items():
        print(
            f"SOP {agent:7s} PG {s['pg']:.3f} TSR {s['tsr']:.3f} Score {s['score']:.3f} "
            f"step acc {s['step_accuracy']:.3f}  {s['trajectories_per_s']:,.0f} trajectories/s"
        )
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
