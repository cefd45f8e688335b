"""ProgRM on WikiHow: the structure of the paper's Table 3 and Figure 6, plus speed figures.

Three parts (``--parts``, default all):

* ``table``: collect WikiHow trajectories (oracle, noisy oracle, random) on the train split,
  add the synthetic data of ProgRM Appendix B, label them with Soft-LCS recipes (ProgRM-LCS)
  and with env milestones (ProgRM-Env), train ProgRM-LCS, ProgRM-Env and the ORM baseline
  (a tiny GPT-2 trained from scratch, CPU), and report on the test tasks: key-step progress
  MAE (ground truth: even progress over the env milestones, ProgRM Sec. 3.3), mean predicted
  final-step score of successful and failed trajectories, and latency; plus a Figure-6-style
  plot of progress curves of a few test trajectories.
* ``speed``: labelling 10,000 trajectories of 15 steps over 50 tasks with MiniLM embeddings.
* ``overhead``: ``ProgressRewardWrapper`` with the rule-based ``MilestoneProgress`` against the
  bare env step, interleaved rounds, pinned to one CPU.

Usage::

    python benchmarks/progress_table.py [--out benchmarks/results/progress_table.json]
        [--figure benchmarks/results/progress_curves.png] [--parts table,speed,overhead]
        [--quick]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.agents import OracleAgent, RandomAgent, run_episode
from gui_gym.core.actions import Action, ActionType
from gui_gym.core.trajectory import Step, Trajectory, atomic_write_text
from gui_gym.rewards.progress import (
    TrajectoryLabels,
    label_env,
    label_lcs,
    milestone_key_steps,
    mismatched_failures,
    random_walk_failures,
    synthesize_successes,
    write_labeled_trajectories,
)

ENV_ID = "GuiGym/WikiHow-v0"


# ------------------------------------------------------------------------------- agents


class NoisyOracle:
    """The task's expert, replaced by a uniformly random sensible action with probability
    ``epsilon`` (the WikiHow expert recovers from any state)."""

    def __init__(self, env: gym.Env, epsilon: float, seed: int):
        self.name = f"noisy-oracle-{epsilon:g}"
        self._env = env.unwrapped
        self.epsilon = epsilon
        self.rng = np.random.default_rng(seed)

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        pass

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        if self.rng.random() < self.epsilon:
            candidates = self._env.candidate_actions()
            return candidates[int(self.rng.integers(len(candidates)))]
        return self._env.oracle_action()


class Replay:
    """Sends a fixed list of actions, then ``DONE()``."""

    name = "replay"

    def __init__(self, actions: Sequence[str]):
        self.actions = list(actions)
        self.position = 0

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        self.position = 0

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        if self.position >= len(self.actions):
            return "DONE()"
        self.position += 1
        return self.actions[self.position - 1]


def collect(
    env: gym.Env, tasks: Sequence[str], epsilons: Sequence[float], randoms: int, seed: int
) -> list[Trajectory]:
    """One oracle episode, one noisy-oracle episode per epsilon and ``randoms`` random
    episodes per task."""
    out: list[Trajectory] = []
    for n, task in enumerate(tasks):
        options = {"task": task}
        out.append(run_episode(env, OracleAgent(env), seed=seed, options=options))
        for k, eps in enumerate(epsilons):
            agent = NoisyOracle(env, eps, seed * 100_003 + n * 31 + k)
            out.append(run_episode(env, agent, seed=seed, options=options))
        for r in range(randoms):
            agent = RandomAgent(env, seed=seed * 100_003 + n * 31 + 17 + r)
            out.append(run_episode(env, agent, seed=seed, options=options))
    return out


# -------------------------------------------------------------------------------- table


def train_in_subprocesses(
    jobs: Sequence[tuple[str, Path, str, int]], workdir: Path, args: argparse.Namespace
) -> dict[str, Any]:
    """Run ``gui-gym train-progress`` for each job, ``args.jobs`` at a time."""
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    pending = list(jobs)
    running: dict[int, tuple[str, subprocess.Popen[bytes], float, Any]] = {}
    info: dict[str, Any] = {}
    while pending or running:
        while pending and len(running) < max(1, args.jobs):
            name, labels, kind, epochs = pending.pop(0)
            command = [
                sys.executable, "-m", "gui_gym.cli", "train-progress",
                "--labels", str(labels), "--out", str(workdir / name), "--kind", kind,
                "--epochs", str(epochs), "--batch-size", str(args.batch_size),
                "--lr", str(args.lr), "--max-length", str(args.max_length),
                "--vocab-size", str(args.vocab_size), "--hidden", str(args.hidden),
                "--layers", str(args.layers), "--seed", str(args.seed),
                "--device", "cpu", "--no-progress",
            ]  # fmt: skip
            log = (workdir / f"{name}.log").open("wb")
            process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=environment
            )
            running[process.pid] = (name, process, time.perf_counter(), log)
        pid, status, usage = os.wait4(-1, 0)
        if pid not in running:
            continue
        name, process, began, log = running.pop(pid)
        log.close()
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            tail = (workdir / f"{name}.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"training {name} failed ({process.returncode}):\n{tail}")
        metrics = json.loads((workdir / name / "metrics.json").read_text())
        epochs = metrics["epochs"]
        info[name] = {
            "seconds": time.perf_counter() - began,
            "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "optimizer_steps": metrics["global_step"],
            "epochs": len(epochs),
            "examples_per_epoch_about": metrics["global_step"] // len(epochs) * args.batch_size,
            "train_loss_by_epoch": [e["train_loss"] for e in epochs],
        }
        print(f"trained {name} in {info[name]['seconds']:.0f} s", file=sys.stderr)
    return info


def key_step_examples(
    trajectories: Sequence[Trajectory], env_labels: Sequence[TrajectoryLabels]
) -> list[tuple[Any, float, str]]:
    """Ground truth of ProgRM Sec. 3.3: at each step where the env's milestones grew, the
    progress is the fraction of milestones reached (even gains)."""
    from gui_gym.models.progress import trajectory_queries

    out = []
    for trajectory, labels in zip(trajectories, env_labels):
        queries = trajectory_queries(trajectory)
        category = trajectory.metadata.get("category", "")
        for step in milestone_key_steps(trajectory):
            out.append((queries[step + 1], labels.labels[step].progress, category))
    return out


def latency_ms(model: Any, queries: Sequence[Any], repeats: int = 40) -> float:
    """Mean time of one single-query ``predict`` call."""
    model.predict(list(queries[:1]))
    start = time.perf_counter()
    for i in range(repeats):
        model.predict([queries[i % len(queries)]])
    return (time.perf_counter() - start) / repeats * 1000


def run_table(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from gui_gym.models.embeddings import SentenceEmbedder
    from gui_gym.models.progress import MilestoneProgress, ProgRM, trajectory_queries
    from gui_gym.rewards.lcs import StepSimilarity
    from gui_gym.rewards.prm import classification_metrics

    torch.set_num_threads(args.threads)
    timings: dict[str, float] = {}
    env = gym.make(ENV_ID, max_steps=args.max_steps)
    suite = env.unwrapped.suite
    train_tasks = [t.task_id for t in suite.select("train")]
    test_tasks = [t.task_id for t in suite.select("test")]
    if args.quick:
        train_tasks, test_tasks = train_tasks[::8], test_tasks[::5]
    totals = MilestoneProgress.from_suite(suite).totals
    rng = np.random.default_rng(args.seed)

    start = time.perf_counter()
    train = collect(env, train_tasks, (0.3, 0.6), 1, seed=args.seed)
    test = collect(env, test_tasks, (0.3, 0.6), 1, seed=args.seed + 1)
    timings["collect_s"] = time.perf_counter() - start

    # ProgRM Appendix B: failures from mismatched instructions and random walks, extra
    # successes by inserting/removing effect-free steps, kept only when a replay succeeds.
    start = time.perf_counter()
    walks = [t for t in train if t.agent == "random"]
    others = [t for t in train if t.agent != "random"]
    failures = random_walk_failures(walks)
    mismatched = mismatched_failures(others, len(train_tasks) // 2, rng)

    def replay(prototype: Trajectory, actions: list[str]) -> Trajectory | None:
        return run_episode(
            env, Replay(actions), seed=prototype.seed, options={"task": prototype.task_id}
        )

    oracle_runs = [t for t in train if t.agent == "oracle"]
    variants = synthesize_successes(oracle_runs, replay, rng, per_trajectory=1)
    pool = others + failures + mismatched + variants
    timings["synthesis_s"] = time.perf_counter() - start

    start = time.perf_counter()
    similarity = StepSimilarity(SentenceEmbedder())
    lcs_labels = label_lcs(pool, similarity)
    timings["label_lcs_s"] = time.perf_counter() - start  # MiniLM load included
    env_labels = label_env(pool, totals)
    test_env_labels = label_env(test, totals)

    # Label quality before any model: LCS labels against the env ground truth, key steps.
    label_errors = [
        abs(lcs.labels[i].progress - envl.labels[i].progress)
        for t, lcs, envl in zip(pool, lcs_labels, env_labels)
        for i in milestone_key_steps(t)
    ]

    # The three models train as `gui-gym train-progress` processes, `--jobs` at a time, one
    # torch thread each: the data goes through labelled JSONL files, the models come back as
    # safetensors checkpoints.
    workdir = Path(tempfile.mkdtemp(prefix="progrm-bench-"))
    write_labeled_trajectories(workdir / "lcs.jsonl", pool, lcs_labels)
    write_labeled_trajectories(workdir / "env.jsonl", pool, env_labels)
    jobs = [
        ("ProgRM-LCS", workdir / "lcs.jsonl", "progrm", args.epochs),
        ("ProgRM-Env", workdir / "env.jsonl", "progrm", args.epochs),
        ("ORM", workdir / "env.jsonl", "orm", args.orm_epochs),
    ]
    start = time.perf_counter()
    train_info = train_in_subprocesses(jobs, workdir, args)
    timings["train_wall_s"] = time.perf_counter() - start
    models = {name: ProgRM.load(workdir / name / "model", device="cpu") for name, *_ in jobs}
    shutil.rmtree(workdir, ignore_errors=True)
    judge = llm_judge(args)
    if judge is not None:  # ProgRM's "ORM-Claude" row: a prompted LLM (Tables 9-10)
        models[f"ORM-LLM ({args.judge_prompt})"] = judge

    examples = key_step_examples(test, test_env_labels)
    queries = [q for q, _, _ in examples]
    truth = np.array([y for _, y, _ in examples])
    categories = np.array([c for _, _, c in examples])
    finals = [trajectory_queries(t)[-1] for t in test]
    succeeded = np.array([t.success for t in test])
    rows: dict[str, Any] = {}
    predictions: dict[str, np.ndarray] = {}
    for name, model in models.items():
        predicted = np.asarray(model.predict(queries))
        predictions[name] = predicted
        final = np.asarray(model.predict(finals))
        errors = np.abs(predicted - truth)
        rows[name] = {
            "key_step_mae": float(errors.mean()),
            "key_step_mae_by_category": {
                c: float(errors[categories == c].mean()) for c in sorted(set(categories))
            },
            "final_score_success": float(final[succeeded].mean()),
            "final_score_failure": float(final[~succeeded].mean()),
            # ProgRM Table 2: the final state's score >= 0.5 read as "success", against the
            # env's judgement (accuracy, precision, recall, F1, false-positive rate)
            "success_prediction": {
                k: v
                for k, v in classification_metrics(succeeded.astype(int), final).items()
                if k != "by_position"
            },
            "latency_ms": latency_ms(model, queries),
        }
    curves: list[dict[str, Any]] = []
    figure = (
        plot_curves(args.figure, test, test_env_labels, models, curves) if args.figure else None
    )
    env.close()
    return {
        "settings": {
            "train_tasks": len(train_tasks),
            "test_tasks": len(test_tasks),
            "max_steps": args.max_steps,
            "epochs": args.epochs,
            "orm_epochs": args.orm_epochs,
            "batch_size": args.batch_size,
            "lr": args.lr,
            "max_length": args.max_length,
            "backbone": f"GPT-2 from scratch, {args.layers} layers, width {args.hidden}",
            "vocab_size": args.vocab_size,
            "threads": args.threads,
            "training_jobs": args.jobs,
        },
        "data": {
            "train_trajectories": len(pool),
            "train_collected": len(train),
            "synthetic_random_walk_failures": len(failures),
            "synthetic_mismatched_failures": len(mismatched),
            "synthetic_success_variants": len(variants),
            "train_success": int(sum(t.success for t in pool)),
            "train_steps": int(sum(len(t) for t in pool)),
            "test_trajectories": len(test),
            "test_success": int(succeeded.sum()),
            "test_key_steps": len(examples),
            "lcs_label_mae_on_train_key_steps": float(np.mean(label_errors)),
        },
        "timings": timings,
        "training": train_info,
        "table": rows,
        "figure": str(figure) if figure else None,
        "figure_curves": curves,
    }


def plot_curves(
    path: str | Path,
    test: Sequence[Trajectory],
    env_labels: Sequence[TrajectoryLabels],
    models: dict[str, Any],
    curves: list[dict[str, Any]] | None = None,
) -> Path:
    """Figure 6 of ProgRM, our way: progress after each action of a few test episodes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gui_gym.models.progress import trajectory_queries

    def has_detour(t: Trajectory) -> bool:
        return any(s.action.startswith("GOBACK") for s in t.steps)

    successes = [i for i, t in enumerate(test) if t.success and 4 <= len(t) <= 9]
    candidates = [
        ("(a) successful", [i for i in successes if not has_detour(test[i])]),
        ("(b) successful, with a GOBACK detour", [i for i in successes if has_detour(test[i])]),
        (
            "(c) failed with partial progress",
            [
                i
                for i, t in enumerate(test)
                if not t.success and t.agent.startswith("noisy") and env_labels[i].progress[-1] > 0
            ],
        ),
    ]
    picks: list[tuple[str, int]] = []
    used: set[str] = set()
    for title, indices in candidates:  # one episode per panel, each of a different task
        fresh = [i for i in indices if test[i].task_id not in used] or indices
        if fresh:
            picks.append((title, fresh[0]))
            used.add(test[fresh[0]].task_id)
    fig, axes = plt.subplots(1, len(picks), figsize=(6 * len(picks), 5.2), squeeze=False)
    styles = {"ProgRM-Env": "-o", "ProgRM-LCS": "-s", "ORM": "-^"}
    for ax, (title, index) in zip(axes[0], picks):
        trajectory = test[index]
        queries = trajectory_queries(trajectory)
        x = np.arange(len(queries))
        truth = [0.0, *env_labels[index].progress]
        ax.plot(x, truth, "--", color="black", lw=2, alpha=0.4, label="milestones reached / K")
        record: dict[str, Any] = {
            "panel": title,
            "task_id": trajectory.task_id,
            "actions": [s.action_description or s.action for s in trajectory.steps],
            "milestones": truth,
        }
        for name, model in models.items():
            values = [float(v) for v in model.predict(queries)]
            record[name] = values
            ax.plot(x, values, styles.get(name, "-"), label=name)
        if curves is not None:
            curves.append(record)
        ticks = ["Init"] + [
            f"<{i + 1}> {_short(s.action_description or s.action)}"
            for i, s in enumerate(trajectory.steps)
        ]
        ax.set_xticks(x, ticks, rotation=60, ha="right", fontsize=7)
        ax.set_ylim(-0.05, 1.05)
        ax.set_ylabel("progress")
        ax.set_title(f"{title}\n{trajectory.task_id}", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)
    return path


