"""One file with every benchmark's headline figures and the machine and load they ran on.

``make bench`` ends with ``python benchmarks/bench_summary.py``, which reads the reports in
``benchmarks/results/`` and writes ``benchmarks/results/summary.json``. Speed figures mean
little without the load they were measured under: the summary records the machine (CPU
count, platform) and the load averages when it was written (the 5- and 15-minute figures
cover the benchmarks that just ran). A reference run measured on an idle machine is kept,
committed, in ``benchmarks/reference/`` (see its README).
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gui_gym.core.trajectory import atomic_write_text

SUMMARY_NAME = "summary.json"


def _envs(report: dict[str, Any]) -> dict[str, Any]:
    rows = {}
    for row in report["results"]:
        kind = "screenshot" if row["screenshot"] else "text"
        rows.setdefault(row["id"], {})[kind] = {
            "steps_per_s": row["steps_per_s"],
            "resets_per_s": row["resets_per_s"],
            "ratio_to_cartpole": row["ratio_to_cartpole"],
        }
    return {
        "cartpole_steps_per_s": report["cartpole"]["steps_per_s"],
        "import_gui_gym_s": report["import_gui_gym_s"],
        "ids": rows,
    }


def _miniwob(report: dict[str, Any]) -> dict[str, Any]:
    return {
        kind: {
            key: part[key]
            for key in ("ours_steps_per_s", "raw_steps_per_s", "ratio", "rewards_agree")
        }
        for kind, part in report["summary"].items()
    }


def _webshop(report: dict[str, Any]) -> dict[str, Any]:
    build, search = report["build"], report["search"]
    return {
        "build": {
            "products": build["products"],
            "build_total_s": build["build_total_s"],
            "index_array_mib": build["index_array_bytes"] / 2**20,
        },
        "search_p50_ms": search["instruction"]["p50_ms"],
        "env_steps_per_s": {
            f"{row['id']}{' (screenshot)' if row['screenshot'] else ''}": row["steps_per_s"]
            for row in report["env"]
        },
        "success_rate": {
            f"{agents['products']} products": {
                name: agents[name]["success_rate"]
                for name in ("oracle", "webshop-greedy", "random")
            }
            for agents in report["agents"]
        },
    }


def _alfworld(report: dict[str, Any]) -> dict[str, Any]:
    s = report["summary"]
    return {
        key: s[key]
        for key in (
            "ours_steps_per_s",
            "raw_steps_per_s",
            "ratio",
            "ours_reset_median_s",
            "raw_reset_median_s",
            "observations_agree",
        )
    }


# The benchmarks whose headline figures the summary knows; any other report in the folder
# is listed with its own "summary" or "headline" entry when it has one.
HEADLINES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "envs": _envs,
    "miniwob": _miniwob,
    "webshop": _webshop,
    "alfworld": _alfworld,
}


def machine() -> dict[str, Any]:
    """The machine and its load now (load averages over 1, 5 and 15 minutes)."""
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):  # not on this platform
        load = None
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_average_1_5_15_min": load,
    }


def summarize(results_dir: str | Path) -> dict[str, Any]:
    """The summary of every benchmark report (``*.json``) in ``results_dir``.

    Raises:
        ValueError: naming a report that is not JSON or lacks a field its headline needs.
    """
    results_dir = Path(results_dir)
    benchmarks: dict[str, Any] = {}
    for path in sorted(results_dir.glob("*.json")):
        if path.name == SUMMARY_NAME:
            continue
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path} is not JSON: {err}") from None
        if not isinstance(report, dict):
            continue
        name = str(report.get("benchmark", path.stem))
        entry: dict[str, Any] = {"file": path.name, "time": report.get("time")}
        headline = HEADLINES.get(name)
        try:
            if headline is not None:
                entry["headline"] = headline(report)
            elif isinstance(report.get("headline", report.get("summary")), dict):
                entry["headline"] = report.get("headline", report.get("summary"))
        except (KeyError, TypeError) as err:
            raise ValueError(f"{path}: no {err} in this {name!r} report") from None
        if "machine" in report:
            entry["machine"] = report["machine"]
        benchmarks[path.stem] = entry
    return {
        "written": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine(),
        "note": (
            "speed figures depend on the machine and its load: compare runs only where "
            "cpus and load match; benchmarks/reference/ holds a run on an idle machine"
        ),
        "benchmarks": benchmarks,
    }


def write_summary(results_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write :func:`summarize` of ``results_dir`` to ``out`` (default: its summary.json)."""
    out = Path(out) if out is not None else Path(results_dir) / SUMMARY_NAME
    atomic_write_text(out, json.dumps(summarize(results_dir), indent=1) + "\n")
    return out
