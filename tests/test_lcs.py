"""Soft LCS (ProgRM Eq. 7-8) and ProgRM's step similarity (Eq. 9)."""

from __future__ import annotations

import numpy as np
import pytest

from gui_gym.core.trajectory import Step
from gui_gym.core.ui import UIElement, UITree
from gui_gym.models.embeddings import HashingEmbedder
from gui_gym.rewards.lcs import (
    INVALID,
    StepSignature,
    StepSimilarity,
    soft_lcs,
    soft_lcs_batch,
    soft_lcs_matrix,
    step_signature,
)


def test_hard_lcs_of_the_textbook_example() -> None:
    result = soft_lcs("ABCBDAB", "BDCABA")
    assert result.score == 4.0
    assert result.length == 4
    assert "".join("ABCBDAB"[i] for i, _ in result.pairs) in {"BCBA", "BDAB", "BCAB"}


def test_matched_pairs_are_increasing_and_consistent() -> None:
    a, b = "XMJYAUZ", "MZJAWXU"
    result = soft_lcs(a, b)
    assert result.score == 4.0  # MJAU
    assert all(a[i] == b[j] for i, j in result.pairs)
    assert all(p[0] < q[0] and p[1] < q[1] for p, q in zip(result.pairs, result.pairs[1:]))


def test_soft_match_adds_partial_similarities() -> None:
    # Eq. 8: the equality test is replaced by f; a 0.5 match still counts half.
    def f(x: str, y: str) -> float:
        if x == y:
            return 1.0
        return 0.5 if x.lower() == y.lower() else 0.0

    result = soft_lcs(["a", "B", "c"], ["A", "B", "C"], f)
    assert result.score == pytest.approx(2.0)
    assert result.pairs == ((0, 0), (1, 1), (2, 2))


def test_zero_similarity_pairs_are_never_matched() -> None:
    result = soft_lcs_matrix(np.zeros((3, 4)))
    assert result.score == 0.0 and result.pairs == ()


def test_empty_sequences() -> None:
    assert soft_lcs([], [1, 2]).score == 0.0
    assert soft_lcs_matrix(np.zeros((0, 3))).pairs == ()


def test_traceback_credits_the_latest_equivalent_step() -> None:
    # A step undone and redone (click, back, click) is matched where it is redone.
    result = soft_lcs(["click", "back", "click"], ["click"])
    assert result.pairs == ((2, 0),)


def test_similarity_matrix_is_validated() -> None:
    with pytest.raises(ValueError, match="2-D"):
        soft_lcs_matrix(np.zeros(3))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        soft_lcs_matrix([[0.5, 1.5]])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        soft_lcs_matrix([[float("nan")]])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        soft_lcs([1], [2], lambda x, y: -0.1)


def test_batch_equals_one_by_one() -> None:
    rng = np.random.default_rng(0)
    lengths_a = [7, 3, 0, 7, 5, 1]
    lengths_b = [6, 6, 2, 1, 4, 1]
    sims = rng.random((6, 7, 6)) * (rng.random((6, 7, 6)) > 0.4)
    for p in range(6):
        sims[p, lengths_a[p] :, :] = 0.0
        sims[p, :, lengths_b[p] :] = 0.0
    scores, pairs = soft_lcs_batch(sims, lengths_a, lengths_b, return_pairs=True)
    assert pairs is not None
    for p in range(6):
        single = soft_lcs_matrix(sims[p, : lengths_a[p], : lengths_b[p]])
        assert scores[p] == pytest.approx(single.score)
        assert pairs[p] == single.pairs


def test_batch_scores_alone_match_the_full_tables_in_float32_too() -> None:
    rng = np.random.default_rng(1)
    sims = rng.random((5, 6, 4)) * (rng.random((5, 6, 4)) > 0.5)
    lengths_a, lengths_b = [6, 2, 6, 0, 3], [4, 4, 1, 2, 3]
    for p in range(5):
        sims[p, lengths_a[p] :, :] = 0.0
        sims[p, :, lengths_b[p] :] = 0.0
    full, _ = soft_lcs_batch(sims, lengths_a, lengths_b, return_pairs=True)
    alone, pairs = soft_lcs_batch(sims, lengths_a, lengths_b)
    single, _ = soft_lcs_batch(sims.astype(np.float32), lengths_a, lengths_b)
    assert pairs is None
    assert alone == pytest.approx(full)
    assert single == pytest.approx(full, abs=1e-5)


def test_batch_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError, match="shape"):
        soft_lcs_batch(np.zeros((2, 3)), [1, 1], [1, 1])
    with pytest.raises(ValueError, match="within"):
        soft_lcs_batch(np.zeros((1, 2, 2)), [3], [1])


# --------------------------------------------------------------------------- Eq. 9


