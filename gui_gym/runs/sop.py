"""Semi-Online Performance (SOP): evaluate an agent on expert data with its own history.

UI-S1 (Sec. 4.1, Appendix C) proposes SOP as a cheap proxy for online success: replay each
expert trajectory, let the agent act on the expert states while keeping its own outputs as
history, and stop at the first action that does not match. ``s_i`` is the number of steps
matched before that point and ``t_i`` the expert trajectory's length; PG is the mean of
``s_i / t_i``, TSR the fraction with ``s_i = t_i``, and Score their average.

:func:`evaluate_sop` runs :class:`~gui_gym.envs.replay.SemiOnlineReplayEnv`. By default it
patches every mismatch (thought-free, ``epsilon = inf``) and keeps going, which changes
nothing before the first mismatch, so SOP is the same as stopping there, and it also yields
an offline-style *step accuracy*: the fraction of all expert steps the agent matches when
every earlier step is put right (what AndroidControl-style step metrics measure). Pass
``step_accuracy=False`` to stop at the first mismatch and save agent calls.

Episodes stream to ``<out>.episodes.jsonl`` and a rerun resumes, as in ``gui-gym eval``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from gui_gym.agents.base import Agent
from gui_gym.agents.named import make_agent
from gui_gym.core.progress import progress_bar, progress_enabled
from gui_gym.core.trajectory import Trajectory, atomic_write_text, dumps_json, open_run_log
from gui_gym.envs.replay import ExpertDataset, SemiOnlineReplayEnv
from gui_gym.envs.replay.dataset import ExpertTrajectory
from gui_gym.rewards.action_match import Matcher
from gui_gym.rewards.semi_online import SOPMetrics, sop_metrics
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine, as_batch_agent

__all__ = [
    "OfflineLevel",
    "SOPEpisode",
    "SOPSummary",
    "evaluate_offline",
    "evaluate_sop",
    "offline_metrics",
]


@dataclass
class SOPEpisode:
    """One replayed expert trajectory (a row of ``<out>.episodes.jsonl``).

    Attributes:
        index: Position of the trajectory in the dataset.
        trajectory_id, task_id, category: Which trajectory.
        seed: Reset seed (random agents are seeded with it).
        expert_steps: ``t_i``.
        matched_prefix: ``s_i``, steps matched before the first mismatch.
        matched_steps: Steps matched in all, every mismatch patched (0 with
            ``step_accuracy=False`` runs beyond the prefix).
        judged_steps: Steps the agent acted on.
        type_matched_steps: Steps whose action type matched the expert's (0 in logs written
            before it was recorded).
    """

    index: int
    trajectory_id: str
    task_id: str
    category: str
    seed: int
    expert_steps: int
    matched_prefix: int
    matched_steps: int
    judged_steps: int
    type_matched_steps: int = 0


@dataclass
class SOPSummary:
    """SOP over a dataset, with the offline-style step accuracy beside it.

    Attributes:
        sop: PG, TSR and Score.
        step_accuracy: Matched steps / expert steps with every mismatch patched (None when
            the run stopped at first mismatches).
        per_category: SOP per task category.
        skipped: Dataset records skipped as bad (``skip_bad=True``).
        failed: Recorded episodes left out because the expert failed.
    """

    sop: SOPMetrics
    step_accuracy: float | None
    per_category: dict[str, dict[str, float | int]] = field(default_factory=dict)
    skipped: int = 0
    failed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.sop.to_dict(),
            "step_accuracy": self.step_accuracy,
            "per_category": self.per_category,
            "skipped": self.skipped,
            "failed": self.failed,
        }


def _summarise(
    rows: list[SOPEpisode], step_accuracy: bool, skipped: int, failed: int
) -> SOPSummary:
    def metrics(subset: list[SOPEpisode]) -> SOPMetrics:
        return sop_metrics([r.matched_prefix for r in subset], [r.expert_steps for r in subset])

    categories = sorted({r.category for r in rows if r.category})
    accuracy = None
    if step_accuracy:
        accuracy = sum(r.matched_steps for r in rows) / sum(r.expert_steps for r in rows)
    return SOPSummary(
        sop=metrics(rows),
        step_accuracy=accuracy,
        per_category={
            c: metrics([r for r in rows if r.category == c]).to_dict() for c in categories
        },
        skipped=skipped,
        failed=failed,
    )


def evaluate_sop(
    dataset: str | Path | ExpertDataset,
    agent: str | Callable[[gym.Env], Agent],
    *,
    matcher: str | Matcher = "loose",
    step_accuracy: bool = True,
    seed: int = 0,
    out: str | Path | None = None,
    skip_bad: bool = False,
    limit: int | None = None,
    progress: bool = True,
    instruction_level: str = "high",
) -> tuple[SOPSummary, list[SOPEpisode]]:
    """Run ``agent`` over every trajectory of ``dataset`` and compute SOP.

    Args:
        dataset: A dataset folder or a loaded :class:`ExpertDataset`.
        agent: A built-in agent name (``oracle``, ``random``, ``random:done=P``) or a factory
            ``env -> Agent``.
        matcher: ``"loose"`` (default; UI-S1's evaluation matcher is looser than its training
            one), ``"strict"``, or a matcher.
        step_accuracy: Patch every mismatch and go on, to measure step accuracy too.
        seed: Trajectory ``i`` is reset with ``seed + i``.
        out: Summary JSON; episodes stream to ``<out>.episodes.jsonl`` and a rerun resumes.
        skip_bad: Skip corrupt records and missing images (counted) instead of failing.
        limit: Evaluate only the first ``limit`` trajectories.
        progress: Show a progress bar.
        instruction_level: ``"high"`` (the goal) or ``"low"`` (the goal and each step's
            low-level instruction; see :class:`~gui_gym.envs.replay.SemiOnlineReplayEnv`).

    Returns:
        The summary and one row per trajectory.

    Raises:
        DatasetError: for a bad dataset (without ``skip_bad``).
        ValueError: when ``out`` holds a run with different settings.
    """
    data = (
        dataset
        if isinstance(dataset, ExpertDataset)
        else ExpertDataset.load(dataset, skip_bad=skip_bad)
    )
    make_env = functools.partial(
        SemiOnlineReplayEnv,
        data,
        matcher=matcher,
        patch="thought_free" if step_accuracy else "none",
        epsilon=math.inf if step_accuracy else 0,
        history=True,
        # SOP and the step metrics judge actions: a bare action is scored as a thought-first one
        require_think=False,
        instruction_level=instruction_level,
    )
    if isinstance(agent, str):
        probe = make_env()
        try:
            make_agent(agent, probe, seed)  # an unknown name fails here, not per episode
        finally:
            probe.close()
    total = len(data) if limit is None else min(limit, len(data))
    agent_name = agent if isinstance(agent, str) else getattr(agent, "__name__", "custom")
    matcher_name = matcher if isinstance(matcher, str) else getattr(matcher, "name", "custom")
    header = {
        "dataset": str(data.root.resolve()),
        "agent": agent_name,
        "matcher": matcher_name,
        "seed": seed,
        "step_accuracy": step_accuracy,
        **({"instruction_level": instruction_level} if instruction_level != "high" else {}),
    }
    rows: dict[int, SOPEpisode] = {}
    log_path = Path(f"{out}.episodes.jsonl") if out is not None else None
    writer = None
    if log_path is not None:
        writer, done = open_run_log(log_path, header, parse=lambda r: SOPEpisode(**r))
        rows.update((r.index, r) for r in done)
    details: dict[int, dict[str, Any]] = {}

    def on_end(trajectory: Trajectory, observation: dict[str, Any], info: dict[str, Any]) -> None:
        details[trajectory.metadata["episode"]] = info["semi_online"]

    def finished(position: int, trajectory: Trajectory) -> None:
        index = trajectory.metadata["episode"]
        if trajectory.infra_error is not None:  # not evidence about the agent: rerun later
            return
        row = _row(index, seed + index, data.trajectories[index], details.pop(index))
        rows[index] = row
        if writer is not None:
            writer.write(asdict(row))
        if bar is not None:
            bar.update(1)

    bar = None
    try:
        if progress_enabled(progress):
            bar = progress_bar(
                total=total, initial=len(rows), desc=f"SOP {agent_name}", unit="traj"
            )
        todo = [i for i in range(total) if i not in rows]
        if todo:
            engine = RolloutEngine(
                make_env,
                as_batch_agent(agent),
                num_envs=1,
                record_prompts=False,
                on_end=on_end,
            )
            with engine:
                engine.run(
                    [
                        EpisodeSpec(None, seed + i, episode=i, options={"trajectory": i})
                        for i in todo
                    ],
                    on_episode=finished,
                )
    finally:
        if bar is not None:
            bar.close()
        if writer is not None:
            writer.close()
    ordered = [rows[i] for i in sorted(rows) if i < total]
    summary = _summarise(ordered, step_accuracy, len(data.skipped), data.failed)
    if out is not None:
        payload = {
            **header,
            "summary": summary.to_dict(),
            "episodes": [asdict(r) for r in ordered],
        }
        atomic_write_text(out, dumps_json(payload, indent=1) + "\n")
    return summary, ordered


def _row(
    index: int, seed: int, trajectory: ExpertTrajectory, details: dict[str, Any]
) -> SOPEpisode:
    """The SOP row of one replayed trajectory from the env's final ``info["semi_online"]``."""
    return SOPEpisode(
        index=index,
        trajectory_id=trajectory.trajectory_id,
        task_id=trajectory.task_id,
        category=trajectory.category,
        seed=seed,
        expert_steps=len(trajectory),
        matched_prefix=int(details["matched_prefix"]),
        matched_steps=sum(details["rollout"]["matched"]),
        judged_steps=len(details["rollout"]["matched"]),
        type_matched_steps=sum(details["rollout"].get("type_matched", ())),
    )


