"""``gui-gym serve-openenv`` throughput: steps/s over WebSocket with 1, 4 and 16 concurrent
sessions (OpenEnv's client, one asyncio loop), the time to open them (each starts a worker
process), and the same env stepped in-process in the same run as the yardstick.

The server is the library's (``make_server``) in a thread of this process on a free port;
every session runs its env in its own worker process, as the command does. Each session
resets, then sends ``--steps`` cheap actions (``SCROLL(down)``, reset when an episode
ends); the reward stack is ``--reward`` (``outcome+progress`` by default).

Usage::

    python benchmarks/bench_openenv.py                           # 1, 4, 16 sessions
    python benchmarks/bench_openenv.py --sessions 2 --steps 10   # a few seconds (the test)

Writes JSON (``--out``): per session count ``open_s`` (all sessions' first reset, worker
start included), ``steps_per_s`` (all sessions together), ``step_ms`` (one session's mean
round trip), and ``local_steps_per_s`` (one in-process env with the same stack).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import threading
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

import gui_gym  # noqa: F401
from gui_gym.core.trajectory import atomic_write_text
from gui_gym.train.reward_stack import RewardStack

ENV = "GuiGym/WikiHow-v0"
ACTION = "SCROLL(down)"


def local_steps_per_s(reward: str, steps: int) -> float:
    """The env with the same reward stack, stepped in this process."""
    env = RewardStack.from_text(reward).wrap(gym.make(ENV))
    env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        *_, terminated, truncated, _ = env.step(ACTION)
        if terminated or truncated:
            env.reset()
    elapsed = time.perf_counter() - start
    env.close()
    return steps / elapsed


async def _session(client: Any, steps: int) -> None:
    for _ in range(steps):
        result = await client.step(ACTION)
        if result.done:
            await client.reset()


async def measure(url: str, sessions: int, steps: int) -> dict[str, float]:
    """Open ``sessions`` clients, then step them all ``steps`` times."""
    from gui_gym.integrations.openenv import GuiGymEnvClient

    clients = [GuiGymEnvClient(base_url=url) for _ in range(sessions)]
    try:
        start = time.perf_counter()
        await asyncio.gather(*(c.reset(seed=k) for k, c in enumerate(clients)))
        opened = time.perf_counter() - start
        start = time.perf_counter()
        await asyncio.gather(*(_session(c, steps) for c in clients))
        elapsed = time.perf_counter() - start
    finally:
        await asyncio.gather(*(c.close() for c in clients))
    return {
        "sessions": sessions,
        "open_s": round(opened, 3),
        "steps_per_s": round(sessions * steps / elapsed, 1),
        "step_ms": round(1000 * elapsed / steps, 2),
    }


def run(sessions: list[int], steps: int, reward: str = "outcome+progress") -> dict[str, Any]:
    """The whole benchmark; returns the JSON-ready results."""
    from gui_gym.integrations.openenv import ServedEnv, bind_socket, make_server

    sock = bind_socket("127.0.0.1", 0)
    server = make_server(
        ServedEnv(ENV, reward=reward), max_sessions=max(sessions), log_level="error"
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.05)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        load_before = os.getloadavg()[0]
        rows = [asyncio.run(measure(url, n, steps)) for n in sessions]
        local = local_steps_per_s(reward, max(steps, 200))
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
    return {
        "benchmark": "openenv_server",
        "env_id": ENV,
        "reward": reward,
        "steps_per_session": steps,
        "rows": rows,
        "local_steps_per_s": round(local, 1),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_1min_before": round(load_before, 2),
            "load_1min_after": round(os.getloadavg()[0], 2),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--steps", type=int, default=200, help="steps per session")
    parser.add_argument("--reward", default="outcome+progress")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/bench_openenv.json"))
    args = parser.parse_args()
    if min(args.sessions) < 1 or args.steps < 1:
        parser.error("--sessions and --steps must be >= 1")
    results = run(args.sessions, args.steps, args.reward)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out, json.dumps(results, indent=2) + "\n")
    for row in results["rows"]:
        print(
            f"{row['sessions']:>3} sessions: open {row['open_s']:.2f} s, "
            f"{row['steps_per_s']:.0f} steps/s, {row['step_ms']:.1f} ms a step"
        )
    print(f"in-process: {results['local_steps_per_s']:.0f} steps/s; {args.out}")


if __name__ == "__main__":
    main()
