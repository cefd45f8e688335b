"""Speed of the Ray env pool: RayVectorEnv (2 workers) vs SyncVectorEnv, and the Ray hop.

For each env configuration, in one run on this machine:

* ``sync``: ``gym.vector.SyncVectorEnv`` with 2 sub-envs in this process;
* ``ray``: ``RayVectorEnv`` with 2 workers (local Ray, ``num_cpus=2``);
* ``direct``: one env stepped in this process, and ``ray_1``: one Ray worker: their difference
  per step is the cost of the Ray hop (submit, run remotely, fetch the result).

Steps are random candidate actions (the same sequence for every arm). Cheap envs (WikiHow
text, about 50 us a step) show the hop's overhead; expensive ones (screenshots, the SB3
features) show when two workers pay for it.

Usage::

    nice -n 10 python benchmarks/bench_ray.py [--steps 2000] [--out benchmarks/results/bench_ray.json]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import gui_gym  # noqa: F401  (registers the ids)

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the harness, when loaded by path too
from harness import machine_at_end, write_json


def wikihow_text() -> gym.Env:
    return gym.make("GuiGym/WikiHow-v0", max_steps=20)


def androidworld_screenshots() -> gym.Env:
    return gym.make("GuiGym/AndroidWorld-v0", max_steps=20, screenshot=True)


def wikihow_sb3() -> gym.Env:
    from gui_gym.wrappers.sb3 import make_sb3_env

    return make_sb3_env("GuiGym/WikiHow-v0", max_steps=20)


CONFIGS: dict[str, Callable[[], gym.Env]] = {
    "WikiHow text": wikihow_text,
    "AndroidWorld with screenshots": androidworld_screenshots,
    "WikiHow SB3 features": wikihow_sb3,
}


def action_batches(make: Callable[[], gym.Env], steps: int, n: int) -> list[Any]:
    """``steps`` batches of ``n`` actions (indices for Discrete spaces, fixed strings for
    text spaces: the envs' answers differ, the work per step is what is measured)."""
    env = make()
    rng = np.random.default_rng(0)
    if isinstance(env.action_space, gym.spaces.Discrete):
        batches = [rng.integers(0, env.action_space.n, size=n) for _ in range(steps)]
    else:
        pool = ["CLICK(1)", "CLICK(2)", "SCROLL(down)", "GOBACK()", "CLICK(3)", "CLICK(0)"]
        batches = [tuple(pool[i] for i in rng.integers(0, len(pool), size=n)) for _ in range(steps)]
    env.close()
    return batches


def time_vector(envs: gym.vector.VectorEnv, batches: list[Any]) -> dict[str, float]:
    envs.reset(seed=0)
    for batch in batches[:20]:  # warm-up: caches, first-step imports
        envs.step(batch)
    started = time.perf_counter()
    for batch in batches:
        envs.step(batch)
    seconds = time.perf_counter() - started
    return {
        "seconds": round(seconds, 4),
        "env_steps_per_s": round(len(batches) * envs.num_envs / seconds, 1),
        "us_per_vector_step": round(seconds / len(batches) * 1e6, 1),
    }


def time_direct(make: Callable[[], gym.Env], batches: list[Any]) -> dict[str, float]:
    env = make()
    env.reset(seed=0)
    actions = [b[0] for b in batches]
    for action in actions[:20]:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    started = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    seconds = time.perf_counter() - started
    env.close()
    return {
        "seconds": round(seconds, 4),
        "env_steps_per_s": round(len(actions) / seconds, 1),
        "us_per_step": round(seconds / len(actions) * 1e6, 1),
    }


def baseline_row(
    name: str, make: Callable[[], gym.Env], steps: int
) -> tuple[dict[str, Any], list[Any], list[Any]]:
    """A config's row with its step count (a fifth, at least 200, for screenshots), the
    in-process and ``SyncVectorEnv`` x2 timings the Ray pools are compared with, and the
    2-env and 1-env action batches they replay."""
    steps = steps if "screenshots" not in name else max(200, steps // 5)
    batches2 = action_batches(make, steps, 2)
    batches1 = [b[:1] for b in batches2]
    row: dict[str, Any] = {"steps": steps}
    row["direct"] = time_direct(make, batches2)
    sync = gym.vector.SyncVectorEnv([make, make])
    row["sync_2"] = time_vector(sync, batches2)
    sync.close()
    return row, batches1, batches2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=2000, help="vector steps per arm")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/bench_ray.json"))
    args = parser.parse_args()

    import ray

    from gui_gym.distributed import RayVectorEnv

    started = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray_start = time.perf_counter() - started
    results: dict[str, Any] = {}
    try:
        for name, make in CONFIGS.items():
            row, batches1, batches2 = baseline_row(name, make, args.steps)
            t = time.perf_counter()
            pool = RayVectorEnv(make, 2)
            row["ray_2_start_seconds"] = round(time.perf_counter() - t, 2)
            row["ray_2"] = time_vector(pool, batches2)
            pool.close()
            pool = RayVectorEnv(make, 1)
            row["ray_1"] = time_vector(pool, batches1)
            pool.close()
            row["ray_hop_us_per_step"] = round(
                row["ray_1"]["us_per_vector_step"] - row["direct"]["us_per_step"], 1
            )
            row["ray_2_vs_sync_2_speedup"] = round(
                row["ray_2"]["env_steps_per_s"] / row["sync_2"]["env_steps_per_s"], 3
            )
            results[name] = row
            print(
                f"{name}: direct {row['direct']['env_steps_per_s']:.0f}/s, sync x2 "
                f"{row['sync_2']['env_steps_per_s']:.0f}/s, ray x2 "
                f"{row['ray_2']['env_steps_per_s']:.0f}/s (x{row['ray_2_vs_sync_2_speedup']}), "
                f"Ray hop {row['ray_hop_us_per_step']:.0f} us/step",
                flush=True,
            )
    finally:
        ray.shutdown()
    report = {
        "benchmark": "bench_ray",
        "ray_init_seconds": round(ray_start, 2),
        "results": results,
        "machine": machine_at_end(),
    }
    write_json(args.out, report, end="")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
