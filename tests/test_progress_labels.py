"""ProgRM labels (Sec. 2.2, Algorithm 1), ProgRM-Env labels, Eq. 2, data synthesis (App. B)
and the 1:1 step balance (App. C), on hand-made trajectories."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gui_gym.core.trajectory import Step, Trajectory
from gui_gym.models.embeddings import HashingEmbedder
from gui_gym.rewards.lcs import StepSimilarity, soft_lcs
from gui_gym.rewards.progress import (
    assign_progress,
    balance_steps,
    build_recipe_library,
    completion_ratio,
    fold_recipe,
    group_by_similarity,
    label_env,
    label_lcs,
    milestone_key_steps,
    mismatched_failures,
    progress_gain,
    progress_reward,
    progress_rewards,
    random_walk_failures,
    read_labeled_trajectories,
    success_variants,
    synthesize_successes,
    trajectory_similarity,
    write_labeled_trajectories,
)


def step(index: int, token: str, milestones: list[str] | None = None) -> Step:
    """``CLICK:<label>``, ``INPUT:<text>``, ``SCROLL:<dir>``, ``BACK``, ``NOTHING``, or a
    single letter (a click on the link with that label)."""
    kind, _, arg = token.partition(":")
    if kind == "INPUT":
        out = Step(index, "", f'INPUT(0, "{arg}")', target=["input", "Search", "q"])
    elif kind == "SCROLL":
        out = Step(index, "", f"SCROLL({arg})")
    elif kind == "BACK":
        out = Step(index, "", "GOBACK()")
    elif kind == "NOTHING":
        out = Step(index, "", "DO_NOTHING()")
    else:
        label = arg if kind == "CLICK" else token
        # The index differs per step on purpose: identity, not index, must decide.
        out = Step(index, "", f"CLICK({index + 3})", target=["link", label, ""])
    out.milestones = list(milestones or [])
    return out


def traj(
    tokens: list[str], success: bool, task: str = "t", milestones: list[list[str]] | None = None
) -> Trajectory:
    steps = [step(i, tok, (milestones or [None] * len(tokens))[i]) for i, tok in enumerate(tokens)]
    return Trajectory("GuiGym/WikiHow-v0", task, f"do {task}", steps, success=success)


def similarity() -> StepSimilarity:
    return StepSimilarity(HashingEmbedder())


# ----------------------------------------------------------------------------- Eq. 2


def test_progress_reward_is_the_gain_over_k_steps() -> None:
    values = [0.0, 0.25, 0.25, 0.75]
    assert progress_reward(values, 1) == pytest.approx(0.5)
    assert progress_reward(values, 2) == pytest.approx(0.5)
    assert progress_reward(values, 3) == pytest.approx(0.75)
    assert progress_reward(values[:2], 3) == pytest.approx(0.25)  # reference clamps at s_0
    assert progress_reward([0.4], 1) == 0.0


def test_progress_rewards_telescope_for_k_1() -> None:
    values = [0.1, 0.3, 0.2, 0.9]
    rewards = progress_rewards(values, 1)
    assert rewards == pytest.approx([0.2, -0.1, 0.7])
    assert sum(rewards) == pytest.approx(values[-1] - values[0])
    assert progress_rewards(values, 2) == pytest.approx([0.2, 0.1, 0.6])


def test_sliding_window_gain_equals_eq_2() -> None:
    from collections import deque

    values = list(np.random.default_rng(0).random(12))
    for k in (1, 2, 5, 20):
        window: deque[float] = deque([values[0]], maxlen=k + 1)
        gains = []
        for v in values[1:]:
            window.append(v)
            gains.append(progress_gain(window))
        assert gains == pytest.approx(progress_rewards(values, k))


def test_progress_reward_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="k must be"):
        progress_reward([0.1], 0)
    with pytest.raises(ValueError, match="at least one"):
        progress_reward([], 1)


# ------------------------------------------------------------------- building blocks


def test_label_assignment_inherits_forward() -> None:
    labels = assign_progress(6, [(1, 1), (2, 2), (5, 4)], 4)
    assert [lab.progress for lab in labels] == [0.0, 0.25, 0.5, 0.5, 0.5, 1.0]
    assert [lab.key for lab in labels] == [False, True, True, False, False, True]
    assert labels[0].reason == "before the first key step"
    assert labels[3].reason.startswith("inherits 0.500 from key step 2")


def test_label_assignment_checks_its_input() -> None:
    with pytest.raises(ValueError, match="increasing"):
        assign_progress(3, [(1, 1), (1, 2)], 2)
    with pytest.raises(ValueError, match="outside"):
        assign_progress(3, [(3, 1)], 2)
    with pytest.raises(ValueError, match="kappa"):
        assign_progress(3, [(0, 3)], 2)


def test_similarity_and_completion_ratio_formulas() -> None:
    assert trajectory_similarity(3.0, 4, 6) == pytest.approx(0.75)  # Eq. 3: min length
    assert trajectory_similarity(1.0, 0, 6) == 0.0
    assert completion_ratio(2.0, 4) == pytest.approx(0.5)  # Eq. 4
    assert completion_ratio(1.0, 0) == 0.0


def test_grouping_threshold_is_inclusive_and_pairwise() -> None:
    at = np.array([[1.0, 0.6], [0.6, 1.0]])
    below = np.array([[1.0, 0.59], [0.59, 1.0]])
    assert group_by_similarity(at, 0.6) == [[0, 1]]
    assert group_by_similarity(below, 0.6) == [[0], [1]]
    # 2 is similar to 0 but not to 1: every two members of a group must pass theta.
    chain = np.array([[1.0, 0.9, 0.9], [0.9, 1.0, 0.1], [0.9, 0.1, 1.0]])
    assert group_by_similarity(chain, 0.6) == [[0, 1], [2]]
    assert group_by_similarity(chain, 0.6, order=[2, 0, 1]) == [[2, 0], [1]]
    with pytest.raises(ValueError, match="permutation"):
        group_by_similarity(chain, 0.6, order=[0, 0, 1])


def test_recipe_is_the_left_fold_of_pairwise_lcs() -> None:
    recipe = fold_recipe(["ABCD", "AXBCD", "ABYCZD"], soft_lcs)
    assert "".join(recipe) == "ABCD"
    assert "".join(fold_recipe(["ABCD", "BD", "ABD"], soft_lcs)) == "BD"
    with pytest.raises(ValueError):
        fold_recipe([], soft_lcs)


# ----------------------------------------------------------------- Algorithm 1 (LCS)


def worked_example() -> list[Trajectory]:
    """Figure 2 in miniature: two core policies for one task, successes and failures."""
    return [
        traj(list("ABCD"), True),  # 0  policy 1
        traj(list("AXBCD"), True),  # 1  policy 1 with a detour
        traj(list("ABYCZD"), True),  # 2  policy 1 with two detours
        traj(list("PQD"), True),  # 3  policy 2
        traj(list("ABW"), False),  # 4  failed half way along policy 1
        traj(list("PQ"), False),  # 5  failed along policy 2
        traj(list("WWW"), False),  # 6  nothing useful
    ]


def test_library_groups_core_policies_and_extracts_recipes() -> None:
    library = build_recipe_library(worked_example(), similarity())
    recipes = library.for_task("t")
    assert [[s.target[1] for s in r.steps] for r in recipes] == [list("PQD"), list("ABCD")]
    assert sorted(recipes[1].members) == [0, 1, 2]
    assert recipes[0].members == (3,)
    assert library.for_task("unknown") == []
    assert library.to_dict()["tasks"]["t"][1]["members"] == [0, 1, 2]


def test_lcs_labels_of_the_worked_example() -> None:
    labels = label_lcs(worked_example(), similarity())
    assert labels[0].progress == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert labels[1].progress == pytest.approx([0.25, 0.25, 0.5, 0.75, 1.0])
    assert labels[1].key_steps == [0, 2, 3, 4]
    assert labels[2].progress == pytest.approx([0.25, 0.5, 0.5, 0.75, 0.75, 1.0])
    assert labels[3].progress == pytest.approx([1 / 3, 2 / 3, 1.0])
    # A failure keeps the progress it made: A and B are key steps of the ABCD recipe.
    assert labels[4].progress == pytest.approx([0.25, 0.5, 0.5])
    assert labels[4].completion_ratio == pytest.approx(0.5)
    assert labels[4].labels[1].reason.startswith("key step: matches step 2/4 of recipe 1")
    # The recipe with the highest completion ratio wins: PQ completes 2/3 of PQD.
    assert labels[5].progress == pytest.approx([1 / 3, 2 / 3])
    assert labels[5].recipe == 0
    assert labels[6].progress == [0.0, 0.0, 0.0]
    assert all(lab.method == "lcs" for lab in labels)


def test_grouping_threshold_decides_the_recipes() -> None:
    pool = [traj(list("ABCD"), True), traj(list("ABEFG"), True)]
    # Sim = SoftLCS / min length = 2 / 4 = 0.5
    strict = build_recipe_library(pool, similarity(), theta=0.6).for_task("t")
    loose = build_recipe_library(pool, similarity(), theta=0.5).for_task("t")
    assert len(strict) == 2
    assert len(loose) == 1 and [s.target[1] for s in loose[0].steps] == ["A", "B"]


def test_ties_in_completion_ratio_go_to_the_larger_group() -> None:
    pool = [traj(list("AB"), True), traj(list("AB"), True), traj(list("AC"), True)]
    labels = label_lcs([*pool, traj(["A"], False)], similarity(), theta=0.9)
    assert labels[3].recipe == 0  # the AB group has two members, the AC group one


def test_typed_text_matches_softly() -> None:
    pool = [
        traj(["INPUT:bake lobster tails", "B"], True),
        traj(["INPUT:bake lobster tails", "B"], True),
    ]
    fail = traj(["INPUT:lobster tails"], False)
    labels = label_lcs([*pool, fail], similarity())
    assert labels[2].key_steps == [0]
    assert labels[2].progress == pytest.approx([0.5])
    assert 0.0 < labels[2].completion_ratio < 0.5


def test_a_task_without_successes_gets_zero_labels() -> None:
    labels = label_lcs([traj(list("AB"), False, task="u")], similarity())
    assert labels[0].progress == [0.0, 0.0]
    assert "no recipe" in labels[0].labels[0].reason


def test_a_prebuilt_library_labels_new_trajectories() -> None:
    library = build_recipe_library(worked_example(), similarity())
    labels = label_lcs([traj(list("AXB"), False)], similarity(), library=library)
    assert labels[0].progress == pytest.approx([0.25, 0.25, 0.5])


def test_labels_are_per_task() -> None:
    pool = [traj(list("AB"), True, task="x"), traj(list("CD"), True, task="y")]
    labels = label_lcs([*pool, traj(list("CA"), False, task="x")], similarity())
    assert labels[2].progress == pytest.approx([0.0, 0.5])


def test_theta_is_checked() -> None:
    with pytest.raises(ValueError, match="theta"):
        label_lcs(worked_example(), similarity(), theta=1.5)


# --------------------------------------------------------------------- ProgRM-Env labels


def test_env_key_steps_are_where_milestones_grew() -> None:
    t = traj(
        ["INPUT:q", "X", "A", "SCROLL:down", "Y"],
        True,
        milestones=[
            ["typed", "listed"],
            ["typed", "listed"],
            ["typed", "listed", "opened"],
            ["typed", "listed", "opened"],
            ["typed", "listed", "opened", "done"],
        ],
    )
    assert milestone_key_steps(t) == [0, 2, 4]
    labels = label_env([t], {"t": 4})[0]
    assert labels.progress == pytest.approx([0.5, 0.5, 0.75, 0.75, 1.0])
    assert labels.key_steps == [0, 2, 4]
    assert labels.labels[0].reason == "key step: milestone typed, listed reached (2/4)"
    assert labels.labels[1].reason.startswith("inherits 0.500")
    assert labels.method == "env"


def test_env_totals_fall_back_to_what_successes_reached() -> None:
    win = traj(["A", "B"], True, milestones=[["m1"], ["m1", "m2"]])
    lose = traj(["A", "C"], False, milestones=[["m1"], ["m1"]])
    labels = label_env([win, lose])
    assert labels[1].progress == pytest.approx([0.5, 0.5])
    assert "successful trajectory" in labels[1].labels[0].reason


def test_env_totals_are_checked() -> None:
    t = traj(["A", "B"], True, milestones=[["m1"], ["m1", "m2"]])
    with pytest.raises(ValueError, match="more than the total"):
        label_env([t], {"t": 1})
    with pytest.raises(ValueError, match=">= 1"):
        label_env([t], {"t": 0})


# ------------------------------------------------------------------ synthesis, balance


def test_mismatched_instructions_make_failures_of_other_tasks() -> None:
    pool = [
        traj(list("AB"), True, task="x", milestones=[["m"], ["m", "n"]]),
        traj(list("CD"), True, task="y"),
    ]
    pool[1].metadata = {"category": "QA"}
    out = mismatched_failures(pool, 4, np.random.default_rng(0))
    assert len(out) == 4
    for t in out:
        assert not t.success and t.task_reward == 0.0
        assert t.metadata["synthetic"] == "mismatched_instruction"
        assert t.metadata["source_task_id"] != t.task_id
        assert t.instruction == f"do {t.task_id}"
        assert all(s.milestones == [] for s in t.steps)
    assert pool[0].steps[1].milestones == ["m", "n"]  # the pool is untouched
    with pytest.raises(ValueError, match="two tasks"):
        mismatched_failures(pool[:1], 1, np.random.default_rng(0))


def test_random_walks_become_failures_unless_they_succeeded() -> None:
    walks = [traj(list("AB"), False), traj(list("CD"), True)]
    out = random_walk_failures(walks)
    assert len(out) == 1 and out[0].metadata["synthetic"] == "random_walk"


def test_success_variants_insert_and_remove_effect_free_steps() -> None:
    rng = np.random.default_rng(0)
    base = ['INPUT(0, "q")', "CLICK(4)", "SCROLL(down)"]
    variants = success_variants(base, rng, n=30, max_edits=1)
    assert variants and base not in variants
    assert len({tuple(v) for v in variants}) == len(variants)
    for v in variants:
        assert v[-1] == "SCROLL(down)"  # nothing is inserted after the final action
    kinds = {len(v) - len(base) for v in variants}
    assert kinds == {1, 2}  # one DO_NOTHING, or a pair
    assert ['INPUT(0, "q")', "GOBACK()", 'INPUT(0, "q")', "CLICK(4)", "SCROLL(down)"] in variants
    assert ['INPUT(0, "q")', "SCROLL(down)", "SCROLL(up)", "CLICK(4)", "SCROLL(down)"] in variants
    redundant = ["A()", "DO_NOTHING()", "CLICK(1)", "GOBACK()", "CLICK(1)", "DONE()"]
    removed = success_variants(redundant, np.random.default_rng(1), n=60, max_edits=1)
    assert ["A()", "CLICK(1)", "GOBACK()", "CLICK(1)", "DONE()"] in removed
    assert ["A()", "DO_NOTHING()", "CLICK(1)", "DONE()"] in removed


def test_synthesized_successes_are_kept_only_when_the_replay_succeeds() -> None:
    proto = traj(list("AB"), True)
    calls: list[list[str]] = []

    def replay(prototype: Trajectory, actions: list[str]) -> Trajectory | None:
        calls.append(actions)
        ok = "SCROLL(up)" not in actions
        return Trajectory(prototype.env_id, prototype.task_id, "", [], success=ok)

    out = synthesize_successes(
        [proto, traj(list("C"), False)], replay, np.random.default_rng(0), per_trajectory=6
    )
    assert calls and all(len(c) >= 2 for c in calls)
    assert len(out) == sum("SCROLL(up)" not in c for c in calls)
    assert all(t.success and t.metadata["synthetic"] == "success_variant" for t in out)


def test_steps_are_balanced_one_to_one() -> None:
    flags = [True] * 10 + [False] * 25
    keep = balance_steps(flags, np.random.default_rng(0))
    kept = np.asarray(flags)[keep]
    assert kept.sum() == 10 and (~kept).sum() == 10
    assert list(keep[:10]) == list(range(10))  # every success step stays
    assert len(balance_steps([True] * 5, np.random.default_rng(0))) == 5
    assert len(balance_steps(flags, np.random.default_rng(0), ratio=2.0)) == 30
    with pytest.raises(ValueError, match="ratio"):
        balance_steps(flags, np.random.default_rng(0), ratio=0.5)


def test_labelled_files_round_trip(tmp_path: Path) -> None:
    pool = worked_example()
    labels = label_lcs(pool, similarity())
    path = tmp_path / "labels.jsonl"
    assert write_labeled_trajectories(path, pool, labels) == len(pool)
    back_t, back_l = read_labeled_trajectories(path)
    assert [t.task_id for t in back_t] == [t.task_id for t in pool]
    assert [lab.progress for lab in back_l] == [lab.progress for lab in labels]  # type: ignore[union-attr]
    assert back_l[4].labels[1].reason == labels[4].labels[1].reason  # type: ignore[union-attr]


def test_unlabelled_files_are_rejected_with_the_line(tmp_path: Path) -> None:
    from gui_gym.core.trajectory import write_trajectories

    path = tmp_path / "plain.jsonl"
    write_trajectories(path, worked_example()[:2])
    with pytest.raises(ValueError, match=r"plain.jsonl:1: no progress labels"):
        read_labeled_trajectories(path)
    trajectories, labels = read_labeled_trajectories(path, require_labels=False)
    assert len(trajectories) == 2 and labels == [None, None]
