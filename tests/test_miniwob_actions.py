"""The web-page actions MiniWoB++ added to the grammar (DRAG, DRAG_XY, SELECT): parsing in
every accepted form, round trips, descriptions, fuzzing, and a clear refusal on every backend
without them. No browser needed; test_miniwob.py runs them in Chromium."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gui_gym
from gui_gym.core.actions import Action, ActionParseError, ActionType, describe, parse_action
from gui_gym.core.ui import UIElement, UITree

A = ActionType


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DRAG(3, 7)", Action(A.DRAG, index=3, end_index=7)),
        ("drag_and_drop( 3 ,7 )", Action(A.DRAG, index=3, end_index=7)),
        ("DRAG_XY(1, 2.5, 30, 40)", Action(A.DRAG, x=1, y=2.5, end_x=30, end_y=40)),
        (
            "DRAG_XY(1, 2, 3, 4.5, 5, 6)",
            Action(A.DRAG, x=1, y=2, via=(3.0, 4.5), end_x=5, end_y=6),
        ),
        (
            '{"action_type": "drag", "x": 1, "y": 2, "via": [3, 4, 7, 8], "end_x": 5, "end_y": 6}',
            Action(A.DRAG, x=1, y=2, via=(3.0, 4.0, 7.0, 8.0), end_x=5, end_y=6),
        ),
        ('SELECT(4, "Red")', Action(A.SELECT, index=4, text="Red")),
        ("select_option(index=4, option='a, b')", Action(A.SELECT, index=4, text="a, b")),
        (
            '{"action_type": "drag", "index": 3, "end_index": 7}',
            Action(A.DRAG, index=3, end_index=7),
        ),
        (
            '{"action_type": "drag", "x": 3, "y": 7, "end_x": 1, "end_y": 2}',
            Action(A.DRAG, x=3, y=7, end_x=1, end_y=2),
        ),
        (
            '{"action_type": "select", "index": 3, "option": "X"}',
            Action(A.SELECT, index=3, text="X"),
        ),
        ("<action>DRAG(0, 1)</action>", Action(A.DRAG, index=0, end_index=1)),
        ("HOVER(5)", Action(A.HOVER, index=5)),
        ("hover_xy(3, 4.5)", Action(A.HOVER, x=3, y=4.5)),
        ('HOVER("Menu")', Action(A.HOVER, label="Menu")),
        ('CLICK(5, modifiers="ctrl")', Action(A.CLICK, index=5, modifiers="ctrl")),
        ("click(5, hold='Shift+Control')", Action(A.CLICK, index=5, modifiers="ctrl+shift")),
        ('CLICK_XY(3, 4, modifier="cmd")', Action(A.CLICK, x=3, y=4, modifiers="meta")),
        (
            'CLICK("Viviana, B", modifiers="ctrl")',
            Action(A.CLICK, label="Viviana, B", modifiers="ctrl"),
        ),
        (
            '{"action_type": "click", "index": 2, "modifiers": "ctrl"}',
            Action(A.CLICK, index=2, modifiers="ctrl"),
        ),
    ],
)
def test_new_actions_parse_in_every_form(text: str, expected: Action) -> None:
    action = parse_action(text)
    assert action == expected
    assert parse_action(action.to_string()) == action
    assert Action.from_dict(action.to_dict()) == action


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("DRAG(3)", "DRAG takes 2 element indices"),
        ("DRAG(1, 2, 3)", "DRAG takes 2 element indices"),
        ("DRAG(x=1, y=2)", "positional arguments only"),
        ("DRAG(-1, 2)", "non-negative"),
        ("DRAG_XY(1, 2, 3)", "DRAG_XY takes 4 coordinates"),
        ("DRAG_XY(1, 2, 3, nan)", "must be a number"),
        ("DRAG_XY(1, 2, 3, 4, 5)", "or x, y pairs of a path"),
        (f"DRAG_XY({', '.join(['1'] * 134)})", "through up to 64 more points"),
        ('{"type": "DRAG", "x": 1, "y": 2, "end_x": 3, "end_y": 4, "via": [1]}', "x, y pairs"),
        ('{"type": "DRAG", "x": 1, "y": 2, "end_x": 3, "end_y": 4, "via": "12"}', "a list"),
        ('{"type": "DRAG", "x": 1, "y": 2, "end_x": 3, "end_y": 4, "via": [1, "a"]}', "via"),
        ('{"type": "CLICK", "x": 1, "y": 2, "via": [1, 2]}', "belongs to DRAG_XY only"),
        ("SELECT(4)", "SELECT takes an element index and one option text"),
        ('SELECT(1, "a", "b")', "SELECT takes an element index and one option text"),
        ('SELECT("x", "y")', "non-negative integer"),
        ('CLICK(3, modifiers="hyper")', "modifiers must be ctrl, shift, alt, meta joined by"),
        ('CLICK(3, modifiers="")', "modifiers must be ctrl, shift, alt, meta"),
        ('SCROLL(down, modifiers="ctrl")', "SCROLL takes no modifiers"),
        ('DRAG(1, 2, hold="ctrl")', "DRAG takes no modifiers"),
        ('CLICK(modifiers="ctrl")', "CLICK needs a target element index"),
        ('{"action_type": "long_press", "index": 1, "modifiers": "ctrl"}', "apply to CLICK only"),
        ('{"action_type": "drag", "index": 3}', "needs 'index' and 'end_index'"),
        ('{"action_type": "select", "text": "a"}', "needs 'index' and 'text'"),
    ],
)
def test_malformed_new_actions_say_what_is_expected(text: str, message: str) -> None:
    with pytest.raises(ActionParseError, match=message):
        parse_action(text)


def test_descriptions_name_both_ends_and_the_option() -> None:
    tree = UITree(
        (
            UIElement(0, "text", text="small box", bounds=(0, 0, 10, 10)),
            UIElement(1, "text", text="big box", bounds=(20, 20, 60, 60)),
            UIElement(2, "select", text="Red", bounds=(0, 70, 50, 90)),
        ),
        width=160,
        height=210,
    )
    assert describe(parse_action("DRAG(0, 1)"), tree) == 'drag "small box" text onto "big box" text'
    assert describe(parse_action("DRAG_XY(1, 2, 30, 40)")) == "drag from (1, 2) to (30, 40)"
    assert (
        describe(parse_action("DRAG_XY(1, 2, 5, 5, 9, 1, 30, 40)"))
        == "drag from (1, 2) through 2 point(s) to (30, 40)"
    )
    assert describe(parse_action('SELECT(2, "Blue")'), tree) == 'select "Blue" in "Red" select'


new_actions = st.one_of(
    st.builds(
        lambda i, j: Action(A.DRAG, index=i, end_index=j),
        st.integers(0, 10**6),
        st.integers(0, 10**6),
    ),
    st.builds(
        lambda *xy: Action(A.DRAG, x=xy[0], y=xy[1], end_x=xy[2], end_y=xy[3]),
        *[st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: round(v, 3)) for _ in range(4)],
    ),
    st.builds(
        lambda xy, via: Action(A.DRAG, x=xy[0], y=xy[1], end_x=xy[2], end_y=xy[3], via=via),
        st.tuples(*[st.integers(-500, 500) for _ in range(4)]),
        st.lists(st.integers(-500, 500), min_size=1, max_size=10).map(
            lambda v: tuple(float(x) for x in v[: len(v) // 2 * 2]) or (1.0, 2.0)
        ),
    ),
    st.builds(
        lambda i, t: Action(A.SELECT, index=i, text=t),
        st.integers(0, 10**6),
        st.text(max_size=40),
    ),
    st.builds(  # a click holding keys, on an element, a label or a point
        lambda target, keys: Action(A.CLICK, **target, modifiers="+".join(keys)),
        st.one_of(
            st.integers(0, 10**6).map(lambda i: {"index": i}),
            st.text(min_size=1, max_size=20)
            .filter(lambda t: t.strip() and not t.strip().isdigit())
            .map(lambda t: {"label": t}),
            st.tuples(st.integers(0, 10**4), st.integers(0, 10**4)).map(
                lambda xy: {"x": xy[0], "y": xy[1]}
            ),
        ),
        st.lists(st.sampled_from(["ctrl", "shift", "alt", "meta"]), min_size=1, unique=True),
    ),
)


@settings(max_examples=300, deadline=None)
@given(new_actions)
def test_new_actions_round_trip(action: Action) -> None:
    assert parse_action(action.to_string()) == action
    assert parse_action(json.dumps(action.to_dict())) == action
    assert describe(action)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["DRAG", "DRAG_XY", "SELECT", "select_option", "DRAG_AND_DROP"]),
    st.lists(
        st.one_of(st.text(max_size=12), st.integers().map(str), st.just('"'), st.just("(")),
        max_size=6,
    ),
)
def test_fuzzed_new_action_calls_parse_or_fail_cleanly(name: str, args: list[str]) -> None:
    try:
        action = parse_action(f"{name}({', '.join(args)})")
    except ActionParseError:
        return
    assert action.type in (A.DRAG, A.SELECT)
    assert parse_action(action.to_string()) == action


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["CLICK", "CLICK_XY", "TAP", "SCROLL"]),
    st.lists(
        st.one_of(
            st.text(max_size=12),
            st.integers().map(str),
            st.sampled_from(['modifiers="ctrl"', "hold='shift+alt'", "modifier=", 'modifiers="x"']),
        ),
        max_size=4,
    ),
)
def test_fuzzed_clicks_holding_keys_parse_or_fail_cleanly(name: str, args: list[str]) -> None:
    try:
        action = parse_action(f"{name}({', '.join(args)})")
    except ActionParseError:
        return
    assert action.modifiers is None or action.type is A.CLICK
    assert parse_action(action.to_string()) == action


def test_a_click_holding_keys_is_described_and_matched_as_its_own_action() -> None:
    from gui_gym.rewards.action_match import get_matcher

    tree = UITree((UIElement(0, "option", text="Viviana", bounds=(0, 0, 50, 10)),))
    ctrl_click = parse_action('CLICK(0, modifiers="ctrl")')
    assert describe(ctrl_click, tree) == 'ctrl+click "Viviana" option'
    assert describe(parse_action('CLICK_XY(3, 4, modifiers="shift+ctrl")')) == (
        "ctrl+shift+click point (3, 4)"
    )
    # a replayed expert's plain click is not matched by a ctrl+click, and says why
    result = get_matcher("strict")(ctrl_click, parse_action("CLICK(0)"), tree)
    assert result.type_ok and not result.exact and "held keys" in result.reason
    assert get_matcher("strict")(ctrl_click, ctrl_click, tree).exact


@pytest.mark.parametrize("env_id", list(gui_gym.ENV_IDS))
@pytest.mark.parametrize(
    "action",
    [
        "DRAG(0, 1)",
        "DRAG_XY(1, 1, 5, 5)",
        "DRAG_XY(1, 1, 3, 3, 5, 5)",
        'SELECT(0, "x")',
        "HOVER(0)",
        "HOVER_XY(1, 1)",
        'CLICK(0, modifiers="ctrl")',
    ],
)
def test_backends_without_web_actions_refuse_them_with_a_reason(env_id: str, action: str) -> None:
    env = gym.make(env_id)
    try:
        obs, _ = env.reset(seed=0)
        after, reward, terminated, truncated, info = env.step(action)
        assert not info["action_valid"]
        assert "has no counterpart in" in info["action_error"]
        assert after == obs and reward == 0.0 and not (terminated or truncated)
    finally:
        env.close()
