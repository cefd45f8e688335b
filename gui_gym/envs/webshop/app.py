"""The simulated WebShop site: state, pages as UI trees, behaviour, and the text views.

Pages and their order follow WebShop's templates (``web_agent_site/templates``):

* **search**: "WebShop", a search box and a Search button;
* **results**: Back to Search, ``Page p (Total results: n)``, < Prev (from page 2), Next >
  (always, as in WebShop, even past the last result), then 10 products, each its ASIN as a
  link, its title and its price;
* **item**: Back to Search, < Prev, each option group (its name, then one radio button per
  value), the title, ``Price: $x``, ``Rating: r``, Description, Features, Reviews, Buy Now;
* **sub-page** (Description / Features / Reviews): Back to Search, < Prev, then the text;
* **done**: "Thank you for shopping with us!" and the score. The episode ends here.

Transitions follow WebShop's ``SimServer``: a search (from any page, as in WebShop's text env)
shows results page 1 and clears chosen options; < Prev goes to the previous results page, from
an item back to its results page (which clears options, as rendering results does in WebShop)
and from a sub-page back to the item; choosing a second value of an option group replaces the
first; Buy Now scores the purchase (:func:`~gui_gym.envs.webshop.reward.webshop_reward`).

The phone-sized screen (360x720) scrolls, 60% of its height per SCROLL. Elements are reached
by index on screen, or, as WebShop's ``click[label]`` does, by label anywhere on the page.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gui_gym.core.actions import Action
from gui_gym.core.env import InvalidAction
from gui_gym.core.sim import Block, ScrollPage, SimApp
from gui_gym.core.task import Task
from gui_gym.core.ui import UIElement, UITree
from gui_gym.envs.webshop.catalog import Catalog, Goal
from gui_gym.envs.webshop.reward import webshop_reward
from gui_gym.envs.webshop.search import SearchIndex

__all__ = ["PRODUCT_WINDOW", "Purchase", "ShopState", "WebShopApp"]

WIDTH, HEIGHT = 360, 720
PRODUCT_WINDOW = 10
"""Products per results page (WebShop's ``PRODUCT_WINDOW``)."""
SUB_PAGES = ("Description", "Features", "Reviews")
BACK_TO_SEARCH = "Back to Search"
PREV_PAGE = "< Prev"
NEXT_PAGE = "Next >"
BUY_NOW = "Buy Now"
OPTION_SEPARATOR = "\x1f"  # between an option's group name and value in a handler argument


@dataclass
class Purchase:
    """What was bought and how it scored.

    Attributes:
        product: Catalog index of the product.
        asin: Its ASIN.
        price: Price paid.
        options: Option name -> chosen value.
        reward: The WebShop reward in [0, 1].
        parts: The reward's parts (:meth:`RewardParts.to_dict`).
    """

    product: int
    asin: str
    price: float
    options: dict[str, str]
    reward: float
    parts: dict[str, Any]


@dataclass
class ShopState:
    """Everything the site remembers in one episode. Task predicates read these fields.

    Attributes:
        goal_id: The episode's goal.
        target_asin: The goal's target product (for milestones; agents never see it).
        goal_options: The goal's option values by name (for milestones).
        page: ``search``, ``results``, ``item``, ``sub`` or ``done``.
        search_text: Text in the search box.
        query: The last search.
        results_page: Results page number (from 1).
        item: Catalog index of the open product, or -1.
        sub_page: ``Description``, ``Features`` or ``Reviews`` on a sub-page.
        options: Chosen options of the open product.
        scroll: Scroll offset of the page in pixels.
        queries: Every search, in order.
        visited: ASINs of opened products, in order, each once.
        purchase: The purchase, once Buy Now was clicked.
    """

    goal_id: str = ""
    target_asin: str = ""
    goal_options: dict[str, str] = field(default_factory=dict)
    page: str = "search"
    search_text: str = ""
    query: str = ""
    results_page: int = 1
    item: int = -1
    sub_page: str = ""
    options: dict[str, str] = field(default_factory=dict)
    scroll: int = 0
    queries: list[str] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)
    purchase: Purchase | None = None

    # Milestone facts (task predicates read them by name).

    @property
    def searched(self) -> bool:
        return bool(self.queries)

    @property
    def item_opened(self) -> bool:
        return bool(self.visited)

    @property
    def target_opened(self) -> bool:
        return self.target_asin in self.visited

    @property
    def options_chosen(self) -> bool:
        """On some item page, every goal option group holds the goal's value (at once, for a
        goal that names no option)."""
        return self.page in ("item", "sub") and all(
            self.options.get(k) == v for k, v in self.goal_options.items()
        )

    @property
    def purchased(self) -> bool:
        return self.purchase is not None


