"""The one checkpoint format of gui-gym's trainers: a folder of safetensors and JSON, never
pickle, written atomically (:func:`gui_gym.core.files.write_folder_atomically`).

A checkpoint holds the trainable weights, the optimizer's state (per-parameter tensors as
safetensors, param groups and scalars as JSON, so AdamW's moments and step counts resume
exactly), torch's random streams and a JSON trainer state. The RL trainers, SFT, the PRM
trainer and the progress-model trainer all write and read it through this module.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gui_gym.core.files import write_folder_atomically
from gui_gym.core.trajectory import dumps_json, errors_naming

__all__ = [
    "CHECKPOINT_FILES",
    "check_finite",
    "check_state",
    "load_optimizer_state",
    "process_rng_streams",
    "read_checkpoint",
    "restore_process_rng",
    "restore_torch_rng",
    "rng_stream_tensors",
    "save_optimizer_state",
    "torch_rng_tensors",
    "write_checkpoint",
]


CHECKPOINT_FILES = (
    "weights.safetensors",
    "optimizer.safetensors",
    "optimizer.json",
    "rng.safetensors",
    "trainer_state.json",
)
"""The one checkpoint format of gui-gym's trainers (the RL core and SFT): trainable weights,
the optimizer (:func:`save_optimizer_state`), torch's random streams, and a JSON
state; safetensors and JSON only, never pickle."""


def torch_rng_tensors(prefix: str = "") -> dict[str, Any]:
    """This process's torch random streams as uint8 tensors: ``{prefix}torch_cpu`` and
    ``{prefix}torch_cuda_<i>`` for each visible GPU."""
    import torch

    rng = {f"{prefix}torch_cpu": torch.get_rng_state()}
    if torch.cuda.is_available():
        for i, state in enumerate(torch.cuda.get_rng_state_all()):
            rng[f"{prefix}torch_cuda_{i}"] = state
    return rng


def restore_torch_rng(rng: dict[str, Any], prefix: str = "") -> None:
    """Inverse of :func:`torch_rng_tensors` (GPU streams only where GPUs are visible)."""
    import torch

    torch.set_rng_state(rng[f"{prefix}torch_cpu"])
    cuda = sorted(
        (k for k in rng if k.startswith(f"{prefix}torch_cuda_")),
        key=lambda k: int(k.rsplit("_", 1)[1]),
    )
    if cuda and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([rng[k] for k in cuda])


def process_rng_streams() -> dict[str, Any]:
    """This process's random streams, JSON-safe: torch's CPU stream (``torch_cpu``) and each
    visible GPU's (``torch_cuda``) as lists of bytes, Python's ``random``
    (``python_random``) and numpy's global generator (``numpy_random``). A data-parallel
    trainer gathers one from every process; the main process writes the torch streams with
    :func:`rng_stream_tensors` and the others into its JSON state."""
    import torch

    python_state = random.getstate()
    name, keys, pos, has_gauss, gauss = np.random.get_state()
    state: dict[str, Any] = {
        "torch_cpu": torch.get_rng_state().tolist(),
        "python_random": [python_state[0], list(python_state[1]), python_state[2]],
        "numpy_random": [name, keys.tolist(), int(pos), int(has_gauss), float(gauss)],
    }
    if torch.cuda.is_available():
        state["torch_cuda"] = [s.tolist() for s in torch.cuda.get_rng_state_all()]
    return state


def rng_stream_tensors(streams: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The torch streams of one :func:`process_rng_streams` record per rank as the uint8
    tensors of ``rng.safetensors``: rank 0's under the one-process names of
    :func:`torch_rng_tensors`, rank ``r``'s prefixed ``rank{r}.``."""
    import torch

    rng = {}
    for rank, stream in enumerate(streams):
        prefix = f"rank{rank}." if rank else ""
        rng[f"{prefix}torch_cpu"] = torch.tensor(stream["torch_cpu"], dtype=torch.uint8)
        for i, cuda in enumerate(stream.get("torch_cuda", [])):
            rng[f"{prefix}torch_cuda_{i}"] = torch.tensor(cuda, dtype=torch.uint8)
    return rng


