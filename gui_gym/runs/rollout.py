"""The rollout engine: many envs at once, one policy, exact tokens, groups, infra errors.

One engine serves ``gui-gym eval``, ``gui-gym record``, SFT data and every RL trainer, so an
agent behaves the same wherever it runs. Episodes come back as
:class:`~gui_gym.core.trajectory.Trajectory` records whose steps carry, when the policy
gives them, the prompt, the generated text, the exact prompt and completion token ids and
the behaviour log-probs (``Step.prompt``, ``completion``, ``prompt_ids``,
``completion_ids``, ``logprobs``). Trainers score ``completion_ids``; nothing is ever
re-tokenized.

API (what a trainer needs)::

    from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine

    engine = RolloutEngine("GuiGym/WikiHow-v0", agent, num_envs=64,
                           env_kwargs={"split": "train"})          # or env=callable
    trajectories = engine.run([EpisodeSpec(task_id=t, seed=s) for ...])   # spec order
    groups = engine.run_groups(task_ids, group_size=8, seed=0)     # GRPO groups
    groups = engine.run_fork_groups(specs, anchor_step=2, group_size=8)   # same-state groups
    engine.stats            # RolloutStats: episodes, infra_errors, steps, steps_per_second
    engine.close()

* ``agent`` is a :class:`~gui_gym.agents.base.BatchAgent` (e.g.
  :class:`~gui_gym.agents.llm.LLMAgent`) or a factory ``(env, seed) -> Agent`` for the
  one-env agents (oracle, random); :func:`as_batch_agent` turns an agent name or an
  ``env -> Agent`` factory into the latter. A batch agent with a synchronous backend (a local model)
  is called once per round with every env that is waiting to act (one batched generation);
  one with a coroutine backend (``aact_batch`` and ``is_async``, e.g. ``LLMAgent`` over
  ``OpenAICompatLLM``) gets one request per env, all in flight together from one asyncio
  loop, so N envs against a server cost about one round-trip per step, not N.
* ``run(specs)`` runs the :class:`EpisodeSpec` s (task, seed, optional group id) on at most
  ``num_envs`` envs at once and returns one trajectory per spec, in order;
  ``arun`` is its coroutine (for callers that already run a loop). ``on_episode(position,
  trajectory)`` is called as each one finishes (streaming writes, progress bars).
* ``run_groups(tasks, group_size=G, seed=s)``: G episodes per task, all reset with the same
  seed (identical start state), sharing ``group_id``; returns :class:`RolloutGroup` s.
* ``run_fork_groups(specs, anchor_step=k, group_size=G)``: each spec's episode is run to
  step ``k``, its env is forked ``G`` times (``env.unwrapped.fork()``, wrappers copied, see
  :func:`fork_env`) and the policy acts once in each copy of the identical state; each
  member then runs to its episode's end (``continue_to_end=False`` stops after the one
  action). Members share the prefix ``steps[:k]`` and have ``anchor_step == k``. Needs
  in-process envs.
* Infrastructure failures are not agent failures: an env that raises, a worker process
  that dies (killed, crashed), a model server past its retries
  (:class:`~gui_gym.models.llm.LLMError`) end that episode with
  ``trajectory.infra_error`` set to the cause; the env (or worker) is rebuilt and the run
  goes on. :class:`RolloutGroup` keeps such episodes in ``infra`` apart from
  ``trajectories``; :attr:`RolloutEngine.stats` counts them apart. They are never reward 0.
  Any other exception from the agent (a bug) propagates.
* A hung env call (past ``step_timeout``, default 60 s) is an infrastructure failure too:
  the worker is killed and restarted (inline: the env is rebuilt at once and the hung call
  left to end on its thread).
* Inline envs are stepped concurrently: the env calls that the episodes issue together (all
  the steps of one round, after one batched ``act_batch``) run at once, one thread each, so
  a round waits for its slowest call once, not for the sum (an env whose PRM or judge waits
  on a model server). Results are handed back in the order the calls were issued, so the
  agent sees the same batches and the episodes end in the same order as in a serial loop,
  whichever thread finishes first. Envs must therefore not share objects that are unsafe to
  call from two threads at once (each env of a factory its own browser, store handle or
  tokenizer-using model, or one that locks; torch modules are safe for inference). An env
  class with process-wide state sets ``thread_safe = False``: calls into its envs then take
  turns (one lock per class), as in a serial loop, while other envs still run together.
* ``workers="process"`` runs each env in its own worker process (for slow envs such as
  MiniWoB's Chromium); a worker that dies is detected (its index, task and exit code are
  logged and put in ``infra_error``), restarted, and the run continues. The env callable
  and agent factory must then be picklable (a registered id, ``functools.partial``, a
  module-level function); batch agents stay in this process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import functools
import logging
import multiprocessing
import queue
import threading
import time
import traceback
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import gymnasium as gym
import numpy as np

from gui_gym.agents.base import Agent, AgentStep, BatchAgent, Turn, history_description
from gui_gym.agents.named import make_agent
from gui_gym.core.actions import Action
from gui_gym.core.trajectory import Step, Trajectory, json_safe
from gui_gym.models.llm import LLMError

__all__ = [
    "DEFAULT_STEP_TIMEOUT",
    "AgentFactory",
    "EnvFailure",
    "EnvHung",
    "EpisodeSpec",
    "RolloutEngine",
    "RolloutGroup",
    "RolloutStats",
    "WorkerDied",
    "as_batch_agent",
    "fork_env",
    "sanitize_prompt",
]

_T = TypeVar("_T")

logger = logging.getLogger(__name__)

AgentFactory = Callable[[gym.Env, int], Agent]
"""Builds a one-env agent for an env and an episode seed (oracle, random, ...)."""


def as_batch_agent(
    agent: str | Callable[[gym.Env], Agent] | BatchAgent,
) -> BatchAgent | AgentFactory:
    """What :class:`RolloutEngine` takes, from any agent a caller of ``gui-gym eval``,
    ``record`` or SOP holds.

    Args:
        agent: A batch agent (one with ``act_batch``, e.g.
            :class:`~gui_gym.agents.llm.LLMAgent`), a built-in agent name that
            :func:`~gui_gym.agents.named.make_agent` builds (``"oracle"``,
            ``"random:done=0.1"``, ...), or a factory ``env -> Agent``.

    Returns:
        The batch agent as it is, or an :data:`AgentFactory` ``(env, seed) -> Agent``: a
        named agent is built per episode with that episode's seed, as the random agents
        need. The factory is a ``functools.partial`` of a module-level function, so it
        pickles to ``workers="process"`` when a factory passed in does.
    """
    if hasattr(agent, "act_batch"):
        return agent
    if isinstance(agent, str):
        return functools.partial(_named_agent, agent)
    return functools.partial(_factory_agent, agent)


def _named_agent(name: str, env: gym.Env, seed: int) -> Agent:
    return make_agent(name, env, seed)


def _factory_agent(factory: Callable[[gym.Env], Agent], env: gym.Env, seed: int) -> Agent:
    return factory(env)


class EnvFailure(RuntimeError):
    """An env raised (in this process or in its worker); the message has the cause."""


class WorkerDied(EnvFailure):
    """An env worker process is gone (killed or crashed)."""


class EnvHung(EnvFailure):
    """An env call (reset, step, a one-env agent's act) ran past ``step_timeout``: its worker
    was killed (``workers="process"``) or, inline, the engine stopped waiting for its thread;
    the env is rebuilt and the episode is ``infra_error``."""


DEFAULT_STEP_TIMEOUT = 60.0
"""Seconds one env call may take before it counts as hung (``RolloutEngine(step_timeout=)``,
``gui-gym eval --step-timeout``). A worker's first call after it starts (building its env,
e.g. launching Chromium) gets at least :data:`START_TIMEOUT`."""

START_TIMEOUT = 300.0


def hung_message(timeout: float) -> str:
    """The one wording of a hung env call (the rollout engine's and the Ray pool's)."""
    return f"no answer within step_timeout={timeout:g} s (hung)"


class _CallThreads:
    """Daemon threads that run inline env calls, one thread per call in flight: a batch of
    calls starts together, so each call's deadline counts from the same moment. A hung
    call's thread is written off (Python cannot stop a thread) and another is started for
    the next call; it ends when the call returns (closing the abandoned env usually ends
    it: a closed browser fails the call)."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._queued = 0
        self._threads = 0

    def submit(self, call: Callable[[], Any], deliver: Callable[[bool, Any], None]) -> None:
        """Run ``call()`` on a thread; ``deliver(ok, result_or_exception)`` gets its end."""
        with self._lock:
            self._queued += 1
            if self._queued > self._idle:
                self._idle += 1
                self._threads += 1
                threading.Thread(
                    target=self._work, name=f"gui-gym-env-call-{self._threads}", daemon=True
                ).start()
        self._queue.put((call, deliver))

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            with self._lock:
                self._queued -= 1
                self._idle -= 1
            call, deliver = item
            try:
                outcome: tuple[bool, Any] = (True, call())
            except BaseException as err:  # handed to the engine's loop
                outcome = (False, err)
            with self._lock:  # free before the loop hears of it, so its next call reuses it
                self._idle += 1
            deliver(*outcome)
            del item, call, deliver, outcome

    def close(self) -> None:
        """Let the idle threads end (a hung one ends when its call returns)."""
        with self._lock:
            count = self._idle
        for _ in range(count):
            self._queue.put(None)


