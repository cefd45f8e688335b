"""ALFWorld's PDDL planner run in a child process with a CPU-time and a memory bound.

TextWorld's planner (``fast-downward-textworld``'s ``replan``) is Fast Downward's lazy search
with only the ``g`` evaluator: a blind, breadth-first search whose cost grows with the states
within the plan's length (agent locations x opened receptacles x moved objects). On a few
generated games (two objects to place in a 40-receptacle kitchen) it ran for over 8 CPU-minutes
and 3 GB without finishing, and a C call cannot be interrupted from Python. :func:`bounded_plan`
runs the same search in a child process that loads only the planner library, under
``RLIMIT_CPU`` (CPU seconds, so the bound does not depend on how loaded the machine is) and
``RLIMIT_AS`` (the memory the search may add to the child's start-up footprint), with a
wall-clock backstop. The search is deterministic, so on a given install the same problem and
bound give the same answer.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from gui_gym.core.env import ExpertUnavailable

__all__ = [
    "PLANNER_CPU_S",
    "PLANNER_MEMORY_MB",
    "PlanResult",
    "PlannerLimitExceeded",
    "PlannerOverloaded",
    "bounded_plan",
    "default_limits",
]

PLANNER_CPU_S = 300.0
"""Default CPU seconds one planner run may use (``GUI_GYM_ALFWORLD_PLANNER_CPU_S``)."""
PLANNER_MEMORY_MB = 256
"""Default memory (MiB) one planner run may add (``GUI_GYM_ALFWORLD_PLANNER_MEMORY_MB``)."""


class PlannerLimitExceeded(ExpertUnavailable):
    """The planner used its CPU-time or memory bound without finding a plan."""


class PlannerOverloaded(ExpertUnavailable):
    """The planner did not use its CPU bound within the wall-clock backstop (the machine is
    overloaded, or the child was stopped): nothing can be said about the problem."""


@dataclass(frozen=True)
class PlanResult:
    operators: list[str]
    """The plan's ground operators (``gotolocation agent1 loc_a loc_b ...``); empty: no plan."""
    cpu_s: float
    """CPU seconds the child used (start-up included)."""
    peak_mb: float
    """The child's peak resident memory (MiB, ``VmHWM``; about 40 MiB is its start-up)."""


def default_limits() -> tuple[float, int]:
    """``(cpu_s, memory_mb)``: the defaults, or the environment's overrides."""
    cpu = float(os.environ.get("GUI_GYM_ALFWORLD_PLANNER_CPU_S") or PLANNER_CPU_S)
    mem = int(os.environ.get("GUI_GYM_ALFWORLD_PLANNER_MEMORY_MB") or PLANNER_MEMORY_MB)
    if not cpu > 0 or mem <= 0:
        raise ValueError(f"planner bounds must be positive, got cpu_s={cpu!r}, memory_mb={mem!r}")
    return cpu, mem


_CHILD = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a bound's signal writes no core file
from fast_downward.interface import Operator, load_lib
request = json.loads(sys.stdin.read())
lib = load_lib()
lib.load_sas(request["sas"].encode("utf-8"))
lib.load_sas_replan(request["sas_replan"].encode("utf-8"))
for op_id in request["applied"]:
    lib.apply_operator(op_id, None)
cpu = request["cpu_s"]
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 2))
with open("/proc/self/statm") as f:
    base = int(f.read().split()[0]) * resource.getpagesize()
limit = base + request["memory_mb"] * 1024 * 1024
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
found = lib.replan(False)
plan = []
if found:
    ops = (Operator * lib.get_last_plan_length())()
    lib.get_last_plan(ops)
    plan = [op.name for op in ops]
use = resource.getrusage(resource.RUSAGE_SELF)
reply = {"found": bool(found), "plan": plan, "cpu_s": use.ru_utime + use.ru_stime}
with open("/proc/self/status") as f:
    hwm = [line.split()[1] for line in f if line.startswith("VmHWM:")]
peak_mb = int(hwm[0]) / 1024 if hwm else use.ru_maxrss / 1024
sys.stdout.write(json.dumps({**reply, "peak_mb": peak_mb}))
"""


def bounded_plan(
    sas: str,
    sas_replan: str,
    applied: Sequence[int] = (),
    cpu_s: float | None = None,
    memory_mb: int | None = None,
    wall_s: float | None = None,
) -> PlanResult:
    """The planner's operators from the state reached by ``applied`` (operator ids of
    ``sas``, in order) to the goal, found within ``cpu_s`` CPU seconds and ``memory_mb`` MiB
    of added memory (defaults: :func:`default_limits`).

    Raises:
        PlannerLimitExceeded: the search hit a bound (a problem too big for the blind planner).
        PlannerOverloaded: the wall-clock backstop (default ``10 * cpu_s + 60`` s) passed first.
    """
    default_cpu, default_mem = default_limits()
    cpu_s = default_cpu if cpu_s is None else cpu_s
    memory_mb = default_mem if memory_mb is None else memory_mb
    if not cpu_s > 0 or memory_mb <= 0:
        raise ValueError(f"bounds must be positive, got cpu_s={cpu_s!r}, memory_mb={memory_mb!r}")
    wall_s = 10 * cpu_s + 60 if wall_s is None else wall_s
    request = {
        "sas": sas,
        "sas_replan": sas_replan,
        "applied": [int(i) for i in applied],
        "cpu_s": max(1, math.ceil(cpu_s)),
        "memory_mb": int(memory_mb),
    }
    before = os.times()
    proc = subprocess.Popen(
        # -P: the child's sys.path does not start with the working directory, so a json.py
        # or fast_downward/ there is not imported in its place (issue 46)
        [sys.executable, "-P", "-c", _CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(json.dumps(request), timeout=wall_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise PlannerOverloaded(
            f"the planner did not finish or use its {cpu_s:g} CPU s within {wall_s:g} s of "
            "wall time (machine overloaded?); retry on a less loaded machine"
        ) from None
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    if proc.returncode == 0:
        try:
            reply = json.loads(out)
            plan = list(reply["plan"]) if reply["found"] else []
            return PlanResult(plan, float(reply["cpu_s"]), float(reply["peak_mb"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise RuntimeError(f"the planner's reply could not be read: {out[-200:]!r}") from exc
    hit = proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL) or (
        "bad_alloc" in err or "MemoryError" in err or proc.returncode == -signal.SIGABRT
    )
    if hit:
        what = "CPU time" if proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL) else "memory"
        raise PlannerLimitExceeded(
            f"the planner hit its {what} bound ({cpu_s:g} CPU s, {memory_mb} MiB) "
            f"after {cpu:.1f} CPU s without a plan"
        )
    raise RuntimeError(f"the planner failed (exit {proc.returncode}): {err.strip()[-300:]}")