def restore_process_rng(
    rng: dict[str, Any], prefix: str, python_random: list[Any], numpy_random: list[Any]
) -> None:
    """Inverse of :func:`process_rng_streams` for this process: its torch streams from the
    ``rng`` tensors under ``prefix`` (:func:`restore_torch_rng`), Python's and numpy's from
    their JSON lists."""
    restore_torch_rng(rng, prefix)
    version, internal, gauss = python_random
    random.setstate((version, tuple(internal), gauss))
    np.random.set_state(tuple(numpy_random))  # type: ignore[arg-type]


def write_checkpoint(
    path: str | Path,
    *,
    weights: dict[str, Any],
    optimizer: Any,
    state: dict[str, Any],
    rng: dict[str, Any],
) -> None:
    """Write a checkpoint folder (:data:`CHECKPOINT_FILES`) atomically: built beside ``path``
    and renamed into place, so a run killed mid-write leaves the previous checkpoint.

    Args:
        path: The folder.
        weights: Trainable tensors by name (``policy.<parameter>``, ``critic.<parameter>``).
        optimizer: A torch optimizer.
        state: JSON-safe progress (iteration or epoch, counters, schedule, history).
        rng: Random streams as tensors (:func:`torch_rng_tensors`).
    """
    from safetensors.torch import save_file

    def write(folder: Path) -> None:
        save_file(weights, str(folder / "weights.safetensors"))
        save_optimizer_state(optimizer, folder)
        save_file(rng, str(folder / "rng.safetensors"))
        (folder / "trainer_state.json").write_text(dumps_json(state, indent=1) + "\n")

    write_folder_atomically(path, write)


