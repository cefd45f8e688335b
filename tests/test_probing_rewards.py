"""ProRe's reward arithmetic: votes, verdict rewards, judge metrics, and Lemma 1 (exact,
paper form, Monte Carlo)."""

from __future__ import annotations

import itertools
import math

import pytest

from gui_gym.rewards import probing

# --------------------------------------------------------------------------------- votes


def test_majority_vote_counts_valid_votes_and_reports_abstentions() -> None:
    result = probing.combine_votes(["success", "invalid", "success", "failure"])
    assert result.verdict == "success"
    assert (result.successes, result.failures, result.abstained) == (2, 1, 1)


def test_majority_tie_is_a_failure() -> None:
    assert probing.combine_votes(["success", "failure"]).verdict == "failure"


def test_any_and_all_rules() -> None:
    votes = ["failure", "success", "invalid"]
    assert probing.combine_votes(votes, "any").verdict == "success"
    assert probing.combine_votes(votes, "all").verdict == "failure"
    assert probing.combine_votes(["success", "invalid"], "all").verdict == "success"


def test_no_valid_vote_gives_invalid() -> None:
    assert probing.combine_votes(["invalid", "invalid"]).verdict == "invalid"
    assert probing.combine_votes([]).verdict == "invalid"


def test_vote_rejects_unknown_rule_and_verdict() -> None:
    with pytest.raises(ValueError, match="vote rule"):
        probing.combine_votes(["success"], "pooled")
    with pytest.raises(ValueError, match="a vote must be"):
        probing.combine_votes(["yes"])


def test_verdict_reward_uses_map_with_defaults() -> None:
    assert probing.verdict_reward("success") == 1.0
    assert probing.verdict_reward("invalid") == 0.0
    custom = {"failure": -1.0}
    assert probing.verdict_reward("failure", custom) == -1.0
    assert probing.verdict_reward("success", custom) == 1.0
    with pytest.raises(ValueError):
        probing.verdict_reward("maybe")


def test_judge_metrics_counts_and_rates() -> None:
    m = probing.judge_metrics([True, True, False, False, True], [True, False, False, True, True])
    assert (m.tp, m.fp, m.tn, m.fn) == (2, 1, 1, 1)
    assert m.accuracy == pytest.approx(3 / 5)
    assert m.precision == pytest.approx(2 / 3)
    assert m.recall == pytest.approx(2 / 3)
    assert m.f1 == pytest.approx(2 / 3)
    empty = probing.judge_metrics([False], [False])
    assert math.isnan(empty.precision) and math.isnan(empty.recall)
    with pytest.raises(ValueError):
        probing.judge_metrics([True], [])


def test_submitted_trial_is_first_positive_else_last() -> None:
    assert probing.select_submitted_trial([False, True, True]) == 1
    assert probing.select_submitted_trial([False, False, False]) == 2
    assert probing.select_submitted_trial([True]) == 0
    with pytest.raises(ValueError):
        probing.select_submitted_trial([])


# ----------------------------------------------------------------------------- Lemma 1


def test_one_trial_succeeds_at_the_policy_rate() -> None:
    # No selection happens with a budget of one: the corrected form gives p_a, the paper's
    # printed form does not (0.5 * 0.8 + 0.5 * (1 - 0.5) = 0.65 for p_a=0.5, p_c=0.8).
    for p_a, p_c in itertools.product((0.1, 0.5, 0.9), (0.3, 0.8, 1.0)):
        assert probing.test_time_scaling_success(p_a, p_c, 1) == pytest.approx(p_a)
    assert probing.lemma1_paper_form(0.5, 0.8, 1) == pytest.approx(0.65)


def test_coin_flip_judge_adds_nothing() -> None:
    for p_a, n in itertools.product((0.2, 0.6), (1, 3, 10)):
        assert probing.test_time_scaling_success(p_a, 0.5, n) == pytest.approx(p_a)


def test_perfect_judge_is_best_of_n() -> None:
    for p_a, n in itertools.product((0.2, 0.6), (1, 3, 10)):
        expected = 1 - (1 - p_a) ** n
        assert probing.test_time_scaling_success(p_a, 1.0, n) == pytest.approx(expected)