def sim() -> StepSimilarity:
    return StepSimilarity(HashingEmbedder())


def click(label: str, resource_id: str = "", role: str = "link") -> StepSignature:
    return StepSignature("CLICK", target=(role, label, resource_id))


def test_different_types_score_zero() -> None:
    assert sim()(click("Home"), StepSignature("LONG_CLICK", target=("link", "Home", ""))) == 0.0


def test_same_target_identity_scores_one_whatever_the_index() -> None:
    a = step_signature(Step(0, "", "CLICK(4)", target=["link", "How to Bake", "title"]))
    b = step_signature(Step(3, "", "CLICK(9)", target=["link", "How to Bake", "title"]))
    c = step_signature(Step(3, "", "CLICK(4)", target=["link", "How to Grill", "title"]))
    assert sim()(a, b) == 1.0
    assert sim()(a, c) == 0.0  # same index, different element


def test_text_actions_compare_by_embedding_cosine() -> None:
    s = sim()
    same = s(
        StepSignature("INPUT", text="bake lobster"), StepSignature("INPUT", text="bake lobster")
    )
    close = s(StepSignature("INPUT", text="bake lobster"), StepSignature("INPUT", text="lobster"))
    far = s(StepSignature("INPUT", text="bake lobster"), StepSignature("INPUT", text="xyz qq"))
    assert same == 1.0
    assert 0.0 < close < 1.0
    assert far < close
    answer = s(StepSignature("ANSWER", text="3"), StepSignature("ANSWER", text="3"))
    assert answer == 1.0
    assert s(StepSignature("INPUT", text="3"), StepSignature("ANSWER", text="3")) == 0.0


def test_text_similarity_embeds_each_distinct_text_once() -> None:
    class Counting(HashingEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[str] = []

        def _embed(self, texts: list[str]) -> np.ndarray:
            self.seen.extend(texts)
            return super()._embed(texts)

    embedder = Counting()
    s = StepSimilarity(embedder)
    sigs = [StepSignature("INPUT", text=t) for t in ["a b", "a b", "c", "a b", "c"]]
    s.pairwise(sigs)
    s.pairwise(sigs)
    assert sorted(embedder.seen) == ["a b", "c"]


def test_two_do_nothing_score_epsilon() -> None:
    nothing = StepSignature("DO_NOTHING")
    assert sim()(nothing, nothing) == pytest.approx(0.4)
    assert StepSimilarity(HashingEmbedder(), epsilon=0.1)(nothing, nothing) == pytest.approx(0.1)


def test_scroll_and_goback_compare_exactly() -> None:
    s = sim()
    assert s(StepSignature("SCROLL", direction="down"), StepSignature("SCROLL", direction="down"))
    assert (
        s(StepSignature("SCROLL", direction="down"), StepSignature("SCROLL", direction="up")) == 0
    )
    assert s(StepSignature("GOBACK"), StepSignature("GOBACK")) == 1.0


def test_invalid_steps_match_nothing() -> None:
    bad = step_signature(Step(0, "", "CLICK(99)", action_valid=False))
    assert bad.type == INVALID
    assert sim()(bad, bad) == 0.0
    unparsable = step_signature(Step(0, "", "FLY(away)"))
    assert unparsable.type == INVALID


def test_pairwise_matrix_is_symmetric_and_in_unit_interval() -> None:
    sigs = [
        click("A"),
        click("B"),
        StepSignature("INPUT", text="pasta"),
        StepSignature("INPUT", text="pasta recipe"),
        StepSignature("DO_NOTHING"),
        StepSignature(INVALID),
    ]
    full = sim().pairwise(sigs)
    assert full.shape == (6, 6)
    assert np.allclose(full, full.T)
    assert full.min() >= 0.0 and full.max() <= 1.0
    assert full[0, 0] == 1.0 and full[0, 1] == 0.0 and full[4, 4] == pytest.approx(0.4)


def test_signature_target_from_recorded_tree_when_no_target_field() -> None:
    tree = UITree.build(
        [UIElement(0, "input", "Search", editable=True), UIElement(1, "link", "How to Bake")]
    )
    step = Step(0, "", "CLICK(1)", tree=tree.to_dict())
    assert step_signature(step).target == ("link", "How to Bake", "")


def test_signature_falls_back_to_the_description_never_the_index() -> None:
    a = step_signature(Step(0, "", "CLICK(4)", action_description='click "Bake" link'))
    b = step_signature(Step(0, "", "CLICK(7)", action_description='click "Bake" link'))
    assert a.target is None and a.fallback == 'click "Bake" link'
    assert sim()(a, b) == 1.0


def test_similarity_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="epsilon"):
        StepSimilarity(HashingEmbedder(), epsilon=1.5)
    with pytest.raises(TypeError, match="encode"):
        StepSimilarity(object())  # type: ignore[arg-type]