def read_checkpoint(path: str | Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """``(state, weights, rng)`` of a :func:`write_checkpoint` folder; the optimizer is
    restored apart (:func:`load_optimizer_state`), once it
    exists.

    Raises:
        ValueError: naming the file, for a missing, truncated or malformed one.
    """
    from safetensors.torch import load_file

    path = Path(path)
    for name in CHECKPOINT_FILES:
        if not (path / name).is_file():
            raise ValueError(
                f"checkpoint {path} has no {name} (not a gui-gym checkpoint, or one written by"
                " an older version); remove it or choose another --out"
            )
    with errors_naming(path / "trainer_state.json"):
        state = json.loads((path / "trainer_state.json").read_text())
    check_state(path / "trainer_state.json", state)
    with errors_naming(path / "weights.safetensors"):
        weights = load_file(str(path / "weights.safetensors"))
    check_finite(path / "weights.safetensors", weights)
    with errors_naming(path / "rng.safetensors"):
        rng = load_file(str(path / "rng.safetensors"))
    return state, weights, rng


# progress counters a checkpoint's trainer_state.json may hold: non-negative integers
_COUNTERS = ("iteration", "epoch", "batch", "updates", "global_step", "world_size")


def check_state(file: Path, state: Any) -> None:
    """Refuse a ``trainer_state.json`` whose progress fields have the wrong type or range
    (``iteration`` 1.5, ``batch`` -3, ``history`` "oops"), naming the file and field.

    Raises:
        ValueError: ``FILE: field 'NAME' must be ...``.
    """
    if not isinstance(state, dict):
        raise ValueError(f"{file}: must be a JSON object, got {type(state).__name__}")
    for key in _COUNTERS:
        if key not in state:
            continue
        value = state[key]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 10**9:
            raise ValueError(
                f"{file}: field {key!r} must be a whole number from 0 to 10^9, got {value!r}"
            )
    for key in ("history", "ranks"):
        if key in state and not isinstance(state[key], list):
            raise ValueError(f"{file}: field {key!r} must be a list, got {state[key]!r:.60}")
    for key in ("scheduler", "algorithm_state"):
        if key in state and not isinstance(state[key], dict):
            raise ValueError(f"{file}: field {key!r} must be an object, got {state[key]!r:.60}")


def check_progress(file: Path, state: dict[str, Any], **limits: int) -> None:
    """Refuse progress counters past what this run can reach (``epoch`` 10^6 of a 2-epoch
    run would skip training and write an untrained model as done).

    Args:
        file: The ``trainer_state.json`` named in the error.
        state: Its fields (already through :func:`check_state`).
        limits: Field name -> its largest valid value for this run.

    Raises:
        ValueError: ``FILE: field 'NAME' is N, past this run's M``.
    """
    for key, limit in limits.items():
        value = state.get(key, 0)
        if value > limit:
            raise ValueError(
                f"{file}: field {key!r} is {value}, past this run's {limit} (corrupt, or "
                "another run's checkpoint)"
            )


def check_finite(file: Path, tensors: dict[str, Any], like: dict[str, Any] | None = None) -> None:
    """Refuse NaN or infinite values in a checkpoint's tensors (4 KB of ``0xff`` read as
    floats are NaN), and, given ``like`` (name -> the tensor it restores), a wrong shape.

    Raises:
        ValueError: naming the file and the tensor.
    """
    import torch

    for name, tensor in tensors.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise ValueError(f"{file}: tensor {name!r} holds NaN or infinite values (corrupt)")
        target = (like or {}).get(name)
        if target is not None and tuple(tensor.shape) != tuple(target.shape):
            raise ValueError(
                f"{file}: tensor {name!r} has shape {tuple(tensor.shape)}, the model's is "
                f"{tuple(target.shape)}"
            )


def save_optimizer_state(optimizer: Any, folder: Path) -> None:
    """Write ``optimizer.safetensors`` (per-parameter tensors) and ``optimizer.json`` (param
    groups and scalar state) into ``folder``."""
    import torch
    from safetensors.torch import save_file

    state = optimizer.state_dict()
    tensors: dict[str, Any] = {}
    scalars: dict[str, Any] = {}
    for pid, values in state["state"].items():
        for key, value in values.items():
            if isinstance(value, torch.Tensor):
                tensors[f"{pid}.{key}"] = value.detach().cpu().contiguous()
            else:
                scalars[f"{pid}.{key}"] = value
    save_file(tensors, str(folder / "optimizer.safetensors"))
    (folder / "optimizer.json").write_text(
        json.dumps({"param_groups": state["param_groups"], "scalars": scalars})
    )


def load_optimizer_state(optimizer: Any, folder: Path) -> None:
    """Inverse of :func:`save_optimizer_state`.

    Raises:
        ValueError: naming the file, for a truncated or malformed one.
    """
    from safetensors.torch import load_file

    file = folder / "optimizer.json"
    with errors_naming(folder / "optimizer.safetensors"):
        tensors = load_file(str(folder / "optimizer.safetensors"))
    check_finite(folder / "optimizer.safetensors", tensors)
    with errors_naming(file):
        meta = json.loads(file.read_text())
    if not isinstance(meta, dict):
        raise ValueError(f"{file}: must be a JSON object, got {type(meta).__name__}")
    if not isinstance(meta.get("scalars"), dict):
        raise ValueError(
            f"{file}: field 'scalars' must be an object, got {meta.get('scalars')!r:.60}"
        )
    groups = meta.get("param_groups")
    if not isinstance(groups, list) or len(groups) != len(optimizer.param_groups):
        raise ValueError(
            f"{file}: field 'param_groups' must be a list of {len(optimizer.param_groups)} "
            f"group(s), got {groups!r:.60}"
        )
    params = [p for group in optimizer.param_groups for p in group["params"]]
    per_param: dict[int, dict[str, Any]] = {}
    for source, items in ((folder / "optimizer.safetensors", tensors), (file, meta["scalars"])):
        for name, value in items.items():
            pid, _, key = name.partition(".")
            if not pid.isdigit() or not key or int(pid) >= len(params):
                raise ValueError(f"{source}: entry {name!r} names no parameter of the model")
            shape = getattr(value, "shape", None)
            if (
                shape is not None
                and len(shape) > 0
                and tuple(shape) != tuple(params[int(pid)].shape)
            ):
                raise ValueError(
                    f"{source}: tensor {name!r} has shape {tuple(shape)}, its parameter's is "
                    f"{tuple(params[int(pid)].shape)}"
                )
            per_param.setdefault(int(pid), {})[key] = value
    with errors_naming(file):
        optimizer.load_state_dict({"state": per_param, "param_groups": groups})
