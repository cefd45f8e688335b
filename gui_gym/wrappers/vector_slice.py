"""What the vector wrappers read of one sub-env: its entries of a batched observation or
info dict, its action, and the vector env's autoreset mode. One place, so the PRM, progress
and milestone vector wrappers slice alike and score each sub-env as their single-env twins
do."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

__all__ = ["action_slice", "autoreset_mode", "env_slice"]


def env_slice(batched: dict[str, Any], i: int) -> dict[str, Any]:
    """Sub-env ``i``'s entries of a vector env's observation or info dict: nested dicts
    sliced too, NumPy scalars as Python values, and keys whose Gymnasium ``_key`` mask is
    False for ``i`` left out (that sub-env did not report them)."""
    out: dict[str, Any] = {}
    for key, value in batched.items():
        if key.startswith("_"):
            continue
        mask = batched.get(f"_{key}")
        if mask is not None and not mask[i]:
            continue
        if isinstance(value, dict):
            out[key] = env_slice(value, i)
        else:
            item = value[i]
            out[key] = item.item() if isinstance(item, np.generic) else item
    return out


def action_slice(actions: Any, i: int) -> Any:
    """Sub-env ``i``'s action of a batch: ``actions[i]``, or of a dict of batched actions
    the dict of their ``i``-th entries."""
    if isinstance(actions, dict):
        return {key: value[i] for key, value in actions.items()}
    return actions[i]


def autoreset_mode(env: gym.vector.VectorEnv) -> gym.vector.AutoresetMode:
    """The vector env's autoreset mode (Gymnasium's default ``NEXT_STEP`` when it does not
    say), as the enum even where the metadata holds its string value."""
    mode = env.metadata.get("autoreset_mode", gym.vector.AutoresetMode.NEXT_STEP)
    return gym.vector.AutoresetMode(mode) if isinstance(mode, str) else mode
