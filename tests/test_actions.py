"""The action grammar: every accepted form, clear errors, round trips and descriptions."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gui_gym.core.actions import (
    MAX_ACTION_LENGTH,
    Action,
    ActionParseError,
    ActionType,
    describe,
    parse_action,
)
from gui_gym.core.ui import UIElement, UITree

A = ActionType


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("CLICK(3)", Action(A.CLICK, index=3)),
        ("click( 3 )", Action(A.CLICK, index=3)),
        ("Click(element_id=7)", Action(A.CLICK, index=7)),
        ("CLICK('12')", Action(A.CLICK, index=12)),
        ("TAP(2)", Action(A.CLICK, index=2)),
        ("LONG_CLICK(4)", Action(A.LONG_CLICK, index=4)),
        ("long_press(4)", Action(A.LONG_CLICK, index=4)),
        ("DOUBLE_CLICK(1)", Action(A.DOUBLE_CLICK, index=1)),
        ('INPUT(2, "lobster tails")', Action(A.INPUT, index=2, text="lobster tails")),
        ("INPUT(2, 'lobster tails')", Action(A.INPUT, index=2, text="lobster tails")),
        ("input(2,“smart quotes”)", Action(A.INPUT, index=2, text="smart quotes")),
        ("INPUT(2, hello, world)", Action(A.INPUT, index=2, text="hello, world")),
        ('INPUT(element_id=2, text="x")', Action(A.INPUT, index=2, text="x")),
        ('INPUT("only text")', Action(A.INPUT, text="only text")),
        ('TYPE(5, "a \\"quoted\\" word")', Action(A.INPUT, index=5, text='a "quoted" word')),
        ("SCROLL(DOWN)", Action(A.SCROLL, direction="down")),
        ("scroll(up)", Action(A.SCROLL, direction="up")),
        ('SCROLL("left", 3)', Action(A.SCROLL, direction="left", index=3)),
        ("SCROLL(3, right)", Action(A.SCROLL, direction="right", index=3)),
        ("SCROLL(direction=down)", Action(A.SCROLL, direction="down")),
        ("GOBACK()", Action(A.GOBACK)),
        ("goback", Action(A.GOBACK)),
        ("BACK()", Action(A.GOBACK)),
        ("HOME()", Action(A.HOME)),
        ("ENTER()", Action(A.ENTER)),
        ('OPEN_APP("Simple SMS Messenger")', Action(A.OPEN_APP, text="Simple SMS Messenger")),
        ('ANSWER("3")', Action(A.ANSWER, text="3")),
        ("ANSWER(It has three methods)", Action(A.ANSWER, text="It has three methods")),
        ("WAIT()", Action(A.WAIT)),
        ("DO_NOTHING()", Action(A.DO_NOTHING)),
        ("NOTHING()", Action(A.DO_NOTHING)),
        ("DONE()", Action(A.DONE)),
        ('DONE("infeasible")', Action(A.DONE, text="infeasible")),
        ("CLICK_XY(100, 200.5)", Action(A.CLICK, x=100, y=200.5)),
        ("CLICK(100, 200)", Action(A.CLICK, x=100, y=200)),
        ("LONG_CLICK_XY(5, 6)", Action(A.LONG_CLICK, x=5, y=6)),
        ('KEY("Tab")', Action(A.KEY, text="Tab")),
        ('SEARCH("red shoes")', Action(A.SEARCH, text="red shoes")),
        ('CLICK("Buy Now")', Action(A.CLICK, label="Buy Now")),
    ],
)
def test_grammar_forms_parse(text: str, expected: Action) -> None:
    assert parse_action(text) == expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"action_type": "click", "index": 3}, Action(A.CLICK, index=3)),
        ({"action_type": "click", "index": "3"}, Action(A.CLICK, index=3)),
        ({"action_type": "click", "x": 10, "y": 20}, Action(A.CLICK, x=10, y=20)),
        ({"action_type": "double_tap", "index": 1}, Action(A.DOUBLE_CLICK, index=1)),
        ({"action_type": "long_press", "index": 2}, Action(A.LONG_CLICK, index=2)),
        (
            {"action_type": "input_text", "text": "hi", "index": 4},
            Action(A.INPUT, index=4, text="hi"),
        ),
        ({"action_type": "keyboard_enter"}, Action(A.ENTER)),
        ({"action_type": "navigate_home"}, Action(A.HOME)),
        ({"action_type": "navigate_back"}, Action(A.GOBACK)),
        ({"action_type": "scroll", "direction": "down"}, Action(A.SCROLL, direction="down")),
        # AndroidWorld's swipe is the inverse of scroll
        ({"action_type": "swipe", "direction": "up"}, Action(A.SCROLL, direction="down")),
        ({"action_type": "open_app", "app_name": "Clock"}, Action(A.OPEN_APP, text="Clock")),
        ({"action_type": "wait"}, Action(A.WAIT)),
        ({"action_type": "status", "goal_status": "complete"}, Action(A.DONE)),
        ({"action_type": "status", "goal_status": "infeasible"}, Action(A.DONE, text="infeasible")),
        ({"action_type": "answer", "text": "42"}, Action(A.ANSWER, text="42")),
        ({"action_type": "unknown"}, Action(A.DO_NOTHING)),
    ],
)
def test_androidworld_json_parses_as_string_and_dict(data: dict, expected: Action) -> None:
    assert parse_action(json.dumps(data)) == expected
    assert parse_action(data) == expected


def test_webshop_text_forms() -> None:
    assert parse_action("search[red running shoes]") == Action(A.SEARCH, text="red running shoes")
    assert parse_action("click[Buy Now]") == Action(A.CLICK, label="Buy Now")
    assert parse_action("Click[ < Prev ]") == Action(A.CLICK, label="< Prev")


def test_action_block_inside_model_output_last_block_wins() -> None:
    output = (
        "<think>The example says <action>CLICK(1)</action> but I need the search box."
        '</think>\n<action>\nINPUT(3, "scooter")\n</action>'
    )
    assert parse_action(output) == Action(A.INPUT, index=3, text="scooter")


def test_code_fenced_action() -> None:
    assert parse_action("```python\nCLICK(4)\n```") == Action(A.CLICK, index=4)
    assert parse_action('```json\n{"action_type": "wait"}\n```') == Action(A.WAIT)


def test_action_objects_pass_through() -> None:
    action = Action(A.CLICK, index=1)
    assert parse_action(action) is action


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty action"),
        ("   ", "empty action"),
        ("JUMP(3)", "unknown action 'JUMP'"),
        ("CLICK()", "needs a target element index"),
        ("CLICK(-1)", "non-negative"),
        ("CLICK(1, 2, 3)", "takes 1 to 2 argument(s), got 3"),
        ("SCROLL(sideways)", "scroll direction must be one of up, down, left, right"),
        ("SCROLL()", "takes 1 to 3 argument(s)"),
        ("SCROLL(down, 1, 2, 3)", "takes 1 to 3 argument(s), got 4"),
        ("SCROLL(down, 3, x=4)", "or a direction and a point, SCROLL(down, 120, 400)"),
        ('INPUT(2, "unterminated)', "unterminated string"),
        ("INPUT()", "INPUT takes an element index and a text"),
        ("ANSWER()", "takes one text argument"),
        ("GOBACK(3)", "GOBACK takes 0 argument(s), got 1"),
        ('{"action_type": "fly"}', "unknown action_type 'fly'"),
        ('{"action_type": "click"}', "needs 'index' or 'x' and 'y'"),
        ('{"action_type": "click", "index": 1, "x": 2, "y": 3}', "not both"),
        ('{"index": 1}', "needs 'action_type'"),
        ("{not json", "invalid JSON action"),
        ("[" * 100_0, "could not read an action"),
        ("<action>CLICK(1)", "without a closing </action>"),
        ("CLICK_XY(nan, 3)", "x must be a number"),
        ("search[]", "needs a query"),
    ],
)
def test_bad_actions_raise_with_a_clear_message(text: str, fragment: str) -> None:
    with pytest.raises(ActionParseError) as err:
        parse_action(text)
    assert fragment in str(err.value)
    assert isinstance(err.value, ValueError)


def test_deeply_nested_json_is_an_error_not_a_crash() -> None:
    with pytest.raises(ActionParseError, match="invalid JSON"):
        parse_action('{"a":' + "[" * 5_000)


def test_overlong_action_is_rejected_unread() -> None:
    with pytest.raises(ActionParseError, match="exceeds the limit"):
        parse_action("CLICK(1)" + " " * MAX_ACTION_LENGTH)


def test_non_string_input_is_rejected() -> None:
    with pytest.raises(ActionParseError, match="must be a str, dict or Action"):
        parse_action(3)  # type: ignore[arg-type]


def test_unicode_digits_are_not_indices() -> None:
    # int() accepts Arabic-Indic and full-width digits; the grammar must not.
    action = parse_action("CLICK(１２)")
    assert action.index is None and action.label == "１２"


actions = st.one_of(
    st.builds(lambda i: Action(A.CLICK, index=i), st.integers(0, 10_000)),
    st.builds(lambda i: Action(A.LONG_CLICK, index=i), st.integers(0, 10_000)),
    st.builds(
        lambda i, t: Action(A.INPUT, index=i, text=t), st.integers(0, 99), st.text(max_size=40)
    ),
    st.builds(lambda t: Action(A.INPUT, text=t), st.text(max_size=40)),
    st.builds(
        lambda d, i: Action(A.SCROLL, direction=d, index=i),
        st.sampled_from(["up", "down", "left", "right"]),
        st.one_of(st.none(), st.integers(0, 99)),
    ),
    st.builds(lambda t: Action(A.ANSWER, text=t), st.text(max_size=40)),
    st.builds(lambda t: Action(A.OPEN_APP, text=t), st.text(max_size=20)),
    st.builds(lambda t: Action(A.SEARCH, text=t), st.text(max_size=20)),
    st.builds(
        lambda x, y: Action(A.CLICK, x=float(x), y=float(y)),
        st.integers(0, 2000),
        st.integers(0, 2000),
    ),
    st.builds(
        lambda t: Action(A.CLICK, label=t),
        st.text(min_size=1, max_size=20).filter(lambda s: not s.strip().isdigit()),
    ),
    st.sampled_from([Action(t) for t in (A.GOBACK, A.HOME, A.ENTER, A.WAIT, A.DO_NOTHING, A.DONE)]),
)


@settings(max_examples=400, deadline=None)
@given(actions)
def test_canonical_string_round_trips(action: Action) -> None:
    assert parse_action(action.to_string()) == action


@settings(max_examples=200, deadline=None)
@given(actions)
def test_dict_round_trips(action: Action) -> None:
    assert Action.from_dict(json.loads(json.dumps(action.to_dict()))) == action


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=200))
def test_parse_never_raises_anything_but_parse_errors(text: str) -> None:
    try:
        result = parse_action(text)
    except ActionParseError:
        return
    assert isinstance(result, Action)


def _screen() -> UITree:
    return UITree.build(
        [
            UIElement(
                0, "input", description="Search wikiHow", editable=True, bounds=(0, 0, 100, 40)
            ),
            UIElement(0, "button", "Create contact", clickable=True, bounds=(0, 50, 100, 90)),
            UIElement(0, "image", clickable=True, bounds=(0, 100, 40, 140)),
        ]
    )


@pytest.mark.parametrize(
    ("action", "text"),
    [
        (Action(A.CLICK, index=1), 'click "Create contact" button'),
        (Action(A.CLICK, x=10, y=60), 'click "Create contact" button'),
        (Action(A.CLICK, label="Create contact"), 'click "Create contact" button'),
        (Action(A.CLICK, index=2), "click image 2"),
        (Action(A.CLICK, index=9), "click element 9"),
        (Action(A.INPUT, index=0, text="pasta"), 'type "pasta" into "Search wikiHow" input'),
        (Action(A.SCROLL, direction="down"), "scroll down"),
        (Action(A.LONG_CLICK, index=1), 'long-press "Create contact" button'),
        (Action(A.GOBACK), "go back"),
        (Action(A.ANSWER, text="three"), 'answer "three"'),
        (Action(A.OPEN_APP, text="Clock"), 'open app "Clock"'),
        (Action(A.DONE), "declare the task complete"),
        (Action(A.DONE, text="infeasible"), 'stop and report the task as "infeasible"'),
    ],
)
def test_describe(action: Action, text: str) -> None:
    assert describe(action, _screen()) == text


def test_describe_truncates_long_text() -> None:
    out = describe(Action(A.ANSWER, text="word " * 100))
    assert out.endswith('..."') and len(out) < 100
