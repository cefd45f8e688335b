"""Serve any gui-gym env over OpenEnv (``gui-gym serve-openenv``), for the trainers that
speak it: TRL, verifiers (``OpenEnvTaskset``), SkyRL, AgileRL, or OpenEnv's own clients.

::

    gui-gym serve-openenv GuiGym/WikiHow-v0 --port 8000 --max-sessions 64 --session-timeout 300

    from gui_gym.integrations.openenv import GuiGymEnvClient   # or openenv.GenericEnvClient
    with GuiGymEnvClient(base_url="http://127.0.0.1:8000").sync() as env:
        result = env.reset(seed=0, task_id="...")   # task_id optional
        result = env.step("CLICK(3)")
        result.observation.screen, result.reward, result.done

    # a server started with --token SECRET (required off loopback):
    GuiGymEnvClient(base_url=url, headers={"Authorization": "Bearer SECRET"})

The app is OpenEnv's own (:func:`openenv.core.env_server.http_server.create_app`) over
:class:`GuiGymEnvironment`, with typed models: :class:`GuiAction` (one action in the gui-gym
grammar, or model output holding ``<action>...</action>``), :class:`GuiObservation`
(instruction, screen, the screenshot as a base64 PNG data URL, task id, step, action
validity and description, milestones, the reward stack's components, success) and
:class:`GuiState`. What it adds to OpenEnv's server:

* **Every env in its own worker process** (the rollout engine's worker,
  :class:`gui_gym.runs.slots.ProcessEnv`, with the reward stack applied inside it; forked
  from a forkserver with gui-gym preloaded, so a session starts in milliseconds), so a
  crashed env, a Chromium that dies under MiniWoB++ or a step that hangs cannot take the
  server or another session down. A dead worker is one clear error for its own session
  (``env worker ... died``); the session's next ``reset`` starts a new worker.
* **Step timeout**: the rollout engine's step deadline (:mod:`gui_gym.runs.deadline`): a
  step (or reset) running past ``step_timeout`` kills its worker and fails with an error
  saying so; the session's slot stays usable (a new worker's first reset gets
  :data:`WORKER_START_SECONDS` more, to start).
* **Session timeout and slot reclaim**: a WebSocket client that sends nothing for
  ``session_timeout`` seconds (it vanished, hung, or lost its network without closing the
  socket) is disconnected with close code 4000 and its slot, worker and env are released
  at once; OpenEnv's own reaper leaves WebSocket sessions alone, which is how leaked slots
  deadlock servers (OpenEnv PR #1000). The clock runs only while the server waits for the
  client, never during a slow step. A client whose socket closes (a killed process)
  releases its slot immediately.
* Only the WebSocket session API is served (OpenEnv's ``production`` mode): its stateless
  HTTP ``/reset`` and ``/step`` would each make a fresh env, and a GUI episode is a session.
  The routes are exactly :data:`ROUTES`: OpenEnv's ``/mcp`` (whose sessions no client
  closes), ``/docs``, ``/redoc``, ``/openapi.json`` and ``/list_environments`` are removed.
* **A guard in front** (:mod:`gui_gym.integrations.asgi_guard`, issue 46): ``Host`` must name
  this server (loopback names on a loopback bind), a browser's foreign ``Origin`` is
  refused, ``token`` (required off loopback) must come as ``Authorization: Bearer TOKEN``
  or ``?token=TOKEN``, HTTP bodies are capped at 1 MiB and 30 s, a request head must be
  complete 10 s after the connection opens (silent and trickling connections are closed),
  and a message that is not a JSON object or holds a lone surrogate gets an error reply
  instead of ending the session.

Reset takes ``seed``, ``episode_id`` and ``task_id`` (one of the env's tasks; the seed picks
one otherwise), or OpenEnv's task API's ``split`` and ``index``: the server lists the served
env's tasks at ``/{name}/splits``, ``/{name}/tasks``, ``/{name}/task`` (``name`` is the id with
``-`` for ``/``, e.g. ``GuiGym-WikiHow-v0``). A step's ``reward`` is the reward stack's (``reward="outcome+progress"``, the
same expressions as ``gui-gym train``); ``reward_components`` splits it per term
(:func:`~gui_gym.integrations.reward_components.step_reward_components`), and at the end of
an episode ``metadata["milestone"]`` holds ADMIRE's deferred milestone credit when the stack
has milestones.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import multiprocessing
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

try:
    from openenv.core.client_types import StepResult
    from openenv.core.env_client import EnvClient
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import (
        Action,
        ConcurrencyConfig,
        EnvironmentMetadata,
        Observation,
        ServerMode,
        State,
    )
    from pydantic import Field
except ImportError as err:  # pragma: no cover - exercised by the missing-extra test
    raise gym.error.DependencyNotInstalled(
        f'OpenEnv is not installed ({err}): pip install "gui-gym[openenv]"'
    ) from err

from gui_gym.integrations.asgi_guard import HEADER_TIMEOUT, RequestGuard, deadline_protocol
from gui_gym.integrations.server_guard import check_bind
from gui_gym.integrations.wire import make_wire_env
from gui_gym.runs.deadline import EnvFailure, EnvHung, WorkerDied, check_timeout
from gui_gym.runs.slots import ProcessEnv
from gui_gym.train.reward_stack import RewardStack, parse_reward

__all__ = [
    "IDLE_CLOSE_CODE",
    "ROUTES",
    "GuiAction",
    "GuiGymEnvClient",
    "GuiGymEnvironment",
    "GuiObservation",
    "GuiState",
    "ServedEnv",
    "bind_socket",
    "make_app",
    "make_server",
    "serve",
]

IDLE_CLOSE_CODE = 4000
"""WebSocket close code sent to a client whose session timed out (4000-4999: application)."""

WORKER_START_SECONDS = 120.0
"""Added to the step timeout for the first call on a new worker, which starts the process,
imports gui-gym and builds the env before it resets."""

MAX_ACTION_CHARS = 20_000
"""As the envs' action space (``UnicodeText(20_000)``)."""