def _short(text: str, limit: int = 34) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -------------------------------------------------------------------------------- speed


def synthetic_dataset(
    tasks: int = 50, per_task: int = 200, length: int = 15, seed: int = 0
) -> list[Trajectory]:
    """``tasks * per_task`` WikiHow-like trajectories of exactly ``length`` steps.

    Half succeed: the task's expert path with detours inserted (real steps of random walks
    on the same task, scrolls, DO_NOTHING, queries retyped from a repertoire of ten per task
    made of the instruction's words). Half fail: a prefix of the expert path among detours.
    """
    env = gym.make(ENV_ID, max_steps=length)
    rng = np.random.default_rng(seed)
    task_ids = [t.task_id for t in env.unwrapped.suite.select("train")][:tasks]
    out: list[Trajectory] = []
    for n, task in enumerate(task_ids):
        options = {"task": task}
        expert = run_episode(env, OracleAgent(env), seed=0, options=options)
        walks = [
            run_episode(env, RandomAgent(env, seed=n * 7 + r), seed=0, options=options)
            for r in range(3)
        ]
        detours = [s for w in walks for s in w.steps]
        words = expert.instruction.lower().replace(".", " ").replace('"', " ").split()
        # Agents retype from a small repertoire of queries per task, not fresh text each time.
        queries = [" ".join(rng.choice(words, size=int(rng.integers(1, 5)))) for _ in range(10)]
        for i in range(per_task):
            success = i % 2 == 0
            path = list(expert.steps)
            if not success:
                path = path[: int(rng.integers(0, len(path)))]
            extra = length - len(path)
            steps: list[Step] = []
            slots = sorted(rng.integers(0, max(1, len(path)), size=extra)) if path else [0] * extra
            inserted = iter(slots)
            upcoming = next(inserted, None)
            for position in range(len(path) + 1):
                while upcoming is not None and upcoming == position:
                    steps.append(_detour(rng, detours, queries))
                    upcoming = next(inserted, None)
                if position < len(path):
                    steps.append(_retyped(rng, path[position], queries))
            steps = steps[:length]
            for k, s in enumerate(steps):
                s.index = k
            out.append(Trajectory(ENV_ID, task, expert.instruction, steps, success=success, seed=i))
    env.close()
    return out


