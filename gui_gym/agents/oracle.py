"""The task's scripted expert as an agent."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from gui_gym.core.actions import Action

__all__ = ["OracleAgent", "ScreenshotOracleAgent"]


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


class ScreenshotOracleAgent:
    """The task's expert acting as a screenshot-only policy must: by screen coordinates.

    Each step takes the expert's action (``oracle_action()``) and writes what a policy that
    sees only pixels would: an action on element ``i`` becomes the same action at the centre
    of ``i``'s bounds (``CLICK(i)`` -> ``CLICK_XY(x, y)``, ``LONG_CLICK`` and ``DOUBLE_CLICK``
    likewise, ``SCROLL(d, i)`` -> ``SCROLL(d, x, y)``, a swipe from the centre), and ``INPUT(i, "text")`` becomes a click on
    ``i`` (unless it already has the focus) followed by ``TYPE("text")`` into the focused
    field at the next step. Actions that name no element (``GOBACK()``, ``OPEN_APP``,
    ``ANSWER``, ``KEY``, ...) pass as they are. Coordinates are the screen's pixels, as every
    recorded action is: a policy that answers in another image space maps them at its model
    boundary (``LLMAgent(coordinates=...)`` for its outputs and its SFT targets). Recorded
    with ``--screenshots``, these trajectories are SFT data for a screenshot-only policy
    (``--agent oracle-xy``). The expert reads the UI tree; its actions do not need one.

    Args:
        env: The env it acts in (a ``GuiEnv``: it needs ``ui_tree``).

    Raises:
        TypeError: for an env without ``oracle_action()`` or ``ui_tree``.
    """

    name = "oracle-xy"

    def __init__(self, env: gym.Env):
        self._env = env.unwrapped
        for needed in ("oracle_action", "ui_tree"):
            if not hasattr(type(self._env), needed):
                raise TypeError(f"{type(self._env).__name__} has no {needed}; is it a GuiEnv?")

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        pass

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        from dataclasses import replace

        from gui_gym.core.actions import ActionType, parse_action

        action = parse_action(self._env.oracle_action())
        if action.index is None or action.x is not None:
            return action
        tree = self._env.ui_tree
        if action.index >= len(tree.elements):
            return action
        element = tree.elements[action.index]
        if action.type is ActionType.INPUT:
            if element.focused:
                return replace(action, index=None)  # TYPE("text") into the focused field
            action = Action(ActionType.CLICK)
        if action.type not in (
            ActionType.CLICK,
            ActionType.LONG_CLICK,
            ActionType.DOUBLE_CLICK,
            ActionType.SCROLL,
        ):
            return self._env.oracle_action()  # no pixel form (DRAG, SELECT): as the expert
        x, y = element.center
        return replace(action, index=None, x=x, y=y)
