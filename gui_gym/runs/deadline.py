"""The one step deadline: how long an env call may take, and what happens past it.

Every runner of env calls keeps it the same way: the rollout engine, for its in-process envs
(calls on threads: :class:`CallThreads`, :func:`run_calls`) and its worker processes
(:class:`~gui_gym.runs.slots.ProcessEnv`, waiting with :func:`wait_for_answer`); the OpenEnv
server, whose sessions run in those worker processes; and the Ray pool
(:mod:`gui_gym.distributed`, whose waiting is Ray's own ``ray.wait``). The rule:

* a reset or a step (or a one-env agent's act) may take ``step_timeout`` seconds, a number
  > 0 or None for no limit (:func:`check_timeout`; the engine's default is
  :data:`DEFAULT_STEP_TIMEOUT`);
* a worker's first call also starts it and builds its env (a browser, say), so it gets more
  (:func:`call_budget`: at least :data:`START_TIMEOUT`, or a caller's fixed extra time);
* a call past its time is hung (:func:`past`): its worker is killed (a thread, which cannot
  be killed, is written off and its env rebuilt at once), and the call fails with
  :class:`EnvHung` (the Ray pool's ``WorkerHung`` is one too), whose message says
  :func:`hung_message`. The episode is lost to infrastructure (``infra_error``), never
  scored.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "DEFAULT_STEP_TIMEOUT",
    "START_TIMEOUT",
    "CallThreads",
    "EnvFailure",
    "EnvHung",
    "WorkerDied",
    "call_budget",
    "check_timeout",
    "hung_message",
    "past",
    "run_calls",
    "wait_for_answer",
]


class EnvFailure(RuntimeError):
    """An env raised (in this process or in its worker); the message has the cause."""


class WorkerDied(EnvFailure):
    """An env worker process is gone (killed or crashed)."""


class EnvHung(EnvFailure):
    """An env call (reset, step, a one-env agent's act) ran past ``step_timeout``: its worker
    was killed or, inline, the engine stopped waiting for its thread; the env is rebuilt and
    the episode is ``infra_error``."""


DEFAULT_STEP_TIMEOUT = 60.0
"""Seconds one env call may take before it counts as hung (``RolloutEngine(step_timeout=)``,
``gui-gym eval --step-timeout``). A worker's first call after it starts (building its env,
e.g. launching Chromium) gets at least :data:`START_TIMEOUT`."""

START_TIMEOUT = 300.0
"""Seconds a new worker's first call may take at least (it starts and builds its env): the
engine's worker processes, and the Ray pool's default ``start_timeout``."""


def hung_message(timeout: float) -> str:
    """The one wording of a hung env call (the engine's, the OpenEnv server's, the Ray pool's)."""
    return f"no answer within step_timeout={timeout:g} s (hung)"


def check_timeout(
    value: float | None, name: str = "step_timeout", *, optional: bool = True
) -> float | None:
    """``value`` as seconds, checked: a number > 0 (``inf`` counts as no limit), or None for
    no limit where ``optional``.

    Raises:
        ValueError: for anything else, naming ``name``.
    """
    if value is None and optional:
        return None
    if isinstance(value, int | float) and value > 0:
        return float(value)
    allowed = " or None" if optional else ""
    raise ValueError(f"{name} must be > 0 seconds{allowed}, got {value!r}")


def call_budget(
    timeout: float | None, first: bool, start_extra: float | None = None
) -> float | None:
    """Seconds the next call on a worker may take: ``timeout``; a new worker's ``first``
    call (it builds its env) gets ``timeout + start_extra`` when a caller gives that extra
    time, else at least :data:`START_TIMEOUT`."""
    if timeout is None or not first:
        return timeout
    if start_extra is not None:
        return timeout + start_extra
    return max(timeout, START_TIMEOUT)


def past(began: float, timeout: float | None, now: float | None = None) -> bool:
    """Whether a call that began at ``began`` (``time.monotonic()``) has run past
    ``timeout`` seconds by ``now`` (default: now)."""
    if timeout is None:
        return False
    return (time.monotonic() if now is None else now) - began >= timeout


def wait_for_answer(
    conn: Any, process: Any, began: float, timeout: float | None, poll: float = 0.5
) -> bool:
    """Wait for a worker process's answer on its pipe ``conn``.

    Returns:
        True once the answer is there, or the process has ended (reading then fails: a
        dead worker); False when ``timeout`` seconds since ``began`` passed first (the call
        hung: the caller kills the worker and raises :class:`EnvHung`).
    """
    while not conn.poll(poll):
        if not process.is_alive():
            return True
        if past(began, timeout):
            return False
    return True


class CallThreads:
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
            except BaseException as err:  # handed to the caller's loop
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


def _stamped(
    started: list[float | None], index: int, lock: threading.Lock | None, call: Callable[[], Any]
) -> Any:
    """Run ``call`` (holding ``lock``, when given), first writing when it began its own work
    into ``started[index]``: for calls that take turns, the moment it got its turn."""
    if lock is None:
        started[index] = time.monotonic()
        return call()
    with lock:
        started[index] = time.monotonic()
        return call()


async def run_calls(
    threads: CallThreads,
    calls: Sequence[tuple[Callable[[], Any], threading.Lock | None]],
    timeout: float | None,
) -> tuple[list[asyncio.Future], set[int]]:
    """Run ``calls`` (each ``(call, lock)``: calls holding the same lock take turns) together
    on ``threads`` and wait for them under the deadline.

    A call hangs when it has run ``timeout`` seconds since it began its own work: for calls
    that take turns, since it got its turn, so one queued behind the others is not charged
    for their time. A call still waiting for its turn hangs when no call of the batch has
    started or ended for ``timeout`` seconds (the turn's holder is hung and will not hand it
    on). Works from any thread's event loop (no signals).

    Returns:
        One future per call (its result or exception, once it ended) and the indices of the
        calls that hung (their futures are left pending; the caller writes them off).
    """
    loop = asyncio.get_running_loop()
    ends = [loop.create_future() for _ in calls]
    started: list[float | None] = [None] * len(calls)
    for index, ((call, lock), end) in enumerate(zip(calls, ends, strict=True)):

        def deliver(ok: bool, value: Any, end: asyncio.Future = end) -> None:
            def settle() -> None:
                if not end.done():
                    (end.set_result if ok else end.set_exception)(value)

            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                loop.call_soon_threadsafe(settle)

        threads.submit(functools.partial(_stamped, started, index, lock, call), deliver)
    return ends, await _wait_calls(ends, started, timeout)


async def _wait_calls(
    ends: list[asyncio.Future], started: list[float | None], timeout: float | None
) -> set[int]:
    """Wait for a batch's calls (:func:`run_calls`); the indices of those that hung."""
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
        await asyncio.wait(pending, timeout=min(0.25, timeout), return_when=asyncio.FIRST_COMPLETED)
        now = time.monotonic()
        state = (sum(e.done() for e in ends), sum(t is not None for t in started))
        if state != seen:
            seen, progress = state, now
        for i, end in enumerate(ends):
            if end.done() or i in hung:
                continue
            began = started[i]
            if (began is not None and past(began, timeout, now)) or (
                began is None and past(progress, timeout, now)
            ):
                hung.add(i)
