"""``GuiEnv``: the Gymnasium contract, implemented once for every benchmark.

A benchmark subclasses :class:`GuiEnv` (or :class:`~gui_gym.core.sim.SimGuiEnv` for simulated
apps) and supplies its backend through five hooks:

* ``_start(task, rng)``: put the backend in the task's initial state;
* ``_screen()``: the current :class:`~gui_gym.core.ui.UITree`;
* ``_execute(action, screen)``: perform an action; return an error message when it is
  impossible (the backend must then be unchanged), else None;
* ``_predicate_state()``: what task predicates read as ``state`` (app state, or facts
  collected from a real device);
* ``_fork_backend(clone)``: give ``clone`` an independent copy of the backend.

Everything else lives here, once: parsing and validating actions (a bad action never raises),
the step counter and ``max_steps`` truncation, milestone tracking, the outcome reward,
termination on DONE/ANSWER or on success, the info keys, seeding, rendering, ``fork()`` and
the candidate-action list used by random agents and policies that rank actions.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gui_gym.core.actions import (
    MAX_ACTION_LENGTH,
    Action,
    ActionParseError,
    ActionType,
    describe,
    parse_action,
    target_element,
    try_parse_action,
)
from gui_gym.core.actions import candidate_actions as screen_candidates
from gui_gym.core.predicates import PredicateContext
from gui_gym.core.spaces import UnicodeText
from gui_gym.core.task import Task, TaskSuite
from gui_gym.core.ui import UITree
from gui_gym.core.untrusted_text import without_lone_surrogates

__all__ = ["EnvChecker", "ExpertUnavailable", "GuiEnv", "InvalidAction"]

logger = logging.getLogger(__name__)


class EnvChecker(gym.wrappers.PassiveEnvChecker, gym.utils.RecordConstructorArgs):
    """Gymnasium's passive env checker, as every gui-gym id registers it (issue 46).

    Gymnasium's ``PassiveEnvChecker`` marks its first reset checked before running it, so
    when that reset raises (``reset(seed=-1)``, an unknown task) it keeps no reset data and
    the first step after the next, good, reset fails with ``TypeError: cannot unpack
    non-iterable NoneType object``: the env is broken for good. This one marks the reset
    checked only once it succeeded; its checks are Gymnasium's own. The ids register with
    ``disable_env_checker=True`` and this wrapper in their spec's ``additional_wrappers``,
    so ``gym.make`` applies it (outside ``OrderEnforcing``) and ``env.spec`` re-creates it.
    ``gym.make(id, disable_env_checker=False)`` adds Gymnasium's own checker as well (with
    its flaw), and ``disable_env_checker=True`` does not remove this one (it is part of the
    spec); ``gym.make(id).env`` is the env without it.
    """

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.wrappers.PassiveEnvChecker.__init__(self, env)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Gymnasium's checked first reset; a first reset that raises leaves it unchecked."""
        if self.checked_reset:
            return self.env.reset(seed=seed, options=options)
        from gymnasium.utils.passive_env_checker import env_reset_passive_checker

        result = env_reset_passive_checker(self.env, seed=seed, options=options)
        self.checked_reset = True
        self._previous_data = result
        return result

    spec = gym.Wrapper.spec  # not PassiveEnvChecker's, which asks make() for a second checker


class InvalidAction(Exception):
    """Raised by backends for an action that is impossible in the current state.

    The env turns it into ``info["action_valid"] = False`` with the message in
    ``info["action_error"]``; it never reaches the agent as an exception.
    """


class ExpertUnavailable(RuntimeError):
    """Raised by :meth:`GuiEnv.oracle_action` when the task's expert has no action from the
    current state within its bounds (ALFWorld's planner, off the expert's path).

    Code that judges by the expert (the rule-based PRM, PRM data collection) judges such a
    state without it; an oracle agent fails its episode.
    """


