"""Issue 16 reproductions for the action grammar and argument checks: linear-time parsing,
a bounded parse cache, typed errors instead of crashes, and clear errors for bad arguments."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.core import actions as actions_module
from gui_gym.core.actions import (
    MAX_INDEX,
    Action,
    ActionParseError,
    ActionType,
    parse_action,
)
from gui_gym.core.trajectory import read_trajectories
from gui_gym.core.ui import UIElement, UITree, render_text
from gui_gym.wrappers import RecordTrajectories

# --------------------------------------------------------------- item 1: linear-time parsing


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "text",
    [
        "```\n" + "\n" * 19_000 + "x",  # took 6 s at 1,500 newlines (cubic)
        "```" + " " * 19_000 + "x```",  # 20 s at 4,000 spaces
        "CLICK" + " " * 19_990 + "x",  # 7.6 s (quadratic)
        "<action>" * 2_400,
        "click" + " " * 19_990 + "[x",
    ],
)
def test_degenerate_model_output_is_rejected_in_linear_time(text: str) -> None:
    with pytest.raises(ActionParseError):
        parse_action(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("```\nCLICK(3)\n```", Action(ActionType.CLICK, index=3)),
        ("```python\nCLICK(3)\n```", Action(ActionType.CLICK, index=3)),
        ("```CLICK(3)```", Action(ActionType.CLICK, index=3)),  # CLICK is not a language tag
        ('```json {"action_type": "click", "index": 2}```', Action(ActionType.CLICK, index=2)),
        ("think first <action>CLICK(1)</action> no: <ACTION>CLICK(2)</ACTION>", Action("CLICK", 2)),
        ("DONE ;", Action(ActionType.DONE)),
        ("click [Buy Now]", Action(ActionType.CLICK, label="Buy Now")),
        ("CLICK (4) ;", Action(ActionType.CLICK, index=4)),
    ],
)
def test_fences_blocks_and_calls_still_parse(text: str, expected: Action) -> None:
    assert parse_action(text) == expected


# ------------------------------------------------------------- item 6: a bounded parse cache


def test_long_action_strings_are_not_cached() -> None:
    actions_module._parse_cached.cache_clear()
    for i in range(50):
        parse_action(f'INPUT(0, "{i}{"x" * 15_000}")')
    assert actions_module._parse_cached.cache_info().currsize == 0
    parse_action("CLICK(3)")
    parse_action("CLICK(3)")
    assert actions_module._parse_cached.cache_info().hits == 1


# -------------------------------------------------------------------- item 7: typed errors


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("CLICK(index=3, foo)", "one element index or two coordinates"),
        ("CLICK(text=3, 4)", "one element index or two coordinates"),
        ("CLICK_XY(index=3, foo)", "one element index or two coordinates"),
        ("CLICK(x=3)", "needs both coordinates"),
        ("LONG_CLICK(y=3, x=)", "x must be a number"),
        ("CLICK(1234567890)", f"at most {MAX_INDEX}"),
        ("CLICK(99999999999999999999999)", f"at most {MAX_INDEX}"),
    ],
)
def test_malformed_calls_are_parse_errors_not_crashes(text: str, reason: str) -> None:
    with pytest.raises(ActionParseError, match=reason):
        parse_action(text)


def test_an_index_out_of_range_is_refused_everywhere() -> None:
    with pytest.raises(ActionParseError, match="from 0 to"):
        Action(ActionType.CLICK, index=MAX_INDEX + 1)
    with pytest.raises(ActionParseError, match="from 0 to"):
        parse_action({"action_type": "click", "index": 10**12})
    assert parse_action(f"CLICK({MAX_INDEX})").index == MAX_INDEX


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"type": ActionType.DRAG, "x": 1, "y": 2}, "by points needs"),  # asserted in to_string
        ({"type": ActionType.DRAG, "x": 1, "y": 2, "end_x": 3}, "by points needs"),
        ({"type": ActionType.DRAG, "index": 1}, "needs 'index' and 'end_index'"),  # DRAG(1, None)
        ({"type": ActionType.DRAG}, "needs 'index' and 'end_index'"),
        ({"type": ActionType.SELECT, "index": 2}, "needs 'index' and 'text'"),  # SELECT(2, "")
        ({"type": "SELECT", "text": "Red"}, "needs 'index' and 'text'"),
    ],
)
def test_an_incomplete_drag_or_select_is_refused_when_built(kwargs: dict, reason: str) -> None:
    """Constructed directly, as from a dict or a string: no Action exists that ``to_string``
    cannot write or that would not parse back to itself."""
    with pytest.raises(ActionParseError, match=reason):
        Action(**kwargs)


@pytest.mark.parametrize(
    "action",
    [
        Action(ActionType.DRAG, index=1, end_index=2),
        Action(ActionType.DRAG, x=1, y=2, end_x=3.5, end_y=4),
        Action(ActionType.DRAG, x=1, y=2, end_x=3, end_y=4, via=(2, 3)),
        Action(ActionType.SELECT, index=2, text="Red"),
    ],
)
def test_a_complete_drag_or_select_round_trips(action: Action) -> None:
    assert parse_action(action.to_string()) == action


# -------------------------------------------------------------- item 9: lone surrogates


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('ANSWER("\\ud83d")', "\ufffd"),
        ('ANSWER("a\\ud83d\\ude00b")', "a😀b"),  # an escaped pair is one character
        ('{"action_type": "answer", "text": "\\udc00"}', "\ufffd"),
        ('ANSWER("\ud83d")', "\ufffd"),  # a raw lone surrogate in the string itself
    ],
)
def test_lone_surrogates_are_replaced_at_parse_time(text: str, expected: str) -> None:
    action = parse_action(text)
    assert action.text == expected
    action.to_string().encode("utf-8")


def test_a_surrogate_answer_is_recorded(tmp_path) -> None:
    path = tmp_path / "t.jsonl"
    env = RecordTrajectories(gym.make("GuiGym/WikiHow-v0"), path)
    env.reset(seed=0)
    env.step('INPUT(0, "\\ud83d")')
    env.step('ANSWER("\\ud83d")')
    env.close()
    (trajectory,) = read_trajectories(path)
    assert trajectory.steps[-1].action == 'ANSWER("\ufffd")'
    path.read_text(encoding="utf-8")


# ---------------------------------------------------------------- item 22: bad arguments


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"task": 123}, "task must be a string id"),
        ({"task": ["a"]}, "task must be a string id"),
        ({"screenshot": "no"}, "screenshot must be True or False"),
        ({"split": 1}, "split must be"),
    ],
)
@pytest.mark.parametrize("env_id", ["GuiGym/WikiHow-v0", "GuiGym/AndroidWorld-v0"])
def test_bad_constructor_arguments_are_clear_errors(env_id: str, kwargs: dict, reason: str) -> None:
    with pytest.raises((TypeError, ValueError), match=reason):
        gym.make(env_id, **kwargs)


def test_a_non_string_task_option_is_a_clear_error() -> None:
    env = gym.make("GuiGym/WikiHow-v0")
    with pytest.raises(TypeError, match="must be a task id string"):
        env.reset(options={"task": 5})
    suite = env.unwrapped.suite
    with pytest.raises(TypeError, match="a task id is a string"):
        suite[["a"]]


@pytest.mark.parametrize(
    ("env_id", "method"),
    [
        ("GuiGym/WikiHow-v0", "candidate_actions"),
        ("GuiGym/WikiHow-v0", "context"),
        ("GuiGym/WebShop-Text-v0", "oracle_action"),
        ("GuiGym/WebShop-Text-v0", "candidate_actions"),
        ("GuiGym/WebShop-v0", "candidate_actions"),
    ],
)
def test_calls_before_reset_ask_for_a_reset(env_id: str, method: str) -> None:
    env = gym.make(env_id)
    with pytest.raises(gym.error.ResetNeeded, match="reset"):
        getattr(env.unwrapped, method)()


def test_a_quote_in_a_description_is_escaped_on_screen() -> None:
    element = UIElement(
        index=0, role="button", text="Save", description='say "hi" & <go>', clickable=True
    )
    line = render_text(UITree([element]))
    assert 'description="say &quot;hi&quot; &amp; &lt;go&gt;"' in line
    assert json.dumps(line)  # still one line of plain text


@pytest.mark.parametrize(
    "text",
    ["DRAG_XY(2147483647, 1, 2, 3)", "CLICK_XY(1e9, 5)", "CLICK_XY(5, -1" + "0" * 40 + ")"],
)
def test_out_of_range_coordinates_are_told_the_allowed_range(text: str) -> None:
    with pytest.raises(ActionParseError, match="between -10,000,000 and 10,000,000"):
        parse_action(text)


def test_numbers_written_with_an_exponent_are_coordinates() -> None:
    action = parse_action("CLICK_XY(1e6, 2.5E1)")
    assert (action.x, action.y) == (1_000_000.0, 25.0)
