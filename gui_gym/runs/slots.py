"""The rollout engine's env slots: where each env it drives lives, and the worker processes.

* :class:`InlineEnv`: an env in this process (and its one-env agent, if any); the engine
  runs its calls on threads, in rounds, under the step deadline (:class:`InlineRounds`).
  A hung call's env is rebuilt at once (:meth:`InlineEnv.abandon`). An env class with
  process-wide state sets ``thread_safe = False``: its envs' calls take turns
  (:meth:`InlineEnv.call_lock`, one lock per class).
* :class:`ProcessEnv`: an env in its own worker process (:func:`worker_main`), driven over a
  pipe; a call past its deadline kills the worker (:class:`~gui_gym.runs.deadline.EnvHung`),
  a worker that died raises :class:`~gui_gym.runs.deadline.WorkerDied`. The OpenEnv server
  runs its sessions in it too.
* :func:`fork_env`: an independent copy of a wrapped env in the same state (the engine's
  anchor-state fork groups).

Every slot answers ``reset(seed, options) -> (observation, info, meta)``, ``act(observation,
info)`` (its one-env agent's :class:`~gui_gym.agents.base.AgentStep`), ``step(action)``,
``tree()``, ``restart()`` and ``close()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import logging
import multiprocessing
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from gui_gym.agents.base import Agent, AgentStep
from gui_gym.core.actions import Action
from gui_gym.runs.deadline import (
    CallThreads,
    EnvFailure,
    EnvHung,
    WorkerDied,
    call_budget,
    hung_message,
    run_calls,
    wait_for_answer,
)

__all__ = ["AgentFactory", "InlineEnv", "InlineRounds", "ProcessEnv", "fork_env", "worker_main"]

logger = logging.getLogger(__name__)

AgentFactory = Callable[[gym.Env, int], Agent]
"""Builds a one-env agent for an env and an episode seed (oracle, random, ...)."""


def _copy_layer_state(layer: gym.Wrapper) -> gym.Wrapper:
    """A shallow copy of one wrapper whose list/dict/set/array attributes are copied one level
    deep (per-episode state such as reached milestones or the last progress score), so the
    copy and the original no longer share them; models and stores stay shared."""
    clone = copy.copy(layer)
    for key, value in vars(layer).items():
        if isinstance(value, list | dict | set | np.ndarray):
            setattr(clone, key, copy.copy(value))
    return clone


def fork_env(env: gym.Env) -> gym.Env:
    """An independent copy of a (possibly wrapped) gui-gym env in the same state.

    The base env is forked with ``env.unwrapped.fork()``; each wrapper above it is copied
    with its container attributes copied one level deep. A wrapper that keeps deeper
    per-episode state can define ``fork(inner) -> wrapper`` and is then asked instead.

    Raises:
        TypeError: when the base env has no ``fork()``.
    """
    if not isinstance(env, gym.Wrapper):
        fork = getattr(env, "fork", None)
        if fork is None:
            raise TypeError(f"{type(env).__name__} has no fork(); fork groups need gui-gym envs")
        return fork()
    inner = fork_env(env.env)
    own = getattr(type(env), "fork", None)
    if own is not None:
        return own(env, inner)
    clone = _copy_layer_state(env)
    clone.env = inner
    return clone


def _task_meta(env: gym.Env) -> dict[str, Any]:
    task = getattr(env.unwrapped, "task", None)
    return {"category": getattr(task, "category", ""), "split": getattr(task, "split", "")}


def _agent_step(agent: Agent, action: Action | str) -> AgentStep:
    """What a one-env agent did, as an :class:`AgentStep` (with its tokens when it is an
    ``LLMAgent`` acting alone)."""
    last = getattr(agent, "last_step", None)
    if isinstance(last, AgentStep):
        return last
    text = action.to_string() if isinstance(action, Action) else str(action)
    return AgentStep(action=text, text=text, thought=getattr(agent, "last_thought", None))


_SERIAL_LOCKS: dict[type, threading.Lock] = {}
_SERIAL_LOCKS_GUARD = threading.Lock()


def _serial_lock(env: gym.Env) -> threading.Lock | None:
    """The lock that serialises calls into envs whose base class says ``thread_safe =
    False`` (process-wide state, e.g. a planner that rewrites ``sys.argv``): one lock per
    such class, so its envs take turns while the others run together. None for the rest."""
    try:
        base = env.unwrapped
    except Exception:  # a half-built env: its call raises on its own
        return None
    if getattr(base, "thread_safe", True):
        return None
    with _SERIAL_LOCKS_GUARD:
        return _SERIAL_LOCKS.setdefault(type(base), threading.Lock())


class InlineEnv:
    """An env in this process (and its one-env agent, if any)."""

    def __init__(self, make: Callable[[], gym.Env], factory: AgentFactory | None):
        self._make = make
        self._factory = factory
        self.env = make()
        self.agent: Agent | None = None
        self.replaced = False  # the env was just rebuilt after a hung call

    @classmethod
    def forked(cls, parent: InlineEnv, seed: int) -> InlineEnv:
        slot = cls.__new__(cls)
        slot._make = parent._make
        slot._factory = parent._factory
        slot.env = fork_env(parent.env)
        slot.agent = parent._factory(slot.env, seed) if parent._factory is not None else None
        slot.replaced = False
        return slot

    def reset(self, seed: int | None, options: dict[str, Any] | None) -> tuple[Any, ...]:
        self.replaced = False
        observation, info = self.env.reset(seed=seed, options=options)
        meta = _task_meta(self.env)
        if self._factory is not None:
            self.agent = self._factory(self.env, seed if seed is not None else 0)
            self.agent.reset(observation, info)
            meta["agent"] = str(getattr(self.agent, "name", type(self.agent).__name__))
        return observation, info, meta

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> AgentStep:
        assert self.agent is not None
        return _agent_step(self.agent, self.agent.act(observation, info))

    def step(self, action: str) -> tuple[Any, ...]:
        return self.env.step(action)

    def call_lock(self) -> threading.Lock | None:
        """The lock its calls take turns with (an env class with ``thread_safe = False``),
        or None: they run together with the other envs' calls."""
        return _serial_lock(self.env)

    def tree(self) -> dict[str, Any] | None:
        base = self.env.unwrapped
        return base.ui_tree.to_dict() if hasattr(base, "ui_tree") else None

    def restart(self) -> None:
        if self.replaced:  # rebuilt already when its call hung (abandon)
            self.replaced = False
            return
        with contextlib.suppress(Exception):
            self.env.close()
        self.env = self._make()
        self.agent = None

    def abandon(self) -> None:
        """A call into the env hung (it still runs on its thread): build a new env at once,
        and close the old one on a daemon thread (never wait for it; closing a browser
        usually ends the hung call)."""
        old = self.env
        self.env = self._make()
        self.agent = None
        self.replaced = True

        def close_old() -> None:
            with contextlib.suppress(BaseException):
                old.close()

        threading.Thread(target=close_old, name="gui-gym-close-hung-env", daemon=True).start()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.env.close()


