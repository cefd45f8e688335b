"""Evaluate agents over a split and print a results table (success rate, mean steps, per
category). Plug in your own agent by adding it to AGENTS: anything with ``reset(obs, info)``
and ``act(obs, info) -> action`` works.

Usage: python examples/benchmark_agent.py --env-id GuiGym/WikiHow-v0 --agents random oracle --split test
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Callable

import gymnasium as gym

import gui_gym  # noqa: F401
from gui_gym.agents import Agent, OracleAgent, RandomAgent, run_episode
from gui_gym.core.trajectory import atomic_write_text

AGENTS: dict[str, Callable[[gym.Env, int], Agent]] = {
    "random": lambda env, seed: RandomAgent(env, seed=seed),
    "oracle": lambda env, seed: OracleAgent(env),
}


def evaluate(env_id: str, agent_name: str, split: str, limit: int | None, seed: int) -> dict:
    """Run the agent once on every task of the split (or the first ``limit`` tasks)."""
    env = gym.make(env_id, split=split)
    tasks = env.unwrapped.suite.select(split)[:limit]
    by_category: dict[str, list[tuple[bool, int]]] = defaultdict(list)
    for i, task in enumerate(tasks):
        agent = AGENTS[agent_name](env, seed + i)
        trajectory = run_episode(env, agent, seed=seed + i, options={"task": task.task_id})
        by_category[task.category].append((trajectory.success, len(trajectory)))
    env.close()
    rows = {}
    for category, results in sorted(by_category.items()):
        rows[category] = {
            "episodes": len(results),
            "success_rate": sum(s for s, _ in results) / len(results),
            "mean_steps": sum(n for _, n in results) / len(results),
        }
    everything = [r for results in by_category.values() for r in results]
    rows["all"] = {
        "episodes": len(everything),
        "success_rate": sum(s for s, _ in everything) / len(everything),
        "mean_steps": sum(n for _, n in everything) / len(everything),
    }
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env-id", default="GuiGym/WikiHow-v0")
    parser.add_argument("--agents", nargs="+", default=["random", "oracle"], choices=sorted(AGENTS))
    parser.add_argument("--split", default="test", choices=["train", "test", "all"])
    parser.add_argument("--limit", type=int, default=None, help="evaluate only the first N tasks")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="also write the table as JSON")
    args = parser.parse_args()

    results = {
        name: evaluate(args.env_id, name, args.split, args.limit, args.seed) for name in args.agents
    }
    print(f"\n{args.env_id}, split={args.split}")
    print(f"{'agent':<10} {'category':<12} {'episodes':>8} {'success':>9} {'mean steps':>11}")
    for name, rows in results.items():
        for category, row in rows.items():
            print(
                f"{name:<10} {category:<12} {row['episodes']:>8} "
                f"{row['success_rate']:>9.1%} {row['mean_steps']:>11.1f}"
            )
    if args.out:
        atomic_write_text(args.out, json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