class GuiAction(Action):
    """One action for a gui-gym env."""

    action: str = Field(
        ...,
        max_length=MAX_ACTION_CHARS,
        description='An action in the gui-gym grammar, e.g. CLICK(3), INPUT(2, "text"), '
        'SCROLL(down), GOBACK(), ANSWER("text"), DONE(); AndroidWorld JSON; WebShop\'s '
        "search[...] / click[...]; or model output holding <action>...</action>. A bad "
        "action is not an error: the step counts and action_valid is false.",
    )


class GuiObservation(Observation):
    """What a gui-gym env shows after a reset or a step (``reward``, ``done`` and
    ``metadata`` come from OpenEnv's ``Observation``)."""

    instruction: str = Field("", description="the task's goal")
    screen: str = Field("", description="the screen as text, one element a line with its id")
    screenshot: str | None = Field(
        None,
        description="the screen as a data:image/png;base64 URL (servers started with "
        "screenshot=True, e.g. --env-arg screenshot=true)",
    )
    task_id: str = Field("", description="the task of this episode")
    step: int = Field(0, description="steps taken in this episode")
    action_valid: bool = Field(True, description="whether the last action was applied")
    action_error: str | None = Field(None, description="why the last action was refused")
    action_description: str = Field("", description="the last action in words")
    milestones: list[str] = Field(
        default_factory=list, description="env-defined milestones reached so far, in order"
    )
    reward_components: dict[str, float] = Field(
        default_factory=dict,
        description="the step's reward split per term of the reward stack (sums to reward)",
    )
    success: bool | None = Field(None, description="the task's outcome, at the episode's end")
    terminated: bool = Field(False, description="the episode ended (DONE/ANSWER or success)")
    truncated: bool = Field(False, description="the episode hit the step limit")


class GuiState(State):
    """The session's episode (``episode_id`` and ``step_count`` from OpenEnv's ``State``)."""

    env_id: str = ""
    task_id: str | None = None
    seed: int | None = None
    done: bool = False
    worker_pid: int | None = Field(None, description="the env worker process of this session")