class InlineRounds:
    """Runs the calls into in-process envs (:class:`InlineEnv`) on threads, in rounds, under
    the step deadline.

    The calls that the episodes issue together (every env's step of one round, after one
    batched ``act_batch``) run together, each on its own thread, so the round waits for its
    slowest call once, not for the sum (an env whose wrapper waits on a model server).
    Rounds run one after another and their results are handed back in the order the calls
    were issued, so the episodes go on in the same order as in a serial loop: same batches,
    same results, whatever thread finishes first. A call past ``timeout`` raises
    :class:`~gui_gym.runs.deadline.EnvHung` (its env is rebuilt at once; the hung thread is
    left to end by itself). This works from any thread (no signals).

    Envs must therefore not share objects that are unsafe to call from two threads at once
    (each env of a factory its own browser, store handle or tokenizer-using model, or one
    that locks; torch modules are safe for inference). An env class with process-wide state
    sets ``thread_safe = False``: calls into its envs then take turns (one lock per class,
    :meth:`InlineEnv.call_lock`), as in a serial loop, while other envs still run together.
    """

    def __init__(self, timeout: float | None):
        self.timeout = timeout
        self._threads = CallThreads()
        self._round: list[tuple[InlineEnv, str, tuple[Any, ...], asyncio.Future]] = []
        self._rounds: asyncio.Future | None = None

    async def call(self, slot: InlineEnv, method: str, args: tuple[Any, ...]) -> Any:
        """Queue ``slot.method(*args)`` in the current round and wait for its result."""
        future = asyncio.get_running_loop().create_future()
        self._round.append((slot, method, args, future))
        if self._rounds is None or self._rounds.done():
            self._rounds = asyncio.ensure_future(self._run())
        return await future

    async def _run(self) -> None:
        await asyncio.sleep(0)  # the other episodes of this turn of the loop issue theirs
        while self._round:
            batch, self._round = self._round, []
            calls = [
                (functools.partial(getattr(slot, method), *args), slot.call_lock())
                for slot, method, args, _ in batch
            ]
            ends, hung = await run_calls(self._threads, calls, self.timeout)
            for index, ((slot, method, _, future), end) in enumerate(zip(batch, ends, strict=True)):
                if future.done():  # cancelled (the run is being torn down)
                    continue
                if index in hung and not end.done():
                    end.cancel()
                    try:
                        slot.abandon()
                    except Exception as err:  # reported; the episode is lost either way
                        logger.error("env could not be rebuilt after a hung call: %s", err)
                    future.set_exception(
                        EnvHung(f"env {method}: {hung_message(self.timeout or 0)}")
                    )
                elif end.exception() is not None:
                    future.set_exception(end.exception())
                else:
                    future.set_result(end.result())

    def stop(self) -> None:
        """Drop the rounds in flight (the engine's run is over or being torn down)."""
        if self._rounds is not None and not self._rounds.done():
            self._rounds.cancel()
        self._rounds = None
        self._round = []

    def close(self) -> None:
        """Let the idle call threads end."""
        self._threads.close()