def _detour(rng: np.random.Generator, pool: Sequence[Step], queries: Sequence[str]) -> Step:
    roll = rng.random()
    if roll < 0.1:
        return Step(0, "", str(Action(ActionType.DO_NOTHING)), action_description="do nothing")
    if roll < 0.25:
        return Step(0, "", "SCROLL(down)", action_description="scroll down")
    if roll < 0.35:
        text = queries[int(rng.integers(len(queries)))]
        return Step(0, "", f'INPUT(0, "{text}")', target=["input", "Search wikiHow", "q"])
    source = pool[int(rng.integers(len(pool)))]
    return Step(
        0, "", source.action, action_description=source.action_description, target=source.target
    )


def _retyped(rng: np.random.Generator, step: Step, queries: Sequence[str]) -> Step:
    clone = dataclasses.replace(step, milestones=list(step.milestones))
    if step.action.startswith("INPUT") and rng.random() < 0.3:
        text = queries[int(rng.integers(len(queries)))]
        clone.action = f'INPUT(0, "{text}")'
    return clone


class TimedEmbedder:
    """Passes ``encode`` through and adds up the time spent in it."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.dim = inner.dim
        self.seconds = 0.0
        self.texts = 0

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        start = time.perf_counter()
        out = self.inner.encode(texts)
        self.seconds += time.perf_counter() - start
        self.texts += len(texts)
        return out


def run_speed(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from gui_gym.models.embeddings import SentenceEmbedder
    from gui_gym.models.progress import MilestoneProgress
    from gui_gym.rewards.lcs import StepSimilarity

    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    data = synthetic_dataset(tasks=args.speed_tasks, per_task=args.speed_per_task)
    build = time.perf_counter() - start
    start = time.perf_counter()
    embedder = SentenceEmbedder()
    load = time.perf_counter() - start
    texts = {
        s.action
        for t in data
        for s in t.steps
        if s.action.startswith("INPUT") or s.action.startswith("ANSWER")
    }
    timed = TimedEmbedder(embedder)
    start, cpu = time.perf_counter(), time.process_time()
    labels = label_lcs(data, StepSimilarity(timed))
    lcs_seconds = time.perf_counter() - start
    lcs_cpu = time.process_time() - cpu
    totals = MilestoneProgress.from_env_id(ENV_ID).totals
    start = time.perf_counter()
    label_env(data, totals)
    env_seconds = time.perf_counter() - start
    keys = sum(len(lab.key_steps) for lab in labels)
    return {
        "trajectories": len(data),
        "steps_per_trajectory": sorted({len(t) for t in data}),
        "tasks": len({t.task_id for t in data}),
        "successes": int(sum(t.success for t in data)),
        "distinct_typed_texts": len(texts),
        "dataset_build_s": build,
        "minilm_load_s": load,
        "label_lcs_s": lcs_seconds,
        "label_lcs_cpu_s": lcs_cpu,
        "label_lcs_embedding_s": timed.seconds,
        "label_lcs_texts_embedded": timed.texts,
        "label_lcs_trajectories_per_s": len(data) / lcs_seconds,
        "label_env_s": env_seconds,
        "key_steps": keys,
        "torch_threads": args.threads,
    }


# ----------------------------------------------------------------------------- overhead


class _StubEnv(gym.Env):
    """Returns a fixed transition at once: what is left of a step is the wrapper's own cost."""

    observation_space = gym.spaces.Discrete(1)
    action_space = gym.spaces.Discrete(1)

    def __init__(self, info: dict[str, Any]):
        self._observation = {"instruction": "", "screen": ""}
        self._info = info

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        return self._observation, {"task_id": "stub", "milestones": []}

    def step(self, action: Any):
        return self._observation, 0.0, False, False, dict(self._info)


