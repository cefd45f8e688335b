"""``GuiGym/MiniWoB-v0`` and ``GuiGym/MiniWoB-<task>-v0``: the real MiniWoB++ tasks in a real
headless Chromium, through the shared observation/action API.

The pages, their JavaScript task logic, rewards and time limits are ``miniwob``'s own: we
drive a ``miniwob.environment.MiniWoBEnvironment`` and translate at the boundary (its DOM to
our :class:`~gui_gym.core.ui.UITree`, our actions to its action dicts).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import logging
import os
import re
import urllib.parse
import warnings
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.env import GuiEnv
from gui_gym.core.predicates import PredicateContext
from gui_gym.core.task import Task, TaskSuite
from gui_gym.core.ui import UIElement, UITree
from gui_gym.envs.miniwob.browser import (
    INSTALL_HINT,
    adopt_browser_orphans,
    descendants,
    find_browser,
    kill_group,
    kill_tree,
    own_process_group,
    reap_browser_processes,
    start_watchdog,
)
from gui_gym.envs.miniwob.catalog import MINIWOB_TASKS
from gui_gym.envs.miniwob.dom import dom_to_tree
from gui_gym.envs.miniwob.drag import DRAG_STEPS

__all__ = [
    "MAX_INPUT_CHARS",
    "REWARD_MODES",
    "ForkDiverged",
    "MiniWoBEnv",
    "MiniWoBState",
    "MiniWoBTask",
    "load_suite",
    "load_task_page",
    "step_miniwob",
]

logger = logging.getLogger(__name__)

REWARD_MODES = ("binary", "raw", "time_penalty")
MAX_INPUT_CHARS = 256
"""Longest text one ``INPUT`` types on MiniWoB++ (longer is an invalid action). The browser
receives one key event per character, about 1 ms each (emoji far more), against the task's
10-second limit; every MiniWoB++ task needs far fewer (miniwob's own text space: 64)."""
DRAG_KEY = "gui_gym_drag"
CLICK_HOLDING_KEY = "gui_gym_click_holding"
"""``last_miniwob_actions`` entry of a click with held keys: ``{CLICK_HOLDING_KEY: {"point":
[x, y], "keys": ["ctrl"]}}`` (miniwob's own clicks hold no key)."""
_WEBDRIVER_MODIFIERS = {"ctrl": "\ue009", "shift": "\ue008", "alt": "\ue00a", "meta": "\ue03d"}
"""Our modifier names as WebDriver key codes (selenium's ``Keys.CONTROL``, ...)."""
"""Key of the one non-miniwob entry in :attr:`MiniWoBEnv.last_miniwob_actions`: a drag's
pointer path. miniwob's MOUSEDOWN/MOVE/MOUSEUP actions each run as a separate WebDriver
action sequence, between which Chromium ends a text selection (jQuery's draggables cope,
selecting text does not), so a drag runs as one sequence of its own; :func:`step_miniwob`
executes either kind on any miniwob env, ours or raw."""
_PAGE_EXTRAS_JS = """
var selects = Array.from(document.querySelectorAll('select')).map(function (s) {
  return [s.dataset.wob_ref === undefined ? null : +s.dataset.wob_ref, s.selectedIndex,
          Array.from(s.options).map(function (o) { return o.text; }),
          Array.from(s.options).filter(function (o) { return o.selected; })
            .map(function (o) { return o.index; })];
});
var fills = Array.from(document.querySelectorAll('svg *')).filter(function (e) {
  return e.dataset && e.dataset.wob_ref !== undefined;
}).map(function (e) { return [+e.dataset.wob_ref, getComputedStyle(e).fill]; });
var alts = Array.from(document.querySelectorAll('img[alt]')).filter(function (e) {
  return e.dataset.wob_ref !== undefined;
}).map(function (e) { return [+e.dataset.wob_ref, e.alt]; });
var grafts = [];
if (arguments[0]) {
  // a sizeless container's visible children, read as miniwob reads (keeping its refs)
  var read = core.previousDOMInfo;
  document.querySelectorAll('#area *').forEach(function (e) {
    var box = e.getBoundingClientRect(), up = e.parentElement;
    if ((box.width > 0 && box.height > 0) || !up || up.dataset.wob_ref === undefined ||
        up.dataset.wob_eps !== 'e' + WOB_EPISODE_ID) return;
    Array.from(e.children).forEach(function (c) {
      var r = c.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) {
        grafts.push([+up.dataset.wob_ref, core.getDOMInfo(c)]);
        Object.assign(read, core.previousDOMInfo);
      }
    });
  });
  core.previousDOMInfo = read;
}
return [selects, fills, alts, grafts];
"""
FLIGHT_SIZE = (375, 667)
MINIWOB_SIZE = (160, 210)


@dataclass(frozen=True)
class MiniWoBState:
    """What the page reports: miniwob's episode metadata plus the utterance and its fields.

    Attributes:
        done: The task ended the episode (submit, a final click, or its time limit).
        raw_reward: miniwob's raw reward in [-1, 1] (meaningful once ``done``).
        env_reward: miniwob's reward scaled by the time left (its "original" reward).
        reason: miniwob's explanation of the reward, when it gives one.
        utterance: The instruction shown above the task.
        fields: The instruction's fields as miniwob's field extractor reads them
            (``{"target": "ONE"}``).
    """

    done: bool = False
    raw_reward: float = 0.0
    env_reward: float = 0.0
    reason: Any = None
    utterance: str = ""
    fields: dict[str, str] = dataclasses.field(default_factory=dict)
    notes: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    """The scripted expert's notes of what it saw earlier this episode (a person remembers
    the numbers before they are hidden); one dict per episode, kept across steps."""


@dataclass(eq=False)
class MiniWoBTask(Task):
    """One MiniWoB++ task; its instruction is the page's utterance, set each episode."""

    def is_successful(self, ctx: PredicateContext) -> float:
        """1.0 when miniwob ended the episode with a raw reward of 1.0, else 0.0."""
        state = ctx.state
        return (
            1.0
            if isinstance(state, MiniWoBState) and state.done and state.raw_reward >= 1.0
            else 0.0
        )

    def oracle(self, ctx: PredicateContext) -> Action:
        from gui_gym.envs.miniwob.oracles import ORACLES, UNSCRIPTED

        expert = ORACLES.get(self.task_id)
        if expert is None:
            raise NotImplementedError(
                f"no oracle for MiniWoB task {self.task_id!r} "
                f"({UNSCRIPTED.get(self.task_id, 'not scripted')}); "
                f"{len(ORACLES)} tasks have one: gym.make('GuiGym/MiniWoB-v0', tasks='experts')"
            )
        return expert(ctx)


def _category(name: str) -> str:
    if name.startswith("flight."):
        return "flight"
    for family in ("email-inbox", "social-media", "click-checkboxes", "use-autocomplete"):
        if name.startswith(family):
            return family
    return name.split("-")[0]


def load_suite() -> TaskSuite:
    """Every MiniWoB++ task as a :class:`MiniWoBTask` (category: its name's first word)."""
    return TaskSuite(
        [
            MiniWoBTask(task_id=name, instruction="", category=_category(name), split="all")
            for name in MINIWOB_TASKS
        ],
        name="miniwob",
    )


def require_miniwob() -> None:
    """Check that the ``miniwob`` extra is installed.

    Raises:
        gymnasium.error.DependencyNotInstalled: naming the pip extra and the Chromium packages.
    """
    import importlib.util

    missing = [m for m in ("miniwob", "selenium") if importlib.util.find_spec(m) is None]
    if missing:
        raise gym.error.DependencyNotInstalled(
            f"MiniWoB++ needs the {' and '.join(missing)} package(s): install them with "
            f"pip install 'gui-gym[miniwob]', and Chromium with its driver: {INSTALL_HINT}"
        )


def _selenium_errors() -> tuple[type[BaseException], ...]:
    from selenium.common.exceptions import WebDriverException
    from urllib3.exceptions import HTTPError

    return (WebDriverException, HTTPError, OSError)


def _shutdown(backend: Any) -> None:
    """Quit the browser and its driver, killing them if quitting fails (never raises)."""
    instance = getattr(backend, "instance", None)
    driver = getattr(instance, "driver", None)
    if driver is None:
        return
    process = getattr(getattr(driver, "service", None), "process", None)
    family = descendants(process.pid) if process is not None else []
    try:
        driver.quit()
    except Exception as err:  # a dead browser fails to quit in many ways; we kill it below
        logger.debug("driver.quit() failed: %s", err)
    if process is not None and process.poll() is None:
        kill_tree(process.pid)
    if process is not None:
        try:
            process.wait(timeout=5)  # reap, so no zombie is left behind
        except Exception as err:
            logger.debug("chromedriver did not exit: %s", err)
    watchdog = getattr(backend, "gui_gym_watchdog", None)
    if watchdog is not None:  # the group's last members: stragglers and the watchdog
        kill_group(watchdog.pid if process is None else process.pid)
        with contextlib.suppress(Exception):
            watchdog.wait(timeout=5)
    reap_browser_processes(family)
    instance.died = True


_KEY_NAMES = {
    "enter": "<Enter>",
    "return": "<Enter>",
    "tab": "<Tab>",
    "space": "<Space>",
    "backspace": "<Backspace>",
    "delete": "<Delete>",
    "pageup": "<PageUp>",
    "pagedown": "<PageDown>",
    "up": "<ArrowUp>",
    "down": "<ArrowDown>",
    "left": "<ArrowLeft>",
    "right": "<ArrowRight>",
    "arrowup": "<ArrowUp>",
    "arrowdown": "<ArrowDown>",
    "arrowleft": "<ArrowLeft>",
    "arrowright": "<ArrowRight>",
}
_MODIFIERS = {"ctrl": "C-", "control": "C-", "shift": "S-", "alt": "A-", "meta": "M-", "cmd": "M-"}


def miniwob_key(name: str) -> str:
    """Our key names (``"Enter"``, ``"ctrl+a"``, ``"<Tab>"``, ``"C-c"``) in miniwob's syntax."""
    text = name.strip()
    if text.startswith("<") or re.fullmatch(r"(?:[CSAM]-)+.+", text):
        return text
    parts = re.split(r"[+-](?=.)", text) if len(text) > 1 else [text]
    *mods, key = parts
    prefix = ""
    for mod in mods:
        symbol = _MODIFIERS.get(mod.lower())
        if symbol is None:
            return text  # not a modifier: let the allowed-key check report it
        prefix += symbol
    key = _KEY_NAMES.get(key.lower(), key)
    if prefix and len(key) == 1:
        key = key.lower()
    return prefix + key


def _hex_colour(css: str) -> str:
    """``rgb(255, 0, 0)`` as ``#ff0000``; ``""`` for none or anything else."""
    m = re.fullmatch(r"rgba?\((\d+),\s*(\d+),\s*(\d+)(?:,\s*([\d.]+))?\)", css.strip())
    if m is None or (m.group(4) is not None and float(m.group(4)) == 0):
        return ""
    return "#" + "".join(f"{int(m.group(i)):02x}" for i in (1, 2, 3))


def step_miniwob(backend: Any, action: dict[str, Any]) -> tuple[Any, ...]:
    """Run one entry of :attr:`MiniWoBEnv.last_miniwob_actions` on a miniwob env (a
    ``miniwob.environment.MiniWoBEnvironment``, ours or a raw one) and return its ``step``
    result: a miniwob action dict as ``backend.step`` does; a drag (:data:`DRAG_KEY`) as one
    pointer sequence (press, moves, release), a click with held keys
    (:data:`CLICK_HOLDING_KEY`) as one key-and-pointer sequence (keys down, click, keys up),
    each then a no-op step to read the page."""
    if DRAG_KEY not in action and CLICK_HOLDING_KEY not in action:
        return backend.step(action)
    from miniwob.action import ActionTypes
    from selenium.webdriver.common.action_chains import ActionChains

    chain = ActionChains(backend.instance.driver, duration=0)
    pointer = chain.w3c_actions.pointer_action
    if DRAG_KEY in action:
        (x0, y0), *rest = action[DRAG_KEY]
        pointer.move_to_location(int(x0), int(y0))
        pointer.click_and_hold()
        for x, y in rest:
            pointer.move_to_location(int(x), int(y))
        pointer.release()
    else:
        click = action[CLICK_HOLDING_KEY]
        keys = [_WEBDRIVER_MODIFIERS[k] for k in click["keys"]]
        for key in keys:
            chain.key_down(key)
        x, y = click["point"]
        pointer.move_to_location(int(x), int(y))
        chain.w3c_actions.key_action.pause()  # the key source idles while the pointer moves
        chain.click()
        for key in reversed(keys):
            chain.key_up(key)
    chain.w3c_actions.perform()
    kinds = backend.action_space_config.action_types
    return backend.step({"action_type": kinds.index(ActionTypes.NONE)})


def load_task_page(backend: Any, name: str) -> None:
    """Point a running miniwob env (ours or a raw ``MiniWoBEnvironment``) at another
    MiniWoB++ task's page in the same browser, as miniwob's own periodic refresh reloads
    one (not for FlightWoB's pages, which have another size and server)."""
    from miniwob.fields import get_field_extractor
    from miniwob.selenium_instance import DEFAULT_BASE_URL

    instance = backend.instance
    instance.url = urllib.parse.urljoin(DEFAULT_BASE_URL, f"{name}.html")
    instance.field_extractor = get_field_extractor(name)
    instance.driver.get(instance.url)
    backend.subdomain = name


class ForkDiverged(RuntimeError):
    """``fork()`` replayed the episode in a new browser and got a different page."""


class MiniWoBEnv(GuiEnv):
    """A MiniWoB++ task in a headless Chromium, with gui-gym's observations and actions.

    ## Description

    The ``miniwob`` package's own HTML tasks (128: the MiniWoB++ suite and three FlightWoB
    pages) run in Debian's Chromium through Selenium. Each step our action is translated to
    miniwob's action types and executed by miniwob; its DOM reading comes back as a
    ``UITree``. Rewards, episode ends and the real-time limit are miniwob's.

    ## Action Space

    The gui-gym grammar: ``CLICK(i)`` (miniwob's ``CLICK_ELEMENT`` on the element's ref, or a
    coordinate click for text fragments, which have no ref), ``INPUT(i, "text")``
    (``FOCUS_ELEMENT_AND_TYPE_TEXT``), ``CLICK_XY(x, y)`` (``CLICK_COORDS``),
    ``DOUBLE_CLICK(i)``, ``SCROLL(up|down[, i])`` (mouse wheel over the element or the task),
    ``ENTER()``/``KEY("Tab")``/``KEY("ctrl+a")`` (``PRESS_KEY`` with miniwob's allowed keys),
    ``WAIT()``/``DO_NOTHING()`` (``NONE``) and ``DONE()``. App navigation (``GOBACK``, ``HOME``,
    ``OPEN_APP``), ``SEARCH``, ``LONG_CLICK`` and ``ANSWER`` have no MiniWoB counterpart and
    are invalid actions (the step counts, nothing happens).

    ## Observation Space

    ``instruction``: miniwob's utterance; ``screen``: the DOM rendered one element a line;
    ``screenshot`` (with ``screenshot=True``): the 160x210 task area (375x667 for FlightWoB)
    as miniwob captures it.

    ## Rewards

    ``info["task_reward"]`` is miniwob's raw reward exactly (in [-1, 1]; 0 when the episode
    did not end in miniwob). ``reward`` at the episode end follows ``reward_mode``:
    ``"binary"`` (default) 1.0 for success (raw reward 1.0) else 0.0; ``"raw"`` the raw
    reward; ``"time_penalty"`` miniwob's original reward, scaled by the time left.

    ## Starting State

    A fresh episode of the task, generated by the page from the episode's seed.

    ## Episode End

    Terminated when miniwob ends the episode (the task's own end, or its 10-second real-time
    limit; ``time_limit_s`` changes it) or the agent sends ``DONE()``; truncated after
    ``max_steps`` steps, or when the browser dies (``info["action_error"]`` says so; the
    next ``reset`` restarts it with a warning).

    ## Arguments

    * ``task``: a MiniWoB++ task name (``"click-test"``), or None to sample one per reset
      from ``tasks`` (default: every MiniWoB++ task, FlightWoB excluded since its pages
      have another size).
    * ``tasks``: the names sampled from when ``task`` is None; ``"experts"``: every
      MiniWoB++ task with a scripted expert (``gui-gym record GuiGym/MiniWoB-v0 --agent
      oracle --env-arg tasks=experts`` records them all, in order).
    * ``split``: miniwob's data mode, ``"train"`` or ``"test"`` (a few tasks use it).
    * ``category``: sample only one task family, the name's first word (``"click"``,
      ``"email-inbox"``, ``"flight"``...); None samples them all.
    * ``reward_mode``, ``screenshot``, ``max_steps`` (default 50), ``render_mode``.
    * ``time_limit_s``: episode time limit in seconds (None: miniwob's 10 s). LLM agents
      that think for seconds per step need more.
    * ``chrome_binary``, ``chromedriver``: browser paths (default: ``MINIWOB_CHROME_BINARY``/
      ``MINIWOB_CHROMEDRIVER``, then ``chromium``/``chromedriver`` on ``PATH``).
    * ``wait_ms``: pause after each action (miniwob's ``wait_ms``).

    Chromium starts on the first ``reset``, not at construction; ``close()`` ends it.

    ## Version History

    * v0: initial release (miniwob 1.1).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    end_on_success = False
    unsupported_actions: ClassVar[dict[ActionType, str]] = {}  # web pages drag and select
    modifier_clicks: ClassVar[bool] = True  # ctrl/shift+click: one WebDriver key+pointer sequence

    def __init__(
        self,
        task: str | None = None,
        tasks: Sequence[str] | None = None,
        split: str = "train",
        category: str | None = None,
        reward_mode: str = "binary",
        screenshot: bool = False,
        max_steps: int = 50,
        time_limit_s: float | None = None,
        chrome_binary: str | None = None,
        chromedriver: str | None = None,
        wait_ms: float = 0.0,
        render_mode: str | None = None,
    ):
        require_miniwob()
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")
        if split not in ("train", "test"):
            raise ValueError(
                f"split must be 'train' or 'test' (miniwob's data mode), got {split!r}"
            )
        if time_limit_s is not None and not time_limit_s > 0:
            raise ValueError(f"time_limit_s must be positive or None, got {time_limit_s!r}")
        suite = load_suite()
        if task is not None:
            if task not in suite:
                raise ValueError(
                    f"unknown MiniWoB++ task {task!r}; see gui_gym.envs.miniwob.MINIWOB_TASKS"
                )
            names = [task]
        else:
            if tasks == "experts":  # every MiniWoB++ task with a scripted expert
                from gui_gym.envs.miniwob.oracles import ORACLES

                tasks = [n for n in MINIWOB_TASKS if n in ORACLES and not n.startswith("flight.")]
            elif isinstance(tasks, str):
                raise ValueError(
                    f"tasks must be a list of MiniWoB++ task names or 'experts', got {tasks!r}"
                )
            names = (
                list(tasks)
                if tasks is not None
                else [n for n in MINIWOB_TASKS if not n.startswith("flight.") or category]
            )
            unknown = [n for n in names if n not in suite]
            if unknown or not names:
                raise ValueError(
                    f"unknown MiniWoB++ task(s) {unknown}" if unknown else "tasks is empty"
                )
            if category is not None:
                if category not in suite.categories:
                    raise ValueError(
                        f"unknown MiniWoB++ category {category!r} (a task family: its name's "
                        f"first word); this suite has: {', '.join(suite.categories)}"
                    )
                names = [n for n in names if suite[n].category == category]
                if not names:
                    raise ValueError(f"no task of category {category!r} among tasks={tasks}")
        sizes = {FLIGHT_SIZE if n.startswith("flight.") else MINIWOB_SIZE for n in names}
        if len(sizes) > 1:
            raise ValueError(
                "tasks mixes FlightWoB (375x667) and MiniWoB++ (160x210) pages, whose screens "
                "differ in size; sample them in separate envs"
            )
        self.screen_size = sizes.pop()
        self.reward_mode = reward_mode
        self.data_mode = split
        self.time_limit_s = time_limit_s
        self.wait_ms = float(wait_ms)
        self._chrome_binary = chrome_binary
        self._chromedriver = chromedriver
        super().__init__(
            suite,
            task=task,
            split="all",
            screenshot=screenshot,
            max_steps=max_steps,
            render_mode=render_mode,
        )
        self.split = split
        if task is None:
            self._pool = [suite[n] for n in names]
        self._backend: Any = None
        self._backend_task: str | None = None
        self._finalizer: weakref.finalize | None = None
        self._dead: str | None = None
        self._root_dom: Any = None
        self._meta = MiniWoBState()
        self._pixels: np.ndarray | None = None
        self._refs: list[int] = []
        self._tags: list[str] = []
        self._last_seed: int | None = None
        self.last_miniwob_actions: list[dict[str, Any]] = []
        """The miniwob action dicts the last step executed (for inspection and replays)."""
        self._episode_actions: list[dict[str, Any]] = []

    # -------------------------------------------------------------------------- the browser

    @property
    def browser_pid(self) -> int | None:
        """Process id of ChromeDriver (Chromium runs as its child), or None before the first
        reset and after ``close()``."""
        driver = getattr(getattr(self._backend, "instance", None), "driver", None)
        process = getattr(getattr(driver, "service", None), "process", None)
        return None if process is None or process.poll() is not None else process.pid

    @property
    def element_refs(self) -> list[int]:
        """miniwob's ref of each element of the current screen, by index (negative for text
        fragments)."""
        self._current_screen()
        return list(self._refs)

    @property
    def element_tags(self) -> list[str]:
        """miniwob's tag of each element of the current screen, by index (``input_text``,
        ``button``, ``t`` for text fragments, ...)."""
        self._current_screen()
        return list(self._tags)

    @property
    def last_seed(self) -> int | None:
        """The seed the page generated the current episode from (``Math.seedrandom``)."""
        return self._last_seed

    def _record_screenshots(self) -> bool:
        return self.screenshot or self.render_mode == "rgb_array"

    def _launch(self, name: str) -> None:
        chrome, driver = find_browser(self._chrome_binary, self._chromedriver)
        from miniwob.environment import MiniWoBEnvironment

        adopt_browser_orphans()
        with own_process_group(chrome, driver):
            backend = MiniWoBEnvironment(
                subdomain=name,
                action_space_config="all_supported",
                wait_ms=self.wait_ms,
                data_mode=self.data_mode,
            )
        self._backend = backend
        self._backend_task = name
        process = backend.instance.driver.service.process
        backend.gui_gym_watchdog = start_watchdog(os.getpgid(process.pid))
        self._finalizer = weakref.finalize(self, _shutdown, backend)
        self._dead = None
        self._after_page_load()

    def _after_page_load(self) -> None:
        instance = self._backend.instance
        instance.record_screenshots = self._record_screenshots()
        if self.time_limit_s is not None:
            instance.driver.execute_script(
                f"core.EPISODE_MAX_TIME = {int(self.time_limit_s * 1000)};"
            )

    def _retarget(self, name: str) -> None:
        """Load another task's page in the running browser (same page size), as miniwob's own
        periodic refresh does; restart the browser when that is not possible."""
        old = self._backend_task or ""
        if name.startswith("flight.") or old.startswith("flight."):
            self._close_backend()
            self._launch(name)
            return
        load_task_page(self._backend, name)
        self._backend_task = name
        self._after_page_load()

    def _close_backend(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # runs _shutdown once
            self._finalizer = None
        self._backend = None
        self._backend_task = None

    def close(self) -> None:
        """End Chromium and ChromeDriver (safe to call twice, and on a dead browser)."""
        self._close_backend()
        super().close()

    def _mark_dead(self, err: BaseException) -> str:
        self._dead = (
            f"{type(err).__name__}: {str(err).strip().splitlines()[0] if str(err).strip() else ''}"
        )
        return f"the browser died ({self._dead}); the episode is truncated and the next reset restarts it"

    # ------------------------------------------------------------------------ GuiEnv hooks

    def _start(self, task: Task, rng: np.random.Generator) -> None:
        name = task.task_id
        seed = int(rng.integers(2**31))
        self._last_seed = seed
        for attempt in (0, 1):
            try:
                if self._backend is not None and (self._dead or self._backend.instance.died):
                    warnings.warn(
                        f"MiniWoB browser for {self._backend_task!r} died ({self._dead or 'closed'}); restarting it",
                        RuntimeWarning,
                        stacklevel=3,
                    )
                    self._close_backend()
                if self._backend is None:
                    self._launch(name)
                elif self._backend_task != name:
                    self._retarget(name)
                obs, info = self._backend.reset(seed=seed)
                break
            except _selenium_errors() as err:
                if attempt:
                    raise RuntimeError(
                        f"could not start MiniWoB task {name!r} in Chromium: {err}"
                    ) from err
                self._mark_dead(err)
        self._dead = None
        self._meta = MiniWoBState()
        self._episode_actions = []
        self._absorb(obs, info)
        self.task = dataclasses.replace(
            task, instruction=self._meta.utterance, vocabulary=tuple(self._meta.fields.values())
        )

    def _absorb(self, obs: dict[str, Any], info: dict[str, Any]) -> None:
        """Keep what a miniwob reset/step returned: DOM, metadata, screenshot."""
        fields = obs.get("fields") or ()
        utterance = obs.get("utterance") or self._meta.utterance
        if not fields and self._meta.fields:
            fields = tuple(self._meta.fields.items())
        self._meta = MiniWoBState(
            done=bool(info.get("done", False)),
            raw_reward=float(info.get("raw_reward") or 0.0),
            env_reward=float(info.get("env_reward") or 0.0),
            reason=info.get("reason"),
            utterance=str(utterance),
            fields={str(k): str(v) for k, v in fields},
            notes=self._meta.notes,
        )
        self._root_dom = info.get("root_dom")
        shot = obs.get("screenshot")
        self._pixels = shot if isinstance(shot, np.ndarray) else None

    def _screen(self) -> UITree:
        options, fills, alts, grafts, picked = self._page_extras()
        tree, refs, tags = dom_to_tree(
            self._root_dom,
            self.screen_size[0],
            self.screen_size[1],
            name=self._backend_task or "",
            select_options=options,
            fills=fills,
            alts=alts,
            grafts=grafts,
            chosen_options=picked,
        )
        self._refs = refs
        self._tags = tags
        return tree

    def _page_extras(
        self,
    ) -> tuple[
        dict[int, tuple[int, list[str]]],
        dict[int, str],
        dict[int, str],
        dict[int, list[Any]],
        dict[int, frozenset[int]],
    ]:
        """What miniwob's reading leaves out and a person sees, read with one script only on
        pages that need it: the options of ``<select>`` elements (they have no box), the
        fill colours of SVG shapes (miniwob reads CSS colours, which SVG shapes do not use),
        the alternative text of images (icons without text; an accessibility tree names
        them so), which options of a list box are selected (highlighted), and, when the task area reads empty, the visible children of sizeless
        containers (a list of floated items has no height, and miniwob's reading skips
        everything inside an element without a size).
        """
        stack = [self._root_dom] if self._root_dom is not None else []
        needed = empty_area = False
        while stack:
            node = stack.pop()
            needed = needed or node.tag in ("select", "svg", "img")
            if node.id == "area" and not node.children and node.text is None:
                empty_area = True
            stack.extend(node.children)
        if not (needed or empty_area):
            return {}, {}, {}, {}, {}
        try:
            selects, fills, alts, grafts = self._backend.instance.driver.execute_script(
                _PAGE_EXTRAS_JS, empty_area
            )
        except _selenium_errors() as err:
            logger.debug("could not read what miniwob's reading leaves out: %s", err)
            return {}, {}, {}, {}, {}
        from miniwob.dom import DOMElement

        options = {
            int(ref): (int(chosen), [str(t) for t in texts])
            for ref, chosen, texts, _ in selects
            if ref is not None
        }
        picked = {
            int(ref): frozenset(int(i) for i in positions)
            for ref, _, _, positions in selects
            if ref is not None
        }
        children: dict[int, list[Any]] = {}
        for ref, info in grafts:
            children.setdefault(int(ref), []).append(DOMElement(info))
        return (
            options,
            {int(ref): _hex_colour(str(fill)) for ref, fill in fills},
            {int(ref): str(alt) for ref, alt in alts if str(alt).strip()},
            children,
            picked,
        )

    def _predicate_state(self) -> MiniWoBState:
        return self._meta

    def _backend_ended(self) -> str | None:
        if self._dead:
            return "truncated"
        return "terminated" if self._meta.done else None

    def _episode_rewards(self, outcome: float) -> tuple[float, float]:
        raw = self._meta.raw_reward if self._meta.done else 0.0
        if self.reward_mode == "raw":
            return raw, raw
        if self.reward_mode == "time_penalty":
            return (self._meta.env_reward if self._meta.done else 0.0), raw
        return outcome, raw

    def _screenshot(self, screen: UITree) -> np.ndarray:
        width, height = self.screen_size
        if self._pixels is not None and self._pixels.shape == (height, width, 3):
            return self._pixels.astype(np.uint8)  # a copy: observations never share arrays
        return np.zeros((height, width, 3), np.uint8)  # a finished episode shows nothing

    def current_screenshot(self) -> np.ndarray:
        """The task area as the page shows it now, as ``screenshot=True`` observes it
        (miniwob's capture, ``(height, width, 3)`` uint8): the last step's capture when the
        env records them, else one taken now (about 20 ms). Experts of tasks that only the
        screen shows (a canvas, a colour swatch in the instruction) read it through
        ``ctx.extra["screenshot"]``.

        Raises:
            gymnasium.error.ResetNeeded: before the first reset.
        """
        if self._backend is None:
            raise gym.error.ResetNeeded("call reset() first")
        if self._record_screenshots() and self._pixels is not None:
            return self._screenshot(self._current_screen())
        from miniwob.screenshot import get_screenshot, pil_to_numpy_array

        instance = self._backend.instance
        image = get_screenshot(
            instance.driver,
            true_width=instance.inner_width,
            true_height=instance.inner_height,
            crop_width=instance.task_width,
            crop_height=instance.task_height,
        )
        return pil_to_numpy_array(image)

    def _context(self, screen: UITree) -> PredicateContext:
        ctx = super()._context(screen)
        # a callable, so that only the experts that look at the screen pay for a capture
        ctx.extra["screenshot"] = self.current_screenshot
        return ctx

    def _fork_backend(self, clone: GuiEnv) -> None:
        """Fork by replay: a live page cannot be copied, so the clone starts its own browser,
        loads the task with this episode's seed and replays the episode's miniwob actions;
        its DOM reading and fields must then equal this env's, else the fork fails (a task
        whose page depends on timing or the clock did not replay).

        Raises:
            ForkDiverged: when the replayed page differs from this one.
        """
        assert isinstance(clone, MiniWoBEnv)
        if self.task is None or self._backend is None:
            raise gym.error.ResetNeeded("call reset() before fork()")
        clone._backend = None
        clone._backend_task = None
        clone._finalizer = None
        clone._dead = None
        clone._refs, clone._tags = [], []
        clone.last_miniwob_actions = list(self.last_miniwob_actions)
        clone._episode_actions = list(self._episode_actions)
        name = self.task.task_id
        try:
            clone._launch(name)
            obs, info = clone._backend.reset(seed=self._last_seed)
            clone._meta = MiniWoBState(notes=copy.deepcopy(self._meta.notes))
            clone._absorb(obs, info)
            for miniwob_action in self._episode_actions:
                obs, _, done, _, info = step_miniwob(clone._backend, miniwob_action)
                clone._absorb(obs, info)
                if done:
                    break
        except _selenium_errors() as err:
            clone._close_backend()
            raise RuntimeError(f"could not fork MiniWoB task {name!r}: {err}") from err
        clone._screen_cache = None
        ours, theirs = self._current_screen(), clone._current_screen()
        if (
            ours != theirs
            or self._meta.fields != clone._meta.fields
            or (self._meta.done != clone._meta.done)
        ):
            clone._close_backend()
            raise ForkDiverged(
                f"fork of {name!r} (seed {self._last_seed}) diverged after replaying "
                f"{len(self._episode_actions)} miniwob actions: the page depends on timing or "
                "the clock"
            )

    def _candidate_texts(self) -> Sequence[str]:
        fields = tuple(v for v in self._meta.fields.values() if v)
        return fields or tuple(re.findall(r'"([^"]+)"', self._meta.utterance)) or ("a",)

    def candidate_actions(self) -> list[Action]:
        """Clicks on clickable elements, typing the utterance's fields into inputs, and
        scrolling (MiniWoB has no back button)."""
        out = [a for a in super().candidate_actions() if a.type is not ActionType.GOBACK]
        out.append(Action(ActionType.SCROLL, direction="down"))
        return out

    # --------------------------------------------------------------------------- actions

    def to_miniwob_actions(self, action: Action, screen: UITree) -> list[dict[str, Any]]:
        """Our action as the miniwob action dicts that carry it out (``[]`` for DONE).

        Raises:
            ValueError: for actions MiniWoB has no counterpart for, with the reason.
        """
        from miniwob.action import ActionTypes

        config = self._backend.action_space_config
        kinds = config.action_types

        def act(kind: Any, **fields: Any) -> dict[str, Any]:
            return {"action_type": kinds.index(kind), **fields}

        def coords(x: float, y: float) -> np.ndarray:
            return np.array([x, y], dtype=np.float32)

        def centre(index: int) -> np.ndarray:
            x0, y0, x1, y1 = screen.elements[index].bounds
            return coords((x0 + x1) / 2, (y0 + y1) / 2)

        t = action.type
        if t is ActionType.DONE:
            return []
        if t in (ActionType.WAIT, ActionType.DO_NOTHING):
            return [act(ActionTypes.NONE)]
        element = self._target(action, screen)
        if t is ActionType.CLICK:
            if action.modifiers:  # a real click holding keys, at the point or element centre
                if element is None and not action.has_point:
                    raise ValueError("CLICK needs an element index, a label or coordinates")
                x, y = (
                    coords(action.x, action.y) if action.has_point else centre(element.index)  # type: ignore[union-attr]
                )
                keys = action.modifiers.split("+")
                return [{CLICK_HOLDING_KEY: {"point": [float(x), float(y)], "keys": keys}}]
            if action.has_point:
                return [act(ActionTypes.CLICK_COORDS, coords=coords(action.x, action.y))]
            if element is None:
                raise ValueError("CLICK needs an element index, a label or coordinates")
            ref = self._refs[element.index]
            if ref > 0:
                return [act(ActionTypes.CLICK_ELEMENT, ref=ref)]
            return [act(ActionTypes.CLICK_COORDS, coords=centre(element.index))]
        if t is ActionType.HOVER or t is ActionType.DOUBLE_CLICK:
            if element is None and not action.has_point:
                raise ValueError(f"{t} needs an element index, a label or coordinates")
            point = (
                coords(action.x, action.y) if action.has_point else centre(element.index)  # type: ignore[union-attr]
            )
            kind = ActionTypes.MOVE_COORDS if t is ActionType.HOVER else ActionTypes.DBLCLICK_COORDS
            return [act(kind, coords=point)]
        if t is ActionType.INPUT:
            text = action.text or ""
            if len(text) > MAX_INPUT_CHARS:
                raise ValueError(
                    f"INPUT types at most {MAX_INPUT_CHARS} characters on MiniWoB++ "
                    f"(one key event each, against the task's time limit), got {len(text)}"
                )
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(
                    "INPUT text holds a lone surrogate, which cannot be typed"
                ) from None
            if element is None:
                return [act(ActionTypes.TYPE_TEXT, text=text)]
            ref = self._refs[element.index]
            if ref > 0:
                return [act(ActionTypes.FOCUS_ELEMENT_AND_TYPE_TEXT, ref=ref, text=text)]
            return [
                act(ActionTypes.CLICK_COORDS, coords=centre(element.index)),
                act(ActionTypes.TYPE_TEXT, text=text),
            ]
        if t is ActionType.SCROLL:
            if action.direction not in ("up", "down"):
                raise ValueError(f"MiniWoB++ scrolls up or down only, not {action.direction!r}")
            point = (
                centre(element.index)
                if element is not None
                else coords(screen.width / 2, screen.height / 2)
            )
            kind = (
                ActionTypes.SCROLL_UP_COORDS
                if action.direction == "up"
                else ActionTypes.SCROLL_DOWN_COORDS
            )
            return [act(kind, coords=point)]
        if t in (ActionType.ENTER, ActionType.KEY):
            key = "<Enter>" if t is ActionType.ENTER else miniwob_key(action.text or "")
            if key not in config.allowed_keys:
                raise ValueError(
                    f"key {action.text!r} is not one miniwob can press; examples: Enter, Tab, "
                    "Backspace, ArrowDown, ctrl+a, ctrl+c, ctrl+v, single characters"
                )
            return [act(ActionTypes.PRESS_KEY, key=config.allowed_keys.index(key))]
        if t is ActionType.DRAG:
            if action.has_point:
                start, end = coords(action.x, action.y), coords(action.end_x, action.end_y)
            else:
                assert action.index is not None and action.end_index is not None
                start, end = centre(action.index), centre(action.end_index)
            if action.via:  # a stroke through the given points, one pointer move each
                via = action.via
                path = [start, *(coords(x, y) for x, y in zip(via[::2], via[1::2])), end]
            else:
                path = [start + (end - start) * (k / DRAG_STEPS) for k in range(DRAG_STEPS + 1)]
            return [{DRAG_KEY: [[float(x), float(y)] for x, y in path]}]
        if t is ActionType.SELECT:
            return self._select_actions(action, screen, act)
        raise ValueError(
            f"{t} has no MiniWoB++ counterpart (the page has no app navigation, search box or answer channel)"
        )

    def _target(self, action: Action, screen: UITree) -> UIElement | None:
        """The element an action names: by index, or by label as the simulated apps resolve
        it (the first clickable or editable element whose text is the label, any case).

        Raises:
            ValueError: when no element has the label.
        """
        if action.index is not None:
            return screen.elements[action.index]
        if action.label is None:
            return None
        wanted = action.label.strip().lower()
        for e in screen.elements:
            if e.label.strip().lower() == wanted and (e.clickable or e.editable):
                return e
        raise ValueError(f"no clickable element labelled {action.label!r} on this screen")

    def _select_actions(self, action: Action, screen: UITree, act: Any) -> list[dict[str, Any]]:
        """``SELECT(i, "option")`` as a person does it with the keyboard: focus the closed
        drop-down (a click) and press ArrowDown/ArrowUp until the option is chosen (Chromium
        on Linux changes a closed select's value with the arrow keys and fires ``change``)."""
        from miniwob.action import ActionTypes

        assert action.index is not None
        select = screen.elements[action.index]
        if select.role != "select":
            raise ValueError(
                f"SELECT needs a <select> element; element {select.index} is a {select.role}"
            )
        options = [
            screen.elements[i] for i in select.children if screen.elements[i].role == "option"
        ]
        wanted = (action.text or "").strip()
        texts = [o.text for o in options]
        position = next(
            (i for i, text in enumerate(texts) if text == wanted),
            next((i for i, text in enumerate(texts) if text.lower() == wanted.lower()), None),
        )
        if position is None:
            shown = ", ".join(repr(text) for text in texts[:20])
            raise ValueError(f"the select has no option {wanted!r}; its options: {shown}")
        chosen = next((i for i, o in enumerate(options) if o.selected), 0)
        keys = self._backend.action_space_config.allowed_keys
        key = "<ArrowDown>" if position >= chosen else "<ArrowUp>"
        presses = [act(ActionTypes.PRESS_KEY, key=keys.index(key))] * abs(position - chosen)
        return [act(ActionTypes.CLICK_ELEMENT, ref=self._refs[select.index]), *presses]

    def _execute(self, action: Action, screen: UITree) -> str | None:
        if self._dead:
            return f"the browser died ({self._dead})"
        try:
            steps = self.to_miniwob_actions(action, screen)
        except ValueError as err:
            return str(err)
        self.last_miniwob_actions = steps
        try:
            for miniwob_action in steps:
                obs, _, done, _, info = step_miniwob(self._backend, miniwob_action)
                self._episode_actions.append(miniwob_action)
                self._absorb(obs, info)
                if done:
                    break
        except _selenium_errors() as err:
            return self._mark_dead(err)
        return None

    def _info(
        self, valid: bool, error: str | None, description: str, success: bool, action_text: str
    ) -> dict[str, Any]:
        info = super()._info(valid, error, description, success, action_text)
        meta = self._meta
        info["miniwob"] = {
            "raw_reward": meta.raw_reward,
            "env_reward": meta.env_reward,
            "done": meta.done,
            "reason": meta.reason,
            "fields": dict(meta.fields),
            "seed": self._last_seed,
        }
        return info

    def render(self) -> str | np.ndarray | None:
        if self.task is None:
            raise gym.error.ResetNeeded("call reset() before render()")
        return super().render()
