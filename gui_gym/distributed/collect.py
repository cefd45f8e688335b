"""``collect_episodes``: exactly ``n`` finished episodes from a Ray env pool, crash-proof.

Each episode ``k`` is reset with its own seed (``seeds[k]``), so it can be replayed: when
its worker dies, hangs past the pool's ``step_timeout`` or raises, the worker is replaced
(with a :class:`~gui_gym.distributed.calls.WorkerRestartWarning`) and the episode is rerun
from the start with the same seed. Every episode is returned once, in index order, whatever
happened; one that failed ``max_attempts`` times is returned with ``infra_error`` set and no
reward: an episode lost to infrastructure, never scored 0 (``episode_stats`` leaves it out
of the means and counts it apart).

The policy runs here, in the driver, on a batch: every worker waiting for an action is
answered by one call, so a GPU model or an LLM server client batches naturally.
"""

from __future__ import annotations

import time
import warnings
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from gui_gym.distributed.calls import WorkerFailure, WorkerHung, WorkerRestartWarning, fetch
from gui_gym.runs.deadline import hung_message, past

__all__ = ["BatchPolicy", "Episode", "WorkerPool", "collect_episodes", "episode_stats"]

BatchPolicy = Callable[[list[Any], list[dict[str, Any]]], Sequence[Any]]
"""``policy(observations, infos) -> actions``, one action per observation. Each info carries
``info["episode"]`` (the episode's index) and ``info["episode_step"]``, so a policy with
per-episode memory can key it. An object with ``act_batch(observations, infos)`` (the
agents' batch form, returning actions or steps with an ``.action``) works too."""


class WorkerPool(Protocol):
    """What :func:`collect_episodes` drives: a :class:`~gui_gym.distributed.RayVectorEnv`."""

    workers: list[Any]
    num_envs: int
    step_timeout: float

    def restart_worker(self, index: int, reason: str) -> None: ...

    def worker_succeeded(self, index: int) -> None: ...


@dataclass
class Episode:
    """One finished episode (or one lost to infrastructure).

    Attributes:
        index: Position in the request (0..n-1).
        seed: The seed its env was reset with (every attempt used it).
        options: The reset options it ran with.
        actions: Actions sent, in order.
        rewards: Rewards received, in order.
        infos: Step infos (reset info first) when ``keep_infos`` was set, else empty.
        terminated, truncated: How it ended.
        attempts: 1, or more when a failed worker made it rerun.
        infra_error: Why it was lost (after ``max_attempts`` tries), else None.
        final_info: The last info (``success``, ``task_reward``, wrapper parts).
    """

    index: int
    seed: int | None
    options: dict[str, Any] | None = None
    actions: list[Any] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    infos: list[dict[str, Any]] = field(default_factory=list)
    terminated: bool = False
    truncated: bool = False
    attempts: int = 1
    infra_error: str | None = None
    final_info: dict[str, Any] = field(default_factory=dict)

    @property
    def lost(self) -> bool:
        """True for an episode lost to infrastructure (it has no score)."""
        return self.infra_error is not None

    @property
    def total_reward(self) -> float | None:
        """Sum of rewards; None for a lost episode (never 0)."""
        return None if self.lost else float(sum(self.rewards))

    @property
    def success(self) -> bool | None:
        """``info["success"]`` at the end; None for a lost episode."""
        return None if self.lost else bool(self.final_info.get("success", False))

    @property
    def length(self) -> int:
        return len(self.actions)


@dataclass
class _Running:
    episode: Episode
    observation: Any = None
    info: dict[str, Any] = field(default_factory=dict)
    keep_infos: bool = False


def _act(policy: Any, observations: list[Any], infos: list[dict[str, Any]]) -> list[Any]:
    act_batch = getattr(policy, "act_batch", None)
    raw = act_batch(observations, infos) if act_batch is not None else policy(observations, infos)
    actions = [getattr(a, "action", a) for a in raw]
    if len(actions) != len(observations):
        raise ValueError(
            f"the policy returned {len(actions)} actions for {len(observations)} observations"
        )
    return actions