def run_overhead(args: argparse.Namespace) -> dict[str, Any]:
    """Wrapper overhead two ways, both pinned to one CPU and counted in thread CPU time (the
    machine may be shared) and in wall time:

    * interleaved A/B: the same recorded episodes replayed through the bare env and through
      the wrapped env, alternating episode by episode, so load changes hit both alike;
    * isolated: the wrapper around a stub env that returns a fixed transition, so what remains
      is the wrapper's own work, set against the bare WikiHow step.
    """
    from gui_gym.models.progress import MilestoneProgress
    from gui_gym.wrappers import ProgressRewardWrapper

    cpu = None
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
    recorder = gym.make(ENV_ID, max_steps=15)
    episodes: list[tuple[int, list[str]]] = []
    for seed in range(args.overhead_episodes):
        agent = NoisyOracle(recorder, 0.4, seed)
        trajectory = run_episode(recorder, agent, seed=seed)
        episodes.append((seed, trajectory.actions))
    steps = sum(len(a) for _, a in episodes)
    bare = gym.make(ENV_ID, max_steps=15)
    wrapped = ProgressRewardWrapper(gym.make(ENV_ID, max_steps=15), MilestoneProgress())

    def episode_time(env: gym.Env, seed: int, actions: list[str], clock: Any) -> float:
        env.reset(seed=seed)
        begin = clock()
        for action in actions:
            env.step(action)
        return clock() - begin

    out: dict[str, Any] = {
        "steps_per_round": steps,
        "rounds": args.rounds,
        "pinned_cpu": cpu,
        "model": "MilestoneProgress",
    }
    for name, clock in (("cpu", time.thread_time), ("wall", time.perf_counter)):
        bare_us: list[float] = []
        wrapped_us: list[float] = []
        for round_index in range(args.rounds + 1):
            totals = {"bare": 0.0, "wrapped": 0.0}
            for n, (seed, actions) in enumerate(episodes):
                order = (("bare", bare), ("wrapped", wrapped))
                if (n + round_index) % 2:
                    order = order[::-1]
                for key, env in order:
                    totals[key] += episode_time(env, seed, actions, clock)
            if round_index:  # the first round warms the view caches
                bare_us.append(totals["bare"] / steps * 1e6)
                wrapped_us.append(totals["wrapped"] / steps * 1e6)
        ratios = [100 * (w / b - 1) for w, b in zip(wrapped_us, bare_us)]
        out[name] = {
            "bare_step_us": statistics.median(bare_us),
            "wrapped_step_us": statistics.median(wrapped_us),
            "overhead_pct": statistics.median(ratios),
            "overhead_pct_quartiles": [float(np.percentile(ratios, q)) for q in (25, 50, 75)],
        }
    info = {"task_id": "stub", "milestones": ["a", "b"], "action_description": "click"}
    stub = _StubEnv(info)
    stub_wrapped = ProgressRewardWrapper(_StubEnv(info), MilestoneProgress({"stub": 5}))
    stub_wrapped.reset()
    isolated: list[float] = []
    for _ in range(args.rounds):
        begin = time.thread_time()
        for _ in range(20_000):
            stub.step(0)
        plain = time.thread_time() - begin
        begin = time.thread_time()
        for _ in range(20_000):
            stub_wrapped.step(0)
        isolated.append((time.thread_time() - begin - plain) / 20_000 * 1e6)
    own = statistics.median(isolated)
    out["isolated"] = {
        "wrapper_own_us": own,
        "overhead_pct_of_bare_step": 100 * own / out["cpu"]["bare_step_us"],
    }
    return out