@dataclass
class ServedEnv:
    """What every session of a server runs.

    Args:
        env_id: A registered gui-gym id.
        env_kwargs: ``gym.make`` arguments (split, category, max_steps, screenshot, ...).
        reward: A reward expression (:func:`~gui_gym.train.reward_stack.parse_reward`).
        reward_options: The other :class:`~gui_gym.train.reward_stack.RewardStack` fields
            (``prm_model``, ``progress_model``, ``milestone_store``, ``embedder``, ...).
        step_timeout: Seconds a reset or step may take before its worker is killed (None:
            no limit; :func:`~gui_gym.runs.deadline.check_timeout`).

    Raises:
        ValueError: for a bad reward expression or timeout.
    """

    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    reward: str = "outcome"
    reward_options: dict[str, Any] = field(default_factory=dict)
    step_timeout: float | None = 600.0

    def __post_init__(self) -> None:
        self.stack = RewardStack(parse_reward(self.reward), **self.reward_options)
        self.step_timeout = check_timeout(self.step_timeout)

    def factory(self) -> Callable[[], gym.Env]:
        """The picklable callable a worker makes its env with."""
        return functools.partial(make_wire_env, self.env_id, dict(self.env_kwargs), self.stack)

    def tasks(self) -> tuple[str, list[str]]:
        """``(split, task ids)`` the served env draws from (computed once, in this process:
        ``gym.make`` builds no browser or worker)."""
        cached = getattr(self, "_tasks", None)
        if cached is None:
            import gui_gym  # noqa: F401  (registers the ids)

            env = gym.make(self.env_id, **self.env_kwargs)
            try:
                base = env.unwrapped
                split = str(getattr(base, "split", None) or "default")
                cached = (split, [str(t) for t in getattr(base, "task_ids", None) or []])
            finally:
                env.close()
            self._tasks = cached
        return cached


_WORKER_NUMBERS = itertools.count()
_PRELOADED: set[str] = set()


class _SessionWorker(ProcessEnv):
    """The rollout engine's env worker, forked from a forkserver that has gui-gym, the
    served env's module and the reward wrappers imported already: a new session's worker
    starts in milliseconds instead of importing them (about 1.5 s of CPU each, which 16
    sessions opening at once on 2 cores turn into tens of seconds). Its deadline is the
    engine's (poll, then kill: ``EnvHung``); a new worker's first call gets
    :data:`WORKER_START_SECONDS` more (it imports gui-gym and builds its env)."""

    START_METHOD = "forkserver"
    START_EXTRA = WORKER_START_SECONDS

    def __init__(
        self, index: int, make: Callable[[], gym.Env], env_id: str, timeout: float | None = None
    ):
        _preload_forkserver(env_id)
        super().__init__(index, make, None, timeout)


def _preload_forkserver(env_id: str) -> None:
    """Name the modules the forkserver imports when it starts (once per process; the
    forkserver starts with the first worker).

    Each worker still imports the caller's main module again, as spawned processes do
    (Python 3.11's forkserver does not preload it): a script that serves should import
    OpenEnv inside ``if __name__ == "__main__":``, or it costs every worker OpenEnv's import.
    ``gui-gym serve-openenv`` and pytest have light main modules."""
    if _PRELOADED:
        return
    modules = ["gui_gym", "gui_gym.runs.slots", "gui_gym.integrations.wire", "gui_gym.wrappers"]
    with contextlib.suppress(Exception):  # an id without a spec: nothing more to preload
        entry = gym.spec(env_id).entry_point
        if isinstance(entry, str):
            modules.append(entry.split(":")[0])
    multiprocessing.get_context("forkserver").set_forkserver_preload(modules)
    _PRELOADED.update(modules)


