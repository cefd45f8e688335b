"""One episode as a process reward model sees it: what a step's :class:`~gui_gym.rewards.prm.
PRMQuery` is built from (GUI-Shepherd Sec. 4.1: the instruction, the state the action is
chosen on, the action, and the descriptions of the earlier actions).

:class:`PRMContext` is plain data kept beside a rollout: it starts from the reset
observation, turns each action into a query, and moves on past each step (the step's
description joins the history when the env accepted the action). The PRM wrappers
(:mod:`gui_gym.wrappers.prm`) keep one per env; no Gymnasium, no model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gui_gym.rewards.prm import PRMQuery

__all__ = ["PRMContext", "copy_screenshot"]


def copy_screenshot(observation: dict[str, Any]) -> Any:
    """The observation's screenshot as a uint8 array of its own (None when it has none): an
    async vector env hands out live views of shared memory."""
    shot = observation.get("screenshot")
    return None if shot is None else np.array(shot, dtype=np.uint8)


@dataclass
class PRMContext:
    """One env's episode as the PRM sees it: the instruction and the screen the next action
    is chosen on, the descriptions of the earlier valid actions, and the step number. Text
    is copied in (``str``): async vector envs hand out live views of shared memory."""

    instruction: str = ""
    screen: str = ""
    history: list[str] = field(default_factory=list)
    step: int = 0
    screenshot: Any = None  # a copy, for a vision-language PRM

    @classmethod
    def start(cls, observation: dict[str, Any], info: dict[str, Any]) -> PRMContext:
        """The context of an episode's first step, from its reset observation and info."""
        return cls(
            str(observation.get("instruction", "")),
            str(observation.get("screen", "")),
            step=int(info.get("step", 0)),
            screenshot=copy_screenshot(observation),
        )

    def query(self, action: str, description: str, history_length: int) -> PRMQuery:
        """The query for ``action`` taken now, showing the last ``history_length``
        descriptions (none for 0)."""
        history = self.history[-history_length:] if history_length else []
        return PRMQuery(
            instruction=self.instruction,
            screen=self.screen,
            action=action,
            action_description=description,
            history=tuple(history),
            step=self.step,
            screenshot=self.screenshot,
        )

    def advance(self, observation: dict[str, Any], info: dict[str, Any], valid: bool) -> None:
        """Move on past a step: its description joins the history when it was valid."""
        if valid:
            self.history.append(str(info.get("action_description", "")))
        self.instruction = str(observation.get("instruction", ""))
        self.screen = str(observation.get("screen", ""))
        self.step = int(info.get("step", self.step + 1))
        self.screenshot = copy_screenshot(observation)