def _button(text: str, handler: str, arg: str = "", resource_id: str = "") -> Block:
    return Block(
        "button",
        text,
        resource_id=resource_id,
        clickable=True,
        handler=handler,
        handler_arg=arg,
        height=30,
    )


class WebShopApp(SimApp[ShopState]):
    """The site over one catalog and its search index.

    Args:
        catalog: Products and goals.
        index: The catalog's search index.
    """

    width = WIDTH
    height = HEIGHT

    def __init__(self, catalog: Catalog, index: SearchIndex):
        super().__init__()
        self.catalog = catalog
        self.index = index
        self.goals: dict[str, Goal] = {g.goal_id: g for g in catalog.goals}
        self._layouts: OrderedDict[Hashable, tuple[ScrollPage, tuple[Block, ...]]] = OrderedDict()

    def initial_state(self, task: Task, rng: np.random.Generator) -> ShopState:
        return ShopState()

    # -- search -------------------------------------------------------------------------------

    def results(self, query: str) -> tuple[int, ...]:
        """Catalog indices a search for ``query`` returns (at most 50, best first)."""
        return self.index.search(query)

    # -- layouts ------------------------------------------------------------------------------

    def _layout_key(self, state: ShopState) -> Hashable:
        page = state.page
        if page == "search":
            return ("search", state.search_text)
        if page == "results":
            return ("results", state.query, state.results_page)
        if page == "item":
            return ("item", state.item, tuple(sorted(state.options.items())))
        if page == "sub":
            return ("sub", state.item, state.sub_page)
        assert state.purchase is not None
        return ("done", state.purchase.product, state.purchase.reward)

    def layout(self, state: ShopState) -> tuple[ScrollPage, tuple[Block, ...]]:
        """The current page's blocks and their scrolling layout (cached per page)."""
        key = self._layout_key(state)
        cached = self._layouts.get(key)
        if cached is None:
            blocks = tuple(self.blocks(state))
            cached = (ScrollPage(blocks, WIDTH, 0, HEIGHT), blocks)
            self._layouts[key] = cached
            if len(self._layouts) > 4096:
                self._layouts.popitem(last=False)
        return cached

    def blocks(self, state: ShopState) -> list[Block]:
        """The current page's content, top to bottom, in WebShop's order."""
        page = state.page
        if page == "search":
            return [
                Block("heading", "WebShop", resource_id="logo"),
                Block(
                    "input",
                    state.search_text,
                    description="Search",
                    resource_id="search_input",
                    editable=True,
                    clickable=True,
                    handler="search_box",
                    height=30,
                ),
                _button("Search", "submit_search", resource_id="search_button"),
            ]
        if page == "results":
            return self._results_blocks(state.query, state.results_page)
        if page == "item":
            return self._item_blocks(state.item, state.options)
        if page == "sub":
            return self._sub_blocks(state.item, state.sub_page)
        assert state.purchase is not None
        purchase = state.purchase
        return [
            Block("heading", "Thank you for shopping with us!", resource_id="thanks"),
            Block("text", f"Purchased: {purchase.asin}"),
            Block("text", "Your score (min 0.0, max 1.0)"),
            Block("text", f"{purchase.reward:.4g}", resource_id="reward"),
        ]

    def _results_blocks(self, query: str, page: int) -> list[Block]:
        results = self.results(query)
        blocks = [
            _button(BACK_TO_SEARCH, "back_to_search"),
            Block("text", f"Page {page} (Total results: {len(results)})", resource_id="page"),
        ]
        if page > 1:
            blocks.append(_button(PREV_PAGE, "prev"))
        blocks.append(_button(NEXT_PAGE, "next"))
        start = (page - 1) * PRODUCT_WINDOW
        for index in results[start : start + PRODUCT_WINDOW]:
            product = self.catalog[index]
            blocks.append(
                Block(
                    "link",
                    product.asin,
                    resource_id="product-link",
                    clickable=True,
                    handler="open_item",
                    handler_arg=str(index),
                )
            )
            blocks.append(Block("text", product.title, resource_id="product-title"))
            blocks.append(Block("text", product.price_text, resource_id="product-price", gap=10))
        return blocks

    def _item_blocks(self, index: int, chosen: dict[str, str]) -> list[Block]:
        product = self.catalog[index]
        blocks = [_button(BACK_TO_SEARCH, "back_to_search"), _button(PREV_PAGE, "prev")]
        for name, values in product.options:
            blocks.append(Block("text", name, resource_id="option-name"))
            for value in values:
                blocks.append(
                    Block(
                        "radio",
                        value,
                        resource_id="option",
                        clickable=True,
                        checkable=True,
                        checked=chosen.get(name) == value,
                        handler="choose_option",
                        handler_arg=f"{name}{OPTION_SEPARATOR}{value}",
                        height=24,
                        indent=8,
                    )
                )
        blocks.append(Block("heading", product.title, resource_id="product-title"))
        blocks.append(Block("text", f"Price: {product.price_text}", resource_id="product-price"))
        blocks.append(Block("text", f"Rating: {self.catalog.rating(index)}"))
        blocks.extend(_button(name, "open_sub", name) for name in SUB_PAGES)
        blocks.append(_button(BUY_NOW, "buy", resource_id="buy-now"))
        return blocks

    def _sub_blocks(self, index: int, sub_page: str) -> list[Block]:
        blocks = [_button(BACK_TO_SEARCH, "back_to_search"), _button(PREV_PAGE, "prev")]
        product = self.catalog[index]
        description, reviews = self.catalog.details(index)
        if sub_page == "Description":
            blocks.append(Block("text", description, resource_id="description"))
        elif sub_page == "Features":
            blocks.extend(Block("text", f, resource_id="feature") for f in product.features)
        else:
            blocks.extend(
                Block("text", f"{stars} out of 5 stars: {text}", resource_id="review")
                for stars, text in reviews
            )
        return blocks

    # -- views --------------------------------------------------------------------------------

    def view_key(self, state: ShopState) -> Hashable:
        return (self._layout_key(state), state.scroll)

    def build_view(self, state: ShopState) -> UITree:
        layout, _ = self.layout(state)
        name = f"item:{state.sub_page}" if state.page == "sub" else state.page
        return self.tree(
            layout.window(state.scroll),
            name=name,
            can_up=state.scroll > 0,
            can_down=state.scroll < layout.max_scroll,
        )

    def page_labels(self, state: ShopState) -> list[tuple[Block, bool]]:
        """``(block, visited)`` for every labelled block of the page (inputs left out), for
        the text views; ``visited`` marks product links opened before."""
        _, blocks = self.layout(state)
        visited = set(state.visited) if state.page == "results" else set()
        return [
            (b, b.handler == "open_item" and b.text in visited)
            for b in blocks
            if b.text and b.role != "input"
        ]

    def available_actions(self, state: ShopState) -> dict[str, Any]:
        """WebShop's ``get_available_actions``: whether the page has the search bar and the
        lower-cased clickables (buttons, then product links, then option values)."""
        if state.page == "search":
            return {"has_search_bar": True, "clickables": ["search"]}
        _, blocks = self.layout(state)
        buttons = [b.text.lower() for b in blocks if b.role == "button"]
        links = [b.text.lower() for b in blocks if b.handler == "open_item"]
        radios = [b.text.lower() for b in blocks if b.role == "radio"]
        return {
            "has_search_bar": False,
            "clickables": list(dict.fromkeys(buttons + links + radios)),
        }

    # -- behaviour ----------------------------------------------------------------------------

    def element_by_label(self, state: ShopState, label: str, screen: UITree) -> UIElement:
        """The clickable element labelled ``label`` (case-insensitive): on screen if it is
        there, else anywhere on the page, as WebShop's ``click[label]`` reads the whole page.

        Raises:
            InvalidAction: when no clickable element of the page has that label.
        """
        wanted = label.strip().lower()
        for e in screen.elements:
            if e.clickable and e.text.strip().lower() == wanted:
                return e
        _, blocks = self.layout(state)
        for block in blocks:
            if block.clickable and block.text.strip().lower() == wanted:
                return block.element((0, 0, 0, 0), index=0)
        raise InvalidAction(f"no clickable element labelled {label!r} on this page")

    def update(self, state: ShopState, action: Action, screen: UITree) -> None:
        if state.page == "done":
            raise InvalidAction("the purchase is complete; the episode is over")
        if action.label is not None and action.index is None and not action.has_point:
            self._dispatch(state, action, self.element_by_label(state, action.label, screen))
            return
        super().update(state, action, screen)

    def _submit(self, state: ShopState, query: str) -> None:
        query = " ".join(query.lower().split())
        if not query:
            raise InvalidAction("a search needs a non-empty query")
        state.queries.append(query)
        state.query = query
        state.search_text = query
        state.page = "results"
        state.results_page = 1
        state.item = -1
        state.sub_page = ""
        state.options = {}
        state.scroll = 0

    def _go(self, state: ShopState, page: str) -> None:
        if page == "results":
            state.options = {}  # WebShop clears options whenever it renders results
        state.page = page
        state.scroll = 0

    def search(self, state: ShopState, query: str) -> None:
        self._submit(state, query)

    def on_click_search_box(self, state: ShopState, element: UIElement, action: Action) -> None:
        pass  # focusing the box changes nothing; INPUT types into it

    def on_input_search_box(self, state: ShopState, element: UIElement, action: Action) -> None:
        # Typing submits, as WebShop's search[...] and Mobile-Env's INPUT do.
        self._submit(state, action.text or "")

    def on_click_submit_search(self, state: ShopState, element: UIElement, action: Action) -> None:
        if not state.search_text.strip():
            raise InvalidAction("the search box is empty; type a query first")
        self._submit(state, state.search_text)

    def enter(self, state: ShopState, screen: UITree) -> None:
        if state.page == "search" and state.search_text.strip():
            self._submit(state, state.search_text)
            return
        raise InvalidAction("ENTER does nothing here: there is no query to submit")

    def on_click_back_to_search(self, state: ShopState, element: UIElement, action: Action) -> None:
        self.home(state)

    def on_click_prev(self, state: ShopState, element: UIElement, action: Action) -> None:
        self.back(state)

    def on_click_next(self, state: ShopState, element: UIElement, action: Action) -> None:
        state.results_page += 1
        self._go(state, "results")

    def on_click_open_item(self, state: ShopState, element: UIElement, action: Action) -> None:
        index = int(element.handler_arg)
        state.item = index
        asin = self.catalog[index].asin
        if asin not in state.visited:
            state.visited.append(asin)
        self._go(state, "item")

    def on_click_choose_option(self, state: ShopState, element: UIElement, action: Action) -> None:
        name, value = element.handler_arg.split(OPTION_SEPARATOR, 1)
        state.options[name] = value

    def on_click_open_sub(self, state: ShopState, element: UIElement, action: Action) -> None:
        state.sub_page = element.handler_arg
        self._go(state, "sub")

    def on_click_buy(self, state: ShopState, element: UIElement, action: Action) -> None:
        goal = self.goals[state.goal_id]
        product = self.catalog[state.item]
        parts = webshop_reward(
            self.catalog.product_spec(state.item),
            self.catalog.goal_spec(goal),
            product.price,
            state.options,
        )
        details = parts.to_dict()
        details.update(asin=product.asin, price=product.price, options=dict(state.options))
        state.purchase = Purchase(
            product=state.item,
            asin=product.asin,
            price=product.price,
            options=dict(state.options),
            reward=parts.reward,
            parts=details,
        )
        self._go(state, "done")

    def back(self, state: ShopState) -> None:
        """< Prev: sub-page -> item -> results page -> previous results page -> search."""
        if state.page == "sub":
            self._go(state, "item")
        elif state.page == "item":
            self._go(state, "results")
        elif state.page == "results":
            if state.results_page > 1:
                state.results_page -= 1
                self._go(state, "results")
            else:
                self.home(state)
        # on the search page there is nowhere to go back to

    def home(self, state: ShopState) -> None:
        """Back to Search: the empty search page."""
        state.page = "search"
        state.search_text = ""
        state.item = -1
        state.sub_page = ""
        state.options = {}
        state.scroll = 0

    def scroll(self, state: ShopState, direction: str, element: UIElement | None) -> None:
        if direction in ("left", "right"):
            return  # nothing scrolls sideways; a horizontal swipe changes nothing
        layout, _ = self.layout(state)
        delta = layout.scroll_step if direction == "down" else -layout.scroll_step
        state.scroll = layout.clamp(state.scroll + delta)

    # -- text views ---------------------------------------------------------------------------

    def text_observation(self, state: ShopState, instruction: str) -> str:
        """WebShop's ``text`` observation: the page's visible strings joined by ``[SEP]``."""
        labels = [b.text for b, _ in self.page_labels(state)]
        if state.page == "search":
            labels = [labels[0], "Instruction:", instruction, *labels[1:]]
        elif state.page != "done":  # WebShop's done page shows no instruction
            labels = ["Instruction:", instruction, *labels]
        return " [SEP] ".join(labels)

    def text_rich_observation(self, state: ShopState, instruction: str) -> str:
        """WebShop's ``text_rich`` observation: one string a line, buttons marked
        ``[button] x [button_]``, chosen options and visited products ``[clicked button]``."""
        lines: list[str] = []
        clicked_notes: list[str] = []
        head = [] if state.page == "done" else ["Instruction:", instruction]
        for block, visited in self.page_labels(state):
            text = block.text
            if block.role == "button":
                lines.append(f"[button] {text} [button_]")
            elif block.role == "radio":
                if block.checked:
                    lines.append(f"  [clicked button] {text} [clicked button_]")
                    clicked_notes.insert(0, f"You have clicked {text}.")
                else:
                    lines.append(f"  [button] {text} [button_]")
            elif block.handler == "open_item":
                mark = "clicked button" if visited else "button"
                lines.append(f"\n[{mark}] {text} [{mark}_]")
            else:
                lines.append(text)
        if state.page == "search":
            lines = [lines[0], *head, *lines[1:]]
        else:
            lines = [*head, *lines]
        return "".join(f"{line}\n" for line in [*clicked_notes, *lines])