class GuiGymEnvironment(Environment[GuiAction, GuiObservation, GuiState]):
    """One OpenEnv session: a gui-gym env (with its reward stack) in a worker process.

    The worker starts at the first ``reset``, so making a session is cheap; ``close`` kills
    it. See the module docstring for timeouts and crashes.

    Args:
        served: What to run.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session owns its own worker process

    def __init__(self, served: ServedEnv):
        super().__init__()
        self.served = served
        self._worker: _SessionWorker | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._in_episode = False
        self._state = GuiState(env_id=served.env_id)

    # -- worker ------------------------------------------------------------------------

    def _call(self, command: str, *args: Any) -> Any:
        if self._closed:
            raise RuntimeError("this session is closed (timed out or ended); open a new one")
        fresh = self._worker is None or not self._worker.process.is_alive()
        if fresh and command != "reset" and self._worker is not None:
            # only a reset starts a new worker: a step sent to a fresh one would fail with the
            # env's "call reset first" and hide that the episode's worker died
            dead = self._worker.process
            self._in_episode = False
            raise RuntimeError(
                f"env worker {self._worker.index} (pid {dead.pid}) died with exit code "
                f"{dead.exitcode}: this episode is lost; call reset() to start a new one in a "
                "fresh worker"
            )
        if fresh:
            if self._worker is not None:
                self._worker.close()
            self._worker = _SessionWorker(
                next(_WORKER_NUMBERS),
                self.served.factory(),
                self.served.env_id,
                self.served.step_timeout,
            )
            self._state.worker_pid = self._worker.process.pid
        worker = self._worker
        assert worker is not None
        try:
            return worker.call(command, *args)
        except EnvHung as err:  # the engine's worker deadline killed it (a new one at reset)
            self._in_episode = False
            raise RuntimeError(
                f"{command} took longer than the step timeout "
                f"({self.served.step_timeout:g} s): {err}; the env worker was stopped and "
                "this episode is lost; call reset() to start again"
            ) from None
        except WorkerDied as err:
            self._in_episode = False
            raise RuntimeError(
                f"{err}: this episode is lost; call reset() to start a new one in a fresh worker"
            ) from None
        except EnvFailure as err:  # the worker lives on; its traceback stays in its log
            self._in_episode = False
            first_line = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise RuntimeError(f"the env raised: {first_line}") from None

    # -- OpenEnv's Environment -----------------------------------------------------------

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: str | None = None,
        split: str | None = None,
        index: int | None = None,
        **kwargs: Any,
    ) -> GuiObservation:
        """Start an episode: ``task_id`` picks the task, or ``split`` and ``index`` (OpenEnv's
        task API), else the seed does."""
        if kwargs:
            raise ValueError(
                f"unknown reset argument(s) {sorted(kwargs)}; allowed: seed, episode_id, "
                "task_id, split, index"
            )
        if index is not None or split is not None:
            if task_id is not None:
                raise ValueError("give task_id, or split and index, not both")
            if index is None:
                raise ValueError("split needs an index (the task's position in the split)")
            task_id = self.get_task(split or self.served.tasks()[0], index)["id"]
        if task_id is not None and not isinstance(task_id, str):
            raise ValueError(f"task_id must be a task id string, got {task_id!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"seed must be an int, got {seed!r}")
        with self._lock:
            options = {"task": task_id} if task_id is not None else None
            fields, _info, _meta = self._call("reset", seed, options)
            self._in_episode = True
            self._state = GuiState(
                env_id=self.served.env_id,
                episode_id=episode_id,
                step_count=0,
                task_id=fields["task_id"],
                seed=seed,
                done=False,
                worker_pid=self._state.worker_pid,
            )
            return GuiObservation(**fields, reward=None, done=False)

    def step(
        self, action: GuiAction, timeout_s: float | None = None, **kwargs: Any
    ) -> GuiObservation:
        """One action; a bad action is a counted step with ``action_valid`` false."""
        with self._lock:
            if not self._in_episode:
                raise RuntimeError(
                    "no episode is running in this session (none started, the last one ended "
                    "or was lost, or the session timed out and the client reconnected): call "
                    "reset() first"
                )
            fields, reward, terminated, truncated, extra = self._call("step", action.action)
            done = terminated or truncated
            self._in_episode = not done
            self._state.step_count = fields["step"]
            self._state.done = done
            return GuiObservation(
                **fields,
                terminated=terminated,
                truncated=truncated,
                reward=reward,
                done=done,
                metadata=extra,
            )

    @property
    def state(self) -> GuiState:
        return self._state

    # -- OpenEnv's task API (TaskProvider): the served env's tasks, one split -------------

    def _split_tasks(self, split: str) -> list[str]:
        """The served split's tasks; another split has none (the server serves one)."""
        name, tasks = self.served.tasks()
        return tasks if split == name else []

    def list_splits(self) -> list[str]:
        """The one split the server's env draws its tasks from (``--env-arg split=...``)."""
        return [self.served.tasks()[0]]

    def num_tasks(self, split: str) -> int:
        return len(self._split_tasks(split))

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        return [{"id": t, "index": k} for k, t in enumerate(self._split_tasks(split))]

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        """``{"id", "index"}`` of one task; ``reset(task_id=id)`` runs it.

        Raises:
            IndexError: for an index outside the split (OpenEnv answers 400).
        """
        tasks = self._split_tasks(split)
        if not tasks:
            raise IndexError(f"no split {split!r}: this server serves {self.list_splits()[0]!r}")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(tasks):
            raise IndexError(f"task index {index!r} outside 0..{len(tasks) - 1}")
        return {"id": tasks[index], "index": index}

    def get_task_range(
        self, split: str, start: int | None = None, stop: int | None = None
    ) -> list[dict[str, Any]]:
        tasks = self._split_tasks(split)
        first = range(len(tasks))[slice(start, stop)]
        return [{"id": tasks[k], "index": k} for k in first]

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=self.served.env_id,
            description=f"gui-gym {self.served.env_id} with reward {self.served.reward!r}",
            version=_gui_gym_version(),
            documentation_url="https://github.com/gui-gym/gui-gym/tree/main/docs/engines.md",
        )

    def close(self) -> None:
        """Kill the worker (safe to call twice, and from any thread)."""
        self._closed = True
        worker, self._worker = self._worker, None
        if worker is not None:
            with contextlib.suppress(Exception):
                worker.process.kill()
            with contextlib.suppress(Exception):
                worker.close()


