"""One env in one Ray actor: the remote half of :class:`~gui_gym.distributed.RayVectorEnv`.

The actor class is a plain Python class; :func:`remote_worker_class` turns it into a Ray
actor class when Ray is first needed, so importing this module never imports Ray.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import gymnasium as gym

__all__ = ["EnvFactory", "EnvWorker", "RemoteMethod", "make_env_factory", "remote_worker_class"]

EnvFactory = Callable[[], gym.Env]
"""What a worker builds its env with: a picklable zero-argument callable (Ray pickles it
with cloudpickle, so a lambda or a local function works)."""


class _MakeById:
    """``gym.make(env_id, **kwargs)``, importing gui_gym first so its ids are registered in
    the worker process."""

    def __init__(self, env_id: str, kwargs: dict[str, Any]):
        self.env_id = env_id
        self.kwargs = dict(kwargs)

    def __call__(self) -> gym.Env:
        import gui_gym  # noqa: F401  (registers GuiGym/* in this process)

        return gym.make(self.env_id, **self.kwargs)

    def __repr__(self) -> str:
        return f"{self.env_id}"


def make_env_factory(env: str | EnvFactory, kwargs: dict[str, Any]) -> EnvFactory:
    """A factory for ``env``: an id (made with ``kwargs``) or a callable (``kwargs`` must
    then be empty).

    Raises:
        TypeError: if ``env`` is neither, or kwargs come with a callable.
    """
    if isinstance(env, str):
        return _MakeById(env, kwargs)
    if callable(env):
        if kwargs:
            raise TypeError(
                f"env kwargs {sorted(kwargs)} only apply to an env id; bake them into the factory"
            )
        return env
    raise TypeError(f"env must be an env id or a zero-argument callable, got {type(env).__name__}")


class RemoteMethod:
    """Stands for a method of an env in a worker: call it there (``env_method``)."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{self.name}() runs in its env worker: call env_method({self.name!r})")

    def __repr__(self) -> str:
        return f"RemoteMethod({self.name!r})"


class EnvWorker:
    """Holds one env and applies the vector env's autoreset rule next to it, so one step is
    one round trip.

    Args:
        factory: Builds the env.
    """

    def __init__(self, factory: EnvFactory):
        self.env = factory()
        self._needs_reset = False

    def pid(self) -> int:
        """The worker's process id (tests check that none outlives ``close()``)."""
        return os.getpid()

    def placement(self) -> dict[str, Any]:
        """Where this worker runs: ``{"pid", "node_id", "node_ip"}`` (the Ray node's id and
        address; on a cluster, which machine holds this env)."""
        import ray

        return {
            "pid": os.getpid(),
            "node_id": ray.get_runtime_context().get_node_id(),
            "node_ip": ray.util.get_node_ip_address(),
        }

    def spaces(self) -> tuple[gym.Space, gym.Space, dict[str, Any], str | None]:
        """``(observation_space, action_space, metadata, render_mode)`` of the env."""
        return (
            self.env.observation_space,
            self.env.action_space,
            dict(self.env.metadata),
            self.env.render_mode,
        )

    def reset(self, seed: int | None, options: dict[str, Any] | None) -> tuple[Any, dict]:
        self._needs_reset = False
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """A plain ``env.step`` (no autoreset)."""
        return self.env.step(action)

    def mark_done(self) -> None:
        """Make the next :meth:`vector_step` (``NextStep`` mode) a reset step."""
        self._needs_reset = True

    def vector_step(
        self, action: Any, mode: str
    ) -> tuple[Any, float, bool, bool, dict[str, Any], dict[str, Any] | None]:
        """One sub-env step under Gymnasium's autoreset ``mode`` (the ``AutoresetMode``
        value): ``NextStep`` resets instead of stepping after an episode ended (reward 0);
        ``SameStep`` resets right after the ending step and returns its last observation and
        info as ``{"final_obs", "final_info"}``; ``Disabled`` just steps."""
        if mode == "NextStep" and self._needs_reset:
            self._needs_reset = False
            observation, info = self.env.reset()
            return observation, 0.0, False, False, info, None
        observation, reward, terminated, truncated, info = self.env.step(action)
        final = None
        if terminated or truncated:
            if mode == "SameStep":
                final = {"final_obs": observation, "final_info": info}
                observation, info = self.env.reset()
            else:
                self._needs_reset = True
        return observation, float(reward), bool(terminated), bool(truncated), info, final

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        attribute = self.env.get_wrapper_attr(name)
        return attribute(*args, **kwargs) if callable(attribute) else attribute

    def get_attr(self, name: str) -> Any:
        """Attribute ``name`` (through the wrappers); a method comes back as a
        :class:`RemoteMethod` naming it (a bound method cannot leave the worker)."""
        attribute = self.env.get_wrapper_attr(name)
        return RemoteMethod(name) if callable(attribute) else attribute

    def is_wrapped(self, wrapper_class: type[gym.Wrapper]) -> bool:
        """Whether a wrapper of ``wrapper_class`` is in the env's wrapper chain."""
        env: gym.Env = self.env
        while isinstance(env, gym.Wrapper):
            if isinstance(env, wrapper_class):
                return True
            env = env.env
        return False

    def set_attr(self, name: str, value: Any) -> None:
        self.env.set_wrapper_attr(name, value)

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        """Close the env (a browser-backed env quits its browser here)."""
        self.env.close()


_REMOTE_CLASS: Any = None


def remote_worker_class() -> Any:
    """:class:`EnvWorker` as a Ray actor class (``max_restarts=0``: the pool restarts workers
    itself, so it knows which episode to rerun)."""
    global _REMOTE_CLASS
    if _REMOTE_CLASS is None:
        import ray

        _REMOTE_CLASS = ray.remote(max_restarts=0, max_task_retries=0)(EnvWorker)
    return _REMOTE_CLASS
