"""``RayVectorEnv``: Gymnasium's ``VectorEnv`` with each sub-env in its own Ray actor.

It is a plain Gymnasium vector env (same ``reset``/``step``/autoreset semantics as
``SyncVectorEnv``, same ``call``/``get_attr``/``set_attr``), so every vector wrapper and any
trainer that takes a ``VectorEnv`` (the rollout engine included) uses it unchanged; only the
sub-envs live elsewhere: in worker processes on this machine (local Ray, the default) or on
the nodes of a Ray cluster (``address="auto"`` or ``"ray://head:10001"``).

A worker that dies (its process killed, its node lost) or hangs past ``step_timeout`` (the
rollout engine's deadline rule, :mod:`gui_gym.runs.deadline`) is killed and replaced by a
fresh one, with a :class:`~gui_gym.distributed.calls.WorkerRestartWarning`. Its episode
cannot be continued: the step reports it ``truncated`` with ``infos["infra_error"]`` saying
why (an episode lost to infrastructure, never a failure of the agent), and the sub-env
starts a new episode. :func:`~gui_gym.distributed.collect_episodes` goes further and reruns such an
episode from its seed, so no episode is lost or counted twice.
"""

from __future__ import annotations

import warnings
from copy import deepcopy
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from gui_gym.distributed.calls import WorkerFailure, WorkerRestartWarning, gather
from gui_gym.distributed.collect import collect_episodes
from gui_gym.distributed.worker import EnvFactory, make_env_factory, remote_worker_class
from gui_gym.runs.deadline import START_TIMEOUT, check_timeout

__all__ = ["RayVectorEnv", "ensure_ray"]


def ensure_ray(address: str | None = None, **init_kwargs: Any) -> bool:
    """Start or connect to Ray unless this process already is connected.

    Args:
        address: None for a local Ray instance, ``"auto"`` or ``"ray://host:port"`` for a
            cluster.
        init_kwargs: More ``ray.init`` arguments (``num_cpus``, ``runtime_env``, ...).

    Returns:
        True when this call started the connection (its owner should ``ray.shutdown()``).

    Raises:
        gymnasium.error.DependencyNotInstalled: without Ray (``gui-gym[distributed]``).
    """
    try:
        import ray
    except ImportError as err:
        raise gym.error.DependencyNotInstalled(
            f"the Ray env pool needs ray ({err}); pip install 'gui-gym[distributed]'"
        ) from err
    if ray.is_initialized():
        return False
    init_kwargs.setdefault("include_dashboard", False)
    init_kwargs.setdefault("log_to_driver", False)
    ray.init(address=address, **init_kwargs)
    return True


