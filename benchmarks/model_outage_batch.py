"""A model-server outage over a batch of env steps: wall time of ``--episodes`` WikiHow
episodes (``--envs`` at once, in-process envs) whose ``PRMWrapper`` asks an
``OpenAICompatPRM`` served by a server that trickles a byte every 2 s or never answers
(``timeout``, ``max_retries=0``). Each episode's first step runs into the deadline and ends
as ``infra_error``, so the run costs ``ceil(episodes / envs)`` deadlines when the envs of a
round wait together, and ``episodes`` deadlines when they wait one after another.

Usage::

    python benchmarks/model_outage_batch.py                       # 24 steps, 8 envs, 5 s
    python benchmarks/model_outage_batch.py --episodes 4 --envs 4 --timeout 1   # seconds

Writes JSON (``--out``): per server mode ``wall_s``, ``infra_errors``, ``peak_connections``
and ``ideal_s`` (``ceil(episodes / envs) * timeout``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import time
from pathlib import Path

import gymnasium as gym

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.core.files import atomic_write_text
from gui_gym.models.llm.stub_server import SlowServer
from gui_gym.models.prm import OpenAICompatPRM
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine, as_batch_agent
from gui_gym.wrappers import PRMWrapper


def measure(mode: str, episodes: int, envs: int, timeout: float) -> dict[str, float]:
    server = SlowServer(mode, every=2.0)
    with server.running() as url:

        def make() -> gym.Env:
            prm = OpenAICompatPRM("prm", base_url=url, timeout=timeout, max_retries=0)
            return PRMWrapper(gym.make("GuiGym/WikiHow-v0", split="test"), prm)

        with RolloutEngine(make, as_batch_agent("oracle"), num_envs=envs) as engine:
            started = time.perf_counter()
            trajectories = engine.run([EpisodeSpec(None, seed) for seed in range(episodes)])
            wall = time.perf_counter() - started
        peak = server.peak
    return {
        "wall_s": round(wall, 2),
        "infra_errors": sum(t.infra_error is not None for t in trajectories),
        "peak_connections": peak,
        "ideal_s": math.ceil(episodes / envs) * timeout,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results/model_outage_batch.json")
    parser.add_argument("--episodes", type=int, default=24)
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=5.0)
    args = parser.parse_args()
    if args.episodes < 1 or args.envs < 1 or not args.timeout > 0:
        parser.error("--episodes and --envs must be >= 1 and --timeout > 0")
    result = {
        "settings": {"episodes": args.episodes, "envs": args.envs, "timeout": args.timeout},
        "machine": {
            "cpus": os.cpu_count(),
            "load": os.getloadavg(),
            "python": platform.python_version(),
        },
        "modes": {
            m: measure(m, args.episodes, args.envs, args.timeout) for m in ("trickle", "silent")
        },
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["modes"]))


if __name__ == "__main__":
    main()