# --------------------------------------------------------------------------------- main


def format_report(report: dict[str, Any]) -> str:
    lines: list[str] = []
    table = report.get("table")
    if table:
        lines.append("Table 3 (WikiHow test tasks; key-step MAE vs even milestone progress)")
        lines.append(
            f"{'model':12s} {'MAE':>6s} {'final(succ)':>12s} {'final(fail)':>12s} {'ms':>7s}"
        )
        for name, row in table["table"].items():
            lines.append(
                f"{name:12s} {row['key_step_mae']:6.3f} {row['final_score_success']:12.3f} "
                f"{row['final_score_failure']:12.3f} {row['latency_ms']:7.2f}"
            )
        lines.append("Table 2 (final-state score >= 0.5 read as success, vs the env's judgement)")
        lines.append(
            f"{'model':12s} {'acc':>6s} {'prec':>6s} {'recall':>6s} {'F1':>6s} {'FPR':>6s}"
        )
        for name, row in table["table"].items():
            m = row["success_prediction"]
            lines.append(
                f"{name:12s} {m['accuracy']:6.3f} {m['precision']:6.3f} {m['recall']:6.3f} "
                f"{m['f1']:6.3f} {m['false_positive_rate']:6.3f}"
            )
        data = table["data"]
        lines.append(
            f"train: {data['train_trajectories']} trajectories ({data['train_success']} "
            f"successes, {data['train_steps']} steps); test: {data['test_trajectories']} "
            f"({data['test_success']} successes), {data['test_key_steps']} key steps; "
            f"LCS label MAE on train key steps {data['lcs_label_mae_on_train_key_steps']:.3f}"
        )
    speed = report.get("speed")
    if speed:
        lines.append(
            f"labelling {speed['trajectories']} x {speed['steps_per_trajectory']} steps "
            f"({speed['tasks']} tasks) by Soft-LCS with MiniLM: {speed['label_lcs_s']:.1f} s "
            f"wall, {speed['label_lcs_cpu_s']:.1f} s CPU (embedding "
            f"{speed['label_lcs_embedding_s']:.1f} s; +{speed['minilm_load_s']:.1f} s model "
            f"load); by env milestones {speed['label_env_s']:.2f} s"
        )
    overhead = report.get("overhead")
    if overhead:
        for clock in ("cpu", "wall"):
            o = overhead[clock]
            lines.append(
                f"wrapper overhead ({clock} time): bare {o['bare_step_us']:.2f} us, wrapped "
                f"{o['wrapped_step_us']:.2f} us: {o['overhead_pct']:+.2f}% (round quartiles "
                + ", ".join(f"{q:+.2f}" for q in o["overhead_pct_quartiles"])
                + ")"
            )
        iso = overhead["isolated"]
        lines.append(
            f"wrapper's own work (stub env): {iso['wrapper_own_us']:.3f} us per step = "
            f"{iso['overhead_pct_of_bare_step']:.2f}% of the bare WikiHow step"
        )
    lines.append(f"total {report['seconds']:.0f} s wall, {report['cpu_seconds']:.0f} s CPU")
    return "\n".join(lines)