def test_edge_cases_where_q_is_zero_or_one() -> None:
    # q = 0: never judged positive, so the last trial is submitted.
    assert probing.test_time_scaling_success(1.0, 0.0, 4) == pytest.approx(1.0)
    assert probing.test_time_scaling_success(0.0, 1.0, 4) == pytest.approx(0.0)
    # q = 1: the first trial is always submitted.
    assert probing.test_time_scaling_success(1.0, 1.0, 4) == pytest.approx(1.0)
    assert probing.test_time_scaling_success(0.0, 0.0, 4) == pytest.approx(0.0)
    assert probing.positive_rate(1.0, 0.0) == 0.0 and probing.positive_rate(1.0, 1.0) == 1.0


def test_success_rises_with_judge_accuracy_above_one_half() -> None:
    # Lemma 1 (ii): monotone in p_c on (1/2, 1] whenever p_a > 0.
    for p_a, n in itertools.product((0.1, 0.4, 0.8), (2, 5)):
        values = [probing.test_time_scaling_success(p_a, pc / 20, n) for pc in range(11, 21)]
        assert all(b > a for a, b in itertools.pairwise(values))


def test_exact_formula_agrees_with_simulation_to_three_decimals() -> None:
    # 4M runs per point: the standard error is at most 0.5 / 2000 = 0.00025, so a
    # difference within 0.001 is four standard errors; the seed makes it deterministic.
    runs = 4_000_000
    for k, (p_a, p_c, n) in enumerate(
        itertools.product((0.2, 0.5, 0.8), (0.3, 0.6, 0.9), (1, 3, 8))
    ):
        exact = probing.test_time_scaling_success(p_a, p_c, n)
        sim = probing.simulate_test_time_scaling(p_a, p_c, n, runs=runs, seed=1000 + k)
        assert abs(sim.mean - exact) < 1e-3, (p_a, p_c, n, sim.mean, exact)
        assert sim.stderr <= 2.6e-4


def test_paper_form_disagrees_with_simulation() -> None:
    sim = probing.simulate_test_time_scaling(0.5, 0.8, 3, runs=1_000_000, seed=7)
    paper = probing.lemma1_paper_form(0.5, 0.8, 3)
    exact = probing.test_time_scaling_success(0.5, 0.8, 3)
    assert abs(sim.mean - exact) < 4 * sim.stderr + 1e-12
    assert abs(sim.mean - paper) > 20 * sim.stderr


def test_paper_form_errs_by_pa_1_minus_pa_2pc_minus_1_times_1_minus_q_to_the_n_minus_1() -> None:
    # The printed Lemma 1 is exact only at p_c = 1/2; at N = 1 with p_a = 0.2 it gives 0.36
    # (perfect judge) and 0.04 (always-wrong judge), where no selection happens and the truth
    # is 0.2.
    assert probing.lemma1_paper_form(0.2, 1.0, 1) == pytest.approx(0.36)
    assert probing.lemma1_paper_form(0.2, 0.0, 1) == pytest.approx(0.04)
    for p_a, p_c, n in itertools.product((0.2, 0.5, 0.8), (0.0, 0.3, 0.5, 0.9, 1.0), (1, 2, 5)):
        q = probing.positive_rate(p_a, p_c)
        error = p_a * (1 - p_a) * (2 * p_c - 1) * (1 - q) ** (n - 1)
        gap = probing.lemma1_paper_form(p_a, p_c, n) - probing.test_time_scaling_success(
            p_a, p_c, n
        )
        assert gap == pytest.approx(error, abs=1e-12), (p_a, p_c, n)
    assert probing.lemma1_paper_form(0.3, 0.5, 4) == pytest.approx(0.3)


def test_asymmetric_judge_matches_simulation() -> None:
    exact = probing.test_time_scaling_success(0.4, 0.9, 4, p_c_negative=0.7)
    sim = probing.simulate_test_time_scaling(0.4, 0.9, 4, runs=2_000_000, seed=3, p_c_negative=0.7)
    assert abs(sim.mean - exact) < 1.5e-3


def test_simulation_reports_trials_used() -> None:
    sim = probing.simulate_test_time_scaling(0.0, 1.0, 5, runs=1000, seed=0)
    assert sim.mean == 0.0 and sim.mean_trials == 5.0  # never positive: every run uses all
    sim = probing.simulate_test_time_scaling(1.0, 1.0, 5, runs=1000, seed=0)
    assert sim.mean == 1.0 and sim.mean_trials == 1.0


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="p_a"):
        probing.test_time_scaling_success(1.5, 0.5, 2)
    with pytest.raises(ValueError, match="budget"):
        probing.test_time_scaling_success(0.5, 0.5, 0)
    with pytest.raises(ValueError, match="runs"):
        probing.simulate_test_time_scaling(0.5, 0.5, 2, runs=0)
