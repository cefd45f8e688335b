"""WebShop's rule baseline (search the instruction, buy the first result) and an informed
variant that also respects the price ceiling and clicks the options the instruction names."""

from __future__ import annotations

import re
from typing import Any

import gymnasium as gym

from gui_gym.core.actions import Action, ActionType

__all__ = ["WebShopGreedyAgent"]

_SEP = " [SEP] "
_CEILING = re.compile(r"price lower than ([0-9]+(?:\.[0-9]+)?) dollars")
_PRICE = re.compile(r"^\$([0-9]+(?:\.[0-9]+)?)")


def _has_screen(env: Any) -> bool:
    """Whether ``env`` is ``GuiGym/WebShop-v0`` (its text env subclasses it, screenless)."""
    from gui_gym.envs.webshop.env import WebShopEnv, WebShopTextEnv

    return isinstance(env, WebShopEnv) and not isinstance(env, WebShopTextEnv)


def _instruction_query(instruction: str) -> str:
    return re.sub(r",? and price lower than [0-9.]+ dollars$", "", instruction).strip()


class WebShopGreedyAgent:
    """WebShop's rule baseline (Yao et al., 2022, section 5: 9.6% success, score 45.6 on
    WebShop's test goals), using only what a page shows.

    1. On the search page: ``search[instruction]`` (the instruction minus its price clause),
       so ranking is BM25's alone.
    2. On the results: open the first product of page 1.
    3. On the product page: Buy Now, options unchosen.
    4. Anywhere else (a sub-page): ``< Prev``.

    With ``informed=True`` it does better than WebShop's rule: on the results it opens the
    highest-ranked product of page 1 within the instruction's price ceiling (the top one if
    none is), and on the product page it first clicks every option value the instruction
    names (whole words; shorter values first, so "8.5" wins over "8" when the instruction
    says 8.5).

    It reads the page through ``env.unwrapped.text_observation()`` and
    ``available_actions()``, so it plays ``GuiGym/WebShop-v0`` and ``GuiGym/WebShop-Text-v0``
    alike, with WebShop's ``search[...]`` / ``click[...]`` actions.

    With ``on_screen=True`` (``GuiGym/WebShop-v0`` only) it acts as a screen-reading agent
    does: it types its search into the search box and clicks by the element's index on the
    screen (``CLICK(3)``, not ``CLICK("B0RPD9VLXA")``), scrolling first to an element off
    screen, as the expert's actions are recorded. The choices are the same; scrolls can cost
    steps.

    Args:
        env: A WebShop env (possibly wrapped).
        informed: Respect the price ceiling and choose the named options (not WebShop's rule).
        on_screen: Act by index on the visible screen (:meth:`WebShopEnv.on_screen`).
    """

    name = "webshop-greedy"

    def __init__(self, env: gym.Env, informed: bool = False, on_screen: bool = False):
        self._informed = bool(informed)
        self._on_screen = bool(on_screen)
        self._env = env.unwrapped
        if not hasattr(self._env, "available_actions") or not hasattr(
            self._env, "text_observation"
        ):
            raise TypeError(f"{type(self._env).__name__} is not a WebShop env")
        if self._on_screen and not _has_screen(self._env):
            raise TypeError(
                f"on_screen needs GuiGym/WebShop-v0's screen, not {type(self._env).__name__}"
            )
        self._clicked: set[str] = set()
        self._pending: str | None = None

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        self._clicked = set()
        self._pending = None

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        self._pending = None
        action = self._choose(observation)
        if self._on_screen:
            action = self._env.on_screen(action)
        if self._pending is not None and action.type is not ActionType.SCROLL:
            self._clicked.add(self._pending)  # clicked now, not only scrolled towards
        return action

    def _choose(self, observation: dict[str, Any]) -> Action:
        instruction = observation["instruction"].lower()
        available = self._env.available_actions()
        clickables: list[str] = available["clickables"]
        if available["has_search_bar"]:
            return Action(ActionType.SEARCH, text=_instruction_query(instruction))
        if "buy now" in clickables:
            return self._on_item(instruction, clickables)
        if "next >" in clickables:
            return self._on_results(instruction)
        if "< prev" in clickables:
            return Action(ActionType.CLICK, label="< Prev")
        return Action(ActionType.DONE)

    def _on_results(self, instruction: str) -> Action:
        segments = self._env.text_observation("text").split(_SEP)
        start = segments.index("Next >") + 1
        products = [(segments[i], segments[i + 2]) for i in range(start, len(segments) - 2, 3)]
        if not products:
            return Action(ActionType.CLICK, label="Back to Search")
        if not self._informed:
            return Action(ActionType.CLICK, label=products[0][0])
        match = _CEILING.search(instruction)
        ceiling = float(match.group(1)) if match else float("inf")
        for asin, price_text in products:
            price = _PRICE.match(price_text)
            if price and float(price.group(1)) <= ceiling:
                return Action(ActionType.CLICK, label=asin)
        return Action(ActionType.CLICK, label=products[0][0])

    def _on_item(self, instruction: str, clickables: list[str]) -> Action:
        if not self._informed:
            return Action(ActionType.CLICK, label="Buy Now")
        values = clickables[clickables.index("buy now") + 1 :]  # option values come last
        named = [
            v
            for v in values
            if v not in self._clicked and re.search(rf"(?<!\w){re.escape(v)}(?!\w)", instruction)
        ]
        if named:
            value = min(named, key=len)
            self._pending = value
            return Action(ActionType.CLICK, label=value)
        return Action(ActionType.CLICK, label="Buy Now")
