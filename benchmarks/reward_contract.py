"""The reward contract of every simulated id, measured: agents that should earn nothing.

Issue 16's audit found WikiHow QA solvable by guessing. This runs, on every task of every
simulated id (each task once, seed = its position):

* ``do_nothing``: ``DO_NOTHING()`` until the step budget ends the episode;
* ``done_at_once``: ``DONE()`` as the first action;
* ``garbage_answer``: ``ANSWER("qzxv garbage 7f3a")`` as the first action;
* ``random``: uniform over ``candidate_actions()`` (seeded per episode);

and, on WikiHow's QA tasks, ``ANSWER("<c>")`` at step 1 for each constant ``c`` in 0..30
(the union: tasks some constant solves). Success rates and mean returns go to JSON.
AndroidWorld's *Verify* templates (``info["solved_at_start"]``) succeed for DONE at once by
AndroidWorld's design and are counted separately.

Usage::

    python benchmarks/reward_contract.py [--out benchmarks/results/reward_contract.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import gui_gym
from gui_gym.core.trajectory import atomic_write_text
from gui_gym.envs.replay import SAMPLE_DATASET

GARBAGE = 'ANSWER("qzxv garbage 7f3a")'
CONSTANTS = [str(c) for c in range(31)]


def _make(env_id: str) -> gym.Env:
    kwargs: dict[str, Any] = {"dataset": SAMPLE_DATASET} if "Replay" in env_id else {}
    if "Replay" not in env_id:
        kwargs["split"] = "all" if env_id == "GuiGym/AndroidWorld-v0" else "train"
    return gym.make(env_id, **kwargs)


def _task_ids(env: gym.Env, env_id: str) -> list[str]:
    base = env.unwrapped
    if "Replay" in env_id:
        return [t.trajectory_id for t in base.dataset]
    ids = list(base.task_ids)  # the train split; the test split's tasks follow
    return ids + [t.task_id for t in base.suite.select("test", None) if t.task_id not in ids]


def _episode(env: gym.Env, env_id: str, task: str, seed: int, policy) -> dict[str, Any]:
    options = {"trajectory": task} if "Replay" in env_id else {"task": task}
    try:
        obs, info = env.reset(seed=seed, options=options)
    except ValueError:
        obs, info = env.reset(seed=seed)
    total, done, steps = 0.0, False, 0
    rng = np.random.default_rng(seed)
    solved_at_start = bool(info.get("solved_at_start", False))
    while not done:
        action = policy(env, rng, steps)
        obs, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        steps += 1
        done = terminated or truncated
    return {
        "success": bool(info.get("success", False)),
        "return": total,
        "steps": steps,
        "solved_at_start": solved_at_start,
    }


def _random(env: gym.Env, rng: np.random.Generator, step: int) -> str:
    candidates = env.unwrapped.candidate_actions()
    return str(candidates[int(rng.integers(len(candidates)))])


AGENTS = {
    "do_nothing": lambda env, rng, step: "DO_NOTHING()",
    "done_at_once": lambda env, rng, step: "DONE()",
    "garbage_answer": lambda env, rng, step: GARBAGE,
    "random": _random,
}


def measure(env_id: str) -> dict[str, Any]:
    env = _make(env_id)
    tasks = _task_ids(env, env_id)
    out: dict[str, Any] = {"tasks": len(tasks)}
    for name, policy in AGENTS.items():
        start = time.perf_counter()
        rows = [_episode(env, env_id, t, i, policy) for i, t in enumerate(tasks)]
        verify = [r for r in rows if r["solved_at_start"]]
        rest = [r for r in rows if not r["solved_at_start"]]
        out[name] = {
            "success_rate": float(np.mean([r["success"] for r in rows])),
            "successes": int(sum(r["success"] for r in rows)),
            "mean_return": float(np.mean([r["return"] for r in rows])),
            "solved_at_start_tasks": len(verify),
            "successes_excluding_solved_at_start": int(sum(r["success"] for r in rest)),
            "seconds": round(time.perf_counter() - start, 2),
        }
    env.close()
    return out


def wikihow_constants() -> dict[str, Any]:
    env = gym.make("GuiGym/WikiHow-v0", split="train")
    suite = env.unwrapped.suite
    qa = [t.task_id for t in suite if t.category == "QA"]
    solved: dict[str, int] = {}
    union: set[str] = set()
    for c in CONSTANTS:
        wins = 0
        for task in qa:
            env.reset(seed=0, options={"task": task})
            _, _, _, _, info = env.step(f'ANSWER("{c}")')
            if info["success"]:
                wins += 1
                union.add(task)
        solved[c] = wins
    env.close()
    best = max(solved, key=solved.get)
    return {
        "qa_tasks": len(qa),
        "constants": CONSTANTS,
        "solved_by_constant": solved,
        "best_constant": best,
        "best_constant_solves": solved[best],
        "union_solved": len(union),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/reward_contract.json"))
    args = parser.parse_args()
    ids = [*gui_gym.ENV_IDS, "GuiGym/SemiOnlineReplay-v0"]
    report: dict[str, Any] = {"ids": {}, "wikihow_qa_constant_answers": wikihow_constants()}
    for env_id in ids:
        report["ids"][env_id] = measure(env_id)
        print(env_id, json.dumps(report["ids"][env_id]), flush=True)
    print("WikiHow QA constants:", json.dumps(report["wikihow_qa_constant_answers"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out, json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
