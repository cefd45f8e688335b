"""Evaluate agents over a split of one or more envs and print one results table (success
rate, mean steps, per category). Plug in your own agent by adding it to AGENTS: anything with
``reset(obs, info)`` and ``act(obs, info) -> action`` works.

The tasks are the env's own list (``env.unwrapped.task_ids``: the split and category's tasks),
so every id that samples tasks works; ids that replay a dataset are refused at start.

Usage: python examples/benchmark_agent.py --env-id GuiGym/WikiHow-v0 --agents random oracle --split test
       python examples/benchmark_agent.py --env-id GuiGym/WikiHow-v0 GuiGym/AndroidWorld-v0 --limit 20
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Callable

import gymnasium as gym

import gui_gym
from gui_gym.agents import Agent, OracleAgent, RandomAgent, run_episode
from gui_gym.core.trajectory import atomic_write_text

AGENTS: dict[str, Callable[[gym.Env, int], Agent]] = {
    "random": lambda env, seed: RandomAgent(env, seed=seed),
    "oracle": lambda env, seed: OracleAgent(env),
}


def task_ids(env: gym.Env, limit: int | None) -> list[str]:
    """The env's tasks for its split and category; ``limit`` of them spread evenly over the
    list (tasks are grouped by category, so a prefix would show one category only)."""
    tasks = list(env.unwrapped.task_ids)
    if limit is None or limit >= len(tasks):
        return tasks
    return [tasks[i * len(tasks) // limit] for i in range(limit)]


def evaluate(
    env_id: str,
    agent_name: str,
    split: str,
    limit: int | None,
    seed: int,
    category: str | None = None,
) -> dict:
    """Run the agent once on every task of the split (or ``limit`` tasks spread over it)."""
    env = gym.make(env_id, split=split, category=category)
    by_category: dict[str, list[tuple[bool, int]]] = defaultdict(list)
    suite = env.unwrapped.suite
    for i, task_id in enumerate(task_ids(env, limit)):
        agent = AGENTS[agent_name](env, seed + i)
        trajectory = run_episode(env, agent, seed=seed + i, options={"task": task_id})
        by_category[suite[task_id].category].append((trajectory.success, len(trajectory)))
    env.close()
    rows = {}
    for name, results in sorted(by_category.items()):
        rows[name] = {
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


def refuse(env_ids: list[str], split: str, category: str | None) -> str | None:
    """Why these ids cannot run here (checked before any episode), or None."""
    for env_id in env_ids:
        if env_id in gui_gym.REPLAY_ENV_IDS:
            return f"{env_id} replays an expert dataset; evaluate on it with gui-gym eval --sop"
        if env_id not in gym.registry:
            return f"unknown env id {env_id!r}; see gui-gym list"
        try:
            env = gym.make(env_id, split=split, category=category)
        except (ValueError, KeyError, gym.error.DependencyNotInstalled) as err:
            return f"{env_id}: {err}"
        env.close()
    return None


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env-id", nargs="+", default=["GuiGym/WikiHow-v0"])
    parser.add_argument("--agents", nargs="+", default=["random", "oracle"], choices=sorted(AGENTS))
    parser.add_argument("--split", default="test", choices=["train", "test", "all"])
    parser.add_argument("--category", default=None, help="only this category's tasks")
    parser.add_argument(
        "--limit", type=int, default=None, help="evaluate N tasks spread over the split"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="also write the table as JSON")
    parser.add_argument(
        "--summary", action="store_true", help="one row per env and agent (no categories)"
    )
    args = parser.parse_args()
    reason = refuse(args.env_id, args.split, args.category)
    if reason is not None:
        parser.exit(2, f"{parser.prog}: error: {reason}\n")

    results = {
        env_id: {
            name: evaluate(env_id, name, args.split, args.limit, args.seed, args.category)
            for name in args.agents
        }
        for env_id in args.env_id
    }
    print(f"\nsplit={args.split}" + (f", category={args.category}" if args.category else ""))
    width = max(len(env_id) for env_id in args.env_id)
    cat_width = max(12, *(len(c) for r in results.values() for a in r.values() for c in a))
    header = f"{'env':<{width}} {'agent':<10} {'category':<{cat_width}}"
    print(f"{header} {'episodes':>8} {'success':>9} {'mean steps':>11}")
    for env_id, by_agent in results.items():
        for name, rows in by_agent.items():
            for category, row in rows.items():
                if args.summary and category != "all":
                    continue
                print(
                    f"{env_id:<{width}} {name:<10} {category:<{cat_width}} {row['episodes']:>8} "
                    f"{row['success_rate']:>9.1%} {row['mean_steps']:>11.1f}"
                )
    if args.out:
        atomic_write_text(args.out, json.dumps(results, indent=1) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
