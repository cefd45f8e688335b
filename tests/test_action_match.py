"""UI-S1's Matches(a, a*): element identity, box and distance tests, text rules, scrolls."""

from __future__ import annotations

import math

import pytest

from gui_gym.core.actions import parse_action
from gui_gym.core.ui import UIElement, UITree
from gui_gym.rewards.action_match import (
    ActionMatcher,
    get_matcher,
    normalize_text,
    point_distance,
    scaled_box_contains,
    token_f1,
)

SCREEN = UITree.build(
    [
        UIElement(0, "button", text="OK", bounds=(100, 100, 200, 150), clickable=True),
        UIElement(0, "button", text="Cancel", bounds=(100, 200, 200, 250), clickable=True),
        UIElement(0, "input", text="Search", bounds=(0, 0, 360, 40), clickable=True, editable=True),
        # the same element as 0, listed twice by the backend (same role, label, id and box)
        UIElement(0, "button", text="OK", bounds=(100, 100, 200, 150), clickable=True),
        UIElement(0, "list", bounds=(0, 300, 360, 700), scrollable=True),
    ],
    width=360,
    height=720,
)
STRICT = ActionMatcher.strict()
LOOSE = ActionMatcher.loose()


def judge(pred: str, expert: str, matcher: ActionMatcher = STRICT) -> tuple[bool, bool]:
    result = matcher(parse_action(pred), parse_action(expert), SCREEN)
    return result.type_ok, result.exact


def test_presets_carry_the_documented_thresholds() -> None:
    # UI-S1 public code (training): box x1.2, normalised distance 0.04
    assert (STRICT.box_scale, STRICT.max_point_distance, STRICT.text_match) == (
        1.2,
        0.04,
        "normalized",
    )
    # AITW-style evaluation: box x1.4, 14% of the screen, text F1 >= 0.5
    assert (LOOSE.box_scale, LOOSE.max_point_distance, LOOSE.text_match, LOOSE.min_text_f1) == (
        1.4,
        0.14,
        "f1",
        0.5,
    )


def test_element_identity() -> None:
    assert judge("CLICK(1)", "CLICK(1)") == (True, True)
    assert judge("CLICK(0)", "CLICK(1)") == (True, False)
    assert judge("CLICK(3)", "CLICK(0)") == (True, True)  # same element, listed twice


def test_type_mismatch() -> None:
    assert judge("LONG_CLICK(1)", "CLICK(1)") == (False, False)
    assert judge("GOBACK()", "HOME()") == (False, False)


def test_point_inside_the_scaled_target_box() -> None:
    assert judge("CLICK_XY(150, 125)", "CLICK(0)") == (True, True)
    # x=205 is outside the box (x1=200) but inside it enlarged 1.2x (x in 90..210)
    assert judge("CLICK_XY(205, 125)", "CLICK(0)") == (True, True)
    tight = ActionMatcher(box_scale=1.0)
    assert judge("CLICK_XY(205, 125)", "CLICK(0)", tight) == (True, False)
    assert judge("CLICK_XY(213, 125)", "CLICK(0)") == (True, False)
    assert judge("CLICK_XY(213, 125)", "CLICK(0)", LOOSE) == (True, True)  # x1.4: 80..220


def test_index_against_expert_point() -> None:
    assert judge("CLICK(1)", "CLICK_XY(150, 225)") == (True, True)
    assert judge("CLICK(0)", "CLICK_XY(150, 225)") == (True, False)


def test_point_within_normalised_distance() -> None:
    # no tappable element at (300, 600): only the distance test applies
    near = point_distance((310, 605), (300, 600), 360, 720)
    assert near == pytest.approx(math.hypot(10 / 360, 5 / 720))
    assert near < 0.04
    assert judge("CLICK_XY(310, 605)", "CLICK_XY(300, 600)") == (True, True)
    assert judge("CLICK_XY(330, 600)", "CLICK_XY(300, 600)") == (True, False)  # 0.083
    assert judge("CLICK_XY(330, 600)", "CLICK_XY(300, 600)", LOOSE) == (True, True)  # <= 0.14