class GuiGymEnvClient(EnvClient[GuiAction, GuiObservation, GuiState]):
    """OpenEnv's client for a ``gui-gym serve-openenv`` server, with typed results: ``step``
    takes a :class:`GuiAction` or an action string, results hold :class:`GuiObservation`
    and ``state()`` a :class:`GuiState`. Async by default, ``.sync()`` for blocking use,
    as every OpenEnv client::

        async with GuiGymEnvClient(base_url="http://127.0.0.1:8000") as env:
            result = await env.reset(seed=0)
            result = await env.step("CLICK(3)")
            result.observation.screen, result.observation.reward_components
    """

    def _step_payload(self, action: GuiAction | str) -> dict[str, Any]:
        if isinstance(action, str):
            action = GuiAction(action=action)
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[GuiObservation]:
        fields = dict(payload.get("observation", {}))
        fields.pop("metadata", None)  # sent beside the observation too
        observation = GuiObservation(
            **fields,
            reward=payload.get("reward"),
            done=bool(payload.get("done", False)),
            metadata=payload.get("metadata") or {},
        )
        return StepResult(
            observation=observation,
            reward=payload.get("reward"),
            done=observation.done,
            metadata=payload.get("metadata"),
        )

    def _parse_state(self, payload: dict[str, Any]) -> GuiState:
        return GuiState(**payload)


def _gui_gym_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("gui-gym")
    except metadata.PackageNotFoundError:  # pragma: no cover - a source checkout
        return "0"


# ---------------------------------------------------------------------------- the server


class _IdleSessionTimeout:
    """ASGI middleware: a WebSocket client that sends nothing for ``timeout`` seconds while
    the server waits for it is told so (close code :data:`IDLE_CLOSE_CODE`) and, to the app,
    disconnects, so OpenEnv releases its session at once."""

    def __init__(self, app: Any, timeout: float):
        self.app = app
        self.timeout = timeout

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        accepted = closed = False

        async def guarded_send(message: dict) -> None:
            nonlocal accepted
            if closed:
                return  # the app's own close after ours
            if message["type"] == "websocket.accept":
                accepted = True
            await send(message)

        async def idle_receive() -> dict:
            nonlocal closed
            if not accepted or closed:
                return await receive()
            try:
                return await asyncio.wait_for(receive(), self.timeout)
            except TimeoutError:
                closed = True
                with contextlib.suppress(Exception):
                    await send(
                        {
                            "type": "websocket.close",
                            "code": IDLE_CLOSE_CODE,
                            "reason": f"no message for {self.timeout:g} s: session closed",
                        }
                    )
                return {"type": "websocket.disconnect", "code": IDLE_CLOSE_CODE}

        await self.app(scope, idle_receive, guarded_send)


ROUTES = (
    "/ws",
    "/health",
    "/metadata",
    "/schema",
    "/{env_name}/splits",
    "/{env_name}/tasks",
    "/{env_name}/num_tasks",
    "/{env_name}/task",
    "/{env_name}/task_range",
)
"""The routes a server answers (docs/engines.md); every other path is a 404."""


