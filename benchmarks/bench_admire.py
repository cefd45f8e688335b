"""ADMIRE on WikiHow (or AndroidWorld): do learned milestones and the pointer matcher agree with the env's own
milestones, and how long does matching take per step?

For every task of the split:

1. **Generate.** Run a noisy oracle (each step a random on-screen action with probability
   ``--noise``, else the expert's) until it succeeds ``--successes`` times; the LLM-free
   ``TrajectoryMilestoneGenerator`` initialises milestones from the first success and refines
   them with the others (Soft-LCS), as ``MilestoneWrapper`` would during training.
2. **Match.** Walk the pointer matcher (cosine, ``--delta``) over held-out trajectories: fresh
   noisy successes, the clean oracle, partial runs (noisy oracle cut off early: failures with
   real progress) and random-agent runs (failures with almost none).
3. **Score against the env.** A step is a ground-truth key step when the env's
   ``info["milestones"]`` grows at it (several env milestones can fall on one step).
   *precision*: hits that land on a ground-truth key step / hits; *recall*: ground-truth key
   steps that are hits / ground-truth key steps; *hit rate*: ``k / K`` at the end; for
   failures also the env's own progress (env milestones reached / total) beside ``k / K``.

Latency, per env step: matching one action description against the env's current milestone,
for descriptions never seen before (the MiniLM forward pass), for repeated ones (the
embedder's cache), and over the benchmark's own trajectories in order (the mix a training run
sees). Measured for ``MilestoneWrapper`` (one ``score`` call per step) and for
``MilestoneVectorWrapper`` over 8 envs (one ``score_pairs`` call per vector step, its time
divided by 8), with MiniLM in float32 and bfloat16, torch on one thread (and, for float32
single steps, on all threads).

Usage:
    python benchmarks/bench_admire.py [--out benchmarks/results/bench_admire.json]
        [--tasks N] [--embedder minilm|hashing] [--noise 0.2] [--successes 3]
    python benchmarks/bench_admire.py --env-id GuiGym/AndroidWorld-v0 --split train \\
        --out benchmarks/results/bench_admire_androidworld.json
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import time
from collections import defaultdict
from typing import Any

import gymnasium as gym
import numpy as np

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.agents import OracleAgent, RandomAgent, run_episode
from gui_gym.core.actions import Action
from gui_gym.core.trajectory import Trajectory, atomic_write_text
from gui_gym.models.embeddings import default_embedder
from gui_gym.models.milestones import (
    CosineMatcher,
    MilestoneGenerationError,
    TrajectoryMilestoneGenerator,
)
from gui_gym.rewards.milestones import advance_pointer


class NoisyOracle:
    """The task's expert, replaced by a uniformly random on-screen action with probability
    ``noise`` (the expert recovers from any state, so most episodes still succeed)."""

    name = "noisy-oracle"

    def __init__(self, env: gym.Env, noise: float, seed: int):
        self.oracle = OracleAgent(env)
        self.random = RandomAgent(env, seed=seed)
        self.noise = noise
        self.rng = np.random.default_rng(seed)

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        pass

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        if self.rng.random() < self.noise:
            return self.random.act(observation, info)
        return self.oracle.act(observation, info)


def episode(env: gym.Env, agent: Any, seed: int | None, task_id: str) -> Trajectory:
    """One episode of ``task_id``, with the number of env milestones of the task instance
    (templates such as AndroidWorld's draw their parameters per seed) in its metadata."""
    trajectory = run_episode(env, agent, seed=seed, options={"task": task_id})
    trajectory.metadata["env_milestones"] = len(env.unwrapped.task.milestones)
    return trajectory


def ground_truth_steps(trajectory: Trajectory) -> set[int]:
    """Steps at which the env's milestone list grew."""
    out, before = set(), 0
    for step in trajectory.steps:
        if len(step.milestones) > before:
            out.add(step.index)
        before = len(step.milestones)
    return out


def match(
    trajectory: Trajectory, milestones: list[str], matcher: CosineMatcher, delta: float
) -> list[int]:
    """Indices of the steps that hit a milestone under the pointer rule (ADMIRE Eq. 9)."""
    pointer, hits = 0, []
    for step in trajectory.steps:
        if not step.action_valid or pointer >= len(milestones):
            continue
        similarity = matcher.score(step.action_description, milestones[pointer])
        _, new = advance_pointer(pointer, len(milestones), similarity, delta)
        if new != pointer:
            hits.append(step.index)
        pointer = new
    return hits


def _totals() -> dict[str, float]:
    return defaultdict(float)


def _summary(t: dict[str, float]) -> dict[str, Any]:
    def ratio(a: float, b: float) -> float | None:
        return round(a / b, 4) if b else None

    out: dict[str, Any] = {
        "trajectories": int(t["trajectories"]),
        "steps": int(t["steps"]),
        "hits": int(t["hits"]),
        "ground_truth_steps": int(t["gt_steps"]),
        "precision": ratio(t["true_hits"], t["hits"]),
        "recall": ratio(t["gt_hit"], t["gt_steps"]),
        # the generator never makes a milestone of a scroll: recall over the other key steps
        "ground_truth_scroll_steps": int(t["gt_scroll_steps"]),
        "recall_without_scroll_steps": ratio(
            t["gt_hit_not_scroll"], t["gt_steps"] - t["gt_scroll_steps"]
        ),
        "hit_rate": ratio(t["hit_rate"], t["trajectories"]),
    }
    if t["env_progress_n"]:
        out["env_progress"] = ratio(t["env_progress"], t["env_progress_n"])
    return out


def run(
    env_id: str = "GuiGym/WikiHow-v0",
    split: str = "test",
    tasks: int | None = None,
    embedder_kind: str = "minilm",
    noise: float = 0.2,
    successes: int = 3,
    held_out: int = 2,
    delta: float = 0.75,
    seed: int = 0,
    threads: int = 1,
    quality: bool = True,
    latency: bool = True,
) -> dict[str, Any]:
    """Run the benchmark; returns the JSON-ready report. ``quality=False`` measures latency
    only, over the descriptions of one oracle and one random episode per task."""
    if embedder_kind == "minilm":
        import torch

        all_threads = torch.get_num_threads()
        torch.set_num_threads(threads)
    embedder = default_embedder(embedder_kind)
    generator = TrajectoryMilestoneGenerator(embedder)
    matcher = CosineMatcher(embedder)
    env = gym.make(env_id, split=split)
    suite = env.unwrapped.suite.select(split)
    if tasks is not None and tasks < len(suite):  # evenly spaced, so every category is in
        suite = [suite[int(i * len(suite) / tasks)] for i in range(tasks)]
    groups = ("noisy_success", "oracle", "partial", "random")
    totals: dict[str, dict[str, float]] = {g: _totals() for g in groups}
    by_category: dict[str, dict[str, float]] = defaultdict(_totals)
    milestone_counts, env_counts, no_milestones = [], [], 0
    evaluated: list[Trajectory] = []
    examples: dict[str, Any] = {}
    started = time.perf_counter()
    if not quality:
        for n, task in enumerate(suite):
            evaluated.append(episode(env, OracleAgent(env), None, task.task_id))
            evaluated.append(episode(env, RandomAgent(env, seed=n), n, task.task_id))
        suite = []
    for n, task in enumerate(suite):
        task_seed = seed + 1000 * n
        wins: list[Trajectory] = []
        attempt = 0
        while len(wins) < successes + held_out and attempt < 4 * (successes + held_out):
            agent = NoisyOracle(env, noise, task_seed + attempt)
            trajectory = episode(env, agent, task_seed + attempt, task.task_id)
            attempt += 1
            if trajectory.success:
                wins.append(trajectory)
        if len(wins) < successes + 1:
            no_milestones += 1
            continue
        try:
            milestones = generator.initialize(wins[0])
            for other in wins[1:successes]:
                milestones = generator.refine(other, milestones)
        except MilestoneGenerationError:
            no_milestones += 1
            continue
        matcher.prepare(milestones)
        milestone_counts.append(len(milestones))
        if task.category not in {e["category"] for e in examples.values()}:
            examples[task.task_id] = {"category": task.category, "milestones": milestones}
        held = {
            "noisy_success": wins[successes:],
            "oracle": [episode(env, OracleAgent(env), None, task.task_id)],
            "partial": [],
            "random": [
                episode(
                    env,
                    RandomAgent(env, seed=task_seed + 500 + i),
                    task_seed + 500 + i,
                    task.task_id,
                )
                for i in range(held_out)
            ],
        }
        cut_env = gym.make(env_id, split=split, max_steps=2)
        for i in range(held_out):
            agent = NoisyOracle(cut_env, noise, task_seed + 700 + i)
            partial = episode(cut_env, agent, task_seed + 700 + i, task.task_id)
            if not partial.success:
                held["partial"].append(partial)
        cut_env.close()
        env_counts.append(held["oracle"][0].metadata["env_milestones"])
        for group, trajectories in held.items():
            for trajectory in trajectories:
                evaluated.append(trajectory)
                hits = set(match(trajectory, milestones, matcher, delta))
                truth = ground_truth_steps(trajectory)
                scrolls = {i for i in truth if trajectory.steps[i].action.startswith("SCROLL")}
                for t in (totals[group], by_category[f"{task.category}/{group}"]):
                    t["trajectories"] += 1
                    t["steps"] += len(trajectory)
                    t["hits"] += len(hits)
                    t["true_hits"] += len(hits & truth)
                    t["gt_steps"] += len(truth)
                    t["gt_hit"] += len(truth & hits)
                    t["gt_scroll_steps"] += len(scrolls)
                    t["gt_hit_not_scroll"] += len((truth - scrolls) & hits)
                    t["hit_rate"] += len(hits) / len(milestones)
                    total = trajectory.metadata["env_milestones"]
                    if not trajectory.success and total:
                        reached = len(trajectory.steps[-1].milestones) if trajectory.steps else 0
                        t["env_progress"] += reached / total
                        t["env_progress_n"] += 1
    quality_seconds = time.perf_counter() - started
    env.close()
    report: dict[str, Any] = {
        "benchmark": "admire-milestones",
        "env_id": env_id,
        "split": split,
        "tasks": len(suite),
        "tasks_without_milestones": no_milestones,
        "settings": {
            "embedder": embedder_kind,
            "noise": noise,
            "successes_for_generation": successes,
            "held_out_per_group": held_out,
            "delta": delta,
            "generator": {
                "match_threshold": generator.match_threshold,
                "min_overlap": generator.min_overlap,
                "skip_types": sorted(str(t) for t in generator.skip_types),
                "drop_detours": generator.drop_detours,
                "erase_loops": generator.erase_loops,
            },
        },
        "milestones_per_task": {
            "generated_mean": round(float(np.mean(milestone_counts)), 3) if suite else None,
            "env_mean": round(float(np.mean(env_counts)), 3) if suite else None,
        },
        "matching": {g: _summary(t) for g, t in totals.items()},
        "by_category": {k: _summary(v) for k, v in sorted(by_category.items())},
        "examples": examples,
        "quality_seconds": round(quality_seconds, 1),
    }
    if latency:
        counts = [threads, all_threads] if embedder_kind == "minilm" else [None]
        report["latency"] = bench_latency(embedder_kind, evaluated, counts)
    report["machine"] = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": _cpu_count(),
        "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
    }
    return report


