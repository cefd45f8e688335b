"""Speed of ``gui-gym view``: render a 1,000-episode file, open the page in Chromium.

Records ``--episodes`` real WikiHow episodes (oracle and random alternating, every
single-env reward wrapper stacked, UI trees kept: :func:`gui_gym.view.sample.record_sample_run`),
then measures

* ``render_s``: ``gui-gym view FILE --out report.html`` end to end in a fresh process (Python
  start and imports included), and ``build_s``, the same in-process;
* ``open_s``: in headless Chromium (Debian's, via Selenium), from ``driver.get`` of the
  ``file://`` URL until the episode list is built (median of ``--repeats`` loads); the
  browser's own navigation-to-rendered time beside it; the time to open one episode page
  and to apply a filter;
* the same for ``--shot-episodes`` episodes with their screenshots inlined.

On a shared machine wall times swell with the load (recorded in ``machine``), so CPU times
are measured beside them: ``render_cpu_s`` (the ``gui-gym view`` process), ``build_cpu_s``,
and ``open_cpu_s``, the CPU seconds all browser processes spent opening the page (read from
``/proc``). On an idle machine the wall times approach the CPU times.

Bars (issue 22): a 1,000-episode file renders in under 10 s and opens in under 2 s.

Usage: python benchmarks/bench_view.py [--episodes 1000] [--out benchmarks/results/bench_view.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gui_gym.core.trajectory import atomic_write_text
from gui_gym.envs.miniwob.browser import close_chromium, descendants, open_chromium
from gui_gym.view import build_report
from gui_gym.view.sample import record_sample_run

RENDER_BAR_S = 10.0
OPEN_BAR_S = 2.0


def _browser_cpu_s(driver: Any) -> float:
    """CPU seconds used so far by the driver's browser processes (Linux ``/proc``)."""
    root = driver.service.process.pid
    ticks = 0
    for pid in [root, *descendants(root)]:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def _wait_view(driver: Any, view: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while driver.execute_script("return document.body && document.body.dataset.view") != view:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the page did not show its {view} view in {timeout} s")
        time.sleep(0.005)


def measure_page(driver: Any, report: Path, repeats: int) -> dict[str, Any]:
    """Open times of ``report`` in ``driver`` (seconds, median of ``repeats``)."""
    opens, cpu, browser_opens, episodes, filters = [], [], [], [], []
    for _ in range(repeats):
        driver.get("about:blank")
        time.sleep(0.5)  # let the blank page settle so its work is not counted
        before = _browser_cpu_s(driver)
        start = time.perf_counter()
        driver.get(report.as_uri())
        _wait_view(driver, "list")
        opens.append(time.perf_counter() - start)
        cpu.append(_browser_cpu_s(driver) - before)
        browser_opens.append(
            driver.execute_script("return performance.now()") / 1000.0
        )  # navigation start to now, by the browser's clock
        rows = driver.execute_script("return document.querySelectorAll('tr.episode-row').length")
        start = time.perf_counter()
        driver.execute_script(
            "const s = document.getElementById('filter-outcome');"
            "s.value = 'failure'; s.dispatchEvent(new Event('change'));"
        )
        shown = driver.execute_script(
            "return [...document.querySelectorAll('tr.episode-row')].filter(r => !r.hidden).length"
        )
        filters.append(time.perf_counter() - start)
        start = time.perf_counter()
        driver.execute_script("location.hash = '#/e/0/1'")
        _wait_view(driver, "episode")
        episodes.append(time.perf_counter() - start)
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    return {
        "open_s": round(statistics.median(opens), 3),
        "open_s_all": [round(t, 3) for t in opens],
        "open_cpu_s": round(statistics.median(cpu), 3),
        "open_cpu_s_all": [round(t, 3) for t in cpu],
        "browser_navigation_to_list_s": round(statistics.median(browser_opens), 3),
        "filter_s": round(statistics.median(filters), 4),
        "episode_page_s": round(statistics.median(episodes), 4),
        "rows": rows,
        "failures_shown_by_filter": shown,
        "console_errors": len(errors),
    }


def measure_render(trajectories: Path, report: Path) -> dict[str, Any]:
    """``gui-gym view`` in a fresh process, and :func:`build_report` in this one."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "gui_gym.cli", "view", str(trajectories), "--out", str(report)],
        check=True,
        env=env,
        capture_output=True,
    )
    render = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    render_cpu = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
    start, start_cpu = time.perf_counter(), time.process_time()
    summary = build_report([trajectories], report)
    build, build_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    return {
        "render_s": round(render, 3),
        "render_cpu_s": round(render_cpu, 3),
        "build_s": round(build, 3),
        "build_cpu_s": round(build_cpu, 3),
        "episodes": summary.episodes,
        "steps": summary.steps,
        "trajectory_file_mb": round(trajectories.stat().st_size / 1e6, 2),
        "report_mb": round(summary.bytes / 1e6, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--shot-episodes", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/bench_view.json"))
    args = parser.parse_args()

    results: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average_1min_at_start": round(os.getloadavg()[0], 1),
        },
        "bars": {"render_s": RENDER_BAR_S, "open_s": OPEN_BAR_S},
    }
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        start = time.perf_counter()
        text_run = record_sample_run(folder / "text.jsonl", args.episodes)
        shot_run = record_sample_run(folder / "shots.jsonl", args.shot_episodes, screenshots=True)
        results["recording_s"] = round(time.perf_counter() - start, 1)
        cases = {"text_with_trees": text_run, "with_screenshots": shot_run}
        driver = open_chromium()
        try:
            for name, run in cases.items():
                report = folder / f"{name}.html"
                case = measure_render(run, report)
                case.update(measure_page(driver, report, args.repeats))
                results[name] = case
                print(name, json.dumps(case), flush=True)
        finally:
            close_chromium(driver)
    main_case = results["text_with_trees"]
    results["machine"]["load_average_1min_at_end"] = round(os.getloadavg()[0], 1)
    results["meets_bars"] = {
        "render_wall": main_case["render_s"] < RENDER_BAR_S,
        "open_wall": main_case["open_s"] < OPEN_BAR_S,
        "render_cpu": main_case["render_cpu_s"] < RENDER_BAR_S,
        "open_cpu": main_case["open_cpu_s"] < OPEN_BAR_S,
    }
    atomic_write_text(args.out, json.dumps(results, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