@dataclass
class EpisodeSpec:
    """One episode to run.

    Attributes:
        task_id: The task (``reset(options={"task": ...})``); None lets the env choose.
        seed: The ``reset`` seed (also the one-env agent's seed).
        group_id: Group identity copied to the trajectory.
        episode: The caller's index for the episode (kept in ``metadata["episode"]``).
        options: More ``reset`` options.
    """

    task_id: str | None = None
    seed: int | None = None
    group_id: str | None = None
    episode: int | None = None
    options: dict[str, Any] | None = None


@dataclass
class RolloutGroup:
    """Episodes that share a start: a GRPO group, or an anchor-state fork group.

    Attributes:
        group_id: The members' ``group_id``.
        task_id: Their task.
        seed: Their reset seed.
        trajectories: Members that ran to their end (compare their rewards).
        infra: Members lost to infrastructure (``infra_error`` set): left out, counted here.
        anchor_step: For fork groups, the step at which the env was forked.
        skipped: For fork groups, why no fork happened (the episode ended, or was lost,
            before the anchor step); the prefix episode is then the only member.
    """

    group_id: str
    task_id: str | None
    seed: int | None
    trajectories: list[Trajectory] = field(default_factory=list)
    infra: list[Trajectory] = field(default_factory=list)
    anchor_step: int | None = None
    skipped: str | None = None

    @property
    def rewards(self) -> list[float]:
        """Each valid member's total reward (what a group-relative advantage compares)."""
        return [t.total_reward for t in self.trajectories]


