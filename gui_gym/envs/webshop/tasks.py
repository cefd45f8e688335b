"""WebShop goals as tasks: setup, milestones, outcome, and the expert.

Each goal of the catalog becomes a :class:`WebShopTask`. Its outcome is the WebShop reward of
the purchase (0 without one); the task succeeds when that reward is 1.0. Milestones, in order:
``searched``, ``item_opened``, ``target_opened``, ``options_chosen`` (the goal's option values
all chosen on an item page; reached on the first item page by a goal that names no option),
``purchased``.

The expert (:meth:`WebShopTask.oracle`) reads the true state, as BrowserGym's ``cheat`` does,
and acts in WebShop's own vocabulary (``search[...]``, ``click[label]``); the UI-tree env turns
those into taps and scrolls on the screen. It is stateless, so it recovers from any state an
agent leaves behind:

1. on the target's page: choose each goal option not yet chosen, then Buy Now (from a
   sub-page, < Prev first);
2. on results that hold the target: page with Next > / < Prev to it and open it;
3. on another item whose results hold the target: < Prev back to them;
4. otherwise search: first the instruction's own words (what a shopper would type), and if
   that search was already made and missed the target, the target's title.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import PredicateContext, compile_predicate
from gui_gym.core.task import Milestone, Task, TaskSuite
from gui_gym.envs.webshop.app import BUY_NOW, NEXT_PAGE, PREV_PAGE, PRODUCT_WINDOW, ShopState
from gui_gym.envs.webshop.catalog import Catalog, Goal

if TYPE_CHECKING:
    from gui_gym.envs.webshop.app import WebShopApp

__all__ = ["MILESTONES", "WebShopTask", "build_suite", "instruction_query"]


def _fact(name: str, description: str) -> Milestone:
    return Milestone(
        name, compile_predicate({"state": {"path": name, "op": "truthy"}}, name), description
    )


MILESTONES: tuple[Milestone, ...] = (
    _fact("searched", "a search was made"),
    _fact("item_opened", "a product page was opened"),
    _fact("target_opened", "the goal's target product was opened"),
    _fact("options_chosen", "every option the goal names was chosen on a product page"),
    _fact("purchased", "Buy Now was clicked"),
)
"""The milestones every WebShop task reports, in order."""

_PRICE_SUFFIX = re.compile(r",? and price lower than [0-9.]+ dollars$")


def instruction_query(instruction: str) -> str:
    """The instruction without WebShop's price suffix: what a shopper would type."""
    return _PRICE_SUFFIX.sub("", instruction).strip()


def _normalize(query: str) -> str:
    return " ".join(query.lower().split())  # as the site stores a submitted search


@dataclass(eq=False)
class WebShopTask(Task):
    """One goal: buy a product matching its attributes, options and price ceiling.

    Attributes:
        goal: The goal (``params`` holds the same facts as plain data).
        app: The site the goal lives in (its catalog and search index).
    """

    goal: Goal | None = None
    app: WebShopApp | None = None

    def setup(self, state: Any, rng: np.random.Generator) -> Any:
        assert self.goal is not None and self.app is not None
        assert isinstance(state, ShopState)
        state.goal_id = self.goal.goal_id
        state.target_asin = self.app.catalog[self.goal.product].asin
        state.goal_options = dict(self.goal.options)
        return state

    def is_successful(self, ctx: PredicateContext) -> float:
        """The WebShop reward of the purchase, or 0.0 before Buy Now."""
        purchase = ctx.state.purchase
        return 0.0 if purchase is None else float(purchase.reward)

    def oracle(self, ctx: PredicateContext) -> Action:
        """The expert's next action, as ``search[...]`` or ``click[label]`` (see the module
        docstring for its rules)."""
        assert self.goal is not None and self.app is not None
        state: ShopState = ctx.state
        goal, app = self.goal, self.app
        target = goal.product
        if state.page == "done":
            return Action(ActionType.DONE)
        if state.item == target and state.page == "sub":
            return Action(ActionType.CLICK, label=PREV_PAGE)
        if state.item == target and state.page == "item":
            for name, value in goal.options:
                if state.options.get(name) != value:
                    return Action(ActionType.CLICK, label=value)
            return Action(ActionType.CLICK, label=BUY_NOW)
        results = app.results(state.query) if state.query else ()
        if state.page == "results" and target in results:
            wanted_page = results.index(target) // PRODUCT_WINDOW + 1
            if state.results_page == wanted_page:
                return Action(ActionType.CLICK, label=app.catalog[target].asin)
            label = NEXT_PAGE if state.results_page < wanted_page else PREV_PAGE
            return Action(ActionType.CLICK, label=label)
        if state.page in ("item", "sub") and target in results:
            return Action(ActionType.CLICK, label=PREV_PAGE)
        first = instruction_query(goal.instruction)
        if _normalize(first) not in state.queries:
            return Action(ActionType.SEARCH, text=first)
        return Action(ActionType.SEARCH, text=app.catalog[target].title.lower())


def build_suite(catalog: Catalog, app: WebShopApp) -> TaskSuite:
    """Every goal of ``catalog`` as a task (ids ``train-00042`` / ``test-00007``)."""
    tasks = []
    for goal in catalog.goals:
        target = catalog[goal.product]
        ptype = target.product_type
        query = instruction_query(goal.instruction)
        tasks.append(
            WebShopTask(
                task_id=goal.goal_id,
                instruction=goal.instruction,
                category=target.category,
                split=goal.split,
                params={
                    "asin": target.asin,
                    "product": goal.product,
                    "query": target.type_key,
                    "attributes": list(goal.attributes),
                    "options": {name: value for name, value in goal.options},
                    "price_upper": goal.price_upper,
                },
                milestones=MILESTONES,
                vocabulary=(ptype.goal_names[0], query, f"{goal.attributes[0]} {ptype.key}"),
                goal=goal,
                app=app,
            )
        )
    return TaskSuite(tasks, name=f"webshop-{len(catalog)}", source=f"catalog {catalog.hash[:12]}")
