"""Success of an oracle, random agents and a scripted heuristic on AndroidWorld (116
templates) and AndroidWorld+ (multi-app), with AndroidWorld's scoring (an episode the agent
does not end itself scores 0; success is a score of 1).

    python benchmarks/androidworld_suites.py --seeds 5 --out benchmarks/results/androidworld_suites.json

Agents:

* ``oracle``: the templates' scripted experts.
* ``random``: uniform over the env's candidate actions; never ends an episode.
* ``random_done``: the same, saying DONE with probability 0.05 per step.
* ``heuristic``: opens, in order, every app the instruction names, taps a list row that
  holds a quoted name from the instruction when one is on screen, then says DONE (a
  navigation baseline that reads nothing).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import gymnasium as gym

import gui_gym  # noqa: F401
from gui_gym.agents import OracleAgent, RandomAgent, run_episode
from gui_gym.core.actions import Action, ActionType
from gui_gym.core.trajectory import atomic_write_text
from gui_gym.envs.androidworld.apps import default_apps


class HeuristicAgent:
    """Opens the apps the instruction names, taps a row naming a quoted string, then DONE."""

    name = "heuristic"

    def __init__(self, env: gym.Env):
        self._env = env.unwrapped
        self._titles = [a.title for a in default_apps()]

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        text = observation["instruction"]
        found = [(text.find(t), t) for t in self._titles if t in text]
        self._apps = [t for _, t in sorted(found)]
        self._quoted = re.findall(r"'([^']+)'|\"([^\"]+)\"", text)
        self._quoted = [a or b for a, b in self._quoted]
        self._tapped = False

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        if not self._tapped and self._quoted:
            for element in self._env.ui_tree.elements:
                if element.clickable and any(q in element.text for q in self._quoted):
                    self._tapped = True
                    return Action(ActionType.CLICK, index=element.index)
        if self._apps:
            self._tapped = False
            return Action(ActionType.OPEN_APP, text=self._apps.pop(0))
        return Action(ActionType.DONE)


def _agent(kind: str, env: gym.Env, seed: int) -> Any:
    if kind == "oracle":
        return OracleAgent(env)
    if kind == "random":
        return RandomAgent(env, seed=seed)
    if kind == "random_done":
        return RandomAgent(env, seed=seed, done_prob=0.05)
    return HeuristicAgent(env)


def evaluate(env_id: str, seeds: int, agents: list[str], max_steps: int) -> dict[str, Any]:
    probe = gym.make(env_id)
    templates = probe.unwrapped.templates
    results: dict[str, Any] = {}
    for kind in agents:
        successes: dict[str, list[float]] = defaultdict(list)
        for name in sorted(templates):
            env = gym.make(env_id, task=name, max_steps=max_steps)
            for seed in range(seeds):
                trajectory = run_episode(env, _agent(kind, env, seed), seed=seed)
                successes[name].append(float(trajectory.task_reward == 1.0))
        flat = [s for v in successes.values() for s in v]
        solved_at_start = {n for n, t in templates.items() if t.solved_at_start}
        rest = [s for n, v in successes.items() if n not in solved_at_start for s in v]
        results[kind] = {
            "episodes": len(flat),
            "success": sum(flat) / len(flat),
            "success_without_solved_at_start": sum(rest) / len(rest),
            "templates_solved_every_seed": sum(all(v) for v in successes.values()),
        }
    return {"templates": len(templates), "seeds": seeds, "max_steps": max_steps, **results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--max-steps", type=int, default=20)
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/androidworld_suites.json")
    )
    args = parser.parse_args()
    started = time.perf_counter()
    agents = ["oracle", "random", "random_done", "heuristic"]
    report = {
        env_id: evaluate(env_id, args.seeds, agents, args.max_steps)
        for env_id in ("GuiGym/AndroidWorld-v0", "GuiGym/AndroidWorldPlus-v0")
    }
    report["seconds"] = round(time.perf_counter() - started, 1)
    atomic_write_text(args.out, json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