@dataclass
class OfflineLevel:
    """AndroidControl-style step metrics at one instruction level.

    Attributes:
        level: ``"high"`` (the goal only) or ``"low"`` (with each step's instruction).
        steps: Expert steps judged.
        type_match: Share of steps whose action type matched the expert's (TM).
        exact_match: Share of steps whose action matched the expert's (EM: type and target
            or text, as the matcher decides).
        per_category: TM and EM per task category.
    """

    level: str
    steps: int
    type_match: float
    exact_match: float
    per_category: dict[str, dict[str, float]] = field(default_factory=dict)


def offline_metrics(rows: list[SOPEpisode], level: str) -> OfflineLevel:
    """TM and EM over every judged step of ``rows`` (every mismatch patched, so each step is
    judged on the expert's state with the expert's history, as offline benchmarks do)."""

    def rates(subset: list[SOPEpisode]) -> tuple[int, float, float]:
        steps = sum(r.judged_steps for r in subset)
        if not steps:
            return 0, math.nan, math.nan
        return (
            steps,
            sum(r.type_matched_steps for r in subset) / steps,
            sum(r.matched_steps for r in subset) / steps,
        )

    steps, tm, em = rates(rows)
    per_category = {}
    for category in sorted({r.category for r in rows if r.category}):
        n, c_tm, c_em = rates([r for r in rows if r.category == category])
        per_category[category] = {"steps": n, "type_match": c_tm, "exact_match": c_em}
    return OfflineLevel(level, steps, tm, em, per_category)


