"""MiniWoB++ speed: gui-gym's env against raw ``miniwob`` on the same tasks, in the same run.

For each task the scripted expert plays an episode through our env (actions sent as strings,
so parsing and the DOM -> UITree conversion are counted); the miniwob actions it produced are
then replayed on a raw ``miniwob`` env with the same seed. Episodes alternate between the two
so drift in the machine's speed hits both alike. Only ``step`` calls are timed for steps/s;
``reset`` calls are timed separately.
"""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.core.trajectory import atomic_write_text
from gui_gym.envs.miniwob.env import step_miniwob

__all__ = ["DEFAULT_TASKS", "format_report", "run"]

DEFAULT_TASKS = (
    "click-checkboxes-large",
    "enter-password",
    "login-user",
    "multi-orderings",
    "read-table-2",
    "enter-text",
)


def _raw_env(task: str, screenshots: bool) -> Any:
    from miniwob.environment import MiniWoBEnvironment

    from gui_gym.envs.miniwob.browser import find_browser

    chrome, driver = find_browser()
    os.environ.setdefault("MINIWOB_CHROME_BINARY", chrome)
    os.environ.setdefault("MINIWOB_CHROMEDRIVER", driver)
    env = MiniWoBEnvironment(subdomain=task, action_space_config="all_supported")
    env.instance.record_screenshots = screenshots
    return env


def bench_task(task: str, episodes: int, screenshots: bool) -> dict[str, Any]:
    """Expert episodes of ``task`` through gui-gym and replayed through raw miniwob."""
    ours = gym.make("GuiGym/MiniWoB-v0", task=task, screenshot=screenshots, time_limit_s=60)
    base = ours.unwrapped
    raw = _raw_env(task, screenshots)
    raw.instance.driver.execute_script("core.EPISODE_MAX_TIME = 60000;")
    totals = {"ours_step": 0.0, "raw_step": 0.0, "ours_reset": 0.0, "raw_reset": 0.0}
    steps = {"ours": 0, "raw": 0}
    agree = 0
    try:
        ours.reset(seed=episodes)  # starts Chromium; the raw env started its own in __init__
        for episode in range(episodes):
            t0 = time.perf_counter()
            ours.reset(seed=episode)
            totals["ours_reset"] += time.perf_counter() - t0
            replay: list[dict[str, Any]] = []
            done = False
            info: dict[str, Any] = {}
            while not done:
                action = str(base.oracle_action())
                t0 = time.perf_counter()
                _, _, terminated, truncated, info = ours.step(action)
                totals["ours_step"] += time.perf_counter() - t0
                steps["ours"] += 1
                replay.extend(base.last_miniwob_actions)
                done = terminated or truncated
            t0 = time.perf_counter()
            raw.reset(seed=base.last_seed)
            totals["raw_reset"] += time.perf_counter() - t0
            raw_reward = None
            for miniwob_action in replay:
                t0 = time.perf_counter()
                _, _, raw_done, _, raw_info = step_miniwob(raw, miniwob_action)  # drags too
                totals["raw_step"] += time.perf_counter() - t0
                steps["raw"] += 1
                if raw_done:
                    raw_reward = raw_info["raw_reward"]
                    break
            agree += int(raw_reward == info["task_reward"])
    finally:
        ours.close()
        from gui_gym.envs.miniwob.browser import descendants, reap_browser_processes

        process = raw.instance.driver.service.process
        family = [process.pid, *descendants(process.pid)]
        raw.close()
        reap_browser_processes(family)
    return {
        "task": task,
        "episodes": episodes,
        "screenshots": screenshots,
        "ours_steps": steps["ours"],
        "raw_steps": steps["raw"],
        "ours_step_s": totals["ours_step"],
        "raw_step_s": totals["raw_step"],
        "ours_reset_s": totals["ours_reset"],
        "raw_reset_s": totals["raw_reset"],
        "rewards_agree": agree,
    }


def run(
    tasks: tuple[str, ...] | list[str] = DEFAULT_TASKS,
    episodes: int = 20,
    out: str | Path | None = None,
) -> dict[str, Any]:
    """Benchmark ``tasks`` text-only and with screenshots; write JSON to ``out`` if given."""
    rows = [
        bench_task(task, episodes, screenshots) for screenshots in (False, True) for task in tasks
    ]
    summary = {}
    for screenshots in (False, True):
        part = [r for r in rows if r["screenshots"] is screenshots]
        ours = sum(r["ours_steps"] for r in part) / sum(r["ours_step_s"] for r in part)
        raw = sum(r["raw_steps"] for r in part) / sum(r["raw_step_s"] for r in part)
        summary["screenshots" if screenshots else "text"] = {
            "ours_steps_per_s": ours,
            "raw_steps_per_s": raw,
            "ratio": ours / raw,
            "ours_resets_per_s": sum(r["episodes"] for r in part)
            / sum(r["ours_reset_s"] for r in part),
            "raw_resets_per_s": sum(r["episodes"] for r in part)
            / sum(r["raw_reset_s"] for r in part),
            "rewards_agree": f"{sum(r['rewards_agree'] for r in part)}/{sum(r['episodes'] for r in part)}",
        }
    report = {
        "benchmark": "miniwob",
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "note": "steps/s counts an our-env step against the raw miniwob steps it maps to "
        "(one each for these tasks); resets are timed apart",
        "summary": summary,
        "tasks": rows,
    }
    if out is not None:
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, _dumps(report))
    return report


def _dumps(report: dict[str, Any]) -> str:
    import json

    return json.dumps(report, indent=2) + "\n"


def format_report(report: dict[str, Any]) -> str:
    """A few lines for the terminal."""
    lines = ["MiniWoB++: gui-gym vs raw miniwob (same tasks, same run)"]
    for kind, s in report["summary"].items():
        lines.append(
            f"  {kind:12s} ours {s['ours_steps_per_s']:7.1f} steps/s   raw {s['raw_steps_per_s']:7.1f}"
            f" steps/s   ratio {s['ratio']:.3f}   resets/s ours {s['ours_resets_per_s']:.1f}"
            f" raw {s['raw_resets_per_s']:.1f}   rewards agree {s['rewards_agree']}"
        )
    return "\n".join(lines)
