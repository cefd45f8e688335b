"""ADMIRE reward math (gui_gym.rewards.milestones) on hand vectors: the pointer rule (Eq. 9),
asymmetric credit (Eq. 10 and 11, Algorithm 1), the decaying total reward and step-level GRPO
advantages (Eq. 13), and the key-step / Soft-LCS helpers of the LLM-free generator."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from gui_gym.core.trajectory import Step
from gui_gym.rewards.milestones import (
    advance_pointer,
    alignment_text,
    erase_loops,
    format_reward,
    generalize_typed_text,
    key_step_descriptions,
    match_milestones,
    merge_milestones,
    milestone_step_rewards,
    milestone_weight,
    placeholder_pattern,
    soft_lcs_alignment,
    step_grpo_advantages,
    total_step_rewards,
)

# ----------------------------------------------------------------------- pointer (Eq. 9)


def test_pointer_compares_only_the_current_milestone_and_moves_on_a_hit() -> None:
    sims = [
        [0.10, 0.99],  # milestone 1 would match, but the pointer is at milestone 0: no skip
        [0.90, 0.10],  # hit milestone 0
        [0.20, 0.80],  # hit milestone 1
    ]
    match = match_milestones(sims, delta=0.75)
    assert match.hits == (False, True, True)
    assert match.r_mil == (0.0, 0.9, 0.8)
    assert match.matched == (-1, 0, 1)
    assert match.k == 2 and match.progress == 1.0 and match.hit_steps == [1, 2]


def test_pointer_stops_after_the_last_milestone_so_k_never_exceeds_num_milestones() -> None:
    sims = np.full((6, 2), 0.99)  # every step matches every milestone
    match = match_milestones(sims, delta=0.75)
    assert match.hits == (True, True, False, False, False, False)
    assert match.k == 2 == match.num_milestones
    r, pointer = advance_pointer(2, 2, similarity=0.99, delta=0.75)
    assert (r, pointer) == (0.0, 2)
    with pytest.raises(ValueError, match="pointer"):
        advance_pointer(3, 2, 0.99)


def test_a_hit_needs_a_similarity_strictly_above_delta() -> None:
    assert advance_pointer(0, 3, 0.75, delta=0.75) == (0.0, 0)
    assert advance_pointer(0, 3, 0.7501, delta=0.75) == (0.7501, 1)


def test_invalid_actions_never_hit() -> None:
    match = match_milestones([[0.9], [0.9]], valid=[False, True])
    assert match.hits == (False, True)


def test_no_milestones_or_no_steps() -> None:
    assert match_milestones(np.zeros((3, 0))).hits == (False, False, False)
    assert match_milestones(np.zeros((0, 2))).k == 0
    assert match_milestones([]).hits == ()


# ------------------------------------------------------------- asymmetric credit (3.2.2)


def test_eq10_success_is_paid_only_at_hit_steps() -> None:
    hits = [False, True, False, True, False]
    r_mil = [0.0, 0.8, 0.0, 0.9, 0.0]
    assert milestone_step_rewards(hits, r_mil, 3, success=True) == [0.0, 0.8, 0.0, 0.9, 0.0]


def test_eq11_failure_gets_running_progress_plus_zeta_times_the_hit_reward() -> None:
    hits = [False, True, False, True, False]
    r_mil = [0.0, 0.8, 0.0, 0.9, 0.0]
    rewards = milestone_step_rewards(hits, r_mil, 3, success=False, zeta=0.5)
    # k counts hits up to and including step t (Algorithm 1 line 33)
    expected = [0.0, 1 / 3 + 0.4, 1 / 3, 2 / 3 + 0.45, 2 / 3]
    assert rewards == pytest.approx(expected)


def test_a_failed_trajectory_with_hits_earns_more_than_one_without() -> None:
    sims_with = [[0.9, 0.1, 0.1], [0.1, 0.1, 0.1], [0.1, 0.85, 0.1], [0.1, 0.1, 0.1]]
    sims_without = np.full((4, 3), 0.1)
    totals = []
    for sims in (sims_with, sims_without):
        match = match_milestones(sims)
        r_mil = milestone_step_rewards(match.hits, match.r_mil, 3, success=False)
        totals.append(total_step_rewards(r_mil, outcome=0.0))
    with_hits, without = totals
    assert sum(with_hits) > sum(without) == 0.0
    assert all(a >= b for a, b in zip(with_hits, without))


def test_no_milestones_give_no_milestone_reward() -> None:
    assert milestone_step_rewards([False, False], [0.0, 0.0], 0, success=False) == [0.0, 0.0]


def test_step_rewards_reject_inconsistent_vectors() -> None:
    with pytest.raises(ValueError, match="hits but only"):
        milestone_step_rewards([True, True], [0.9, 0.9], 1, success=True)
    with pytest.raises(ValueError, match="length"):
        milestone_step_rewards([True], [0.9, 0.9], 2, success=True)


# ------------------------------------------------------------------ total reward (3.3)


def test_defaults_are_the_papers_hyperparameters() -> None:
    total = inspect.signature(total_step_rewards).parameters
    assert (total["lambda0"].default, total["decay"].default, total["eta"].default) == (
        0.3,
        0.99,
        0.5,
    )
    assert inspect.signature(milestone_step_rewards).parameters["zeta"].default == 0.5
    assert inspect.signature(match_milestones).parameters["delta"].default == 0.75


def test_milestone_weight_decays_as_lambda0_gamma_to_the_epoch() -> None:
    assert milestone_weight(0) == pytest.approx(0.3)
    assert milestone_weight(10) == pytest.approx(0.3 * 0.99**10)
    assert milestone_weight(100) == pytest.approx(0.10980, abs=1e-5)
    assert milestone_weight(50, decay=1.0) == 0.3  # "w/o reward decay" ablation
    assert milestone_weight(1) < milestone_weight(0)
    with pytest.raises(ValueError, match="decay"):
        milestone_weight(1, decay=1.5)
    with pytest.raises(ValueError, match="epoch"):
        milestone_weight(-1)


def test_total_reward_adds_outcome_format_and_decayed_milestone_terms() -> None:
    rewards = total_step_rewards([0.0, 0.8], outcome=1.0, format_rewards=[0.0, -1.0], epoch=2)
    weight = 0.3 * 0.99**2
    assert rewards == pytest.approx([1.0, 1.0 - 0.5 + weight * 0.8])
    assert format_reward(True) == 0.0 and format_reward(False) == -1.0
    with pytest.raises(ValueError, match="length"):
        total_step_rewards([0.0, 0.8], 1.0, [0.0])


# ------------------------------------------------------------------- step GRPO (Eq. 13)


def test_eq13_normalises_over_all_steps_of_the_group() -> None:
    advantages = step_grpo_advantages([[1.0, 0.0], [0.0, 0.0, 1.0]])
    # all five steps: mean 0.4, population std sqrt(0.24)
    high, low = 0.6 / 0.24**0.5, -0.4 / 0.24**0.5
    assert advantages[0] == pytest.approx([high, low], rel=1e-5)
    assert advantages[1] == pytest.approx([low, low, high], rel=1e-5)
    flat = np.concatenate(advantages)
    assert flat.mean() == pytest.approx(0.0, abs=1e-9)


def test_eq13_equal_rewards_give_zero_advantages() -> None:
    advantages = step_grpo_advantages([[0.5, 0.5], [0.5]])
    assert all(np.all(a == 0.0) for a in advantages)
    with pytest.raises(ValueError, match="at least one step"):
        step_grpo_advantages([[], []])


# ------------------------------------------------------------- key steps and Soft-LCS


def _step(action: str, description: str, valid: bool = True, screen: str = "") -> Step:
    return Step(
        index=0, screen=screen, action=action, action_valid=valid, action_description=description
    )


def test_key_steps_drop_invalid_scroll_done_repeats_and_detours() -> None:
    steps = [
        _step('INPUT(0, "bake lobster")', 'type "bake lobster" into "Search" input'),
        _step("CLICK(99)", "invalid action", valid=False),
        _step("CLICK(5)", 'click "How to Grill Lobster" link'),  # a detour ...
        _step("SCROLL(down)", "scroll down"),
        _step("GOBACK()", "go back"),  # ... undone
        _step("CLICK(4)", 'click "How to Bake Lobster" link'),
        _step("CLICK(4)", 'click "How to Bake Lobster" link'),  # a repeat
        _step("SCROLL(down)", "scroll down"),
        _step("CLICK(2)", 'click "Bookmark" button'),
        _step("DONE()", "declare the task complete"),
    ]
    assert key_step_descriptions(steps) == [
        'type "bake lobster" into "Search" input',
        'click "How to Bake Lobster" link',
        'click "Bookmark" button',
    ]
    kept = key_step_descriptions(steps, skip_types=(), drop_detours=False)
    assert "go back" in kept and "scroll down" in kept


def test_loops_through_a_screen_seen_before_are_cut() -> None:
    search = _step('INPUT(0, "lobster")', 'type "lobster" into "Search" input', screen="home")
    open_ = _step("CLICK(4)", 'click "Bake Lobster" link', screen="results")
    home = _step("CLICK(9)", 'click "Home" tab', screen="article")
    again = _step('INPUT(0, "lobster")', 'type "lobster" into "Search" input', screen="home")
    open_again = _step("CLICK(4)", 'click "Bake Lobster" link', screen="results")
    bookmark = _step("CLICK(2)", 'click "Bookmark" button', screen="article")
    steps = [search, open_, home, again, open_again, bookmark]
    assert erase_loops(steps) == [again, open_again, bookmark]
    assert key_step_descriptions(steps) == [
        'type "lobster" into "Search" input',
        'click "Bake Lobster" link',
        'click "Bookmark" button',
    ]
    assert 'click "Home" tab' in key_step_descriptions(steps, loops=False)
    # the same action on a lookalike screen with a different outcome is work, not a loop
    delete_a = [
        _step("CLICK(3)", 'click "Recipe A" listitem', screen="list of A, B"),
        _step("CLICK(5)", 'click "Delete" button', screen="recipe A"),
        _step("CLICK(4)", 'click "Delete" button', screen="confirm dialog"),
    ]
    delete_b = [
        _step("CLICK(3)", 'click "Recipe B" listitem', screen="list of B"),
        _step("CLICK(5)", 'click "Delete" button', screen="recipe B"),
        _step("CLICK(4)", 'click "Delete" button', screen="confirm dialog"),
        _step("DONE()", "declare the task complete", screen="empty list"),
    ]
    assert erase_loops(delete_a + delete_b) == delete_a + delete_b
    unrecorded = [_step("CLICK(1)", "click a"), _step("CLICK(1)", "click b")]
    assert erase_loops(unrecorded) == unrecorded  # no screens, nothing to compare


def test_alignment_text_leaves_out_what_was_typed() -> None:
    assert alignment_text('type "bake lobster" into "Search" input') == 'type into "Search" input'
    assert alignment_text('click "Search" button') == 'click "Search" button'


def test_placeholders_match_any_text_and_the_rest_verbatim() -> None:
    pattern = placeholder_pattern('type "<Text>" into "<Field>" input')
    assert pattern is not None
    assert pattern.fullmatch('type "Sofia Lopez" into "Name" input')
    assert not pattern.fullmatch('click "Sofia Lopez" button')
    assert placeholder_pattern('click "Save" button') is None
    assert placeholder_pattern("Open the (a+) <App>.").fullmatch("Open the (a+) Markor.")


def test_generalize_typed_text_only_for_the_same_field() -> None:
    a = 'type "Sofia" into "Name" input'
    assert generalize_typed_text(a, 'type "John" into "Name" input') == (
        'type "<Text>" into "Name" input'
    )
    assert generalize_typed_text(a, 'type "John" into "Phone" input') == a
    assert generalize_typed_text(a, a) == a
    assert generalize_typed_text('click "Save" button', 'click "Save" button') == (
        'click "Save" button'
    )


def test_a_goback_with_nothing_to_undo_is_kept() -> None:
    steps = [_step("GOBACK()", "go back"), _step("CLICK(1)", 'click "OK" button')]
    assert key_step_descriptions(steps) == ["go back", 'click "OK" button']


def test_soft_lcs_alignment_prefers_the_heavier_common_subsequence() -> None:
    sims = np.array(
        [
            [0.95, 0.10, 0.10],
            [0.10, 0.10, 0.90],
            [0.10, 0.85, 0.10],
        ]
    )
    score, pairs = soft_lcs_alignment(sims, threshold=0.8)
    # (0,0)+(1,2) = 1.85 beats (0,0)+(2,1) = 1.80; order is kept, so not all three
    assert pairs == [(0, 0), (1, 2)] and score == pytest.approx(1.85)
    assert soft_lcs_alignment(np.zeros((0, 3))) == (0.0, [])


def test_merge_keeps_what_both_successes_needed_in_the_existing_wording() -> None:
    existing = ["search lobster", "open article", "scroll to tips", "bookmark"]
    candidate = ["search for lobster", "open the article", "bookmark it"]
    sims = np.full((4, 3), 0.1)
    sims[0, 0], sims[1, 1], sims[3, 2] = 0.9, 0.92, 0.88
    assert merge_milestones(existing, candidate, sims) == [
        "search lobster",
        "open article",
        "bookmark",
    ]


def test_merge_takes_a_shorter_different_route_and_keeps_a_longer_one_out() -> None:
    existing = ["open menu", "open settings", "open display", "set brightness"]
    shortcut = ["swipe shade", "drag brightness"]
    no_overlap = np.full((4, 2), 0.1)
    assert merge_milestones(existing, shortcut, no_overlap) == shortcut
    longer = ["a", "b", "c", "d", "e"]
    assert merge_milestones(existing, longer, np.full((4, 5), 0.1)) == existing
    assert merge_milestones([], shortcut, np.zeros((0, 2))) == shortcut
    assert merge_milestones(existing, [], np.zeros((4, 0))) == existing
