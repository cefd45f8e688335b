"""ALFWorld speed against raw alfworld on the same games, written as JSON
(``gui-gym bench --alfworld``; ``benchmarks/bench_alfworld.py``).

* **build**: generating each game, translating its PDDL and checking it with the planner,
  into an empty cache folder (what the first use of a game costs);
* **raw**: alfworld as its own agents play it, ``AlfredDemangler(PddlEnv(...))`` asked for
  ``won`` and ``admissible_commands`` (no expert): reset (load + reset) and steps/s over a
  seeded random walk of admissible commands; ``raw_with_planner`` adds ``policy_commands``,
  as ``AlfredTWEnv`` with the planner expert runs (the planner at every step);
* **ours**: ``GuiGym/ALFWorld-v0``'s ``reset`` and ``step`` (the whole Gymnasium step, the
  screen included) over the same commands; the first reset in a process is reported apart
  (it parses ALFWorld's grammar once);
* **agree**: whether every step's text, admissible commands and ``won`` were equal.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import gui_gym
from gui_gym.cli.bench.summary import machine
from gui_gym.core.files import atomic_write_text

__all__ = ["format_report", "run"]


def _walk(env: Any, commands_of: Any, steps: int, seed: int) -> list[str]:
    """A seeded random walk of admissible commands on a raw engine (its commands)."""
    rng = random.Random(seed)
    state = env.reset()
    walk = []
    for _ in range(steps):
        command = rng.choice(commands_of(state))
        walk.append(command)
        state, _, done = env.step(command)
        if done:
            break
    return walk


def run(
    out: str | Path | None = None, games: int = 6, steps: int = 20, seed: int = 0
) -> dict[str, Any]:
    """Every ALFWorld measurement on ``games`` train games (one per task type first)."""
    import textworld
    from alfworld.agents.environment.alfred_tw_env import AlfredDemangler
    from textworld.envs.pddl import PddlEnv

    from gui_gym.envs.alfworld.env import ALFWorldEnv

    folder = Path(tempfile.mkdtemp(prefix="gui-gym-alfworld-bench-"))
    old_cache = os.environ.get("GUI_GYM_CACHE")
    os.environ["GUI_GYM_CACHE"] = str(folder)
    try:
        counts = {"train": games, "valid_seen": 0, "valid_unseen": 0}
        env = ALFWorldEnv(num_games=counts, seed_games=seed, max_steps=10 * steps)
        rows = []
        first_reset = None
        for i in range(games):
            task = env.suite[f"train/{i:04d}"]
            t0 = time.perf_counter()
            path = str(env.game_path(task))
            build_s = time.perf_counter() - t0

            row: dict[str, Any] = {"game": task.task_id, "type": task.category, "build_s": build_s}
            for name, infos in (
                ("raw", textworld.EnvInfos(won=True, admissible_commands=True)),
                (
                    "raw_with_planner",
                    textworld.EnvInfos(won=True, admissible_commands=True, policy_commands=True),
                ),
            ):
                raw = AlfredDemangler(PddlEnv(infos))
                t0 = time.perf_counter()
                raw.load(path)
                raw_state = raw.reset()
                reset_s = time.perf_counter() - t0
                if name == "raw":
                    walk = _walk(raw, lambda s: s["admissible_commands"], steps, seed + i)
                    raw.load(path)
                    raw_state = raw.reset()
                trace = [(raw_state.feedback, raw_state["admissible_commands"], raw_state["won"])]
                n = walk if name == "raw" else walk[:2]  # a planner run per step: slow
                t0 = time.perf_counter()
                for command in n:
                    raw_state, _, _ = raw.step(command)
                    trace.append(
                        (raw_state.feedback, raw_state["admissible_commands"], raw_state["won"])
                    )
                elapsed = time.perf_counter() - t0
                row[name] = {
                    "reset_s": reset_s,
                    "steps": len(n),
                    "steps_per_s": len(n) / elapsed if elapsed > 0 else None,
                }
                if name == "raw":
                    raw_trace = trace
            resets = []
            for _ in range(3):
                t0 = time.perf_counter()
                env.reset(options={"task": task.task_id})
                resets.append(time.perf_counter() - t0)
            if first_reset is None:
                first_reset = resets[0]
            trace = [(env._state.feedback, env._state["admissible_commands"], env._state["won"])]
            t0 = time.perf_counter()
            for command in walk:
                _, reward, term, trunc, info = env.step(command)
                state = env._state
                trace.append((state.feedback, state["admissible_commands"], state["won"]))
            elapsed = time.perf_counter() - t0
            row["ours"] = {
                "reset_s": statistics.median(resets[1:] if i == 0 else resets),
                "resets_s": resets,
                "steps": len(walk),
                "steps_per_s": len(walk) / elapsed if elapsed > 0 else None,
            }
            row["agree"] = trace == raw_trace
            row["ratio"] = row["ours"]["steps_per_s"] / row["raw"]["steps_per_s"]
            row["ratio_to_raw_with_planner"] = (
                row["ours"]["steps_per_s"] / row["raw_with_planner"]["steps_per_s"]
            )
            rows.append(row)
        env.close()
    finally:
        if old_cache is None:
            os.environ.pop("GUI_GYM_CACHE", None)
        else:
            os.environ["GUI_GYM_CACHE"] = old_cache
        shutil.rmtree(folder, ignore_errors=True)
    ours_steps = sum(r["ours"]["steps"] for r in rows)
    ours_time = sum(r["ours"]["steps"] / r["ours"]["steps_per_s"] for r in rows)
    raw_time = sum(r["raw"]["steps"] / r["raw"]["steps_per_s"] for r in rows)
    summary = {
        "games": len(rows),
        "steps_per_game": steps,
        "ours_steps_per_s": ours_steps / ours_time,
        "raw_steps_per_s": ours_steps / raw_time,
        "ratio": raw_time / ours_time,
        "ours_reset_median_s": statistics.median(r["ours"]["reset_s"] for r in rows),
        "ours_first_reset_in_process_s": first_reset,
        "raw_reset_median_s": statistics.median(r["raw"]["reset_s"] for r in rows),
        "build_median_s": statistics.median(r["build_s"] for r in rows),
        "observations_agree": all(r["agree"] for r in rows),
    }
    report = {
        "benchmark": "alfworld",
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine(),
        "versions": {"gui_gym": gui_gym.__version__, **_versions()},
        "summary": summary,
        "games": rows,
    }
    if out is not None:
        atomic_write_text(out, json.dumps(report, indent=1) + "\n")
    return report


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("alfworld", "textworld", "fast-downward-textworld")}


def format_report(report: dict[str, Any]) -> str:
    """A plain-text summary of a :func:`run` report."""
    s = report["summary"]
    lines = [
        f"{r['game']} {r['type']:<31} build {r['build_s']:5.1f} s | raw reset "
        f"{r['raw']['reset_s']:5.2f} s {r['raw']['steps_per_s']:6.1f} steps/s "
        f"(planner each step {r['raw_with_planner']['steps_per_s']:5.2f}) | ours reset "
        f"{r['ours']['reset_s']:5.2f} s {r['ours']['steps_per_s']:6.1f} steps/s | x{r['ratio']:.1f}"
        f"{'' if r['agree'] else '  OBSERVATIONS DIFFER'}"
        for r in report["games"]
    ]
    lines.append(
        f"{s['games']} games: ours {s['ours_steps_per_s']:.1f} steps/s vs raw "
        f"{s['raw_steps_per_s']:.1f} (x{s['ratio']:.1f}); reset median ours "
        f"{s['ours_reset_median_s']:.2f} s (first in a process {s['ours_first_reset_in_process_s']:.2f}"
        f" s) vs raw {s['raw_reset_median_s']:.2f} s; first build of a game (median) "
        f"{s['build_median_s']:.1f} s; observations agree: {s['observations_agree']}"
    )
    return "\n".join(lines)
