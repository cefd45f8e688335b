"""``GuiGym/AndroidWorld-v0``: AndroidWorld's task logic on a simulated phone."""

from __future__ import annotations

import functools
import random
from typing import Any

import numpy as np

from gui_gym.core.sim import SimGuiEnv
from gui_gym.core.task import Task, TaskSuite
from gui_gym.core.ui import UITree
from gui_gym.envs.androidworld.apps import default_apps
from gui_gym.envs.androidworld.draw import draw_phone
from gui_gym.envs.androidworld.phone import Phone, PhoneState
from gui_gym.envs.androidworld.pixels import draw_pixels
from gui_gym.envs.androidworld.tasks import TASKS, AndroidWorldTask

__all__ = ["AndroidWorldEnv", "AndroidWorldPlusEnv", "load_suite", "make_env", "make_plus_env"]

_SPLIT_SALT = {"train": 0, "test": 1_000_003, "all": 0}


@functools.cache
def load_suite() -> TaskSuite:
    """One suite entry per registered template (parameters are drawn per episode)."""
    return TaskSuite((cls.placeholder() for cls in TASKS.values()), name="androidworld")


class AndroidWorldEnv(SimGuiEnv[PhoneState]):
    """AndroidWorld's tasks on a simulated Android phone.

    ## Description

    A phone with a launcher, status bar, notification shade with quick settings, back/home
    navigation, keyboard focus, dialogs and scrolling lists, running simulated apps whose data
    is plain Python. Task templates carry AndroidWorld's names (``ContactsAddContact``,
    ``SystemWifiTurnOff``, ...), draw their parameters from the seed, initialise app data,
    and check success on the app state, never on the screen.

    ## Action Space

    The gui-gym grammar and AndroidWorld's JSON actions (``{"action_type": "click", "index":
    3}``, ``input_text``, ``scroll``, ``navigate_back``, ``navigate_home``, ``open_app``,
    ``answer``, ``status``, ``wait``, ``long_press``, ``keyboard_enter``).

    ## Observation Space

    ``instruction`` and ``screen`` text, plus a ``screenshot`` when made with
    ``screenshot=True`` (360x800 at ``screen_scale=1/3``; 1080x2400 at 1.0).

    ## Rewards

    The task's ``is_successful`` in [0, 1] at the end of the episode (composite tasks give
    partial credit), 0 on other steps. As in AndroidWorld's suite runner, an episode the
    agent does not end itself (``DONE()``/``status`` or ``ANSWER``) before ``max_steps``
    scores 0 (``score_unfinished=False``, the default); ``info["final_state_score"]`` holds
    the score of the final state either way, and ``score_unfinished=True`` pays it.

    ## Starting State

    The launcher, with the task's data written into the apps.

    ## Episode End

    Terminated on ``DONE()`` (AndroidWorld's ``status``) or ``ANSWER(...)``; truncated after
    ``max_steps``.

    ## Arguments

    * ``task``: a template name, or None to sample one per reset.
    * ``split``: ``"train"`` or ``"test"``: disjoint parameter streams for the same templates.
    * ``category``: sample only one app's templates (``"clock"``, ``"contacts"``...; see
      ``gui-gym list``); None samples every app.
    * ``screenshot``, ``max_steps`` (default 20, as in ADMIRE; GUI-Shepherd uses 15),
      ``screen_scale`` (default 1/3), ``render_mode``, ``backend`` (``"sim"``).
    * ``score_unfinished``: pay the final state's score on truncation too (default False,
      AndroidWorld's scoring).
    * ``exclude_solved_at_start``: leave the templates whose goal holds at reset (the seven
      *Verify* ones, ``info["solved_at_start"]``) out of sampling (default False: the full
      suite, as AndroidWorld runs it).

    ## Version History

    * v0: initial release.
    """

    end_on_success = False
    templates: dict[str, type[AndroidWorldTask]] = TASKS
    """The template registry this env samples from (AndroidWorld's 116 names here)."""

    @staticmethod
    def _load_suite() -> TaskSuite:
        return load_suite()

    def __init__(
        self,
        task: str | None = None,
        split: str = "train",
        category: str | None = None,
        screenshot: bool = False,
        max_steps: int = 20,
        screen_scale: float = 1 / 3,
        render_mode: str | None = None,
        backend: str = "sim",
        score_unfinished: bool = False,
        exclude_solved_at_start: bool = False,
    ):
        if backend != "sim":
            raise ValueError(f"AndroidWorldEnv is the simulator; use make_env(backend={backend!r})")
        if split not in _SPLIT_SALT:
            raise ValueError(f"split must be 'train', 'test' or 'all', got {split!r}")
        if not 0.05 <= screen_scale <= 1.0:
            raise ValueError(f"screen_scale must be in [0.05, 1.0], got {screen_scale!r}")
        scale = screen_scale * 3
        self.app = Phone(default_apps(), scale=scale)
        self.screen_size = (self.app.width, self.app.height)
        self.screen_scale = screen_scale
        self.backend = backend
        self.param_split = split
        self.score_unfinished = bool(score_unfinished)
        super().__init__(
            self._load_suite(),
            task=task,
            split="all",
            category=category,
            screenshot=screenshot,
            max_steps=max_steps,
            render_mode=render_mode,
        )
        self.split = split
        self.exclude_solved_at_start = bool(exclude_solved_at_start)
        if self.exclude_solved_at_start:
            if task is not None and self.templates[task].solved_at_start:
                raise ValueError(
                    f"task {task!r} is solved at start; drop exclude_solved_at_start=True to "
                    f"run it, or pick another template"
                )
            self._pool = [t for t in self._pool if not self.templates[t.task_id].solved_at_start]

    @classmethod
    def template_notes(cls) -> str:
        """What ``gui-gym list`` says about the templates beyond their apps: which are solved
        at start (left out by ``exclude_solved_at_start=True``) and which need vision (what
        they ask for is drawn only into the screenshot)."""
        solved = sorted(name for name, t in cls.templates.items() if t.solved_at_start)
        vision = sorted(name for name, t in cls.templates.items() if t.needs_vision)
        return (
            f"; {len(cls.templates)}/116 AndroidWorld task names"
            f"; solved at start ({len(solved)}, exclude_solved_at_start=True): "
            + ", ".join(solved)
            + f"; need vision ({len(vision)}, content only in the screenshot): "
            + ", ".join(vision)
        )

    def _info(
        self, valid: bool, error: str | None, description: str, success: bool, action_text: str
    ) -> dict[str, Any]:
        info = super()._info(valid, error, description, success, action_text)
        info["solved_at_start"] = bool(getattr(self.task, "solved_at_start", False))
        return info

    def _instantiate(self, task: Task, rng: np.random.Generator) -> Task:
        template = self.templates[task.task_id]
        seed = int(rng.integers(2**31)) + _SPLIT_SALT[self.param_split]
        return template.create(random.Random(seed))

    def __getstate__(self) -> dict[str, Any]:
        # Templates hold closures (milestone checks), so a pickled env keeps only names and
        # parameters and rebuilds the rest (multiprocessing, Ray workers).
        state = self._portable_state()
        task = self.task
        state["task"] = (task.task_id, task.params) if task is not None else None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        task = None
        if state["task"] is not None:
            name, params = state["task"]
            task = self.templates[name].from_params(params)
        app = Phone(default_apps(), scale=state["screen_scale"] * 3)
        self._restore_portable_state(state, self._load_suite(), app, task=task)

    def _screenshot(self, screen: UITree) -> np.ndarray:
        shot = draw_phone(screen)
        # pictures show their content only as pixels (not in the screen's text)
        return draw_pixels(shot, screen, self.state)

    def _candidate_texts(self) -> tuple[str, ...]:
        assert isinstance(self.task, AndroidWorldTask)
        texts = [str(v) for v in self.task.params.values() if isinstance(v, str | int)]
        return tuple(texts[:4]) or ("hello",)


