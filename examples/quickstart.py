"""Quickstart: make an env, stack a wrapper, run an agent, print the episode.

Usage: python examples/quickstart.py [--agent oracle|random] [--task TASK_ID] [--seed 0]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import gymnasium as gym

import gui_gym  # noqa: F401  (registers the GuiGym/* ids)
from gui_gym.agents import OracleAgent, RandomAgent
from gui_gym.core.trajectory import read_trajectories
from gui_gym.wrappers import RecordTrajectories


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agent", choices=["oracle", "random"], default="oracle")
    parser.add_argument(
        "--task", default=None, help="a task id; default: sampled from the test split"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    # 1. Make the env. Any gym.make argument works: split, category, screenshot, max_steps.
    env = gym.make("GuiGym/WikiHow-v0", task=args.task, split="test")
    # 2. Stack a wrapper: every finished episode is appended to a JSONL file.
    out = Path(tempfile.mkdtemp()) / "episodes.jsonl"
    env = RecordTrajectories(env, out, agent_name=args.agent)
    # 3. Run an agent.
    agent = OracleAgent(env) if args.agent == "oracle" else RandomAgent(env, seed=args.seed)
    obs, info = env.reset(seed=args.seed)
    print(f"task {info['task_id']} ({info['category']})\n{obs['instruction']}\n")
    print(obs["screen"], "\n")
    done = False
    while not done:
        action = agent.act(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        flag = "" if info["action_valid"] else f"  [invalid: {info['action_error']}]"
        print(f"step {info['step']:>2}: {info['action']:<40} {info['action_description']}{flag}")
        if info["milestones"]:
            print(f"         milestones: {', '.join(info['milestones'])}")
    print(
        f"\n{'success' if info['success'] else 'failure'}: reward {reward:g} after {info['step']} steps"
    )
    env.close()
    # 4. The episode is on disk.
    (trajectory,) = read_trajectories(out)
    print(f"recorded {len(trajectory)} steps to {out}")


if __name__ == "__main__":
    main()
