"""A uniform random policy over the actions that make sense on the current screen."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from gui_gym.core.actions import Action, ActionType

__all__ = ["RandomAgent"]


class RandomAgent:
    """Picks uniformly among ``env.unwrapped.candidate_actions()``: clicks on clickable
    elements, typing the task's vocabulary into text fields, scrolling where content
    continues, and going back. It never answers or declares DONE, so it cannot end an
    episode early; QA tasks are out of its reach by design.

    Args:
        env: The env it acts in (read for the candidate list only).
        seed: Seed of its own generator.
    """

    name = "random"

    def __init__(self, env: gym.Env, seed: int | None = None, done_prob: float = 0.0):
        if not 0.0 <= done_prob <= 1.0:
            raise ValueError(f"done_prob must be in [0, 1], got {done_prob!r}")
        self.done_prob = float(done_prob)
        self._env = env.unwrapped
        if not hasattr(self._env, "candidate_actions"):
            raise TypeError(
                f"{type(self._env).__name__} has no candidate_actions(); is it a GuiEnv?"
            )
        self.rng = np.random.default_rng(seed)

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        pass

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        if self.done_prob and self.rng.random() < self.done_prob:
            return Action(ActionType.DONE)
        candidates = self._env.candidate_actions()
        return candidates[int(self.rng.integers(len(candidates)))]
