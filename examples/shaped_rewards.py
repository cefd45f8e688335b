"""One episode with a reward wrapper stacked: ADMIRE's milestone reward on WikiHow, each
step's shaped reward split into its components.

``MilestoneWrapper`` learns a task's milestones from a success (Algorithm 1), so a first
oracle episode initialises them; the second is printed step by step. With ``credit="online"``
each step pays ``R_outcome + eta * R_format + lambda0 * decay**epoch * r_mil`` (the hit
reward when it happens); the deferred per-step rewards of Eq. 10/11 are printed at the end.
A hashing embedder stands in for MiniLM, so this runs on the core install (no torch).

Usage: python examples/shaped_rewards.py [--env-id GuiGym/WikiHow-v0] [--agent oracle|random]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import gymnasium as gym

import gui_gym  # noqa: F401  (registers the GuiGym/* ids)
from gui_gym.agents import OracleAgent, RandomAgent, run_episode
from gui_gym.models.embeddings import HashingEmbedder
from gui_gym.models.milestones import CosineMatcher, TrajectoryMilestoneGenerator
from gui_gym.rewards.milestones import format_reward
from gui_gym.wrappers import MilestoneWrapper


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env-id", default="GuiGym/WikiHow-v0")
    parser.add_argument("--agent", choices=["oracle", "random"], default="oracle")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    env = gym.make(args.env_id, split="test")
    embedder = HashingEmbedder()
    store = Path(tempfile.mkdtemp()) / "milestones.json"
    wrapped = MilestoneWrapper(
        env,
        store,
        generator=TrajectoryMilestoneGenerator(embedder),
        matcher=CosineMatcher(embedder),
        credit="online",
    )
    task = env.unwrapped.task_ids[args.seed % len(env.unwrapped.task_ids)]
    # 1. A success teaches the wrapper this task's milestones.
    warmup = run_episode(wrapped, OracleAgent(wrapped), seed=args.seed, options={"task": task})
    print(f"task {task}: learned {len(wrapped.milestones)} milestones from an oracle success")
    for i, milestone in enumerate(wrapped.milestones, 1):
        print(f"  {i}. {milestone}")
    assert warmup.success
    # 2. The episode whose shaped rewards are shown.
    agent = OracleAgent(wrapped) if args.agent == "oracle" else RandomAgent(wrapped, seed=args.seed)
    obs, info = wrapped.reset(seed=args.seed + 1, options={"task": task})
    agent.reset(obs, info)
    print(f"\n{args.agent} on {obs['instruction']!r}")
    header = (
        f"{'step':>4} {'action':<38} {'outcome':>7} {'format':>7} {'milestone':>9} {'shaped':>7}"
    )
    print(f"{header}  similarity  hit  k/K")
    done = False
    while not done:
        obs, reward, terminated, truncated, info = wrapped.step(agent.act(obs, info))
        done = terminated or truncated
        m = info["milestone"]
        outcome = float(info["task_reward"])
        form = wrapped.eta * format_reward(info["action_valid"])
        mil = m["weight"] * m["r_mil"]
        similarity = "-" if m["similarity"] is None else f"{m['similarity']:.3f}"
        print(
            f"{info['step']:>4} {info['action'][:38]:<38} {outcome:>7.3f} {form:>7.3f} "
            f"{mil:>9.3f} {reward:>7.3f}  {similarity:>10}  {'yes' if m['hit'] else 'no':>3}  "
            f"{m['k']}/{m['K']}"
        )
    outcome_word = "success" if m["success"] else "failure"
    print(f"\n{outcome_word}; deferred R_mil per step (Eq. 10/11): ", end="")
    print(", ".join(f"{r:.3f}" for r in m["episode_rewards"]))
    print("deferred total per step (Algorithm 1, line 35): ", end="")
    print(", ".join(f"{r:.3f}" for r in m["episode_total_rewards"]))
    wrapped.close()


if __name__ == "__main__":
    main()
