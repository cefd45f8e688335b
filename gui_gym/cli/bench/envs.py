"""Environment speed: steps/s and resets/s per id, text-only and with screenshots, beside
``CartPole-v1`` measured in the same run, so the ratio is comparable across machines.

Only the env's own time is counted: the random policy picks actions outside the timed
region, and actions go in as strings, the way LLM agents send them (parsing included).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import gui_gym
from gui_gym.cli.bench.summary import machine
from gui_gym.core.trajectory import atomic_write_text

__all__ = ["bench_cartpole", "bench_gui_env", "measure_import_time", "random_choices", "run"]


def pin_to_one_core() -> int | None:
    """Pin this process to one CPU so figures read as 'per core'; returns the CPU or None."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return cpu


def bench_cartpole(steps: int) -> dict[str, float]:
    """CartPole-v1 through ``gym.make`` with random actions: the machine yardstick."""
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 2, size=steps)
    elapsed = 0.0
    for a in actions:
        t0 = time.perf_counter()
        _, _, terminated, truncated, _ = env.step(int(a))
        if terminated or truncated:
            env.reset()
        elapsed += time.perf_counter() - t0
    resets = max(100, steps // 100)
    t0 = time.perf_counter()
    for i in range(resets):
        env.reset(seed=i)
    reset_time = time.perf_counter() - t0
    env.close()
    return {"steps_per_s": steps / elapsed, "resets_per_s": resets / reset_time}


def random_choices(base: Any) -> list[Any]:
    """What the random policy picks from: the screen's sensible actions, unfiltered
    (``screen_candidate_actions``), unless the env has its own action list (WebShop-Text).

    The bench times the env, not the policy: the filtered ``candidate_actions()`` tries every
    candidate on a copy of the state (milliseconds per step on AndroidWorld), and the figures
    in the docs were measured on the unfiltered list. A refused action is a step too.
    """
    from gui_gym.core.env import GuiEnv

    if type(base).candidate_actions is GuiEnv.candidate_actions:
        return base.screen_candidate_actions()
    return base.candidate_actions()


def bench_gui_env(
    env_id: str, steps: int, resets: int, screenshot: bool, **kwargs: Any
) -> dict[str, Any]:
    """Random-policy steps/s and resets/s of a gui-gym id (env time only)."""
    env = gym.make(env_id, screenshot=screenshot, **kwargs)
    base = env.unwrapped
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    elapsed = 0.0
    episodes = 0
    for _ in range(steps):
        candidates = random_choices(base)
        action = str(candidates[int(rng.integers(len(candidates)))])
        t0 = time.perf_counter()
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
            episodes += 1
        elapsed += time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(resets):
        env.reset(seed=i)
    reset_time = time.perf_counter() - t0
    fork_ms = None
    if hasattr(base, "fork"):
        env.reset(seed=0)
        for _ in range(5):  # fork mid-episode, where states are largest
            candidates = random_choices(base)
            _, _, terminated, truncated, _ = env.step(
                str(candidates[int(rng.integers(len(candidates)))])
            )
            if terminated or truncated:  # an ended episode has no candidates (WebShop's buy)
                env.reset()
        t0 = time.perf_counter()
        for _ in range(200):
            base.fork()
        fork_ms = (time.perf_counter() - t0) / 200 * 1000
    env.close()
    return {
        "id": env_id,
        "fork_ms": fork_ms,
        "screenshot": screenshot,
        "steps": steps,
        "episodes": episodes,
        "steps_per_s": steps / elapsed,
        "resets_per_s": resets / reset_time,
    }


def measure_import_time(repeats: int = 5) -> float:
    """Best-of-``repeats`` wall time of ``import gui_gym`` in a fresh interpreter (seconds)."""
    code = "import time; t = time.perf_counter(); import gui_gym; print(time.perf_counter() - t)"
    times = []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        times.append(float(out.stdout.strip()))
    return min(times)


def run(
    ids: list[str] | None = None,
    steps: int = 20_000,
    screenshot_steps: int = 2_000,
    resets: int = 500,
    out: str | Path | None = None,
    pin: bool = True,
) -> dict[str, Any]:
    """Benchmark every id (or ``ids``) and CartPole-v1; write JSON to ``out`` if given."""
    cpu = pin_to_one_core() if pin else None
    ids = ids or list(gui_gym.ENV_IDS)
    cartpole = bench_cartpole(max(steps, 20_000))
    results = []
    for env_id in ids:
        for screenshot, n in ((False, steps), (True, screenshot_steps)):
            row = bench_gui_env(
                env_id, n, resets if not screenshot else max(50, resets // 10), screenshot
            )
            row["ratio_to_cartpole"] = row["steps_per_s"] / cartpole["steps_per_s"]
            results.append(row)
    report = {
        "benchmark": "envs",
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {**machine(), "pinned_cpu": cpu},
        "versions": {
            "gui_gym": gui_gym.__version__,
            "gymnasium": gym.__version__,
            "numpy": np.__version__,
        },
        "import_gui_gym_s": measure_import_time(),
        "cartpole": cartpole,
        "results": results,
    }
    if out is not None:
        atomic_write_text(out, json.dumps(report, indent=1) + "\n")
    return report


def format_report(report: dict[str, Any]) -> str:
    """A plain-text table of a :func:`run` report."""
    lines = [
        f"CartPole-v1: {report['cartpole']['steps_per_s']:,.0f} steps/s",
        f"import gui_gym: {report['import_gui_gym_s']:.3f} s",
        f"{'id':<32} {'screenshot':>10} {'steps/s':>10} {'resets/s':>10} {'x CartPole':>10} {'fork ms':>8}",
    ]
    for r in report["results"]:
        lines.append(
            f"{r['id']:<32} {r['screenshot']!s:>10} {r['steps_per_s']:>10,.0f} "
            f"{r['resets_per_s']:>10,.0f} {r['ratio_to_cartpole']:>10.3f} "
            f"{r['fork_ms'] if r['fork_ms'] is None else format(r['fork_ms'], '.3f'):>8}"
        )
    return "\n".join(lines)


def median(values: list[float]) -> float:
    return statistics.median(values)