def collect_episodes(
    envs: WorkerPool,
    policy: BatchPolicy | Any,
    n: int,
    *,
    seeds: Sequence[int | None] | None = None,
    base_seed: int = 0,
    options: dict[str, Any] | Sequence[dict[str, Any] | None] | None = None,
    max_attempts: int = 3,
    keep_infos: bool = False,
) -> list[Episode]:
    """Run exactly ``n`` episodes on the pool's workers and return them in index order.

    Args:
        envs: The pool; its workers are driven directly (call ``envs.reset()`` before using
            it as a vector env again).
        policy: ``policy(observations, infos) -> actions`` or an object with ``act_batch``.
        n: Episodes to return.
        seeds: Reset seed of each episode (default ``base_seed + k``).
        base_seed: First seed when ``seeds`` is not given.
        options: Reset options, one dict for all or one per episode (e.g. ``{"task": id}``).
        max_attempts: Tries per episode before it is returned lost (``infra_error``).
        keep_infos: Keep every step's info in :attr:`Episode.infos`.

    Returns:
        ``n`` episodes; ``[e.index for e in result] == list(range(n))``.

    Raises:
        ValueError: for a bad ``n``, ``seeds``/``options`` of the wrong length,
            ``max_attempts < 1``, or a policy that answers the wrong number of actions.
        RuntimeError: when one worker keeps failing (``max_restarts`` of the pool in a row).
    """
    import ray

    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"n must be an int >= 0, got {n!r}")
    if not isinstance(max_attempts, int) or max_attempts < 1:
        raise ValueError(f"max_attempts must be an int >= 1, got {max_attempts!r}")
    seed_list = list(seeds) if seeds is not None else [base_seed + k for k in range(n)]
    if len(seed_list) != n:
        raise ValueError(f"seeds has {len(seed_list)} entries for n={n} episodes")
    if options is None or isinstance(options, dict):
        option_list = [dict(options) if options else None for _ in range(n)]
    else:
        option_list = list(options)
        if len(option_list) != n:
            raise ValueError(f"options has {len(option_list)} entries for n={n} episodes")

    results: list[Episode | None] = [None] * n
    attempts = [0] * n
    queue: deque[int] = deque(range(n))
    running: dict[int, _Running] = {}  # worker index -> its episode
    pending: dict[Any, tuple[int, str, float]] = {}  # ref -> (worker, "reset"/"step", sent at)
    waiting: list[int] = []  # workers whose episode needs an action

    def start(worker: int) -> None:
        index = queue.popleft()
        attempts[index] += 1
        episode = Episode(index, seed_list[index], option_list[index], attempts=attempts[index])
        running[worker] = _Running(episode, keep_infos=keep_infos)
        ref = envs.workers[worker].reset.remote(seed_list[index], option_list[index])
        pending[ref] = (worker, "reset", time.monotonic())

    def fail(worker: int, reason: str) -> None:
        state = running.pop(worker)
        index = state.episode.index
        envs.restart_worker(worker, f"{reason} during episode {index} (seed {state.episode.seed})")
        if attempts[index] < max_attempts:
            queue.appendleft(index)  # rerun from its seed, before any new episode
        else:
            state.episode.infra_error = reason
            state.episode.actions.clear()
            state.episode.rewards.clear()
            results[index] = state.episode
            warnings.warn(
                f"episode {index} lost after {attempts[index]} attempts: {reason}",
                WorkerRestartWarning,
                stacklevel=3,
            )

    while any(r is None for r in results):
        for worker in range(envs.num_envs):
            if worker not in running and queue:
                start(worker)
        if waiting:
            states = [running[w] for w in waiting]
            infos = []
            for state in states:
                info = dict(state.info)
                info["episode"] = state.episode.index
                info["episode_step"] = state.episode.length
                infos.append(info)
            actions = _act(policy, [s.observation for s in states], infos)
            for worker, state, action in zip(waiting, states, actions):
                state.episode.actions.append(action)
                ref = envs.workers[worker].step.remote(action)
                pending[ref] = (worker, "step", time.monotonic())
            waiting = []
        if not pending:
            continue
        now = time.monotonic()
        first_deadline = min(sent for _, _, sent in pending.values()) + envs.step_timeout
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=max(0.0, first_deadline - now))
        ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0)
        now = time.monotonic()
        for ref in list(pending):
            worker, kind, sent = pending[ref]
            if ref in ready:
                del pending[ref]
                result = fetch(ref)
            elif past(sent, envs.step_timeout, now):
                del pending[ref]
                result = WorkerHung(hung_message(envs.step_timeout))
            else:
                continue
            if isinstance(result, WorkerFailure):
                fail(worker, str(result))
                continue
            envs.worker_succeeded(worker)
            state = running[worker]
            if kind == "reset":
                state.observation, state.info = result
                if keep_infos:
                    state.episode.infos.append(state.info)
                waiting.append(worker)
                continue
            observation, reward, terminated, truncated, info = result
            state.observation, state.info = observation, info
            state.episode.rewards.append(float(reward))
            if keep_infos:
                state.episode.infos.append(info)
            if terminated or truncated:
                state.episode.terminated = bool(terminated)
                state.episode.truncated = bool(truncated)
                state.episode.final_info = info
                results[state.episode.index] = state.episode
                del running[worker]
            else:
                waiting.append(worker)
    return [r for r in results if r is not None]


def episode_stats(episodes: Sequence[Episode]) -> dict[str, Any]:
    """Success rate and mean return over the scored episodes; lost ones counted apart.

    Returns:
        ``{"episodes", "scored", "lost", "success_rate", "mean_return", "mean_length"}``;
        the means are None when no episode was scored.
    """
    scored = [e for e in episodes if not e.lost]
    return {
        "episodes": len(episodes),
        "scored": len(scored),
        "lost": len(episodes) - len(scored),
        "success_rate": float(np.mean([e.success for e in scored])) if scored else None,
        "mean_return": float(np.mean([e.total_reward for e in scored])) if scored else None,
        "mean_length": float(np.mean([e.length for e in scored])) if scored else None,
    }