@dataclass
class RolloutStats:
    """Counters of an engine since it was made (or :meth:`RolloutEngine.reset_stats`)."""

    episodes: int = 0
    infra_errors: int = 0
    steps: int = 0
    agent_calls: int = 0
    seconds: float = 0.0

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, float]:
        return {
            "episodes": self.episodes,
            "infra_errors": self.infra_errors,
            "steps": self.steps,
            "agent_calls": self.agent_calls,
            "seconds": self.seconds,
            "steps_per_second": self.steps_per_second,
        }


def sanitize_prompt(prompt: Any) -> Any:
    """A prompt as JSON-safe data for a trajectory file: image parts become
    ``{"type": "image"}`` placeholders (the screenshots themselves are not stored)."""
    if prompt is None or isinstance(prompt, str):
        return prompt
    out = []
    for message in prompt:
        content = message.get("content")
        if not isinstance(content, str):
            content = [
                {"type": "text", "text": p.get("text", "")}
                if p.get("type") == "text"
                else {"type": "image"}
                for p in content
            ]
        out.append({"role": message.get("role"), "content": content})
    return out


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


# ------------------------------------------------------------------------------ env slots


class _InlineEnv:
    """An env in this process (and its one-env agent, if any)."""

    def __init__(self, make: Callable[[], gym.Env], factory: AgentFactory | None):
        self._make = make
        self._factory = factory
        self.env = make()
        self.agent: Agent | None = None
        self.replaced = False  # the env was just rebuilt after a hung call

    @classmethod
    def forked(cls, parent: _InlineEnv, seed: int) -> _InlineEnv:
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


def _worker_main(conn: Any, make: Callable[[], gym.Env], factory: AgentFactory | None) -> None:
    """A worker process: one env (and one-env agent), driven over a pipe."""
    import gui_gym  # noqa: F401  (registers the ids in a spawned process)

    slot = _InlineEnv(make, factory)
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


class _ProcessEnv:
    """An env in its own worker process; a dead worker raises :class:`WorkerDied`."""

    POLL_SECONDS = 0.5
    START_METHOD = "spawn"
    """How the worker process starts (a subclass may use ``forkserver`` with modules
    preloaded, as the OpenEnv server does for its per-session workers)."""

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
            target=_worker_main,
            args=(child, self._make, self._factory),
            name=f"gui-gym-env-{self.index}",
            daemon=True,
        )
        self.process.start()
        child.close()
        self._fresh = True  # the first call waits for the env to be built too

    def _budget(self) -> float | None:
        """Seconds the next call may take: ``timeout``, and at least :data:`START_TIMEOUT`
        for a new worker's first call (it builds the env)."""
        if self.timeout is not None and self._fresh:
            return max(self.timeout, START_TIMEOUT)
        return self.timeout

    def _call(self, command: str, *args: Any) -> Any:
        timeout = self._budget()
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            self._conn.send((command, args))
            while not self._conn.poll(self.POLL_SECONDS):
                if not self.process.is_alive():
                    break
                if deadline is not None and time.monotonic() > deadline:
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
        return self._call("reset", seed, options)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> AgentStep:
        return self._call("act", observation, info)

    def step(self, action: str) -> tuple[Any, ...]:
        return self._call("step", action)

    def tree(self) -> dict[str, Any] | None:
        return self._call("tree")

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


def _stamped(
    started: list[float | None], index: int, lock: threading.Lock | None, call: Callable[[], Any]
) -> Any:
    """Run ``call`` (holding ``lock``, when given), first writing when it began its own work
    into ``started[index]``: for envs that take turns, the moment it got its turn."""
    if lock is None:
        started[index] = time.monotonic()
        return call()
    with lock:
        started[index] = time.monotonic()
        return call()


# ---------------------------------------------------------------------------------- engine