def test_a_scrollable_list_is_not_a_tap_target() -> None:
    # both points lie in the scrollable list; its box must not make every tap inside it
    # match, so they are compared by distance (0.78 apart)
    assert judge("CLICK_XY(50, 400)", "CLICK_XY(300, 650)") == (True, False)


def test_text_rules() -> None:
    assert normalize_text("  Bake, LOBSTER-tails! ") == "bake lobster tails"
    assert judge('INPUT(2, "Bake Lobster Tails!")', 'INPUT(2, "bake lobster tails")') == (
        True,
        True,
    )
    assert token_f1("bake lobster", "bake lobster tails") == pytest.approx(0.8)
    assert judge('INPUT(2, "bake lobster")', 'INPUT(2, "bake lobster tails")') == (True, False)
    assert judge('INPUT(2, "bake lobster")', 'INPUT(2, "bake lobster tails")', LOOSE) == (
        True,
        True,
    )
    picky = ActionMatcher(text_match="f1", min_text_f1=0.9)
    assert judge('INPUT(2, "bake lobster")', 'INPUT(2, "bake lobster tails")', picky) == (
        True,
        False,
    )


def test_token_f1_edge_cases() -> None:
    assert token_f1("", "") == 1.0
    assert token_f1("x", "") == 0.0
    assert token_f1("a a b", "a b b") == pytest.approx(2 / 3)


def test_input_target() -> None:
    assert judge('INPUT(1, "x")', 'INPUT(2, "x")') == (True, False)
    assert judge('INPUT(1, "x")', 'INPUT("x")') == (True, True)  # AndroidControl: no target
    assert judge('INPUT(1, "x")', 'INPUT(2, "x")', ActionMatcher(input_target=False)) == (
        True,
        True,
    )


def test_scroll_direction() -> None:
    assert judge("SCROLL(down)", "SCROLL(down)") == (True, True)
    assert judge("SCROLL(up)", "SCROLL(down)") == (True, False)
    # swipe up is a scroll down (AndroidWorld JSON)
    assert judge('{"action_type": "swipe", "direction": "up"}', "SCROLL(down)") == (True, True)
    assert judge("SCROLL(down, 0)", "SCROLL(down, 4)") == (True, True)
    assert judge("SCROLL(down, 0)", "SCROLL(down, 4)", ActionMatcher(scroll_target=True)) == (
        True,
        False,
    )


def test_other_text_actions() -> None:
    assert judge('OPEN_APP("clock")', 'OPEN_APP("Clock")') == (True, True)
    assert judge('OPEN_APP("Camera")', 'OPEN_APP("Clock")') == (True, False)
    assert judge('ANSWER("2")', 'ANSWER("2")') == (True, True)
    assert judge('ANSWER("two")', 'ANSWER("2")') == (True, False)
    assert judge("DONE()", "DONE()") == (True, True)
    assert judge('DONE("infeasible")', "DONE()") == (True, False)
    assert judge("GOBACK()", "GOBACK()") == (True, True)


def test_labels() -> None:
    assert judge("click[Cancel]", "CLICK(1)") == (True, True)
    assert judge("click[OK]", "CLICK(1)") == (True, False)


def test_box_helper() -> None:
    assert scaled_box_contains((0, 0, 10, 10), 11, 5, 1.2)
    assert not scaled_box_contains((0, 0, 10, 10), 11, 5, 1.0)


def test_bad_thresholds_fail_early() -> None:
    with pytest.raises(ValueError, match="box_scale"):
        ActionMatcher(box_scale=0.5)
    with pytest.raises(ValueError, match="max_point_distance"):
        ActionMatcher(max_point_distance=-1)
    with pytest.raises(ValueError, match="text_match"):
        ActionMatcher(text_match="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="min_text_f1"):
        ActionMatcher(min_text_f1=0)


def test_get_matcher() -> None:
    assert get_matcher("strict") == STRICT
    assert get_matcher("loose") == LOOSE
    custom = ActionMatcher(box_scale=2.0)
    assert get_matcher(custom) is custom
    with pytest.raises(ValueError, match="unknown matcher 'fuzzy'"):
        get_matcher("fuzzy")
    with pytest.raises(TypeError):
        get_matcher(3)  # type: ignore[arg-type]