BACKENDS = ("sim", "uiautomator2", "android_env")


def make_env(backend: str = "sim", **kwargs: Any) -> Any:
    """Entry point of ``GuiGym/AndroidWorld-v0``: the simulator, or a real-device backend.

    * ``backend="sim"`` (default): :class:`AndroidWorldEnv`.
    * ``backend="uiautomator2"``: a device over uiautomator2 (``serial=...``, or ``device=`` an
      object with uiautomator2's methods);
    * ``backend="android_env"``: an ``android_env`` environment (``android_env=`` an env, or
      ``android_env_config=`` a config for ``android_env.loader.load``).

    Raises:
        ValueError: for an unknown backend, listing the known ones.
    """
    if backend == "sim":
        return AndroidWorldEnv(**kwargs)
    if backend == "uiautomator2":
        from gui_gym.envs.androidworld.backends.uiautomator2 import Uiautomator2Env

        kwargs.pop("split", None)
        return Uiautomator2Env(load_suite(), **kwargs)
    if backend == "android_env":
        from gui_gym.envs.androidworld.backends.android_env import AndroidEnvEnv

        kwargs.pop("split", None)
        return AndroidEnvEnv(load_suite(), **kwargs)
    raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")


class AndroidWorldPlusEnv(AndroidWorldEnv):
    """``GuiGym/AndroidWorldPlus-v0``: AndroidWorld+ (:mod:`~gui_gym.envs.androidworld.plus`),
    multi-app and multi-goal templates (some needing memory of an earlier screen) on the same
    simulated phone, with the same arguments, actions and scoring as ``AndroidWorld-v0``."""

    @property
    def templates(self) -> dict[str, type[AndroidWorldTask]]:  # type: ignore[override]
        from gui_gym.envs.androidworld.plus import PLUS_TASKS

        return PLUS_TASKS

    @staticmethod
    def _load_suite() -> TaskSuite:
        from gui_gym.envs.androidworld.plus import load_plus_suite

        return load_plus_suite()

    @classmethod
    def template_notes(cls) -> str:
        from gui_gym.envs.androidworld.plus import PLUS_TASKS

        memory = sorted(n for n, t in PLUS_TASKS.items() if getattr(t, "needs_memory", False))
        return f"; need memory of an earlier screen: {len(memory)}"


def make_plus_env(backend: str = "sim", **kwargs: Any) -> AndroidWorldPlusEnv:
    """Entry point of ``GuiGym/AndroidWorldPlus-v0`` (simulator only: its checks read apps
    whose state is not read over adb).

    Raises:
        ValueError: for any backend but ``"sim"``.
    """
    if backend != "sim":
        raise ValueError(
            f"GuiGym/AndroidWorldPlus-v0 runs on the simulator only (backend='sim'), got "
            f"{backend!r}"
        )
    return AndroidWorldPlusEnv(**kwargs)
