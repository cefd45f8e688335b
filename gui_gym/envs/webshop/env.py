"""``GuiGym/WebShop-v0`` (pages as UI trees) and ``GuiGym/WebShop-Text-v0`` (WebShop's text
observation with its available actions)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.sim import SimGuiEnv
from gui_gym.core.spaces import UnicodeText
from gui_gym.core.task import TaskSuite
from gui_gym.core.ui import UITree
from gui_gym.envs.webshop.app import BACK_TO_SEARCH, ShopState, WebShopApp
from gui_gym.envs.webshop.catalog import CATALOG_SIZES, Catalog, load_catalog
from gui_gym.envs.webshop.search import SearchIndex, load_index
from gui_gym.envs.webshop.tasks import build_suite

__all__ = ["OBSERVATION_MODES", "WebShopEnv", "WebShopTextEnv", "WebShopWorld", "get_world"]

OBSERVATION_MODES = ("text", "text_rich")


@dataclass(frozen=True)
class WebShopWorld:
    """One catalog with everything built on it: search index, site and task suite."""

    catalog: Catalog
    index: SearchIndex
    app: WebShopApp
    suite: TaskSuite


@functools.cache
def get_world(catalog_size: int) -> WebShopWorld:
    """The catalog of ``catalog_size`` products with its index, site and goals, built once per
    process (from the disk cache after the first time on a machine).

    Raises:
        ValueError: for a size not in 1,000 / 10,000 / 100,000.
        gymnasium.error.DependencyNotInstalled: without bm25s.
    """
    catalog = load_catalog(catalog_size)
    index = load_index(catalog)
    app = WebShopApp(catalog, index)
    return WebShopWorld(catalog, index, app, build_suite(catalog, app))


def _check_catalog_size(catalog_size: Any) -> int:
    if isinstance(catalog_size, bool) or catalog_size not in CATALOG_SIZES:
        allowed = ", ".join(str(s) for s in CATALOG_SIZES)
        raise ValueError(f"catalog_size must be one of {allowed}, got {catalog_size!r}")
    return int(catalog_size)


class WebShopEnv(SimGuiEnv[ShopState]):
    """A WebShop-like shopping site over a generated catalog, with WebShop's reward.

    ## Description

    A self-contained version of WebShop (Yao et al., 2022): the same page flow (search,
    results with 10 products a page and Next >/< Prev, a product page with option buttons,
    Description/Features/Reviews, Buy Now), the same action vocabulary and the same reward,
    over a catalog generated with a fixed seed (beauty, food, fashion, furniture and
    electronics; near-duplicates, distractors and paraphrased attributes) and searched with
    BM25 (``bm25s``; no Java, no downloads). Each episode is one goal: an instruction built from
    a target product's attributes, options and a price ceiling.

    ## Action Space

    A string in the gui-gym grammar (``CLICK(3)``, ``INPUT(1, "red shoes")``, ``SCROLL(down)``,
    ``GOBACK()``, ...) or in WebShop's form: ``search[red shoes]`` (from any page, as in
    WebShop's text env) and ``click[Buy Now]`` / ``click[b0k2z81qxa]`` (a label anywhere on the
    page, case-insensitive). Typing into the search box submits it. Malformed actions and labels
    not on the page count as a step, change nothing, and set ``info["action_valid"] = False``.

    ## Observation Space

    ``Dict(instruction=UnicodeText, screen=UnicodeText[, screenshot=Box(720, 360, 3)])``: the
    goal, the visible part of the page rendered one element a line (``<link id=4
    clickable>B0K2Z81QXA</link>``), and with ``screenshot=True`` a Pillow drawing of it.

    ## Rewards

    0 until Buy Now; then WebShop's reward of the purchase, in [0, 1]:
    ``r_type * (matched attributes + matched options + [price <= ceiling]) / (goal attributes
    + goal options + 1)`` (:func:`gui_gym.envs.webshop.reward.webshop_reward`). Its parts are in
    ``info["webshop"]`` on the final step. ``info["success"]`` is true when the reward is 1.0.

    ## Starting State

    The search page with an empty search box; the goal is drawn (seeded) from the split.

    ## Episode End

    Terminated at Buy Now (or ``DONE()``, which scores 0 without a purchase); truncated after
    ``max_steps`` steps.

    ## Arguments

    * ``catalog_size``: 1,000 (tests), 10,000 (default) or 100,000 products.
    * ``task``: a goal id (``"test-00003"``), or None to sample one per reset.
    * ``split``: ``"train"``, ``"test"`` or ``"all"``; no target product, nor its
      near-duplicates, is in both (1,000: 200/50 goals; 10,000: 2,000/500; 100,000: 9,500/500).
    * ``category``: ``"beauty"``, ``"food"``, ``"fashion"``, ``"furniture"`` or
      ``"electronics"`` to restrict sampling.
    * ``screenshot``: add screenshots to observations (default False).
    * ``max_steps``: step budget (default 30).
    * ``render_mode``: ``"ansi"`` or ``"rgb_array"``.

    ## Version History

    * v0: initial release.
    """

    def __init__(
        self,
        catalog_size: int = 10_000,
        task: str | None = None,
        split: str = "train",
        category: str | None = None,
        screenshot: bool = False,
        max_steps: int = 30,
        render_mode: str | None = None,
    ):
        self.catalog_size = _check_catalog_size(catalog_size)
        world = get_world(self.catalog_size)
        self.app: WebShopApp = world.app
        super().__init__(
            world.suite,
            task=task,
            split=split,
            category=category,
            screenshot=screenshot,
            max_steps=max_steps,
            render_mode=render_mode,
        )

    # -- episode end and info -------------------------------------------------------------------

    def _backend_ended(self) -> str | None:
        """Buy Now ends the episode, whatever the reward (WebShop's done page)."""
        return "terminated" if self.state is not None and self.state.purchase else None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        observation, info = super().reset(seed=seed, options=options)
        self._add_info(info)
        return observation, info

    def step(
        self, action: str | Action | dict[str, Any]
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = super().step(action)
        self._add_info(info)
        return observation, reward, terminated, truncated, info

    def _add_info(self, info: dict[str, Any]) -> None:
        purchase = self.state.purchase
        if purchase is not None:
            info["webshop"] = dict(purchase.parts)

    # -- the WebShop views of the current page --------------------------------------------------

    def text_observation(self, mode: str = "text") -> str:
        """The current page as WebShop's ``text`` (``[SEP]``-joined) or ``text_rich``
        observation, whichever env this is."""
        assert self.task is not None
        if mode == "text":
            return self.app.text_observation(self.state, self.task.instruction)
        if mode == "text_rich":
            return self.app.text_rich_observation(self.state, self.task.instruction)
        raise ValueError(f"mode must be one of {', '.join(OBSERVATION_MODES)}, got {mode!r}")

    def available_actions(self) -> dict[str, Any]:
        """WebShop's ``get_available_actions()``: ``{"has_search_bar": bool, "clickables":
        [lower-cased labels]}``."""
        return self.app.available_actions(self.state)

    # -- the expert on screen -------------------------------------------------------------------

    def oracle_action(self) -> Action:
        """The expert's next action as a tap or scroll on the visible screen: the task's
        ``search[...]`` becomes typing into the search box (after Back to Search), its
        ``click[label]`` a CLICK on the element, scrolling first when it is off screen."""
        return self.on_screen(super().oracle_action())

    def on_screen(self, action: Action) -> Action:
        """``action`` in WebShop's form (``search[...]``, ``click[label]``) as a screen-reading
        agent takes it on the visible screen: a search is typing into the search box (after
        Back to Search), a click on a label a CLICK on its element's index, or a scroll towards
        it when it is off screen. Any other action is returned as it is."""
        screen = self.ui_tree
        if action.type is ActionType.SEARCH:
            box = screen.find_one(handler="search_box")
            if box is not None:
                return Action(ActionType.INPUT, index=box.index, text=action.text)
            return self._on_screen(BACK_TO_SEARCH, screen)
        if action.type is ActionType.CLICK and action.label is not None:
            return self._on_screen(action.label, screen)
        return action

    def _on_screen(self, label: str, screen: UITree) -> Action:
        wanted = label.lower()
        for e in screen.elements:
            if e.clickable and e.text.lower() == wanted:
                return Action(ActionType.CLICK, index=e.index)
        layout, blocks = self.app.layout(self.state)
        y = layout.position_of(lambda b: b.clickable and b.text.lower() == wanted)
        if y is None:  # pragma: no cover - the expert only names labels of this page
            return Action(ActionType.CLICK, label=label)
        return Action(ActionType.SCROLL, direction="up" if y < self.state.scroll else "down")

    # -- pickling: the catalog stays behind -----------------------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        # The catalog, index, site and suite are process-wide and rebuilt from the disk cache
        # on unpickling, so a pickled env (multiprocessing, Ray) carries only its episode.
        return self._portable_state()

    def __setstate__(self, state: dict[str, Any]) -> None:
        world = get_world(state["catalog_size"])
        self._restore_portable_state(state, world.suite, world.app)


class WebShopTextEnv(WebShopEnv):
    """WebShop's text environment: the classic text observation and its available actions.

    ## Description

    The site of ``GuiGym/WebShop-v0`` observed as WebShop's ``WebAgentTextEnv`` observes it,
    for LLM agents and text-RL frameworks.

    ## Action Space

    WebShop's ``search[query]`` (from any page) and ``click[label]`` with a label from
    ``available_actions`` (case-insensitive; ``click[search]`` is refused, as in WebShop: use
    ``search[...]``). The gui-gym grammar works too. Invalid actions change nothing and set
    ``info["action_valid"] = False``.

    ## Observation Space

    ``Dict(instruction=UnicodeText, screen=UnicodeText, available_actions=UnicodeText[,
    screenshot=Box(720, 360, 3)])``: ``screen`` is the whole page as WebShop's ``text``
    observation (``WebShop [SEP] Instruction: [SEP] ... [SEP] Search``), or ``text_rich`` with
    ``observation_mode="text_rich"``; ``available_actions`` lists the actions of the page one a
    line (``search[<query>]`` on the search page, else ``click[...]`` per clickable). The same
    list is in ``info["available_actions"]`` as WebShop's dict ``{"has_search_bar": bool,
    "clickables": [...]}``.

    ## Rewards

    As ``GuiGym/WebShop-v0``: WebShop's reward at Buy Now, parts in ``info["webshop"]``.

    ## Starting State

    The search page; the goal is drawn (seeded) from the split.

    ## Episode End

    Terminated at Buy Now (or ``DONE()``); truncated after ``max_steps`` steps.

    ## Arguments

    As ``GuiGym/WebShop-v0``, plus ``observation_mode``: ``"text"`` (default) or
    ``"text_rich"``.

    ## Version History

    * v0: initial release.
    """

    max_available_actions_length = 16384

    def __init__(
        self,
        catalog_size: int = 10_000,
        task: str | None = None,
        split: str = "train",
        category: str | None = None,
        observation_mode: str = "text",
        screenshot: bool = False,
        max_steps: int = 30,
        render_mode: str | None = None,
    ):
        if observation_mode not in OBSERVATION_MODES:
            raise ValueError(
                f"observation_mode must be one of {', '.join(OBSERVATION_MODES)}, "
                f"got {observation_mode!r}"
            )
        self.observation_mode = observation_mode
        super().__init__(
            catalog_size=catalog_size,
            task=task,
            split=split,
            category=category,
            screenshot=screenshot,
            max_steps=max_steps,
            render_mode=render_mode,
        )
        self.observation_space.spaces["available_actions"] = UnicodeText(
            self.max_available_actions_length
        )

    def _observation(self, screen: UITree) -> dict[str, Any]:
        observation = super()._observation(screen)
        observation["screen"] = self.text_observation(self.observation_mode)[
            : self.max_screen_length
        ]
        observation["available_actions"] = self._available_action_text()
        return observation

    def _available_action_text(self) -> str:
        available = self.available_actions()
        if available["has_search_bar"]:
            return "search[<query>]"
        lines = [f"click[{c}]" for c in available["clickables"]]
        return "\n".join(lines)[: self.max_available_actions_length]

    def _add_info(self, info: dict[str, Any]) -> None:
        super()._add_info(info)
        info["available_actions"] = self.available_actions()

    def _execute(self, action: Action, screen: UITree) -> str | None:
        if (
            action.type is ActionType.CLICK
            and action.label is not None
            and action.label.strip().lower() == "search"
        ):
            return "click[search] is not an action here (as in WebShop); use search[<query>]"
        return super()._execute(action, screen)

    def oracle_action(self) -> Action:
        """The expert's next action in WebShop's form (``search[...]`` / ``click[label]``)."""
        if self.task is None:
            raise gym.error.ResetNeeded("call reset() before oracle_action()")
        return self.task.oracle(self.context())

    def candidate_actions(self) -> list[Action]:
        """WebShop's action list: a search per vocabulary text on the search page, else a
        click per clickable."""
        if self.task is None:
            raise gym.error.ResetNeeded("call reset() before candidate_actions()")
        available = self.available_actions()
        if available["has_search_bar"]:
            return [Action(ActionType.SEARCH, text=t) for t in self._candidate_texts()]
        screen = self._current_screen()
        clicks = [Action(ActionType.CLICK, label=c) for c in available["clickables"]]
        return [a for a in clicks if self._possible(a, screen)]

    def render(self) -> Any:
        if self.render_mode == "ansi" and self.task is not None:
            return f"[{self.task.task_id}] step {self._steps}/{self.max_steps}\n{self.text_observation(self.observation_mode)}\n"
        return super().render()
