"""How a MiniWoB++ drag moves the pointer, shared by the env (which performs drags) and the
experts (which plan them), so an expert's planned path is the one the env moves.

It sits below both :mod:`gui_gym.envs.miniwob.env` and :mod:`gui_gym.envs.miniwob.oracles`:
the env loads the experts, so the experts read this, never the env.
"""

from __future__ import annotations

__all__ = ["DRAG_STEPS"]

DRAG_STEPS = 4
"""Intermediate pointer moves of a drag: jQuery UI's draggables and sortables only notice a
drag that moves the mouse after the press, as a hand does."""
