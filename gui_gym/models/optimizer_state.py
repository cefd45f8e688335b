"""An optimizer's state on disk as safetensors (tensors) plus JSON (the rest): no pickle.

One format for every trainer that checkpoints an optimizer (the PRM's SFT loop in
``models/prm_training.py`` and the RL trainers' shared core in ``train/core.py``), so a
resumed run restores AdamW's moments and step counts exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gui_gym.core.trajectory import errors_naming

__all__ = ["load_optimizer_state", "save_optimizer_state"]


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

    with errors_naming(folder / "optimizer.safetensors"):
        tensors = load_file(str(folder / "optimizer.safetensors"))
    with errors_naming(folder / "optimizer.json"):
        meta = json.loads((folder / "optimizer.json").read_text())
    per_param: dict[int, dict[str, Any]] = {}
    for name, value in [*tensors.items(), *meta["scalars"].items()]:
        pid, key = name.split(".", 1)
        per_param.setdefault(int(pid), {})[key] = value
    optimizer.load_state_dict({"state": per_param, "param_groups": meta["param_groups"]})