class _Batcher:
    """Collects the act requests of a synchronous batch agent and answers them with one
    ``act_batch`` call once every live episode is waiting (or busy in an env worker)."""

    def __init__(self, engine: RolloutEngine):
        self.engine = engine
        self.pending: list[tuple[dict[str, Any], dict[str, Any], list[Turn], asyncio.Future]] = []

    async def submit(
        self, observation: dict[str, Any], info: dict[str, Any], turns: list[Turn]
    ) -> AgentStep:
        future = asyncio.get_running_loop().create_future()
        self.pending.append((observation, info, turns, future))
        self.maybe_flush()
        return await future

    def maybe_flush(self) -> None:
        engine = self.engine
        if self.pending and len(self.pending) >= engine._live - engine._in_env:
            batch, self.pending = self.pending, []
            engine.stats.agent_calls += 1
            try:
                steps = engine.agent.act_batch(  # type: ignore[union-attr]
                    [b[0] for b in batch], [b[1] for b in batch], [b[2] for b in batch]
                )
                if len(steps) != len(batch):
                    raise ValueError(
                        f"act_batch returned {len(steps)} steps for {len(batch)} observations"
                    )
            except Exception as err:
                for *_, future in batch:
                    future.set_exception(err)
                return
            for (*_, future), step in zip(batch, steps, strict=True):
                future.set_result(step)


