"""Evaluate an agent over a split: resumable, with per-category summaries.

``gui-gym eval`` is a thin shell over :func:`evaluate`. Episodes are streamed to
``<out>.episodes.jsonl`` as they finish (one crash-safe append each); rerunning the same
command skips the episodes already there, and the summary JSON is written atomically at the
end.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from gui_gym.agents.base import Agent, run_episode
from gui_gym.core.trajectory import Trajectory, atomic_write_text, open_run_log

__all__ = ["EpisodeResult", "EvalSummary", "evaluate", "make_agent", "summarize"]

AGENTS = ("oracle", "random", "random:done=<p>", "webshop-greedy")


def make_agent(name: str, env: gym.Env, seed: int = 0) -> Agent:
    """Build a named built-in agent for ``env``: ``oracle``, ``random``, ``random:done=P``
    (a random agent that declares DONE with probability P at each step), or
    ``webshop-greedy`` (WebShop's BM25-greedy baseline, WebShop ids only).

    Raises:
        ValueError: for an unknown name or option, listing the known ones.
    """
    from gui_gym.agents import OracleAgent, RandomAgent, WebShopGreedyAgent

    base, _, option = name.partition(":")
    if base == "oracle" and not option:
        return OracleAgent(env)
    if base == "webshop-greedy" and not option:
        return WebShopGreedyAgent(env)
    if base == "random":
        done_prob = 0.0
        if option:
            key, _, value = option.partition("=")
            try:
                done_prob = float(value)
            except ValueError:
                key = ""
            if key != "done":
                raise ValueError(f"bad agent option {option!r}; expected random:done=<probability>")
        return RandomAgent(env, seed=seed, done_prob=done_prob)
    raise ValueError(f"unknown agent {name!r}; choose one of {', '.join(AGENTS)}")


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
        )


@dataclass
class EvalSummary:
    """Aggregates over episodes, overall and per category."""

    episodes: int
    success_rate: float
    mean_reward: float
    mean_steps: float
    invalid_action_rate: float
    per_category: dict[str, dict[str, float]]

    def to_dict(self) -> dict[str, Any]:
        return {
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
    return {
        "episodes": n,
        "success_rate": sum(r.success for r in rows) / n if n else 0.0,
        "mean_reward": sum(r.task_reward for r in rows) / n if n else 0.0,
        "mean_steps": steps / n if n else 0.0,
        "invalid_action_rate": sum(r.invalid_actions for r in rows) / steps if steps else 0.0,
    }


def summarize(rows: list[EpisodeResult]) -> EvalSummary:
    """Overall and per-category success rate, reward, steps and invalid-action rate."""
    overall = _aggregate(rows)
    categories = sorted({r.category for r in rows})
    return EvalSummary(
        episodes=len(rows),
        success_rate=overall["success_rate"],
        mean_reward=overall["mean_reward"],
        mean_steps=overall["mean_steps"],
        invalid_action_rate=overall["invalid_action_rate"],
        per_category={c: _aggregate([r for r in rows if r.category == c]) for c in categories},
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
    agent: str | Callable[[gym.Env], Agent],
    *,
    episodes: int | None = None,
    seed: int = 0,
    out: str | Path | None = None,
    env_kwargs: dict[str, Any] | None = None,
    progress: bool = True,
) -> tuple[EvalSummary, list[EpisodeResult]]:
    """Run ``agent`` over the tasks of ``env_id`` and summarise.

    Args:
        env_id: A registered id, e.g. ``GuiGym/WikiHow-v0``.
        agent: ``"oracle"``, ``"random"``, or a factory ``env -> Agent``.
        episodes: How many episodes; None runs every task of the split once. Episodes walk the
            split's tasks in order (cycling), episode ``i`` seeded ``seed + i``.
        seed: Base seed.
        out: Summary JSON path; episodes stream to ``<out>.episodes.jsonl`` and a rerun resumes.
        env_kwargs: Extra ``gym.make`` arguments (``split``, ``category``, ``max_steps``...).
        progress: Show a progress bar.

    Returns:
        The summary and the per-episode rows.
    """
    env = gym.make(env_id, **(env_kwargs or {}))
    agent_name = agent if isinstance(agent, str) else getattr(agent, "__name__", "custom")
    policy = make_agent(agent, env, seed) if isinstance(agent, str) else agent(env)
    rows: dict[int, EpisodeResult] = {}
    log_path = Path(f"{out}.episodes.jsonl") if out is not None else None
    header = {"env_id": env_id, "agent": agent_name, "seed": seed, "env_kwargs": env_kwargs or {}}
    writer = None
    if log_path is not None:
        writer, done = open_run_log(log_path, header)
        rows.update((r["episode"], EpisodeResult(**r)) for r in done)
    schedule = list(_schedule(env, episodes, seed))
    try:
        iterator: Any = schedule
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(
                total=len(schedule), initial=len(rows), desc=f"{agent_name} on {env_id}", unit="ep"
            )
        for episode, ep_seed, task_id in iterator:
            if episode in rows:
                continue
            if not isinstance(agent, str):
                policy = agent(env)
            elif agent.startswith("random"):
                policy = make_agent(agent, env, ep_seed)
            options = {"task": task_id} if task_id is not None else None
            trajectory = run_episode(env, policy, seed=ep_seed, options=options)
            row = EpisodeResult.from_trajectory(episode, ep_seed, trajectory)
            rows[episode] = row
            if writer is not None:
                writer.write(row.__dict__)
            if bar is not None:
                bar.update(1)
                done = list(rows.values())
                bar.set_postfix(success=f"{sum(r.success for r in done) / len(done):.1%}")
        if bar is not None:
            bar.close()
    finally:
        if writer is not None:
            writer.close()
        env.close()
    ordered = [rows[i] for i in sorted(rows) if i < len(schedule)]
    summary = summarize(ordered)
    if out is not None:
        payload = {
            **header,
            "summary": summary.to_dict(),
            "episodes": [r.__dict__ for r in ordered],
        }
        atomic_write_text(out, json.dumps(payload, indent=1) + "\n")
    return summary, ordered