class GuiEnv(gym.Env[dict[str, Any], str]):
    """Base class of every gui-gym environment (see the module docstring for the hooks).

    Args:
        suite: The task suite episodes are drawn from.
        task: A task id to always use, or None to sample one per reset (seeded).
        split: ``train``, ``test`` or ``all``: the tasks sampled from when ``task`` is None.
        category: Restrict sampling to one category.
        screenshot: Add a ``screenshot`` image to observations.
        max_steps: Steps before the episode is truncated.
        render_mode: ``ansi`` (the rendered screen) or ``rgb_array`` (the screenshot).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    screen_size: ClassVar[tuple[int, int]] = (360, 720)
    """``(width, height)`` of screens and screenshots, in pixels."""
    end_on_success: ClassVar[bool] = False
    """Terminate as soon as the task's success predicate holds (WikiHow/Mobile-Env style)."""
    thread_safe: ClassVar[bool] = True
    """Whether envs of this class may step on separate threads at once (the rollout engine
    steps a batch's envs concurrently); False for process-wide state, and the engine then
    has them take turns."""
    score_unfinished: bool = True
    """Score the final state of a truncated episode. AndroidWorld's suite scores an episode
    the agent did not end itself (no ``status``/``answer`` before the step budget) as 0;
    envs that follow it set this False. ``info["final_state_score"]`` always carries the
    task's score of the last state, so both readings are available."""
    unsupported_actions: ClassVar[dict[ActionType, str]] = {
        ActionType.DRAG: "a web-page drag (MiniWoB++ has it)",
        ActionType.SELECT: "a web <select> option choice (MiniWoB++ has it)",
        ActionType.HOVER: "a mouse move without a click (MiniWoB++ has it)",
    }
    """Action types this backend has no counterpart for, with what they are: such an action
    is invalid (the step counts, nothing changes) and ``info["action_error"]`` says why."""
    modifier_clicks: ClassVar[bool] = False
    """Whether a CLICK may hold keys down (``CLICK(i, modifiers="ctrl")``): only backends with a
    real keyboard and mouse have it (MiniWoB++); elsewhere such a click is invalid, saying why."""
    max_instruction_length: ClassVar[int] = 4096
    max_screen_length: ClassVar[int] = 65536

    def __init__(
        self,
        suite: TaskSuite,
        *,
        task: str | None = None,
        split: str = "train",
        category: str | None = None,
        screenshot: bool = False,
        max_steps: int = 20,
        render_mode: str | None = None,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}"
            )
        if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive int, got {max_steps!r}")
        if not isinstance(screenshot, bool | np.bool_):
            raise TypeError(f"screenshot must be True or False, got {screenshot!r}")
        for name, value in (("task", task), ("split", split), ("category", category)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a string id (or None), got {value!r}")
        self.suite = suite
        self.render_mode = render_mode
        self.max_steps = max_steps
        self.screenshot = bool(screenshot)
        if task is not None:
            self._fixed_task: Task | None = suite[task]
            self._pool: list[Task] = [self._fixed_task]
        else:
            self._fixed_task = None
            self._pool = suite.select(split, category)
            if not self._pool:
                raise ValueError(
                    f"no tasks in suite {suite.name!r} for split={split!r}, category={category!r}"
                )
        self.split = split
        self.category = category

        obs_spaces: dict[str, spaces.Space[Any]] = {
            "instruction": UnicodeText(self.max_instruction_length),
            "screen": UnicodeText(self.max_screen_length),
        }
        if self.screenshot:
            width, height = self.screen_size
            obs_spaces["screenshot"] = spaces.Box(0, 255, (height, width, 3), np.uint8)
        self.observation_space = spaces.Dict(obs_spaces)
        self.action_space = UnicodeText(MAX_ACTION_LENGTH)

        self.task: Task | None = None
        self._steps = 0
        self._milestones: list[str] = []
        self._answer: str | None = None
        self._last_action: Action | None = None
        self._done = False
        self._warned_done = False
        self._task_reward = 0.0
        self._success = False
        self._screen_cache: UITree | None = None

    # ------------------------------------------------------------------------- backend hooks

    def _instantiate(self, task: Task, rng: np.random.Generator) -> Task:
        """Turn a suite entry into this episode's task (templates sample their parameters
        here, as AndroidWorld does); the default returns it unchanged."""
        return task

    def _start(self, task: Task, rng: np.random.Generator) -> None:
        raise NotImplementedError

    def _screen(self) -> UITree:
        raise NotImplementedError

    def _execute(self, action: Action, screen: UITree) -> str | None:
        raise NotImplementedError

    def _predicate_state(self) -> Any:
        raise NotImplementedError

    def _backend_ended(self) -> str | None:
        """Whether the backend ended the episode on its own: ``"terminated"`` (the task's
        own end, e.g. MiniWoB's submit or time limit), ``"truncated"`` (the backend died), or
        None (still running). Simulated apps never end episodes by themselves."""
        return None

    def _episode_rewards(self, outcome: float) -> tuple[float, float]:
        """``(reward, task_reward)`` at the end of an episode whose outcome (success measure in
        [0, 1]) is ``outcome``. By default both are the outcome; backends with their own
        reward scale (MiniWoB's raw reward in [-1, 1]) override it."""
        return outcome, outcome

    def _fork_backend(self, clone: GuiEnv) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not support fork()")

    def _screenshot(self, screen: UITree) -> np.ndarray:
        from gui_gym.core.draw import draw_screenshot

        return draw_screenshot(screen)

    def _candidate_texts(self) -> Sequence[str]:
        """Texts a random agent may type: the task's vocabulary by default."""
        assert self.task is not None
        return self.task.vocabulary or tuple(self.task.instruction.split()[:3])

    # -------------------------------------------------------------------------- gym contract

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode.

        Args:
            seed: Seeds the task choice and any task randomness.
            options: ``{"task": id}`` to run one task this episode.

        Returns:
            The first observation and info.
        """
        super().reset(seed=seed)
        options = options or {}
        unknown = set(options) - {"task"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; allowed: 'task'")
        if options.get("task") is not None:
            if not isinstance(options["task"], str):
                raise TypeError(
                    f"options['task'] must be a task id string, got {options['task']!r}"
                )
            task = self.suite[options["task"]]
        elif self._fixed_task is not None:
            task = self._fixed_task
        else:
            task = self._pool[int(self.np_random.integers(len(self._pool)))]
        task = self._instantiate(task, self.np_random)
        self.task = task
        self._steps = 0
        self._milestones = []
        self._answer = None
        self._last_action = None
        self._done = False
        self._warned_done = False
        self._task_reward = 0.0
        self._success = False
        self._screen_cache = None
        self._start(task, self.np_random)
        screen = self._current_screen()
        ctx = self._context(screen)
        self._milestones.extend(task.new_milestones(ctx, self._milestones))
        info = self._info(valid=True, error=None, description="", success=False, action_text="")
        info["action_target"] = None
        return self._observation(screen), info

    def step(
        self, action: str | Action | dict[str, Any]
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Apply ``action``; a malformed or impossible action counts as a step and changes
        nothing (``info["action_valid"] is False``, ``info["action_error"]`` says why)."""
        if self.task is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        screen = self._current_screen()
        if self._done:
            if not self._warned_done:  # once per episode: agents that loop on it would flood logs
                logger.warning("step() called after the episode ended; call reset()")
                self._warned_done = True
            return (
                self._observation(screen),
                0.0,
                True,
                False,
                self._info(False, "episode already ended; call reset()", "", self._success, ""),
            )
        parsed, error = try_parse_action(action)
        if parsed is not None:
            error = self._apply(parsed, screen)
        self._steps += 1
        valid = error is None
        description = describe(parsed, screen) if parsed is not None else "invalid action"
        target = target_element(parsed, screen) if parsed is not None else None
        if valid:
            assert parsed is not None
            self._last_action = parsed
            if parsed.type is ActionType.ANSWER:
                self._answer = parsed.text
            self._screen_cache = None
        new_screen = self._current_screen()
        task = self.task
        terminated = False
        outcome = None
        if valid:  # an invalid action changed nothing, so no milestone or outcome can change
            assert parsed is not None
            ctx = self._context(new_screen)
            self._milestones.extend(task.new_milestones(ctx, self._milestones))
            terminated = parsed.is_terminal
            if self.end_on_success or terminated:
                outcome = float(task.is_successful(ctx))
                if self.end_on_success and outcome >= 1.0:
                    terminated = True
        backend_end = self._backend_ended()
        terminated = terminated or backend_end == "terminated"
        truncated = not terminated and (backend_end == "truncated" or self._steps >= self.max_steps)
        reward = 0.0
        final_state_score = None
        if terminated or truncated:
            if outcome is None:
                outcome = float(task.is_successful(self._context(new_screen)))
            final_state_score = outcome
            if truncated and not self.score_unfinished:
                outcome = 0.0
            reward, self._task_reward = self._episode_rewards(outcome)
            self._success = outcome >= 1.0
            self._done = True
        action_text = (
            str(parsed)
            if parsed is not None
            else (without_lone_surrogates(action) if isinstance(action, str) else repr(action))
        )
        info = self._info(valid, error, description, self._done and self._success, action_text)
        # Identity of the acted-on element, index-free: ProgRM's step similarity (Eq. 9)
        # compares targets across screens by it. A tuple, not a dict, so vector envs can mix
        # it with None in one object array.
        info["action_target"] = None if target is None else target.identity
        if final_state_score is not None:
            info["final_state_score"] = final_state_score
        return self._observation(new_screen), reward, terminated, truncated, info

    def render(self) -> str | np.ndarray | None:
        """``ansi``: the instruction and rendered screen; ``rgb_array``: the screenshot."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode to gym.make")
            return None
        if self.task is None:
            raise gym.error.ResetNeeded("call reset() before render()")
        screen = self._current_screen()
        if self.render_mode == "rgb_array":
            return self._screenshot(screen)
        header = (
            f"[{self.task.task_id}] {self.task.instruction}\nstep {self._steps}/{self.max_steps}"
        )
        if self._milestones:
            header += f"  milestones: {', '.join(self._milestones)}"
        return f"{header}\n{screen.text}\n"

    def close(self) -> None:
        super().close()

    # ------------------------------------------------------------------------- public extras

    @property
    def ui_tree(self) -> UITree:
        """The current screen as a :class:`UITree`."""
        if self.task is None:
            raise gym.error.ResetNeeded("call reset() first")
        return self._current_screen()

    def current_screenshot(self) -> np.ndarray:
        """The current screen's screenshot, as ``screenshot=True`` observes it (HxWx3 uint8):
        what tools that look at a :meth:`fork` (ProRe's probing evaluators) read.

        Raises:
            gymnasium.error.ResetNeeded: before the first reset.
        """
        if self.task is None:
            raise gym.error.ResetNeeded("call reset() first")
        return self._screenshot(self._current_screen())

    @property
    def steps_taken(self) -> int:
        return self._steps

    @property
    def task_ids(self) -> list[str]:
        """Ids of the tasks :meth:`reset` samples from: the split and category's tasks, or
        the one fixed task. Any of them can be asked for with ``options={"task": task_id}``,
        e.g. to evaluate every task once."""
        return [t.task_id for t in self._pool]

    @property
    def milestones(self) -> list[str]:
        """Milestones reached so far, in order."""
        return list(self._milestones)

    def context(self) -> PredicateContext:
        """The current situation as task predicates and oracles see it."""
        if self.task is None:
            raise gym.error.ResetNeeded("call reset() first")
        return self._context(self._current_screen())

    def oracle_action(self) -> Action:
        """The task's scripted expert's next action from the current state.

        Raises:
            gymnasium.error.ResetNeeded: before the first reset.
            ExpertUnavailable: when the expert has no action from this state within its
                bounds (a planner's CPU or memory limit).
        """
        if self.task is None:
            raise gym.error.ResetNeeded("call reset() first")
        return self.task.oracle(self.context())

    def candidate_actions(self) -> list[Action]:
        """Actions that make sense on the current screen: clicks on clickable elements,
        long-clicks on long-clickable ones, typing vocabulary into editable ones, scrolling
        where content continues, and going back. Random agents sample from this list; the SB3
        adapter uses it as its discrete action set. Every one is possible in the current
        state (backends that can tell say so in :meth:`_possible`).

        Raises:
            gymnasium.error.ResetNeeded: before the first reset.
        """
        screen = self._current_screen_after_reset()
        return [a for a in self.screen_candidate_actions() if self._possible(a, screen)]

    def screen_candidate_actions(self) -> list[Action]:
        """:meth:`candidate_actions` before the app's rules are asked: what the screen offers,
        including actions the app would refuse now (a click under a dialog). The PRM data
        collection keeps using it (impossible actions are among the steps it labels, and its
        documented figures stay reproducible).

        Raises:
            gymnasium.error.ResetNeeded: before the first reset.
        """
        self._current_screen_after_reset()
        return screen_candidates(self._current_screen(), self._candidate_texts())

    def _current_screen_after_reset(self) -> UITree:
        if self.task is None:
            raise gym.error.ResetNeeded("call reset() before candidate_actions()")
        return self._current_screen()

    def _possible(self, action: Action, screen: UITree) -> bool:
        """Whether ``action`` would be accepted now; by default the shape checks only (a live
        backend cannot try an action without doing it)."""
        return self._validate(action, screen) is None

    def apply_action(self, action: str | Action | dict[str, Any]) -> str | None:
        """Apply ``action`` to the app as :meth:`step` does, without episode bookkeeping: no
        step is counted and no reward, milestone, outcome or truncation is computed. For tools
        that explore a :meth:`fork` (ProRe's probing evaluators). ``DONE`` and ``ANSWER`` are
        checked but change nothing.

        Returns:
            None when the action was applied, else why it was refused (then nothing changed).

        Raises:
            gymnasium.error.ResetNeeded: before the first reset.
        """
        if self.task is None:
            raise gym.error.ResetNeeded("call reset() first")
        try:
            parsed = parse_action(action)
        except ActionParseError as err:
            return str(err)
        error = self._apply(parsed, self._current_screen(), execute=not parsed.is_terminal)
        if error is None:
            self._screen_cache = None
        return error

    def fork(self) -> GuiEnv:
        """An independent env in the same state: same task, step count, milestones and RNG.

        Actions on the fork never affect this env (ProRe probes and best-of-N rely on it).

        Raises:
            gymnasium.error.ResetNeeded: before the first reset (there is no episode to copy).
        """
        if self.task is None:
            raise gym.error.ResetNeeded(
                f"call reset() before fork(): {type(self).__name__} has no episode to copy yet"
            )
        # a plain copy of the attributes, not copy.copy: envs that pickle (__getstate__ /
        # __setstate__ for multiprocessing and Ray) would rebuild their suite, app and backend
        # through it, most of a fork's time (ALFWorld: 0.8 s a fork, replaying the episode
        # twice); _fork_backend makes the backend independent
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._milestones = list(self._milestones)
        clone._np_random = copy.deepcopy(self._np_random)
        clone._screen_cache = None
        self._fork_backend(clone)
        return clone

    # ---------------------------------------------------------------------------- pickling

    def _portable_state(self) -> dict[str, Any]:
        """``__dict__`` for pickling (multiprocessing, Ray) without the process-wide parts:
        ``app`` and ``suite`` are dropped and tasks travel by id (``task`` too; override to
        send more, as AndroidWorld sends its parameters). Pair it with
        :meth:`_restore_portable_state` in ``__setstate__``."""
        state = dict(self.__dict__)
        state["app"] = None
        state["suite"] = None
        state["_pool"] = [t.task_id for t in self._pool]
        state["_fixed_task"] = self._fixed_task.task_id if self._fixed_task is not None else None
        state["task"] = self.task.task_id if self.task is not None else None
        state["_screen_cache"] = None
        return state

    def _restore_portable_state(
        self, state: dict[str, Any], suite: TaskSuite, app: Any, task: Task | None = None
    ) -> None:
        """Undo :meth:`_portable_state` with this process's ``suite`` and ``app``; ``task``
        replaces the current task looked up by id (for tasks rebuilt from parameters)."""
        state["app"] = app
        state["suite"] = suite
        state["_pool"] = [suite[t] for t in state["_pool"]]
        state["_fixed_task"] = suite[state["_fixed_task"]] if state["_fixed_task"] else None
        if task is not None:
            state["task"] = task
        else:
            state["task"] = suite[state["task"]] if state["task"] else None
        self.__dict__.update(state)

    # ------------------------------------------------------------------------------- helpers

    def _apply(self, action: Action, screen: UITree, execute: bool = True) -> str | None:
        """Validate ``action`` on ``screen`` and run it on the backend; why it was refused,
        or None."""
        error = self._validate(action, screen)
        if error is None and execute:
            try:
                error = self._execute(action, screen)
            except InvalidAction as err:
                error = str(err) or "impossible action"
        return error

    def _current_screen(self) -> UITree:
        screen = self._screen_cache
        if screen is None:
            screen = self._screen()
            self._screen_cache = screen
        return screen

    def _context(self, screen: UITree) -> PredicateContext:
        return PredicateContext(
            state=self._predicate_state(),
            screen=screen,
            action=self._last_action,
            answer=self._answer,
            step=self._steps,
            milestones=tuple(self._milestones),
        )

    def _validate(self, action: Action, screen: UITree) -> str | None:
        """Shape checks every backend shares: the backend has the action type, and its
        targets (elements, points) exist on this screen."""
        what = self.unsupported_actions.get(action.type)
        if what is not None:
            return f"{action.type.value} ({what}) has no counterpart in {type(self).__name__}"
        if action.modifiers and not self.modifier_clicks:
            return (
                f"a {action.modifiers}+click (a click holding keys; MiniWoB++ has it) has no "
                f"counterpart in {type(self).__name__}: click without modifiers"
            )
        last = len(screen.elements) - 1
        for index in (action.index, action.end_index):
            if index is not None and index > last:
                return f"no element {index} on this screen (valid indices: 0..{last})"
        via = action.via or ()
        points = [(action.x, action.y), (action.end_x, action.end_y), *zip(via[::2], via[1::2])]
        for x, y in points:
            if (
                x is not None
                and y is not None
                and not (0 <= x < screen.width and 0 <= y < screen.height)
            ):
                return f"point ({x:g}, {y:g}) is off the {screen.width}x{screen.height} screen"
        return None

    def _observation(self, screen: UITree) -> dict[str, Any]:
        assert self.task is not None
        text = screen.text
        if len(text) > self.max_screen_length:
            text = text[: self.max_screen_length]
        obs: dict[str, Any] = {"instruction": self.task.instruction, "screen": text}
        if self.screenshot:
            obs["screenshot"] = self._screenshot(screen)
        return obs

    def _info(
        self, valid: bool, error: str | None, description: str, success: bool, action_text: str
    ) -> dict[str, Any]:
        assert self.task is not None
        return {
            "task_id": self.task.task_id,
            "category": self.task.category,
            "step": self._steps,
            "action": action_text,
            "action_valid": valid,
            "action_error": error,
            "action_description": description,
            "milestones": list(self._milestones),
            "success": success,
            "task_reward": self._task_reward if self._done else 0.0,
        }
