"""The task's scripted expert as an agent."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from gui_gym.core.actions import Action

__all__ = ["OracleAgent"]


class OracleAgent:
    """Acts with ``env.unwrapped.oracle_action()``: the task's scripted solver, which reads the
    true app state (as BrowserGym's ``cheat`` does). It proves every task solvable and is the
    expert for recorded datasets and PRM labels.

    Args:
        env: The env it acts in.
    """

    name = "oracle"

    def __init__(self, env: gym.Env):
        self._env = env.unwrapped
        if not hasattr(self._env, "oracle_action"):
            raise TypeError(f"{type(self._env).__name__} has no oracle_action(); is it a GuiEnv?")

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        pass

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        return self._env.oracle_action()
