"""Declarative predicates: every form, every operator, and errors that locate the bad field."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.predicates import (
    PredicateContext,
    PredicateError,
    answers_match,
    compile_predicate,
    normalize_answer,
    resolve_path,
)
from gui_gym.core.ui import UIElement, UITree


@dataclass
class Page:
    kind: str = "article"
    arg: str = "Bake-Lobster-Tails"


@dataclass
class State:
    page: Page = field(default_factory=Page)
    bookmarks: list[str] = field(default_factory=lambda: ["Bake-Lobster-Tails"])
    ratings: dict[str, str] = field(default_factory=lambda: {"Bake-Lobster-Tails": "yes"})
    count: int = 3
    _secret: str = "hidden"

    def method(self) -> str:
        return "called"


def ctx(**kwargs) -> PredicateContext:
    screen = UITree.build(
        [
            UIElement(0, "heading", "References"),
            UIElement(
                0, "button", "Bookmark", clickable=True, selected=True, resource_id="bookmark"
            ),
        ]
    )
    return PredicateContext(state=kwargs.pop("state", State()), screen=screen, **kwargs)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"state": {"path": "page.kind", "op": "eq", "value": "article"}}, True),
        ({"state": {"path": "page.kind", "op": "ne", "value": "article"}}, False),
        ({"state": {"path": "count", "op": "eq", "value": "3"}}, False),  # no str/int coercion
        ({"state": {"path": "count", "op": "eq", "value": 3}}, True),
        ({"state": {"path": "count", "op": "ne", "value": "3"}}, True),
        ({"state": {"path": "count", "op": "lt", "value": 4}}, True),
        ({"state": {"path": "count", "op": "ge", "value": 4}}, False),
        ({"state": {"path": "count", "op": "gt", "value": "x"}}, False),
        ({"state": {"path": "page.kind", "op": "in", "value": ["home", "article"]}}, True),
        ({"state": {"path": "bookmarks", "op": "contains", "value": "Bake-Lobster-Tails"}}, True),
        (
            {"state": {"path": "bookmarks", "op": "not_contains", "value": "Bake-Lobster-Tails"}},
            False,
        ),
        ({"state": {"path": "page.arg", "op": "contains", "value": "lobster"}}, True),
        ({"state": {"path": "page.arg", "op": "regex", "value": "^Bake-"}}, True),
        ({"state": {"path": "bookmarks", "op": "len_eq", "value": 1}}, True),
        ({"state": {"path": "bookmarks", "op": "len_ge", "value": 2}}, False),
        ({"state": {"path": "bookmarks.0", "op": "eq", "value": "Bake-Lobster-Tails"}}, True),
        ({"state": {"path": "ratings.Bake-Lobster-Tails", "op": "eq", "value": "yes"}}, True),
        ({"state": {"path": "ratings.Other", "op": "eq", "value": "yes"}}, False),
        ({"state": {"path": "ratings.Other", "op": "missing"}}, True),
        ({"state": {"path": "bookmarks", "op": "truthy"}}, True),
        ({"state": {"path": "nothing.here", "op": "falsy"}}, True),
        ({"screen_contains": "references"}, True),
        ({"screen_contains": {"text": "references", "case_sensitive": True}}, False),
        ({"screen_contains": {"text": "^Book", "regex": True}}, True),
        ({"element": {"role": "button", "text": "Bookmark", "selected": True}}, True),
        ({"element": {"resource_id": "bookmark", "selected": False}}, False),
        ({"element": {"text_regex": "Refer"}}, True),
        ({"all": [{"screen_contains": "References"}, {"const": True}]}, True),
        ({"any": [{"const": False}, {"screen_contains": "nope"}]}, False),
        ({"not": {"const": False}}, True),
    ],
)
def test_predicate_forms(spec: dict, expected: bool) -> None:
    assert compile_predicate(spec).evaluate(ctx()) is expected


def test_action_and_answer_predicates() -> None:
    clicked = ctx(action=Action(ActionType.CLICK, index=1))
    typed = ctx(action=Action(ActionType.INPUT, index=0, text="Lobster tails"))
    assert compile_predicate({"action": {"type": "CLICK"}}).evaluate(clicked)
    assert not compile_predicate({"action": {"type": ["INPUT"]}}).evaluate(clicked)
    assert compile_predicate({"action": {"type": "INPUT", "text_regex": "lobster"}}).evaluate(typed)
    assert not compile_predicate({"action": {"type": "CLICK"}}).evaluate(ctx())
    answer = compile_predicate({"answer": {"value": "3", "mode": "numeric"}})
    assert answer.evaluate(ctx(answer="Three methods."))
    assert not answer.evaluate(ctx(answer="There are three methods."))  # the number, alone
    assert not answer.evaluate(ctx(answer="four"))
    assert not answer.evaluate(ctx())


def test_paths_never_reach_methods_or_private_names() -> None:
    state = State()
    assert compile_predicate({"state": {"path": "method", "op": "missing"}}).evaluate(
        ctx(state=state)
    )
    assert compile_predicate({"state": {"path": "_secret", "op": "missing"}}).evaluate(
        ctx(state=state)
    )
    assert compile_predicate({"state": {"path": "page.__class__", "op": "missing"}}).evaluate(
        ctx(state=state)
    )


def test_resolve_path_through_dicts_lists_and_objects() -> None:
    data = {"a": [{"b": Page()}]}
    assert resolve_path(data, "a.0.b.kind") == "article"
    assert resolve_path(data, "a.-1.b.arg") == "Bake-Lobster-Tails"


@pytest.mark.parametrize(
    ("spec", "where", "reason"),
    [
        (
            {"state": {"path": "x", "op": "eqq", "value": 1}},
            "predicate.state.op",
            "unknown operator 'eqq'",
        ),
        ({"state": {"path": "", "op": "eq", "value": 1}}, "predicate.state.path", "non-empty"),
        ({"state": {"path": "x", "op": "eq"}}, "predicate.state.value", "needs a value"),
        ({"state": {"path": "x", "op": "in", "value": 3}}, "predicate.state.value", "needs a list"),
        (
            {"state": {"path": "x", "op": "regex", "value": "(unclosed"}},
            "predicate.state.value",
            "invalid regex",
        ),
        ({"element": {"colour": "red"}}, "predicate.element", "unknown key(s) ['colour']"),
        ({"element": {"selected": "yes"}}, "predicate.element.selected", "true or false"),
        ({"answer": {"value": "3", "mode": "telepathy"}}, "predicate.answer.mode", "unknown mode"),
        ({"action": {"type": "FLY"}}, "predicate.action.type", "unknown action type"),
        ({"all": []}, "predicate.all", "non-empty list"),
        ({"all": [{"const": True}, {"bogus": 1}]}, "predicate.all[1]", "unknown predicate 'bogus'"),
        ({"screen_contains": "", "x": 1}, "predicate", "exactly one of"),
        ("eval('1')", "predicate", "exactly one of"),
    ],
)
def test_bad_specs_name_the_field(spec: object, where: str, reason: str) -> None:
    with pytest.raises(PredicateError) as err:
        compile_predicate(spec)
    assert err.value.path == where
    assert reason in err.value.reason


def test_normalize_answer() -> None:
    assert normalize_answer("  The Trudi Griffin, LPC!  ") == "trudi griffin lpc"


@pytest.mark.parametrize(
    ("answer", "expected", "mode", "ok"),
    [
        ("Seafood.", "seafood", "normalized", True),
        ("sea food", "seafood", "normalized", False),
        ("1,234,567 views", "1234567", "numeric", True),
        ("twelve", "12", "numeric", True),
        ("Twelve.", "12", "numeric", True),
        ("3.5", "3", "numeric", False),
        ("qzxv garbage 7f3a", "7", "numeric", False),
        ("there are 3", "3", "numeric", False),
        ("1,23", "123", "numeric", False),
        ("3 4", "3", "numeric", False),
        ("Kitchen shears", "Kitchen Shear", "fuzzy", True),
        ("Scissors", "Kitchen shears", "fuzzy", False),
        ("It is filed under Seafood", "seafood", "contains", True),
        ("ID 12-b", r"\d+-b", "regex", True),
    ],
)
def test_answers_match(answer: str, expected: str, mode: str, ok: bool) -> None:
    assert answers_match(answer, expected, mode) is ok


def test_numeric_tolerance() -> None:
    assert answers_match("3.4", "3", "numeric", tolerance=0.5)
    assert not answers_match("3.6", "3", "numeric", tolerance=0.5)


def test_milestone_predicate_reads_the_milestones_reached() -> None:
    seen = compile_predicate({"milestone": "answer_in_view"})
    assert not seen.evaluate(ctx())
    assert seen.evaluate(ctx(milestones=("search", "answer_in_view")))
    with pytest.raises(PredicateError, match="milestone name"):
        compile_predicate({"milestone": 3})