def _cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _timings(fn, items) -> dict[str, float]:
    """Wall time and process CPU time per call. On a shared machine the wall time includes
    waiting for a core; with torch on one thread the CPU time is the work itself."""
    wall, cpu = [], []
    for item in items:
        w0, c0 = time.perf_counter(), time.process_time()
        fn(item)
        cpu.append((time.process_time() - c0) * 1000.0)
        wall.append((time.perf_counter() - w0) * 1000.0)
    out: dict[str, float] = {"calls": len(wall)}
    for name, samples in (("wall", wall), ("cpu", cpu)):
        samples.sort()
        out[f"{name}_median_ms"] = round(statistics.median(samples), 4)
        out[f"{name}_p90_ms"] = round(samples[int(0.9 * (len(samples) - 1))], 4)
        out[f"{name}_mean_ms"] = round(statistics.fmean(samples), 4)
    return out


def _per_step(fn, batches, size: int) -> dict[str, float]:
    """Per-step wall and CPU time of ``fn(batch)`` over ``batches`` of ``size`` steps."""
    row = _timings(fn, batches)
    out: dict[str, float] = {"calls": row["calls"], "steps_per_call": size}
    for key, value in row.items():
        if key != "calls":
            out[key] = round(value / size, 4)
    return out


def bench_latency(
    embedder_kind: str,
    trajectories: list[Trajectory],
    threads: list[int | None],
    fresh: int = 320,
    vector_envs: int = 8,
) -> dict[str, Any]:
    """Per-step matching time: each description against one (cached) milestone. Rows are
    keyed ``<dtype>_<single|vector8>_threads_<n>``; every row uses a fresh embedder, so
    "uncached" really is uncached."""
    from gui_gym.models.embeddings import HashingEmbedder, SentenceEmbedder
    from gui_gym.models.milestones import score_pairs

    out: dict[str, Any] = {}
    milestone = 'click "How to Bake Lobster Tails" link'
    descriptions = [s.action_description for t in trajectories for s in t.steps if s.action_valid]
    new_texts = [f'type "query {i} about topic {i * 7}" into "Search" input' for i in range(fresh)]
    dtypes = ["float32", "bfloat16"] if embedder_kind == "minilm" else [None]
    setups = [(d, 1, c) for d in dtypes for c in (threads if d == "float32" else threads[:1])]
    setups += [(d, vector_envs, threads[0]) for d in dtypes]
    for dtype, size, count in setups:
        if count is not None and embedder_kind == "minilm":
            import torch

            torch.set_num_threads(count)
        embedder = SentenceEmbedder(dtype=dtype) if dtype is not None else HashingEmbedder()
        matcher = CosineMatcher(embedder)
        matcher.prepare([milestone])
        matcher.score("warm up", milestone)
        matcher.score_pairs(["warm up"] * size, [milestone] * size)
        if size == 1:
            score = functools.partial(matcher.score, milestone=milestone)
            rows = {
                "uncached": _per_step(score, new_texts, 1),
                "cached": _per_step(score, new_texts, 1),
                "benchmark_trajectories": _per_step(score, descriptions, 1),
            }
        else:

            def batch_score(batch: list[str], m=matcher) -> None:
                score_pairs(m, batch, [milestone] * len(batch))

            def chunks(texts: list[str], n: int = size) -> list[list[str]]:
                return [texts[i : i + n] for i in range(0, len(texts) - n + 1, n)]

            rows = {
                "uncached": _per_step(batch_score, chunks(new_texts), size),
                "cached": _per_step(batch_score, chunks(new_texts), size),
                "benchmark_trajectories": _per_step(batch_score, chunks(descriptions), size),
            }
        mode = "single" if size == 1 else f"vector{size}"
        key = f"{dtype or embedder_kind}_{mode}_threads_{count}"
        out[key] = {
            **rows,
            "distinct_descriptions": len(set(descriptions)),
            "steps": len(descriptions),
        }
    return out


