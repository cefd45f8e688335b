"""``RaySB3VecEnv``: Stable-Baselines3's ``VecEnv`` over the Ray env pool.

SB3 and sb3-contrib take their own ``VecEnv``, not Gymnasium's: ``reset()`` returns only the
observations (reset infos in ``reset_infos``), ``step`` auto-resets a finished env at once and
returns the final observation as ``info["terminal_observation"]``, with
``info["TimeLimit.truncated"]``, and per-env ``get_attr``/``set_attr``/``env_method`` with
``indices``. This adapter gives exactly ``DummyVecEnv``'s semantics (``tests`` step both side
by side) with the envs in the workers of a :class:`~gui_gym.distributed.RayVectorEnv` (local
or on a cluster), so ``MaskablePPO``/``PPO``/``A2C`` train with envs on Ray workers::

    envs = RaySB3VecEnv.make(lambda: make_sb3_env("GuiGym/WikiHow-v0"), num_envs=8)
    model = sb3_contrib.MaskablePPO("MlpPolicy", envs)

The action masks ``MaskablePPO`` asks for before every step (``env_method("action_masks")``)
come with the observation: ``CandidateActions`` puts them in every reset and step info, so
no extra round trip is made for them.

A worker that dies or hangs mid-episode is replaced (a ``WorkerRestartWarning``): SB3 sees
its episode end (``done``, ``TimeLimit.truncated``, so the value is bootstrapped rather than
learnt as a failure) with ``info["infra_error"]`` saying why, and the env starts anew.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn

from gui_gym.distributed.calls import WorkerFailure, gather
from gui_gym.distributed.pool import RayVectorEnv
from gui_gym.distributed.worker import EnvFactory
from gui_gym.runs.deadline import hung_message

__all__ = ["RaySB3VecEnv"]

_MASKS = "action_masks"


class RaySB3VecEnv(VecEnv):
    """An SB3 ``VecEnv`` whose envs run in the Ray workers of a ``RayVectorEnv``.

    Args:
        envs: The pool. Its sub-envs must have a ``Box`` or ``Discrete`` observation space
            (``make_sb3_env`` gives a ``Box``); the adapter drives the workers itself and
            owns the pool (``close()`` closes it).

    Raises:
        TypeError: for another observation space.
    """

    def __init__(self, envs: RayVectorEnv):
        space = envs.single_observation_space
        if not isinstance(space, gym.spaces.Box | gym.spaces.Discrete):
            raise TypeError(
                f"RaySB3VecEnv batches Box or Discrete observations, got {space}; adapt the "
                "env with gui_gym.wrappers.sb3.make_sb3_env"
            )
        self.envs = envs
        super().__init__(envs.num_envs, space, envs.single_action_space)
        self.metadata = dict(envs.metadata)
        self.render_mode = envs.render_mode
        self._actions: np.ndarray | None = None
        self._observations: list[Any] = [None] * self.num_envs
        self._masks: list[np.ndarray | None] = [None] * self.num_envs

    @classmethod
    def make(cls, env: str | EnvFactory, num_envs: int, **pool_kwargs: Any) -> RaySB3VecEnv:
        """Start a :class:`RayVectorEnv` (same arguments) and adapt it."""
        return cls(RayVectorEnv(env, num_envs, **pool_kwargs))

    # ------------------------------------------------------------------------ stepping

    def _remember(self, index: int, observation: Any, info: dict[str, Any]) -> None:
        self._observations[index] = observation
        mask = info.get("action_mask")
        self._masks[index] = np.asarray(mask, dtype=bool).copy() if mask is not None else None

    def _batch(self) -> np.ndarray:
        return np.stack([np.asarray(o) for o in self._observations])

    def reset(self) -> np.ndarray:
        """Reset every env with the seeds of :meth:`seed` and the options of
        :meth:`set_options` (each used once, as in ``DummyVecEnv``)."""
        options = [o or None for o in self._options]
        refs = [
            worker.reset.remote(self._seeds[i], options[i])
            for i, worker in enumerate(self.envs.workers)
        ]
        for i, result in enumerate(gather(refs, self.envs.step_timeout)):
            if isinstance(result, WorkerFailure):
                self.envs.restart_worker(i, str(result))
                result = self.envs.reset_worker(i, self._seeds[i], options[i])
            self.envs.worker_succeeded(i)
            observation, self.reset_infos[i] = result
            self._remember(i, observation, self.reset_infos[i])
        self._reset_seeds()
        self._reset_options()
        return self._batch()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        """One step of every env in parallel; a finished env is reset in the same round
        trip (Gymnasium's ``SameStep`` autoreset), as ``DummyVecEnv`` does."""
        if self._actions is None:
            raise RuntimeError("step_wait() called without step_async(actions)")
        actions, self._actions = self._actions, None
        refs = [
            worker.vector_step.remote(action, "SameStep")
            for worker, action in zip(self.envs.workers, actions)
        ]
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        infos: list[dict[str, Any]] = []
        for i, result in enumerate(gather(refs, self.envs.step_timeout)):
            if isinstance(result, WorkerFailure):
                # The episode is lost to infrastructure: end it (truncated, never a failure
                # of the agent) and start a new one on the fresh worker.
                reason = str(result)
                self.envs.restart_worker(i, reason)
                observation, self.reset_infos[i] = self.envs.reset_worker(i, None, None)
                info = {
                    "infra_error": reason,
                    "TimeLimit.truncated": True,
                    "terminal_observation": observation,
                }
                dones[i] = True
            else:
                self.envs.worker_succeeded(i)
                observation, rewards[i], terminated, truncated, info, final = result
                dones[i] = terminated or truncated
                if final is not None:  # the worker already reset: info is the reset's
                    self.reset_infos[i] = info
                    info = dict(final["final_info"])
                    info["terminal_observation"] = final["final_obs"]
                info["TimeLimit.truncated"] = bool(truncated and not terminated)
            infos.append(info)
            self._remember(i, observation, self.reset_infos[i] if dones[i] else info)
        return self._batch(), rewards, dones, infos

    def close(self) -> None:
        """Close every env and kill every worker (see ``RayVectorEnv.close``)."""
        self.envs.close()

    # ------------------------------------------------------------- attributes and methods

    def _targets(self, indices: VecEnvIndices) -> list[int]:
        return list(self._get_indices(indices))

    def _gather_raising(self, refs: list[Any], what: str) -> list[Any]:
        """Results of ``refs``; an exception raised in the env is raised here (SB3's
        ``has_attr`` relies on ``AttributeError``), a dead or hung worker is a RuntimeError."""
        import ray

        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=self.envs.step_timeout)
        out = []
        for ref in refs:
            if ref not in ready:
                raise RuntimeError(f"{what}: {hung_message(self.envs.step_timeout)}")
            try:
                out.append(ray.get(ref))
            except ray.exceptions.RayTaskError as err:
                cause = getattr(err, "cause", None)
                raise (cause if isinstance(cause, Exception) else RuntimeError(str(err))) from err
            except ray.exceptions.RayActorError as err:
                raise RuntimeError(f"{what}: the worker died ({type(err).__name__})") from err
        return out

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """Attribute ``attr_name`` of the envs (through their wrappers); a method comes back
        as a ``RemoteMethod`` (call it with :meth:`env_method`)."""
        targets = self._targets(indices)
        refs = [self.envs.workers[i].get_attr.remote(attr_name) for i in targets]
        return self._gather_raising(refs, f"get_attr({attr_name!r})")

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        targets = self._targets(indices)
        refs = [self.envs.workers[i].set_attr.remote(attr_name, value) for i in targets]
        self._gather_raising(refs, f"set_attr({attr_name!r})")
        self._masks = [None] * self.num_envs  # the screen may have changed

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Call ``method_name`` on the envs. ``action_masks()`` of the current screens is
        answered from the last step's infos when every target has one (no round trip)."""
        targets = self._targets(indices)
        if method_name == _MASKS and not method_args and not method_kwargs:
            cached = [self._masks[i] for i in targets]
            if all(mask is not None for mask in cached):
                return [mask.copy() for mask in cached if mask is not None]
        refs = [
            self.envs.workers[i].call.remote(method_name, method_args, method_kwargs)
            for i in targets
        ]
        results = self._gather_raising(refs, f"env_method({method_name!r})")
        if method_name != _MASKS:
            self._masks = [None] * self.num_envs  # the method may have changed the screen
        return results

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        refs = [
            self.envs.workers[i].is_wrapped.remote(wrapper_class) for i in self._targets(indices)
        ]
        return self._gather_raising(refs, "env_is_wrapped")

    def get_images(self) -> Sequence[np.ndarray | None]:
        if self.render_mode != "rgb_array":
            return [None] * self.num_envs
        return list(self.envs.render())

    def __repr__(self) -> str:
        return f"RaySB3VecEnv({self.envs!r})"