def evaluate_offline(
    dataset: str | Path | ExpertDataset,
    agent: str | Callable[[gym.Env], Agent],
    *,
    levels: tuple[str, ...] = ("high", "low"),
    matcher: str | Matcher = "strict",
    seed: int = 0,
    out: str | Path | None = None,
    skip_bad: bool = False,
    limit: int | None = None,
    progress: bool = True,
) -> dict[str, OfflineLevel]:
    """Offline single-step metrics on an expert dataset, as AndroidControl reports them and
    UI-S1 and GUI-Shepherd (Table 2) use: type match and exact match per step, with the
    high-level goal alone and with each step's low-level instruction.

    Each level is an :func:`evaluate_sop` run that patches every mismatch, so every expert
    step is judged once on the expert's state; ``out`` gets the levels' summary, and each
    level's episodes stream to ``<out>.<level>.episodes.jsonl`` (a rerun resumes).

    Raises:
        ValueError: for an unknown level.
        DatasetError: for a bad dataset (without ``skip_bad``).
    """
    unknown = [lv for lv in levels if lv not in ("high", "low")]
    if unknown or not levels:
        raise ValueError(f"levels must be among ('high', 'low'), got {levels!r}")
    data = (
        dataset
        if isinstance(dataset, ExpertDataset)
        else ExpertDataset.load(dataset, skip_bad=skip_bad)
    )
    report: dict[str, OfflineLevel] = {}
    for level in levels:
        _, rows = evaluate_sop(
            data,
            agent,
            matcher=matcher,
            step_accuracy=True,
            seed=seed,
            out=None if out is None else f"{out}.{level}",
            limit=limit,
            progress=progress,
            instruction_level=level,
        )
        report[level] = offline_metrics(rows, level)
    if out is not None:
        agent_name = agent if isinstance(agent, str) else getattr(agent, "__name__", "custom")
        payload = {
            "dataset": str(data.root.resolve()),
            "agent": agent_name,
            "matcher": matcher if isinstance(matcher, str) else getattr(matcher, "name", "custom"),
            "levels": {level: asdict(result) for level, result in report.items()},
        }
        atomic_write_text(out, dumps_json(payload, indent=1) + "\n")
    return report