class RayVectorEnv(VectorEnv):
    """A Gymnasium ``VectorEnv`` whose sub-envs run in Ray actors.

    Args:
        env: An env id (made in each worker with ``gym.make(env, **env_kwargs)``) or a
            picklable zero-argument factory (e.g. ``lambda: make_sb3_env("GuiGym/WikiHow-v0")``).
        num_envs: Number of sub-envs (one actor each).
        address: Ray to connect to when this process is not connected yet: None starts a
            local instance, ``"auto"`` joins the cluster this node belongs to,
            ``"ray://head:10001"`` a remote one.
        autoreset_mode: Gymnasium's autoreset mode (``NEXT_STEP`` by default, as
            ``SyncVectorEnv``).
        step_timeout: Seconds a step or reset may take before its worker counts as hung
            (the rollout engine's rule and wording: :mod:`gui_gym.runs.deadline`).
        start_timeout: Seconds a new worker may take to start and build its env.
        max_restarts: Restarts of one sub-env's worker in a row (without a successful step
            between them) before :meth:`step` gives up with a RuntimeError: an env that fails
            every time is a bug, not bad luck.
        actor_options: ``ray.remote`` options of each worker (``num_cpus``, ``resources``,
            ``scheduling_strategy`` to spread them over nodes, ...).
        ray_init: More ``ray.init`` arguments, used only when this env starts Ray.
        copy: Return copies of the batched observations (as ``SyncVectorEnv``).
        env_kwargs: Keyword arguments of ``gym.make`` (with an env id only).

    ``close()`` closes every env (a browser quits), kills every worker, and shuts Ray down
    when this env started it.
    """

    def __init__(
        self,
        env: str | EnvFactory,
        num_envs: int,
        *,
        address: str | None = None,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        step_timeout: float = 120.0,
        start_timeout: float = START_TIMEOUT,
        max_restarts: int = 3,
        actor_options: dict[str, Any] | None = None,
        ray_init: dict[str, Any] | None = None,
        copy: bool = True,
        **env_kwargs: Any,
    ):
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        check_timeout(step_timeout, optional=False)
        check_timeout(start_timeout, "start_timeout", optional=False)
        if not isinstance(max_restarts, int) or max_restarts < 0:
            raise ValueError(f"max_restarts must be an int >= 0, got {max_restarts!r}")
        self.factory = make_env_factory(env, env_kwargs)
        self.num_envs = num_envs
        self.autoreset_mode = (
            autoreset_mode
            if isinstance(autoreset_mode, AutoresetMode)
            else AutoresetMode(autoreset_mode)
        )
        self.step_timeout = float(step_timeout)
        self.start_timeout = float(start_timeout)
        self.max_restarts = max_restarts
        self.actor_options = dict(actor_options or {})
        self.copy = copy
        self.restarts = 0
        """Workers replaced so far (all sub-envs)."""
        self._consecutive_failures = [0] * num_envs
        self._closed_workers = False
        self._owns_ray = ensure_ray(address, **(ray_init or {}))
        self.workers: list[Any] = [self._spawn() for _ in range(num_envs)]
        try:
            first = self._ask(0, "spaces", self.start_timeout)
            obs_space, act_space, metadata, render_mode = first
            others = gather([w.spaces.remote() for w in self.workers[1:]], self.start_timeout)
        except BaseException:
            self.close()
            raise
        for i, result in enumerate(others, start=1):
            if isinstance(result, WorkerFailure):
                self.close()
                raise RuntimeError(f"env worker {i} failed to start: {result}")
            if result[0] != obs_space or result[1] != act_space:
                self.close()
                raise RuntimeError(
                    f"sub-env {i} has other spaces than sub-env 0: {result[0]}, {result[1]}"
                )
        self.single_observation_space = obs_space
        self.single_action_space = act_space
        self.observation_space = batch_space(obs_space, num_envs)
        self.action_space = batch_space(act_space, num_envs)
        self.metadata = dict(metadata)
        self.metadata["autoreset_mode"] = self.autoreset_mode
        self.render_mode = render_mode
        self._env_obs: list[Any] = [None] * num_envs
        self._observations = create_empty_array(obs_space, n=num_envs, fn=np.zeros)

    # ----------------------------------------------------------------------------- workers

    def _spawn(self) -> Any:
        worker_class = remote_worker_class()
        if self.actor_options:
            worker_class = worker_class.options(**self.actor_options)
        return worker_class.remote(self.factory)

    def _ask(self, index: int, method: str, timeout: float, *args: Any) -> Any:
        """One call on one worker; a failure restarts it and raises RuntimeError."""
        (result,) = gather([getattr(self.workers[index], method).remote(*args)], timeout)
        if isinstance(result, WorkerFailure):
            raise RuntimeError(f"env worker {index}: {result}")
        return result

    def restart_worker(self, index: int, reason: str) -> None:
        """Kill worker ``index`` and start a fresh one in its place (its env not yet reset).

        Raises:
            RuntimeError: after ``max_restarts`` restarts of this sub-env in a row.
        """
        import ray

        self._consecutive_failures[index] += 1
        if self._consecutive_failures[index] > self.max_restarts:
            raise RuntimeError(
                f"env worker {index} failed {self._consecutive_failures[index]} times in a row "
                f"(last: {reason}); giving up (max_restarts={self.max_restarts})"
            )
        warnings.warn(
            f"env worker {index} {reason}; restarting it", WorkerRestartWarning, stacklevel=3
        )
        ray.kill(self.workers[index], no_restart=True)
        self.workers[index] = self._spawn()
        self.restarts += 1
        # A new process imports and builds its env: give it start_timeout, not step_timeout.
        (ready,) = gather([self.workers[index].pid.remote()], self.start_timeout)
        if isinstance(ready, WorkerFailure):
            self.restart_worker(index, f"failed to start ({ready})")

    def worker_succeeded(self, index: int) -> None:
        """Record a successful call on worker ``index`` (``max_restarts`` counts failures in
        a row)."""
        self._consecutive_failures[index] = 0

    def worker_pids(self) -> list[int]:
        """Process ids of the workers (for monitoring; tests check none outlives close())."""
        return [self._ask(i, "pid", self.step_timeout) for i in range(self.num_envs)]

    def worker_placements(self) -> list[dict[str, Any]]:
        """Where each worker runs: ``{"pid", "node_id", "node_ip"}`` per sub-env (on a
        cluster, which node holds each env; compare with ``ray.nodes()``)."""
        return [self._ask(i, "placement", self.step_timeout) for i in range(self.num_envs)]

    def reset_worker(
        self, index: int, seed: int | None, options: dict[str, Any] | None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset sub-env ``index`` alone, restarting its worker while it fails; returns its
        ``(observation, info)`` (the batched observations are not updated)."""
        while True:
            (result,) = gather([self.workers[index].reset.remote(seed, options)], self.step_timeout)
            if not isinstance(result, WorkerFailure):
                return result
            self.restart_worker(index, str(result))

    # -------------------------------------------------------------------------- gym contract

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the sub-envs (all, or those in ``options["reset_mask"]``), as
        ``SyncVectorEnv.reset`` does."""
        if seed is None:
            seeds: list[int | None] = [None] * self.num_envs
        elif isinstance(seed, int):
            seeds = [seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(
                f"If seeds are passed as a list the length must match num_envs={self.num_envs} "
                f"but got length={len(seeds)}."
            )
        options = dict(options) if options is not None else None
        mask = np.ones(self.num_envs, dtype=bool)
        if options is not None and "reset_mask" in options:
            mask = options.pop("reset_mask")
            if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
                raise TypeError("`options['reset_mask']` must be a numpy array of dtype bool")
            if mask.shape != (self.num_envs,):
                raise ValueError(
                    f"`options['reset_mask']` must have shape `({self.num_envs},)`, got {mask.shape}"
                )
            if not mask.any():
                raise ValueError("`options['reset_mask']` must contain at least one True value")
        chosen = [i for i in range(self.num_envs) if mask[i]]
        refs = [self.workers[i].reset.remote(seeds[i], options) for i in chosen]
        results = gather(refs, self.step_timeout)
        infos: dict[str, Any] = {}
        for i, result in zip(chosen, results):
            if isinstance(result, WorkerFailure):
                self.restart_worker(i, str(result))
                result = self.reset_worker(i, seeds[i], options)
            self.worker_succeeded(i)
            self._env_obs[i], info = result
            infos = self._add_info(infos, info, i)
        self._observations = concatenate(
            self.single_observation_space, self._env_obs, self._observations
        )
        return (deepcopy(self._observations) if self.copy else self._observations), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every sub-env in parallel (one round trip each) with the autoreset rule of
        ``autoreset_mode``; a failed worker is restarted and its episode ends ``truncated``
        with ``infos["infra_error"]``."""
        mode = self.autoreset_mode.value
        refs = [
            worker.vector_step.remote(action, mode)
            for worker, action in zip(self.workers, iterate(self.action_space, actions))
        ]
        results = gather(refs, self.step_timeout)
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminations = np.zeros(self.num_envs, dtype=np.bool_)
        truncations = np.zeros(self.num_envs, dtype=np.bool_)
        infos: dict[str, Any] = {}
        for i, result in enumerate(results):
            if isinstance(result, WorkerFailure):
                observation, info, final = self._replace_lost_episode(i, str(result))
                truncations[i] = True
            else:
                self.worker_succeeded(i)
                observation, rewards[i], terminations[i], truncations[i], info, final = result
            if final is not None:
                infos = self._add_info(infos, final, i)
            self._env_obs[i] = observation
            infos = self._add_info(infos, info, i)
        self._observations = concatenate(
            self.single_observation_space, self._env_obs, self._observations
        )
        return (
            deepcopy(self._observations) if self.copy else self._observations,
            rewards,
            terminations,
            truncations,
            infos,
        )

    def _replace_lost_episode(
        self, index: int, reason: str
    ) -> tuple[Any, dict[str, Any], dict[str, Any] | None]:
        """Restart a failed worker and end its lost episode the way the autoreset mode ends
        any episode: NEXT_STEP returns the fresh worker's first observation now and resets
        again on the next step (so that step, as after any ending, is a reset step);
        SAME_STEP returns it as both the final and the new observation."""
        self.restart_worker(index, reason)
        observation, info = self.reset_worker(index, None, None)
        info = dict(info)
        info["infra_error"] = reason
        final = None
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            # The next vector_step must be a reset step (zero reward), as after any episode
            # end under NEXT_STEP; calls on one actor run in order, so it lands before it.
            self.workers[index].mark_done.remote()
        elif self.autoreset_mode == AutoresetMode.SAME_STEP:
            final = {"final_obs": observation, "final_info": dict(info)}
        return observation, info, final

    def render(self) -> tuple[Any, ...]:
        return tuple(self._ask(i, "render", self.step_timeout) for i in range(self.num_envs))

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call method ``name`` (or read attribute ``name``) of every sub-env, through its
        wrappers (``env.get_wrapper_attr``)."""
        results = gather(
            [w.call.remote(name, args, kwargs) for w in self.workers], self.step_timeout
        )
        for i, result in enumerate(results):
            if isinstance(result, WorkerFailure):
                raise RuntimeError(f"call({name!r}) on env worker {i}: {result}")
        return tuple(results)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Attribute ``name`` of every sub-env."""
        return self.call(name)

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        """Set attribute ``name`` of every sub-env (one value each, or one for all)."""
        if not isinstance(values, list | tuple):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(f"values has {len(values)} items; num_envs is {self.num_envs}")
        results = gather(
            [w.set_attr.remote(name, v) for w, v in zip(self.workers, values)], self.step_timeout
        )
        for i, result in enumerate(results):
            if isinstance(result, WorkerFailure):
                raise RuntimeError(f"set_attr({name!r}) on env worker {i}: {result}")

    def close_extras(self, **kwargs: Any) -> None:
        """Close every env, kill every worker, shut Ray down if this env started it."""
        if self._closed_workers:
            return
        self._closed_workers = True
        import ray

        workers = getattr(self, "workers", [])
        gather([w.close.remote() for w in workers], timeout=min(self.step_timeout, 30.0))
        for worker in workers:
            ray.kill(worker, no_restart=True)
        if self._owns_ray:
            ray.shutdown()

    def collect_episodes(self, policy: Any, n: int, **kwargs: Any) -> list[Any]:
        """:func:`~gui_gym.distributed.collect_episodes` on this pool."""
        return collect_episodes(self, policy, n, **kwargs)

    def __repr__(self) -> str:
        return f"RayVectorEnv({self.factory!r}, num_envs={self.num_envs})"