def llm_judge(args: argparse.Namespace) -> Any:
    """The prompted LLM-judge ORM (``--judge-llm``), or None when no LLM was given.

    ``--judge-llm`` is an OpenAI-compatible server URL (with ``--judge-model``) or a local
    Hugging Face folder; nothing is downloaded.
    """
    if not args.judge_llm:
        return None
    from gui_gym.models.llm import OpenAICompatLLM, TransformersLLM
    from gui_gym.models.progress.llm import LLMProgressJudge

    if args.judge_llm.startswith(("http://", "https://")):
        llm: Any = OpenAICompatLLM(model=args.judge_model, base_url=args.judge_llm)
    else:
        llm = TransformersLLM(args.judge_llm)
    return LLMProgressJudge(llm, args.judge_prompt)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="benchmarks/results/progress_table.json")
    parser.add_argument("--figure", default="benchmarks/results/progress_curves.png")
    parser.add_argument("--parts", default="table,speed,overhead")
    parser.add_argument("--quick", action="store_true", help="a few tasks only (smoke run)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-steps", type=int, default=15, help="episode budget (Mobile-Env)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument(
        "--orm-epochs", type=int, default=6, help="the ORM sees one example per episode"
    )
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--max-length", type=int, default=192)
    parser.add_argument("--vocab-size", type=int, default=4000)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="torch threads of this process")
    parser.add_argument("--jobs", type=int, default=2, help="models trained at once")
    parser.add_argument("--speed-tasks", type=int, default=50)
    parser.add_argument("--speed-per-task", type=int, default=200)
    parser.add_argument("--overhead-episodes", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument(
        "--judge-llm",
        default="",
        help="add ProgRM's prompted LLM-judge ORM row: an OpenAI-compatible URL or a local "
        "model folder",
    )
    parser.add_argument("--judge-model", default="", help="model name on the --judge-llm server")
    parser.add_argument(
        "--judge-prompt", default="orm_llm", choices=("orm_llm", "orm_llm_cot"), help="Table 9/10"
    )
    args = parser.parse_args()
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    unknown = parts - {"table", "speed", "overhead"}
    if unknown:
        parser.error(f"unknown part(s) {sorted(unknown)}")
    start = time.perf_counter()
    report: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_at_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        }
    }
    if "overhead" in parts:  # first, before torch threads are started
        affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
        report["overhead"] = run_overhead(args)
        if affinity is not None:
            os.sched_setaffinity(0, affinity)
    if "speed" in parts:
        report["speed"] = run_speed(args)
    if "table" in parts:
        report["table"] = run_table(args)
    report["seconds"] = time.perf_counter() - start
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    report["cpu_seconds"] = time.process_time() + children.ru_utime + children.ru_stime
    if hasattr(os, "getloadavg"):
        report["machine"]["load_average_at_end"] = list(os.getloadavg())
    atomic_write_text(args.out, json.dumps(report, indent=2) + "\n")
    print(format_report(report))
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
