"""Which float precision gui-gym computes in: the one place that decides bf16 or fp32.

``dtype="auto"`` (every trainer's and :class:`~gui_gym.models.llm.TransformersLLM`'s
default) means bf16 where the hardware computes it natively (a CUDA GPU with bf16, or a CPU
with AMX-BF16 or AVX512-BF16) and fp32 elsewhere. On a CPU without native bf16, torch
emulates bf16 matrix products at a fraction of fp32's speed: asking for ``bfloat16`` there is
allowed (results are the same as on a native CPU) with one warning that it will be slow.

:func:`native_bf16` reads ``/proc/cpuinfo`` on Linux (torch's own CPU checks elsewhere);
``GUI_GYM_NATIVE_BF16=1`` or ``0`` overrides it (tests use it to take either path on any
machine).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
from typing import Any

logger = logging.getLogger(__name__)

__all__ = [
    "DTYPES",
    "autocast",
    "bf16_available",
    "check_dtype",
    "native_bf16",
    "resolve_dtype",
    "torch_dtype",
]

#: The values every ``dtype`` setting and ``--dtype`` option take.
DTYPES = ("auto", "float32", "bfloat16")
_CPU_FLAGS = ("amx_bf16", "avx512_bf16")
_warned: set[str] = set()


@functools.cache
def _cpu_has_bf16() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return any(flag in flags for flag in _CPU_FLAGS)
    except OSError:
        pass
    try:  # not Linux: torch's own checks (private, hence the guard)
        import torch

        checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
        return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in checks)
    except Exception:  # no torch, or a torch without the checks: no bf16
        return False


def native_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AMX-BF16 or AVX512-BF16), or what
    ``GUI_GYM_NATIVE_BF16`` (``1``/``0``) says."""
    override = os.environ.get("GUI_GYM_NATIVE_BF16", "").strip().lower()
    if override in ("1", "true", "yes"):
        return True
    if override in ("0", "false", "no"):
        return False
    return _cpu_has_bf16()


def bf16_available(device: str) -> bool:
    """Whether ``device`` (``cpu``, ``cuda``, ``cuda:1``...) computes bf16 natively."""
    if str(device).startswith("cuda"):
        import torch

        return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    if str(device) == "cpu" or str(device).startswith("cpu:"):
        return native_bf16()
    return False


def check_dtype(name: str) -> str:
    """``name`` if it is one of :data:`DTYPES`.

    Raises:
        ValueError: otherwise, naming the allowed values.
    """
    if name not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {name!r}")
    return name


def resolve_dtype(name: str, device: str) -> str:
    """``"bfloat16"`` or ``"float32"``: what ``name`` (one of :data:`DTYPES`) means on
    ``device``. ``bfloat16`` on a CPU without native bf16 logs one warning (once per
    process) that it will be slow."""
    check_dtype(name)
    if name == "auto":
        return "bfloat16" if bf16_available(device) else "float32"
    cpu = str(device).startswith("cpu")
    if name == "bfloat16" and cpu and not native_bf16() and "cpu" not in _warned:
        _warned.add("cpu")
        logger.warning(
            "bfloat16 on a CPU without AMX-BF16 or AVX512-BF16: torch emulates it, several "
            "times slower than float32 (use --dtype float32 or auto)"
        )
    return name


def torch_dtype(name: str) -> Any:
    """The torch dtype of ``"bfloat16"``/``"float32"``."""
    import torch

    return {"bfloat16": torch.bfloat16, "float32": torch.float32}[name]


def autocast(device: str, enabled: bool) -> Any:
    """bf16 autocast on ``device``'s type when ``enabled``, else a no-op context. Forward
    passes run their matrix products in bf16 over fp32 weights (the weights, their gradients
    and the optimizer state stay fp32)."""
    if not enabled:
        return contextlib.nullcontext()
    import torch

    kind = "cuda" if str(device).startswith("cuda") else "cpu"
    return torch.autocast(kind, dtype=torch.bfloat16)
