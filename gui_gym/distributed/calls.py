"""Calls on env workers (Ray actors) from the driver: their results, or why there is none.

:func:`gather` waits for many calls under one deadline (Ray's ``ray.wait``; the rule and the
wording are the rollout engine's, :mod:`gui_gym.runs.deadline`), :func:`fetch` reads one
finished call. A call that gave no result comes back as a :class:`WorkerFailure` in its
place (a hung one as a :class:`WorkerHung`), never raised: the pool and the episode
collector restart that worker (:class:`WorkerRestartWarning`) and go on.
"""

from __future__ import annotations

from typing import Any

from gui_gym.runs.deadline import EnvFailure, EnvHung, hung_message

__all__ = ["WorkerFailure", "WorkerHung", "WorkerRestartWarning", "fetch", "gather"]


class WorkerRestartWarning(RuntimeWarning):
    """An env worker died, hung or raised and was replaced by a fresh one."""


class WorkerFailure(EnvFailure):
    """Why a remote call on a worker gave no result (dead, hung past the timeout, raised)."""


class WorkerHung(WorkerFailure, EnvHung):
    """A remote call on a worker ran past the step timeout (:func:`hung_message`)."""


def gather(refs: list[Any], timeout: float) -> list[Any]:
    """``ray.get`` of each ref, waiting at most ``timeout`` seconds for all of them together;
    a ref that failed or is not ready in time gives a :class:`WorkerFailure` in its place."""
    import ray

    if not refs:
        return []
    ready, _ = ray.wait(refs, num_returns=len(refs), timeout=timeout)
    ready_set = set(ready)
    out: list[Any] = []
    for ref in refs:
        if ref not in ready_set:
            out.append(WorkerHung(hung_message(timeout)))
        else:
            out.append(fetch(ref))
    return out


def fetch(ref: Any) -> Any:
    """The result of a finished ref, or a :class:`WorkerFailure` saying why there is none
    (the worker died, or the env raised)."""
    import ray

    try:
        return ray.get(ref)
    except ray.exceptions.RayActorError as err:
        return WorkerFailure(f"worker died ({type(err).__name__})")
    except ray.exceptions.RayTaskError as err:
        cause = err.cause if getattr(err, "cause", None) is not None else err
        return WorkerFailure(f"env raised {type(cause).__name__}: {cause}")