class RolloutEngine:
    """Runs episodes of one env id with one policy on many envs at once (module docstring).

    Args:
        env: A registered id, or a callable that makes one (wrapped) env.
        agent: A :class:`~gui_gym.agents.base.BatchAgent`, or a factory
            ``(env, seed) -> Agent`` for one-env agents.
        num_envs: Episodes in flight at once (envs kept).
        env_kwargs: ``gym.make`` arguments when ``env`` is an id.
        workers: ``"inline"`` (envs in this process) or ``"process"`` (one worker process
            per env; see the module docstring).
        record_trees: Store each step's UI tree in the trajectory (and the last screen's
            in ``metadata["final_tree"]``).
        record_prompts: Store each step's prompt (images as placeholders) and generation.
        on_step: Called as ``on_step(trajectory, step, observation)`` after each step is
            recorded, with the observation the action was chosen on (``gui-gym record``
            saves screenshots with it).
        on_end: Called as ``on_end(trajectory, observation, info)`` when an episode ends
            (not when it is lost to infrastructure), with the last observation and info.
        info_keys: Keys of each step's ``info`` to keep in ``Step.info`` (wrapper components
            a trainer reads: ``"semi_online"``, ``"milestone"``, ``"prm"``, ``"judge"``).
        final_prompts: For an episode cut by a step limit (truncated, not terminated), keep
            the prompt the policy would see at its last state in ``metadata["final_prompt"]``
            (``{"prompt_ids", "vision", "prompt"}``, from the batch agent's ``encode_state``):
            PPO bootstraps the critic's value there (GAE's ``V(s_T)``).
        step_timeout: Seconds one env call (reset, step, a one-env agent's act) may take
            (default :data:`DEFAULT_STEP_TIMEOUT`, 60 s; None: no limit). Past it the call
            counts as hung: a worker process is killed and restarted; for an inline env
            (whose calls run on threads, see the module docstring) the engine stops waiting,
            rebuilds the env at once and closes the old one on a daemon thread, from any
            thread the engine runs in (no signals; a Python thread cannot be killed, so
            the hung call's thread ends only when the call returns). The episode ends as
            ``infra_error`` (:class:`EnvHung`), as the Ray pool does with its workers.

    Raises:
        ValueError: for a bad ``num_envs``, ``workers`` or ``step_timeout``.
        TypeError: for an agent that is neither a batch agent nor a factory.
    """

    def __init__(
        self,
        env: str | Callable[[], gym.Env],
        agent: BatchAgent | AgentFactory,
        *,
        num_envs: int = 8,
        env_kwargs: dict[str, Any] | None = None,
        workers: str = "inline",
        record_trees: bool = False,
        record_prompts: bool = True,
        on_step: Callable[[Trajectory, Step, dict[str, Any]], None] | None = None,
        on_end: Callable[[Trajectory, dict[str, Any], dict[str, Any]], None] | None = None,
        info_keys: Sequence[str] = (),
        final_prompts: bool = False,
        step_timeout: float | None = DEFAULT_STEP_TIMEOUT,
    ):
        if step_timeout is not None and not (
            isinstance(step_timeout, int | float) and 0 < step_timeout < float("inf")
        ):
            raise ValueError(f"step_timeout must be > 0 seconds or None, got {step_timeout!r}")
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if workers not in ("inline", "process"):
            raise ValueError(f"workers must be 'inline' or 'process', got {workers!r}")
        if isinstance(env, str):
            import functools

            import gui_gym  # noqa: F401  (registers the ids)

            self.env_id = env
            make: Callable[[], gym.Env] = functools.partial(gym.make, env, **(env_kwargs or {}))
        elif callable(env):
            if env_kwargs:
                raise ValueError("env_kwargs goes with an env id, not with an env callable")
            self.env_id = ""
            make = env
        else:
            raise TypeError(f"env must be an id or a callable, got {type(env).__name__}")
        self.batch_agent = hasattr(agent, "act_batch")
        if not self.batch_agent and not callable(agent):
            raise TypeError(
                "agent must be a BatchAgent (act_batch) or a factory (env, seed) -> Agent, "
                f"got {type(agent).__name__}"
            )
        self.agent = agent
        self.num_envs = num_envs
        self.workers = workers
        self.record_trees = record_trees
        self.record_prompts = record_prompts
        self.on_step = on_step
        self.on_end = on_end
        self.info_keys = tuple(info_keys)
        self.final_prompts = bool(final_prompts)
        self.step_timeout = None if step_timeout is None else float(step_timeout)
        self._make = make
        factory = None if self.batch_agent else agent
        self._slots: list[Any] = []
        for i in range(num_envs):
            if workers == "inline":
                self._slots.append(_InlineEnv(make, factory))  # type: ignore[arg-type]
            else:
                self._slots.append(_ProcessEnv(i, make, factory, self.step_timeout))  # type: ignore[arg-type]
        if not self.env_id:
            spec = getattr(self._slots[0].env, "spec", None) if workers == "inline" else None
            self.env_id = spec.id if spec is not None else ""
        self._keep_screenshots = int(getattr(agent, "images", 0) or 0) > 0
        self._async_agent = self.batch_agent and bool(getattr(agent, "is_async", False))
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._threads = _CallThreads()  # the inline envs' calls
        self._round: list[tuple[Any, str, tuple[Any, ...], asyncio.Future]] = []
        self._rounds: asyncio.Future | None = None
        self._live = 0
        self._in_env = 0
        self._batcher: _Batcher | None = None
        self.stats = RolloutStats()
        self._closed = False

    # ---------------------------------------------------------------------------- helpers

    @property
    def agent_name(self) -> str:
        return str(getattr(self.agent, "name", getattr(self.agent, "__name__", "agent")))

    def reset_stats(self) -> None:
        self.stats = RolloutStats()

    async def _env_call(self, slot: Any, method: str, *args: Any) -> Any:
        """Call an env slot: in a thread for in-process envs (the calls issued together run
        together, see :meth:`_inline_call`), in a thread waiting on the worker process for
        worker processes (the loop keeps serving other envs while one waits)."""
        if isinstance(slot, _InlineEnv):
            return await self._inline_call(slot, method, args)
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(self.num_envs)
        self._in_env += 1
        if self._batcher is not None:
            self._batcher.maybe_flush()
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._executor, getattr(slot, method), *args)
        finally:
            self._in_env -= 1

    async def _inline_call(self, slot: _InlineEnv, method: str, args: tuple[Any, ...]) -> Any:
        """Queue one call into an in-process env and wait for its result.

        The calls that the episodes issue together (every env's step of one round, after
        one batched ``act_batch``) run together, each on its own thread, so the round waits
        for its slowest call once, not for the sum (an env whose wrapper waits on a model
        server). Rounds run one after another and their results are handed back in the order
        the calls were issued, so the episodes go on in the same order as in a serial loop:
        same batches, same results, whatever thread finishes first. A call past
        ``step_timeout`` raises :class:`EnvHung` (its env is rebuilt at once; the hung
        thread is left to end by itself). This works from any thread (no signals).
        """
        future = asyncio.get_running_loop().create_future()
        self._round.append((slot, method, args, future))
        if self._rounds is None or self._rounds.done():
            self._rounds = asyncio.ensure_future(self._run_rounds())
        return await future

    async def _run_rounds(self) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(0)  # the other episodes of this turn of the loop issue theirs
        while self._round:
            batch, self._round = self._round, []
            ends = [loop.create_future() for _ in batch]
            started: list[float | None] = [None] * len(batch)
            for index, ((slot, method, args, _), end) in enumerate(zip(batch, ends, strict=True)):

                def deliver(ok: bool, value: Any, end: asyncio.Future = end) -> None:
                    def settle() -> None:
                        if not end.done():
                            (end.set_result if ok else end.set_exception)(value)

                    with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                        loop.call_soon_threadsafe(settle)

                call = functools.partial(getattr(slot, method), *args)
                guard = _serial_lock(slot.env)
                call = functools.partial(_stamped, started, index, guard, call)
                self._threads.submit(call, deliver)
            hung = await self._wait_round(ends, started)
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
                        EnvHung(f"env {method}: {hung_message(self.step_timeout or 0)}")
                    )
                elif end.exception() is not None:
                    future.set_exception(end.exception())
                else:
                    future.set_result(end.result())

    async def _wait_round(
        self, ends: list[asyncio.Future], started: list[float | None]
    ) -> set[int]:
        """Wait for a round's calls; returns the indices of those that hung.

        A call hangs when it has run ``step_timeout`` seconds since it began its own work:
        for envs that take turns (``thread_safe = False``), since it got its turn, so a step
        queued behind its round's other steps is not charged for their time. A call still
        waiting for its turn hangs when no call of the round has started or ended for
        ``step_timeout`` seconds (the turn's holder is hung and will not hand it on).
        """
        timeout = self.step_timeout
        if timeout is None:
            await asyncio.wait(ends)
            return set()
        hung: set[int] = set()
        progress = time.monotonic()
        seen = (0, 0)
        while True:
            pending = [e for i, e in enumerate(ends) if not e.done() and i not in hung]
            if not pending:
                return hung
            await asyncio.wait(
                pending, timeout=min(0.25, timeout), return_when=asyncio.FIRST_COMPLETED
            )
            now = time.monotonic()
            state = (sum(e.done() for e in ends), sum(t is not None for t in started))
            if state != seen:
                seen, progress = state, now
            for i, end in enumerate(ends):
                if end.done() or i in hung:
                    continue
                began = started[i]
                if (began is not None and now - began >= timeout) or (
                    began is None and now - progress >= timeout
                ):
                    hung.add(i)

    async def _act(
        self, slot: Any, observation: dict[str, Any], info: dict[str, Any], turns: list[Turn]
    ) -> AgentStep:
        if not self.batch_agent:
            return await self._env_call(slot, "act", observation, info)
        if self._async_agent:
            self.stats.agent_calls += 1
            [step] = await self.agent.aact_batch([observation], [info], [turns])  # type: ignore[union-attr]
            return step
        assert self._batcher is not None
        return await self._batcher.submit(observation, info, turns)

    def _fail(self, slot: Any, trajectory: Trajectory, cause: str, restart: bool) -> None:
        where = f"task {trajectory.task_id or '?'} (seed {trajectory.seed})"
        index = getattr(slot, "index", None)
        label = f"env worker {index}" if index is not None else "env"
        trajectory.infra_error = cause
        logger.warning("%s: episode of %s lost to infrastructure: %s", label, where, cause)
        if restart:
            try:
                slot.restart()
                logger.warning("%s restarted", label)
            except Exception as err:  # reported; the next episode fails too
                logger.error("%s could not be restarted: %s", label, err)

    # --------------------------------------------------------------------------- episodes

    def _new_trajectory(self, spec: EpisodeSpec) -> Trajectory:
        metadata: dict[str, Any] = {}
        if spec.episode is not None:
            metadata["episode"] = spec.episode
        return Trajectory(
            env_id=self.env_id,
            task_id=spec.task_id or "",
            instruction="",
            seed=spec.seed,
            agent=self.agent_name,
            metadata=metadata,
            group_id=spec.group_id,
        )

    async def _start(
        self, slot: Any, spec: EpisodeSpec, trajectory: Trajectory
    ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        options = dict(spec.options or {})
        if spec.task_id is not None:
            options["task"] = spec.task_id
        try:
            observation, info, meta = await self._env_call(
                slot, "reset", spec.seed, options or None
            )
        except Exception as err:  # an env that raised: infrastructure
            self._fail(slot, trajectory, f"reset failed: {_short_error(err)}", restart=True)
            return None
        trajectory.task_id = str(info.get("task_id", trajectory.task_id))
        trajectory.instruction = str(observation.get("instruction", ""))
        trajectory.agent = str(meta.pop("agent", trajectory.agent))  # a one-env agent's own
        trajectory.metadata.update(meta)
        return observation, info

    async def _play(
        self,
        slot: Any,
        trajectory: Trajectory,
        observation: dict[str, Any],
        info: dict[str, Any],
        turns: list[Turn],
        stop_at: int | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any], bool]:
        """Play from the current state until the episode ends (or ``stop_at`` steps are in
        the trajectory). Returns the last observation and info and whether it ended."""
        done = False
        while not done and (stop_at is None or len(trajectory.steps) < stop_at):
            try:
                step = await self._act(slot, observation, info, turns)
            except LLMError as err:
                self._fail(slot, trajectory, f"model failed: {err}", restart=False)
                return observation, info, True
            except EnvFailure as err:  # a one-env agent in a worker
                self._fail(slot, trajectory, f"agent in env worker: {err}", restart=True)
                return observation, info, True
            tree = None
            if self.record_trees:
                try:
                    tree = await self._env_call(slot, "tree")
                except EnvHung as err:
                    self._fail(slot, trajectory, f"tree failed: {err}", restart=True)
                    return observation, info, True
                except Exception:  # no tree: the step is recorded without one
                    tree = None
            screen = str(observation.get("screen", ""))
            try:
                result = await self._env_call(slot, "step", step.action)
            except LLMError as err:  # a reward model's server is down: the env is fine
                self._fail(slot, trajectory, f"reward model failed: {err}", restart=False)
                return observation, info, True
            except Exception as err:  # an env that raised or died
                self._fail(slot, trajectory, f"step failed: {_short_error(err)}", restart=True)
                return observation, info, True
            new_observation, reward, terminated, truncated, new_info = result
            record = Step.from_transition(
                len(trajectory.steps),
                screen,
                step.action,
                reward,
                terminated,
                truncated,
                new_info,
                thought=step.thought,
                tree=tree,
            )
            if self.record_prompts and step.prompt is not None:
                record.prompt = sanitize_prompt(step.prompt)
                record.completion = step.text
            if self.info_keys:  # JSON-safe, as the recorded components are (Step.info)
                record.info.update(
                    {k: json_safe(new_info[k]) for k in self.info_keys if k in new_info}
                )
            record.prompt_ids = step.prompt_ids
            record.completion_ids = step.completion_ids
            record.logprobs = step.logprobs
            record.vision = step.vision
            trajectory.steps.append(record)
            if self.on_step is not None:
                self.on_step(trajectory, record, observation)
            turns.append(
                Turn(
                    screen=screen,
                    step=step,
                    screenshot=observation.get("screenshot") if self._keep_screenshots else None,
                    action_description=history_description(new_info),
                    action_valid=bool(new_info.get("action_valid", True)),
                )
            )
            self.stats.steps += 1
            observation, info = new_observation, new_info
            done = bool(terminated or truncated)
        if done:
            trajectory.finish(observation, info)
            last = trajectory.steps[-1] if trajectory.steps else None
            if self.final_prompts and last is not None and last.truncated and not last.terminated:
                encode = getattr(self.agent, "encode_state", None)
                try:
                    final = encode(observation, info, turns) if encode is not None else None
                except Exception as err:  # the episode stays; PPO then bootstraps with 0
                    logger.warning(
                        "final prompt of task %s not encoded: %s", trajectory.task_id, err
                    )
                    final = None
                if final is not None:
                    final["prompt"] = sanitize_prompt(final["prompt"])
                    trajectory.metadata["final_prompt"] = final
            if self.record_trees:
                with contextlib.suppress(Exception):
                    trajectory.metadata["final_tree"] = await self._env_call(slot, "tree")
            if self.on_end is not None:
                self.on_end(trajectory, observation, info)
        return observation, info, done

    async def _episode(self, slot: Any, spec: EpisodeSpec) -> Trajectory:
        trajectory = self._new_trajectory(spec)
        started = await self._start(slot, spec, trajectory)
        if started is not None:
            await self._play(slot, trajectory, *started, turns=[])
        return trajectory

    async def _fork_group(
        self, slot: Any, spec: EpisodeSpec, anchor_step: int, size: int, to_end: bool
    ) -> RolloutGroup:
        group_id = spec.group_id or f"fork:{spec.task_id}:{spec.seed}:{anchor_step}"
        group = RolloutGroup(group_id, spec.task_id, spec.seed, anchor_step=anchor_step)
        prefix = self._new_trajectory(spec)
        prefix.group_id = group_id
        started = await self._start(slot, spec, prefix)
        if started is None:
            group.infra.append(prefix)
            group.skipped = "the episode was lost before the anchor step"
            return group
        turns: list[Turn] = []
        observation, info, ended = await self._play(
            slot, prefix, *started, turns=turns, stop_at=anchor_step
        )
        group.task_id = prefix.task_id
        if prefix.infra_error is not None or ended:
            (group.infra if prefix.infra_error else group.trajectories).append(prefix)
            group.skipped = (
                "the episode was lost before the anchor step"
                if prefix.infra_error
                else f"the episode ended after {len(prefix.steps)} steps, before step {anchor_step}"
            )
            return group
        if not isinstance(slot, _InlineEnv):
            raise TypeError("fork groups need in-process envs (workers='inline')")
        children = [_InlineEnv.forked(slot, spec.seed or 0) for _ in range(size)]
        members = [copy.deepcopy(prefix) for _ in children]
        for member in members:
            member.anchor_step = anchor_step
        # the parent waits while its members act: it leaves the live count and each member
        # joins it until its own end (so a batch never waits for a finished member)
        self._live += size - 1
        try:
            await asyncio.gather(
                *(
                    self._member(child, member, observation, info, list(turns), to_end)
                    for child, member in zip(children, members, strict=True)
                )
            )
        finally:
            self._live += 1
            for child in children:
                child.close()
        for member in members:
            (group.infra if member.infra_error else group.trajectories).append(member)
        return group

    async def _member(
        self,
        slot: _InlineEnv,
        member: Trajectory,
        observation: dict[str, Any],
        info: dict[str, Any],
        turns: list[Turn],
        to_end: bool,
    ) -> None:
        try:
            await self._play(
                slot,
                member,
                observation,
                info,
                turns,
                stop_at=None if to_end else len(member.steps) + 1,
            )
        finally:
            self._live -= 1
            if self._batcher is not None:
                self._batcher.maybe_flush()
        if not to_end and member.infra_error is None and member.steps:
            last = member.steps[-1]
            if not (last.terminated or last.truncated):
                member.metadata["stopped_after_anchor"] = True

    async def _schedule(
        self,
        jobs: Sequence[Any],
        run_one: Callable[[Any, Any], Any],
        on_done: Callable[[int, Any], None] | None,
    ) -> list[Any]:
        if self._closed:
            raise RuntimeError("this RolloutEngine is closed")
        results: list[Any] = [None] * len(jobs)
        free: asyncio.Queue[Any] = asyncio.Queue()
        for slot in self._slots:
            free.put_nowait(slot)
        self._batcher = _Batcher(self) if self.batch_agent and not self._async_agent else None
        started = time.perf_counter()

        async def job(position: int, slot: Any, item: Any) -> None:
            try:
                results[position] = await run_one(slot, item)
            finally:
                self._live -= 1
                free.put_nowait(slot)
                if self._batcher is not None:
                    self._batcher.maybe_flush()
            if on_done is not None:
                on_done(position, results[position])

        tasks = []
        try:
            for position, item in enumerate(jobs):
                slot = await free.get()
                self._live += 1
                tasks.append(asyncio.ensure_future(job(position, slot, item)))
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            self._live = 0
            self._in_env = 0
            if self._rounds is not None and not self._rounds.done():
                self._rounds.cancel()
            self._rounds = None
            self._round = []
            self.stats.seconds += time.perf_counter() - started
        return results

    def _count(self, trajectories: Sequence[Trajectory]) -> None:
        self.stats.episodes += len(trajectories)
        self.stats.infra_errors += sum(t.infra_error is not None for t in trajectories)

    # ------------------------------------------------------------------------- public API

    async def arun(
        self,
        specs: Sequence[EpisodeSpec],
        on_episode: Callable[[int, Trajectory], None] | None = None,
    ) -> list[Trajectory]:
        """The coroutine form of :meth:`run`."""
        specs = [s if isinstance(s, EpisodeSpec) else EpisodeSpec(*s) for s in specs]
        out = await self._schedule(specs, self._episode, on_episode)
        self._count(out)
        return out

    def run(
        self,
        specs: Sequence[EpisodeSpec],
        on_episode: Callable[[int, Trajectory], None] | None = None,
    ) -> list[Trajectory]:
        """Run ``specs`` (at most ``num_envs`` at once) and return their trajectories in
        order; an episode lost to infrastructure has ``infra_error`` set.

        Args:
            specs: The episodes.
            on_episode: Called with ``(position, trajectory)`` as each episode finishes.
        """
        return self._on_own_loop(self.arun(specs, on_episode))

    def _on_own_loop(self, work: Coroutine[Any, Any, _T]) -> _T:
        """Run ``work`` on a fresh event loop, then close the agent's connections of that
        loop (an :class:`OpenAICompatLLM`'s): they belong to it, and the next run's loop
        could not close them."""

        async def main() -> _T:
            try:
                return await work
            finally:
                disconnect = getattr(self.agent, "adisconnect", None)
                if disconnect is not None:
                    await disconnect()

        return asyncio.run(main())

    def run_groups(
        self,
        tasks: Sequence[str | None],
        group_size: int,
        *,
        seed: int = 0,
        on_episode: Callable[[int, Trajectory], None] | None = None,
    ) -> list[RolloutGroup]:
        """GRPO groups: ``group_size`` episodes of each task, all reset with the same seed
        (task ``k`` uses ``seed + k``), so they start from the identical state and differ
        only by the policy's sampling.

        Raises:
            ValueError: for ``group_size < 1``.
        """
        if not isinstance(group_size, int) or group_size < 1:
            raise ValueError(f"group_size must be a positive int, got {group_size!r}")
        specs = []
        for k, task in enumerate(tasks):
            group_id = f"grpo:{k}:{task}:{seed + k}"
            specs += [
                EpisodeSpec(task, seed + k, group_id=group_id, episode=k * group_size + j)
                for j in range(group_size)
            ]
        trajectories = self.run(specs, on_episode)
        groups = []
        for k, task in enumerate(tasks):
            members = trajectories[k * group_size : (k + 1) * group_size]
            group = RolloutGroup(specs[k * group_size].group_id or "", task, seed + k)
            group.task_id = members[0].task_id or task
            for t in members:
                (group.infra if t.infra_error else group.trajectories).append(t)
            groups.append(group)
        return groups

    def run_fork_groups(
        self,
        specs: Sequence[EpisodeSpec],
        *,
        anchor_step: int,
        group_size: int,
        continue_to_end: bool = True,
    ) -> list[RolloutGroup]:
        """Anchor-state groups: run each spec to step ``anchor_step``, fork the env
        ``group_size`` times and let the policy act from each identical copy (see the module
        docstring). Returns one :class:`RolloutGroup` per spec.

        Raises:
            ValueError: for ``anchor_step < 0`` or ``group_size < 1``.
            TypeError: with ``workers="process"`` (forks live in this process).
        """
        if not isinstance(anchor_step, int) or anchor_step < 0:
            raise ValueError(f"anchor_step must be an int >= 0, got {anchor_step!r}")
        if not isinstance(group_size, int) or group_size < 1:
            raise ValueError(f"group_size must be a positive int, got {group_size!r}")
        if self.workers != "inline":
            raise TypeError("fork groups need in-process envs (workers='inline')")

        async def one(slot: Any, spec: EpisodeSpec) -> RolloutGroup:
            return await self._fork_group(slot, spec, anchor_step, group_size, continue_to_end)

        groups = self._on_own_loop(self._schedule(list(specs), one, None))
        for group in groups:
            self._count(group.trajectories + group.infra)
        return groups

    def close(self) -> None:
        """Close every env (and stop the worker processes)."""
        if self._closed:
            return
        self._closed = True
        for slot in self._slots:
            slot.close()
        if self._executor is not None:
            self._executor.shutdown(wait=False)
        self._threads.close()

    def __enter__(self) -> RolloutEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _short_error(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    first = text.strip().splitlines()[0] if text.strip() else text
    if isinstance(err, EnvFailure):
        return first
    return f"{type(err).__name__}: {first}"