def format_report(report: dict[str, Any]) -> str:
    lines = [
        f"ADMIRE on {report['env_id']} ({report['split']}): {report['tasks']} tasks, "
        f"embedder {report['settings']['embedder']}, delta {report['settings']['delta']}",
        f"milestones per task: generated {report['milestones_per_task']['generated_mean']}, "
        f"env {report['milestones_per_task']['env_mean']}",
        f"{'group':<14}{'traj':>6}{'precision':>11}{'recall':>8}{'no-scroll':>11}{'k/K':>7}"
        f"{'env prog':>10}",
    ]
    for group, s in report["matching"].items():
        lines.append(
            f"{group:<14}{s['trajectories']:>6}{_fmt(s['precision']):>11}{_fmt(s['recall']):>8}"
            f"{_fmt(s['recall_without_scroll_steps']):>11}{_fmt(s['hit_rate']):>7}{_fmt(s.get('env_progress')):>10}"
        )
    for key, row in report.get("latency", {}).items():
        lines.append(
            f"latency per step {key} (wall / cpu ms): uncached median "
            f"{row['uncached']['wall_median_ms']} / {row['uncached']['cpu_median_ms']}, cached "
            f"{row['cached']['wall_median_ms']} / {row['cached']['cpu_median_ms']}, "
            f"benchmark mix mean {row['benchmark_trajectories']['wall_mean_ms']} / "
            f"{row['benchmark_trajectories']['cpu_mean_ms']}"
        )
    return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="benchmarks/results/bench_admire.json")
    parser.add_argument("--env-id", default="GuiGym/WikiHow-v0")
    parser.add_argument("--split", default="test")
    parser.add_argument("--tasks", type=int, default=None, help="first N tasks (default all)")
    parser.add_argument("--embedder", choices=["minilm", "hashing"], default="minilm")
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--successes", type=int, default=3)
    parser.add_argument("--held-out", type=int, default=2)
    parser.add_argument("--delta", type=float, default=0.75)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (MiniLM)")
    parser.add_argument("--latency-only", action="store_true", help="skip the quality part")
    parser.add_argument("--quality-only", action="store_true", help="skip the latency part")
    args = parser.parse_args()
    report = run(
        args.env_id,
        args.split,
        args.tasks,
        args.embedder,
        args.noise,
        args.successes,
        args.held_out,
        args.delta,
        args.seed,
        args.threads,
        quality=not args.latency_only,
        latency=not args.quality_only,
    )
    atomic_write_text(args.out, json.dumps(report, indent=2) + "\n")
    print(format_report(report))
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