def worker_main(conn: Any, make: Callable[[], gym.Env], factory: AgentFactory | None) -> None:
    """A worker process: one env (and one-env agent), driven over a pipe."""
    import gui_gym  # noqa: F401  (registers the ids in a spawned process)

    slot = InlineEnv(make, factory)
    while True:
        try:
            command, args = conn.recv()
        except (EOFError, KeyboardInterrupt):
            break
        if command == "close":
            slot.close()
            conn.send(("ok", None))
            break
        try:
            result = getattr(slot, command)(*args)
        except Exception as err:  # sent back: the engine marks the episode infra_error
            conn.send(("error", f"{type(err).__name__}: {err}\n{traceback.format_exc()}"))
        else:
            conn.send(("ok", result))
    conn.close()


class ProcessEnv:
    """An env in its own worker process; a dead worker raises :class:`WorkerDied`."""

    POLL_SECONDS = 0.5
    START_METHOD = "spawn"
    """How the worker process starts (a subclass may use ``forkserver`` with modules
    preloaded, as the OpenEnv server does for its per-session workers)."""
    START_EXTRA: float | None = None
    """Seconds a new worker's first call gets on top of ``timeout`` (None: that call gets at
    least :data:`~gui_gym.runs.deadline.START_TIMEOUT`)."""

    def __init__(
        self,
        index: int,
        make: Callable[[], gym.Env],
        factory: AgentFactory | None,
        timeout: float | None = None,
    ):
        self.index = index
        self._make = make
        self._factory = factory
        self.timeout = timeout
        self._start()

    def _start(self) -> None:
        context = multiprocessing.get_context(self.START_METHOD)
        self._conn, child = context.Pipe()
        self.process = context.Process(
            target=worker_main,
            args=(child, self._make, self._factory),
            name=f"gui-gym-env-{self.index}",
            daemon=True,
        )
        self.process.start()
        child.close()
        self._fresh = True  # the first call waits for the env to be built too

    def call(self, command: str, *args: Any) -> Any:
        """Run ``command`` (a slot method's name) in the worker, under the step deadline:
        ``timeout``, more for a new worker's first call
        (:func:`~gui_gym.runs.deadline.call_budget` with :attr:`START_EXTRA`).

        Raises:
            EnvHung: past the deadline (the worker is killed; ``restart`` starts another).
            WorkerDied: when the worker is gone.
            EnvFailure: when the env raised in the worker (the worker lives on).
        """
        timeout = call_budget(self.timeout, self._fresh, self.START_EXTRA)
        began = time.monotonic()
        try:
            self._conn.send((command, args))
            if not wait_for_answer(self._conn, self.process, began, timeout, self.POLL_SECONDS):
                pid = self.process.pid
                self._terminate()  # the engine restarts it (_fail)
                raise EnvHung(f"env worker {self.index} (pid {pid}): {hung_message(timeout)}")
            status, result = self._conn.recv()
            self._fresh = False
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError) as err:
            self.process.join(timeout=1.0)
            raise WorkerDied(
                f"env worker {self.index} (pid {self.process.pid}) died with exit code "
                f"{self.process.exitcode}"
            ) from err
        if status == "error":
            raise EnvFailure(f"env worker {self.index}: {result}")
        return result

    def reset(self, seed: int | None, options: dict[str, Any] | None) -> tuple[Any, ...]:
        return self.call("reset", seed, options)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> AgentStep:
        return self.call("act", observation, info)

    def step(self, action: str) -> tuple[Any, ...]:
        return self.call("step", action)

    def tree(self) -> dict[str, Any] | None:
        return self.call("tree")

    def restart(self) -> None:
        self._terminate()
        self._start()

    def _terminate(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5.0)
        with contextlib.suppress(Exception):
            self._conn.close()

    def close(self) -> None:
        if self.process.is_alive():
            with contextlib.suppress(Exception):
                self._conn.send(("close", ()))
                if self._conn.poll(5.0):
                    self._conn.recv()
        self._terminate()
