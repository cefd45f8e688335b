"""WikiHow tasks: the packaged task suite and the plan-following oracle.

Each task file entry carries a ``plan``: the ordered steps a person would take. The oracle is
stateless and robust: from whatever state it is asked about, it finds the *latest* plan step
that applies on the current page (the page matches and the step's target exists there) and
acts toward it: types the query, scrolls toward an off-screen target, clicks it, or answers.
When no step applies (a wrong page, an open sheet) it goes back. That lets it recover from
the states a random or learning agent leaves behind, which PRM labelling relies on.

Plan steps::

    {"op": "search", "query": "bake lobster tails"}
    {"op": "click", "page": "search", "target": {"handler": "open_article", "handler_arg": "Bake-Lobster-Tails"}}
    {"op": "scroll_to", "page": "article:Bake-Lobster-Tails", "target": {"role": "heading", "text": "References"}}
    {"op": "answer", "page": "article:...", "target": {...the element showing the answer...}, "text": "3"}

Any step may add ``"when": {...predicate...}``: it applies only while that predicate holds
(e.g. open the bookmarks tab only once the article is bookmarked).

``page`` is a page kind (``search``, ``home``, ``bookmarks``, ``about``) or ``kind:arg``, or
``dialog:share`` for the share sheet.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import (
    Predicate,
    PredicateContext,
    PredicateError,
    compile_predicate,
)
from gui_gym.core.sim import Block
from gui_gym.core.task import Task, TaskSuite
from gui_gym.core.ui import UIElement
from gui_gym.envs.wikihow.app import WikiHowState, get_app

__all__ = ["CATEGORIES", "WikiHowTask", "load_suite"]

CATEGORIES = ("Cross-Page", "In-Page", "QA")
_OPS = {
    "search": {"query"},
    "click": {"page", "target"},
    "scroll_to": {"page", "target"},
    "answer": {"page", "target", "text"},
}
_TARGET_KEYS = {"role", "text", "description", "resource_id", "handler", "handler_arg"}


def _matches(target: dict[str, str], item: UIElement | Block) -> bool:
    return all(getattr(item, key) == value for key, value in target.items())


def _page_matches(spec: str, state: WikiHowState) -> bool:
    if spec == "dialog:share":
        return state.dialog == "share"
    if state.dialog:
        return False
    page = state.page
    if ":" in spec:
        kind, arg = spec.split(":", 1)
        return page.kind == kind and page.arg == arg
    return page.kind == spec


class WikiHowTask(Task):
    """A WikiHow task whose oracle follows its ``plan`` (see the module docstring)."""

    def validate(self, where: str) -> None:
        self._when: dict[int, Predicate] = {}
        if self.category not in CATEGORIES:
            raise PredicateError(
                f"{where}.category",
                f"must be one of {', '.join(CATEGORIES)}, got {self.category!r}",
            )
        if not self.plan:
            raise PredicateError(f"{where}.plan", "a WikiHow task needs a non-empty plan")
        for i, step in enumerate(self.plan):
            at = f"{where}.plan[{i}]"
            op = step.get("op")
            if op not in _OPS:
                raise PredicateError(f"{at}.op", f"unknown op {op!r}; allowed: {', '.join(_OPS)}")
            missing = _OPS[op] - set(step)
            if missing:
                raise PredicateError(at, f"op {op!r} needs {sorted(missing)}")
            extra = set(step) - _OPS[op] - {"op", "when"}
            if extra:
                raise PredicateError(at, f"unknown field(s) {sorted(extra)} for op {op!r}")
            if "when" in step:
                self._when[i] = compile_predicate(step["when"], f"{at}.when")
            target = step.get("target")
            if target is not None and (
                not isinstance(target, dict) or not target or set(target) - _TARGET_KEYS
            ):
                raise PredicateError(
                    f"{at}.target", f"must be an object with keys from {sorted(_TARGET_KEYS)}"
                )

    def oracle(self, ctx: PredicateContext) -> Action:
        state: WikiHowState = ctx.state
        for i in range(len(self.plan) - 1, -1, -1):
            when = self._when.get(i)
            if when is not None and not when.evaluate(ctx):
                continue
            action = self._act(self.plan[i], state, ctx)
            if action is not None:
                return action
        if state.dialog or len(state.stack) > 1:
            return Action(ActionType.GOBACK)
        return Action(ActionType.HOME)

    def _act(
        self, step: dict[str, Any], state: WikiHowState, ctx: PredicateContext
    ) -> Action | None:
        screen = ctx.screen
        op = step["op"]
        if op == "search":
            if state.dialog or state.page.kind not in ("home", "search"):
                return None
            box = screen.find_one(handler="search_box")
            if box is None:  # pragma: no cover - home and search always show the box
                return None
            return Action(ActionType.INPUT, index=box.index, text=step["query"])
        if not _page_matches(step["page"], state):
            return None
        target = step["target"]
        for element in screen.elements:
            if _matches(target, element):
                if op == "click":
                    return Action(ActionType.CLICK, index=element.index)
                if op == "answer":
                    return Action(ActionType.ANSWER, text=step["text"])
                return Action(ActionType.WAIT)  # scroll_to: already in view
        # Not on screen: is it further along this page?
        layout = get_app().layout(state)
        y = layout.position_of(lambda b: _matches(target, b))
        if y is None:
            return None
        scroll = state.page.scroll
        if y < scroll:
            return Action(ActionType.SCROLL, direction="up")
        return Action(ActionType.SCROLL, direction="down")


@functools.cache
def load_suite() -> TaskSuite:
    """The packaged 577-task WikiHow suite (``data/tasks.json``), validated, loaded once."""
    path = resources.files("gui_gym.envs.wikihow").joinpath("data/tasks.json")
    with resources.as_file(path) as file:
        return TaskSuite.load(file, task_cls=WikiHowTask)
