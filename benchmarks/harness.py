"""The benchmarks' shared harness: what two or more scripts in ``benchmarks/`` measure the same
way, so that they measure it the same way for good. It picks a learning benchmark's trained and
held-out tasks (oracle-solvable short tasks, :mod:`gui_gym.runs.probe`), scores a model's greedy
success on each of them, reads an arm's ``ALGO:REWARD[:NAME=VALUE...]`` string, gives seeded
95% bootstrap intervals (the same draws, in the same order, for the same seed) and 95% Wilson
intervals of a success count, finds the first point at which a curve reaches a target, writes
a JSON result atomically, loads an example script as a module and describes the machine a
result was measured on. A script run as ``python benchmarks/x.py`` has this folder on
``sys.path``; a script loaded by path (a test) puts it there before ``from harness import ...``.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import platform
import random
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "ARM_FORM",
    "bootstrap_difference",
    "first_reaching",
    "load_script",
    "machine_at_end",
    "mean_interval",
    "parse_arm",
    "pick_tasks",
    "split_success",
    "wilson",
    "write_json",
]

ARM_FORM = "ALGO:REWARD[:NAME=VALUE...]"
"""The form of an arm string, as an error message names it."""


# ------------------------------------------------------------------------------------ arms


def parse_arm(arm: str, form: str = ARM_FORM) -> tuple[str, str, dict[str, Any]]:
    """``"ALGO:REWARD[:NAME=VALUE...]"`` -> ``(algo, reward, settings)``, each value read as
    an int, a float or else a string (``"grpo:outcome:baseline=rloo:learning_rate=1e-4"`` ->
    ``("grpo", "outcome", {"baseline": "rloo", "learning_rate": 0.0001})``).

    Raises:
        ValueError: one line, ``arm '...' must be <form>``, when an option is not
            ``NAME=VALUE`` or the algorithm or the reward is empty.
    """
    algo, _, rest = arm.partition(":")
    reward, *options = rest.split(":")
    settings: dict[str, Any] = {}
    for option in options:
        name, sign, text = option.partition("=")
        if not (name and sign and text):
            raise ValueError(f"arm {arm!r} must be {form}")
        value: Any = text
        for kind in (int, float):
            try:
                value = kind(text)
                break
            except ValueError:
                pass
        settings[name] = value
    if not algo or not reward:
        raise ValueError(f"arm {arm!r} must be {form}")
    return algo, reward, settings


# ------------------------------------------------------------------------ tasks and success


def pick_tasks(
    env_id: str,
    max_oracle_steps: int,
    train: int,
    held_out: int,
    *,
    train_oracle_steps: int | None = None,
) -> dict[str, list[str]]:
    """A learning benchmark's tasks: ``{"train": ..., "held_out": ...}``, the first ``train``
    tasks of the train split and the first ``held_out`` of the test split (none of the train
    ones) that the env's oracle solves within ``max_oracle_steps`` steps
    (``train_oracle_steps`` for the train split when given), in sorted id order: the same lists
    on every call (:func:`gui_gym.runs.probe.oracle_short_tasks`)."""
    from gui_gym.runs.probe import oracle_short_tasks

    steps = max_oracle_steps if train_oracle_steps is None else train_oracle_steps
    chosen = oracle_short_tasks(env_id, "train", steps, train)
    return {
        "train": chosen,
        "held_out": oracle_short_tasks(env_id, "test", max_oracle_steps, held_out, exclude=chosen),
    }


def split_success(
    llm: Any, env_id: str, tasks: dict[str, list[str]], *, max_steps: int, max_new_tokens: int
) -> dict[str, float]:
    """Greedy success of ``llm`` (the default agent prompt, seed 0) on each split of ``tasks``,
    in its order: ``{split: fraction of its tasks solved}``
    (:func:`gui_gym.runs.probe.greedy_success`, which raises when an episode is lost)."""
    from gui_gym.runs.probe import greedy_success

    return {
        split: greedy_success(
            llm, env_id, chosen, max_steps=max_steps, max_new_tokens=max_new_tokens
        )
        for split, chosen in tasks.items()
    }


def first_reaching(points: Iterable[tuple[Any, float]], target: float) -> Any | None:
    """The first ``x`` of ``(x, value)`` points whose value reaches ``target`` (to 1e-9, so a
    mean that is the target but for rounding counts), None when none does."""
    return next((x for x, value in points if value >= target - 1e-9), None)


# ------------------------------------------------------------------------------ intervals


def _interval_95(draws: list[float]) -> list[float]:
    """The 2.5th and 97.5th percentiles of sorted ``draws`` (the nearest rank below each)."""
    last = len(draws) - 1
    return [draws[int(0.025 * last)], draws[int(0.975 * last)]]


def bootstrap_difference(
    better: list[float], worse: list[float], resamples: int, seed: int = 0
) -> dict[str, Any]:
    """``mean(better) - mean(worse)`` with a 95% percentile bootstrap interval (each arm's
    seeds resampled with replacement, independently, ``random.Random(seed)``), whether it has
    the sign of "better beats worse" and whether the interval excludes zero.

    Raises:
        ValueError: when an arm has no run.
    """
    if not better or not worse:
        raise ValueError("both arms need at least one run")
    rng = random.Random(seed)
    diff = sum(better) / len(better) - sum(worse) / len(worse)
    draws = sorted(
        sum(rng.choices(better, k=len(better))) / len(better)
        - sum(rng.choices(worse, k=len(worse))) / len(worse)
        for _ in range(resamples)
    )
    low, high = _interval_95(draws)
    return {
        "difference": diff,
        "interval": [low, high],
        "agrees_with_paper": diff > 0,  # every claim is "better beats worse"
        "excludes_zero": low > 0 or high < 0,
        "seeds": [len(better), len(worse)],
    }


def mean_interval(values: list[float], resamples: int, seed: int = 0) -> dict[str, Any]:
    """Mean and 95% percentile bootstrap interval of one arm over its seeds
    (``random.Random(seed)``), and how many seeds it has."""
    rng = random.Random(seed)
    draws = sorted(sum(rng.choices(values, k=len(values))) / len(values) for _ in range(resamples))
    return {"mean": sum(values) / len(values), "interval": _interval_95(draws), "n": len(values)}


def wilson(successes: int, n: int) -> list[float]:
    """The 95% Wilson score interval of ``successes`` out of ``n`` (rounded to 4 places;
    ``[0, 1]`` when ``n`` is 0)."""
    if n == 0:
        return [0.0, 1.0]
    z = 1.959964
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


# ---------------------------------------------------------------------------- bookkeeping


def write_json(path: str | Path, data: Any, *, indent: int = 2, end: str = "\n") -> None:
    """Write ``data`` as JSON to ``path`` atomically (its folder made if missing): a reader or
    an interrupted benchmark sees the previous result or the new one, never half of one."""
    from gui_gym.core.files import atomic_write_text

    atomic_write_text(path, json.dumps(data, indent=indent) + end)


def load_script(path: Path, name: str) -> ModuleType:
    """Import the script at ``path`` (an example) as module ``name``, registered in
    ``sys.modules`` first (its dataclasses look their module up there).

    Raises:
        ImportError: when ``path`` cannot be loaded.
    """
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def machine_at_end() -> dict[str, Any]:
    """The CPUs, the Python version and the load average (1, 5, 15 minutes) as a benchmark
    ends: what a throughput figure was measured under."""
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average_at_end": list(os.getloadavg()),
    }
