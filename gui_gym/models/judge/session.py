"""How ProRe's agents meet an env: the policy's trace recorded from its steps, and the
evaluator's :class:`ProbeSession` on a fork of the final state.

The evaluator acts through a :class:`ProbeSession`: a fork of the policy's env
(``env.unwrapped.fork()``) seen only through its screens, acted on with
:meth:`GuiEnv.apply_action <gui_gym.core.env.GuiEnv.apply_action>`, which applies an action
as ``step()`` does but outside the episode's bookkeeping (the policy's episode has already
ended; a probe is not part of it). The session never exposes the task, its state or its
success check, and the policy's env is never touched.
"""

from __future__ import annotations

from typing import Any

from gui_gym.core.actions import (
    Action,
    ActionType,
    describe,
    try_parse_action,
)
from gui_gym.core.env import GuiEnv
from gui_gym.core.ui import UITree
from gui_gym.models.judge.types import ProbeBudgetExhausted, Trace, TraceStep

__all__ = ["PolicyTraceRecorder", "ProbeSession", "env_screenshot"]


def _target_label(action: Action | None, screen: UITree | None) -> str:
    if action is None or screen is None or action.index is None:
        return ""
    if 0 <= action.index < len(screen.elements):
        e = screen.elements[action.index]
        return e.label or e.resource_id
    return ""


def env_screenshot(env: Any) -> Any:
    """The screenshot of ``env``'s current screen when it makes screenshots
    (``screenshot=True``), else None."""
    if not getattr(env, "screenshot", False):
        return None
    return env.current_screenshot()


class PolicyTraceRecorder:
    """Builds the policy's :class:`Trace` from an env's steps (used by the wrapper and by
    :class:`~gui_gym.agents.BestOfTrialsAgent`). It reads screens and the public info keys
    only (``action``, ``action_description``, ``action_valid``, ``action_error``), and each
    screen's screenshot when the caller passes the observation's (an env made with
    ``screenshot=True``)."""

    def __init__(self) -> None:
        self.trace: Trace | None = None

    def start(self, env: GuiEnv, instruction: str, screenshot: Any = None) -> Trace:
        """Begin a trace at the env's current (first) screen (``screenshot``: the reset
        observation's, if any)."""
        self.trace = Trace(
            role="policy",
            goal=instruction,
            completion_required=not bool(getattr(env, "score_unfinished", True)),
        )
        self.trace.add_screen(env.ui_tree, screenshot)
        return self.trace

    def record(
        self, env: GuiEnv, info: dict[str, Any], terminated: bool, screenshot: Any = None
    ) -> None:
        """Append the step just taken (``info`` from ``env.step``; ``screenshot``: the step's
        observation's, if any)."""
        trace = self.trace
        if trace is None:
            raise RuntimeError("PolicyTraceRecorder.record() before start()")
        action_text = str(info.get("action", ""))
        valid = bool(info.get("action_valid", False))
        step = TraceStep(
            action=action_text,
            description=str(info.get("action_description", "")),
            valid=valid,
            error=info.get("action_error"),
        )
        parsed = step.parsed if valid else None
        step = TraceStep(
            step.action,
            step.description,
            step.valid,
            step.error,
            _target_label(parsed, trace.screens[-1]),
        )
        trace.steps.append(step)
        trace.add_screen(env.ui_tree, screenshot)
        if parsed is not None and parsed.type is ActionType.ANSWER:
            trace.answer = parsed.text or ""
        trace.declared_done = bool(terminated and parsed is not None and parsed.is_terminal)


# ------------------------------------------------------------------------- probe session


class ProbeSession:
    """The evaluator's handle on one fork of the final state: screens in, actions out.

    It exposes the current :class:`UITree` and a :meth:`step` that acts on the fork and
    records the step in :attr:`trace`; nothing about the task, its state or its success
    check is reachable from here (the scripted evaluator relies on this to see only the UI).

    Each action goes to the fork through :meth:`GuiEnv.apply_action
    <gui_gym.core.env.GuiEnv.apply_action>`, not ``step()``: it changes the app exactly as a
    step would, but no step is counted and no reward, milestone, outcome or truncation is
    computed, since the policy's episode has ended and a probe must not count as episode
    steps, reach milestones, end the episode on success (WikiHow ends episodes when the goal
    holds) or be scored. The screen is then read back from ``env.ui_tree``. An action that
    does not parse or that the env refuses is recorded as refused and changes nothing.
    ``DONE``/``ANSWER`` are checked but change nothing in the app; they end the probe.

    Args:
        env: A fork (``env.unwrapped.fork()``) of the policy's env at its final state.
        goal: The probing goal this session serves.
        max_steps: Step budget of the probe.
        screenshots: Keep each screen's screenshot in the trace when the env makes them
            (``env.current_screenshot()`` after every action); False keeps UI trees only.
    """

    def __init__(self, env: GuiEnv, goal: str, max_steps: int, screenshots: bool = True):
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps!r}")
        self._env = env
        self.max_steps = int(max_steps)
        self.screenshots = bool(screenshots)
        self.trace = Trace(role="evaluator", goal=goal)
        self.trace.add_screen(self._read_screen(), self._read_screenshot())
        self.finished = False

    def _read_screen(self) -> UITree:
        return self._env.ui_tree  # apply_action refreshes it after every applied action

    def _read_screenshot(self) -> Any:
        return env_screenshot(self._env) if self.screenshots else None

    @property
    def goal(self) -> str:
        return self.trace.goal

    def begin(self, sub_goal: str) -> None:
        """Start the next sequential sub-goal of this probe (ProRe Sec. 3.3): the evaluator
        goes on from the current screen with the budget left; an earlier ``DONE`` or
        ``ANSWER`` ended only the earlier sub-goal."""
        self.trace.segments.append((len(self.trace.steps), sub_goal))
        self.finished = False

    @property
    def screen(self) -> UITree:
        """The screen the evaluator sees now."""
        return self.trace.screens[-1]

    @property
    def steps_left(self) -> int:
        return 0 if self.finished else self.max_steps - len(self.trace.steps)

    def step(self, action: str | Action) -> TraceStep:
        """Perform ``action`` on the fork and record it.

        A malformed or impossible action is recorded as refused and changes nothing, as in
        ``GuiEnv.step``. ``DONE()`` and ``ANSWER(text)`` end the probe (the answer is kept in
        ``trace.answer``).

        Raises:
            ProbeBudgetExhausted: when the probe has no steps left or has ended.
        """
        if self.steps_left <= 0:
            raise ProbeBudgetExhausted(f"the probe has used its {self.max_steps} steps")
        screen = self.screen
        env = self._env
        parsed, error = try_parse_action(action)
        if parsed is not None:
            error = env.apply_action(parsed)
        if parsed is not None:
            text = str(parsed)
            description = describe(parsed, screen)
        else:
            text = action if isinstance(action, str) else repr(action)
            description = "invalid action"
        record = TraceStep(text, description, error is None, error, _target_label(parsed, screen))
        self.trace.steps.append(record)
        if error is None:
            self.trace.add_screen(self._read_screen(), self._read_screenshot())
        else:  # refused: nothing changed, the screen (and its screenshot) stay
            shot = self.trace.screenshots[-1] if self.trace.has_screenshots else None
            self.trace.add_screen(screen, shot)
        if error is None and parsed is not None and parsed.is_terminal:
            self.finished = True
            self.trace.declared_done = True
            if parsed.type is ActionType.ANSWER:
                self.trace.answer = parsed.text or ""
        return record
