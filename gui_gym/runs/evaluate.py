"""Evaluate an agent over a split: resumable, with per-category summaries.

``gui-gym eval`` is a thin shell over :func:`evaluate`, itself a client of the rollout
engine (:class:`~gui_gym.runs.rollout.RolloutEngine`), so built-in agents, LLM agents on a
local model (one batched generation per step over ``num_envs`` envs) and LLM agents on a
server (one request in flight per env) all run through the same loop. Episodes are streamed
to ``<out>.episodes.jsonl`` as they finish (one crash-safe append each); rerunning the same
command skips the episodes already there, and the summary JSON is written atomically at the
end.

An episode lost to infrastructure (an env that raised, a dead env worker, a model server
past its retries) is logged with its ``infra_error`` and counted apart
(``EvalSummary.infra_errors``): it is not in the success rate, and a rerun of the command
runs it again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from gui_gym.agents.base import Agent, BatchAgent
from gui_gym.agents.named import AGENTS, make_agent, make_llm_agent  # what `agent` may name
from gui_gym.core.progress import progress_bar, progress_enabled
from gui_gym.core.trajectory import Trajectory, atomic_write_text, dumps_json, open_run_log
from gui_gym.runs.deadline import DEFAULT_STEP_TIMEOUT
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine, as_batch_agent

__all__ = [
    "AGENTS",
    "EpisodeResult",
    "EvalSummary",
    "evaluate",
    "make_agent",
    "make_llm_agent",
    "summarize",
]


@dataclass
class EpisodeResult:
    """One evaluated episode (a row of ``<out>.episodes.jsonl``)."""

    episode: int
    task_id: str
    category: str
    seed: int
    success: bool
    task_reward: float
    steps: int
    milestones: list[str] = field(default_factory=list)
    invalid_actions: int = 0
    infra_error: str | None = None
    milestone_reward: float | None = None  # Mobile-Env's per-event reward, where the env has one

    @classmethod
    def from_trajectory(cls, episode: int, seed: int, t: Trajectory) -> EpisodeResult:
        return cls(
            episode=episode,
            task_id=t.task_id,
            category=str(t.metadata.get("category", "")),
            seed=seed,
            success=t.success,
            task_reward=t.task_reward,
            steps=len(t.steps),
            milestones=t.steps[-1].milestones if t.steps else [],
            invalid_actions=sum(1 for s in t.steps if not s.action_valid),
            infra_error=t.infra_error,
            milestone_reward=(
                float(sum(s.info.get("milestone_reward", 0.0) for s in t.steps))
                if any("milestone_reward" in s.info for s in t.steps)
                else None
            ),
        )


@dataclass
class EvalSummary:
    """Aggregates over episodes, overall and per category (episodes lost to infrastructure
    are left out of every rate and counted in ``infra_errors``). ``rwd`` is the mean
    cumulative Mobile-Env milestone reward per episode (ProgRM Table 1's "Rwd"), for envs that
    report ``info["milestone_reward"]`` (WikiHow), else None."""

    episodes: int
    success_rate: float
    mean_reward: float
    mean_steps: float
    invalid_action_rate: float
    per_category: dict[str, dict[str, float]]
    infra_errors: int = 0
    rwd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "infra_errors": self.infra_errors,
            "rwd": self.rwd,
            "episodes": self.episodes,
            "success_rate": self.success_rate,
            "mean_reward": self.mean_reward,
            "mean_steps": self.mean_steps,
            "invalid_action_rate": self.invalid_action_rate,
            "per_category": self.per_category,
        }


def _aggregate(rows: list[EpisodeResult]) -> dict[str, float]:
    n = len(rows)
    steps = sum(r.steps for r in rows)
    paid = [r.milestone_reward for r in rows if r.milestone_reward is not None]
    return {
        "rwd": sum(paid) / len(paid) if paid else None,
        "episodes": n,
        "success_rate": sum(r.success for r in rows) / n if n else 0.0,
        "mean_reward": sum(r.task_reward for r in rows) / n if n else 0.0,
        "mean_steps": steps / n if n else 0.0,
        "invalid_action_rate": sum(r.invalid_actions for r in rows) / steps if steps else 0.0,
    }


def summarize(rows: list[EpisodeResult]) -> EvalSummary:
    """Overall and per-category success rate, reward, steps and invalid-action rate over the
    episodes that ran to their end; those lost to infrastructure are only counted."""
    lost = sum(r.infra_error is not None for r in rows)
    rows = [r for r in rows if r.infra_error is None]
    overall = _aggregate(rows)
    categories = sorted({r.category for r in rows})
    return EvalSummary(
        episodes=len(rows),
        success_rate=overall["success_rate"],
        mean_reward=overall["mean_reward"],
        mean_steps=overall["mean_steps"],
        invalid_action_rate=overall["invalid_action_rate"],
        per_category={c: _aggregate([r for r in rows if r.category == c]) for c in categories},
        infra_errors=lost,
        rwd=overall["rwd"],
    )


def _schedule(
    env: gym.Env, episodes: int | None, seed: int
) -> Iterator[tuple[int, int, str | None]]:
    """(episode, seed, task id) triples: every task of the env's pool in order, cycling."""
    pool = [t.task_id for t in getattr(env.unwrapped, "_pool", [])]
    total = episodes if episodes is not None else len(pool)
    for i in range(total):
        yield i, seed + i, (pool[i % len(pool)] if pool else None)


def evaluate(
    env_id: str,
    agent: str | Callable[[gym.Env], Agent] | BatchAgent,
    *,
    episodes: int | None = None,
    seed: int = 0,
    out: str | Path | None = None,
    env_kwargs: dict[str, Any] | None = None,
    progress: bool = True,
    num_envs: int = 1,
    workers: str = "inline",
    step_timeout: float | None = DEFAULT_STEP_TIMEOUT,
) -> tuple[EvalSummary, list[EpisodeResult]]:
    """Run ``agent`` over the tasks of ``env_id`` and summarise.

    Args:
        env_id: A registered id, e.g. ``GuiGym/WikiHow-v0``.
        agent: A built-in name (``"oracle"``, ``"random"``, ...), a factory ``env -> Agent``,
            or a batch agent such as :class:`~gui_gym.agents.llm.LLMAgent` (see
            :func:`make_llm_agent`).
        episodes: How many episodes; None runs every task of the split once. Episodes walk the
            split's tasks in order (cycling), episode ``i`` seeded ``seed + i``.
        seed: Base seed.
        out: Summary JSON path; episodes stream to ``<out>.episodes.jsonl`` and a rerun resumes
            (episodes lost to infrastructure are run again).
        env_kwargs: Extra ``gym.make`` arguments (``split``, ``category``, ``max_steps``...).
        progress: Show a progress bar (where ``gui_gym.core.progress`` allows: a terminal).
        num_envs: Episodes in flight at once (envs the rollout engine keeps).
        workers: ``"inline"`` or ``"process"`` (each env in its own worker process; a
            worker that dies is reported, restarted, and its episode marked infra_error).
        step_timeout: Seconds an env step may take before it counts as hung (its worker
            is killed and restarted, its episode marked infra_error); None: no limit. See
            :class:`~gui_gym.runs.rollout.RolloutEngine`.

    Returns:
        The summary and the per-episode rows.
    """
    if isinstance(agent, str):
        probe = gym.make(env_id, **(env_kwargs or {}))
        try:
            make_agent(agent, probe, seed)  # an unknown name fails before any env starts
            schedule = list(_schedule(probe, episodes, seed))
        finally:
            probe.close()
        agent_name = agent
    else:
        probe = gym.make(env_id, **(env_kwargs or {}))
        try:
            schedule = list(_schedule(probe, episodes, seed))
        finally:
            probe.close()
        agent_name = str(getattr(agent, "name", None) or getattr(agent, "__name__", "custom"))
    rows: dict[int, EpisodeResult] = {}
    log_path = Path(f"{out}.episodes.jsonl") if out is not None else None
    header = {"env_id": env_id, "agent": agent_name, "seed": seed, "env_kwargs": env_kwargs or {}}
    writer = None
    if log_path is not None:
        # a record that is not an episode row fails naming the file and line
        writer, done = open_run_log(log_path, header, parse=lambda r: EpisodeResult(**r))
        for record in done:  # a later line for an episode supersedes an earlier one
            rows[record.episode] = record
    todo = [
        (episode, ep_seed, task_id)
        for episode, ep_seed, task_id in schedule
        if episode not in rows or rows[episode].infra_error is not None
    ]
    bar = None
    if progress_enabled(progress):
        bar = progress_bar(
            total=len(schedule),
            initial=len(schedule) - len(todo),
            desc=f"{agent_name} on {env_id}",
            unit="ep",
        )

    def finished(position: int, trajectory: Trajectory) -> None:
        episode, ep_seed, _ = todo[position]
        row = EpisodeResult.from_trajectory(episode, ep_seed, trajectory)
        rows[episode] = row
        if writer is not None:
            writer.write(row.__dict__)
        if bar is not None:
            bar.update(1)
            ran = [r for r in rows.values() if r.infra_error is None]
            lost = len(rows) - len(ran)
            postfix = {"success": f"{sum(r.success for r in ran) / max(len(ran), 1):.1%}"}
            if lost:
                postfix["infra"] = str(lost)
            bar.set_postfix(postfix)

    try:
        if todo:
            engine = RolloutEngine(
                env_id,
                as_batch_agent(agent),
                num_envs=min(num_envs, len(todo)),
                env_kwargs=env_kwargs,
                workers=workers,
                record_prompts=False,
                step_timeout=step_timeout,
            )
            with engine:
                engine.run(
                    [EpisodeSpec(task_id, ep_seed, episode=e) for e, ep_seed, task_id in todo],
                    on_episode=finished,
                )
    finally:
        if bar is not None:
            bar.close()
        if writer is not None:
            writer.close()
    ordered = [rows[i] for i in sorted(rows) if i < len(schedule)]
    summary = summarize(ordered)
    if out is not None:
        payload = {
            **header,
            "summary": summary.to_dict(),
            "episodes": [r.__dict__ for r in ordered],
        }
        atomic_write_text(out, dumps_json(payload, indent=1) + "\n")
    return summary, ordered