def make_app(
    served: ServedEnv,
    *,
    max_sessions: int = 8,
    session_timeout: float | None = 300.0,
    host: str = "127.0.0.1",
    token: str | None = None,
) -> Any:
    """OpenEnv's FastAPI app serving ``served``, with at most ``max_sessions`` sessions,
    only :data:`ROUTES`, behind :class:`~gui_gym.integrations.asgi_guard.RequestGuard`.

    Args:
        served: What each session runs.
        max_sessions: Sessions at once.
        session_timeout: Seconds a client may stay silent (None: no limit).
        host: The address the server is bound to (the Host rule follows it).
        token: The token every request must carry; required when ``host`` is not loopback.

    Raises:
        ValueError: for ``max_sessions < 1``, ``session_timeout <= 0``, or a non-loopback
            ``host`` without a token (:func:`~gui_gym.integrations.server_guard.check_bind`).
    """
    if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) or max_sessions < 1:
        raise ValueError(f"max_sessions must be an int >= 1, got {max_sessions!r}")
    if session_timeout is not None and not session_timeout > 0:
        raise ValueError(f"session_timeout must be > 0 seconds, got {session_timeout!r}")
    check_bind(host, token)
    served.tasks()  # the task API answers from this list; built now, not in a request
    app = create_app(
        functools.partial(GuiGymEnvironment, served),
        GuiAction,
        GuiObservation,
        env_name=served.env_id.replace("/", "-"),
        # OpenEnv's own reaper is left off: it skips WebSocket sessions, and it would close a
        # session whose step runs longer than the timeout. The middleware times the client.
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions),
        state_cls=GuiState,
        mode=ServerMode.PRODUCTION,
    )
    # OpenEnv adds /mcp (HTTP and WebSocket: sessions no one closes, any Content-Type),
    # FastAPI's /docs, /redoc and /openapi.json, and /list_environments: none is documented
    app.router.routes = [r for r in app.router.routes if getattr(r, "path", None) in ROUTES]
    app.openapi_url = app.docs_url = app.redoc_url = None
    if session_timeout is not None:
        app.add_middleware(_IdleSessionTimeout, timeout=float(session_timeout))
    app.add_middleware(RequestGuard, bind_host=host, token=token)  # the outermost
    return app


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (0: a free port).

    Raises:
        OSError: when the address cannot be bound (in use, not this machine's, ...).
    """
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def make_server(
    served: ServedEnv,
    *,
    max_sessions: int = 8,
    session_timeout: float | None = 300.0,
    log_level: str = "warning",
    host: str = "127.0.0.1",
    token: str | None = None,
    header_timeout: float = HEADER_TIMEOUT,
) -> Any:
    """A ``uvicorn.Server`` for :func:`make_app`; ``server.run(sockets=[sock])`` serves on a
    socket from :func:`bind_socket` (in a thread too), ``server.should_exit = True`` stops it.

    ``host`` is the address the socket is bound to; ``header_timeout`` the seconds a
    connection has to send a complete request head (uvicorn's h11 protocol with
    :func:`~gui_gym.integrations.asgi_guard.deadline_protocol`; heads over 16 KiB are 400s).
    """
    import uvicorn

    if not header_timeout > 0:
        raise ValueError(f"header_timeout must be > 0 seconds, got {header_timeout!r}")
    app = make_app(
        served,
        max_sessions=max_sessions,
        session_timeout=session_timeout,
        host=host,
        token=token,
    )
    config = uvicorn.Config(
        app,
        log_level=log_level,
        ws_max_size=16 * 2**20,
        http=deadline_protocol(float(header_timeout)),
        h11_max_incomplete_event_size=16 * 2**10,
        timeout_keep_alive=5,
    )
    return uvicorn.Server(config)


def serve(
    served: ServedEnv,
    sock: socket.socket,
    *,
    max_sessions: int = 8,
    session_timeout: float | None = 300.0,
    log_level: str = "warning",
    on_ready: Callable[[], None] | None = None,
    token: str | None = None,
) -> None:
    """Serve ``served`` on a bound socket (:func:`bind_socket`) until interrupted.

    Args:
        served: What each session runs.
        sock: The listening socket.
        max_sessions: Sessions at once (each one worker process).
        session_timeout: Seconds a client may stay silent before its session is closed.
        log_level: uvicorn's log level.
        on_ready: Called once the server accepts connections.
        token: The token every request must carry (required off loopback).
    """
    server = make_server(
        served,
        max_sessions=max_sessions,
        session_timeout=session_timeout,
        log_level=log_level,
        host=str(sock.getsockname()[0]),
        token=token,
    )
    if on_ready is not None:

        def _announce() -> None:
            while not server.started and not server.should_exit:
                time.sleep(0.05)
            if server.started:
                on_ready()

        threading.Thread(target=_announce, daemon=True).start()
    server.run(sockets=[sock])
