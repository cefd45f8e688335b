"""Each default a paper sets is gui-gym's default: these fail if one drifts (issue 20).

Our own improvements stay available as named options; they are tested where they live.
"""

from __future__ import annotations

import inspect

from gui_gym.agents import BestOfNAgent
from gui_gym.envs.replay import SemiOnlineReplayEnv
from gui_gym.models.judge import ProReJudge, Trace
from gui_gym.models.prm_training import PRMTrainConfig
from gui_gym.wrappers import (
    MilestoneVectorWrapper,
    MilestoneWrapper,
    PRMVectorWrapper,
    PRMWrapper,
    ProbingJudgeWrapper,
)


def _default(callable_: object, name: str) -> object:
    return inspect.signature(callable_).parameters[name].default


# ---------------------------------------------------------------------- GUI-Shepherd (003)


def test_prm_step_reward_has_no_outcome_term_eq3() -> None:
    # Eq. 3: r_t = r_PRM(g, s_t, a_t) + r_format; the ORM baseline is the outcome-rewarded one.
    assert _default(PRMWrapper, "outcome_weight") == 0.0
    assert _default(PRMVectorWrapper, "outcome_weight") == 0.0


def test_best_of_n_ranks_by_the_positive_label_logit_sec_4_2() -> None:
    assert _default(BestOfNAgent, "selection") == "positive_logit"


def test_prm_training_follows_app_a3() -> None:
    config = PRMTrainConfig()
    assert config.epochs == 2  # "fine-tune it for 2 epochs"
    assert config.batch_size == 32  # "a global batch size of 32"
    assert config.lr_schedule == "constant"  # "a constant learning rate"
    assert config.keep_best is None  # the model after training, no epoch selection
    assert config.rationale_weight == 1.0  # SFT on rationale then label, counted alike


# ------------------------------------------------------------------------------ ProRe (004)


def test_probe_budget_is_the_policy_trajectory_length_sec_4_1() -> None:
    # "The step budget for key evidence retrieval is set to be no greater than the length of
    # the policy trajectories."
    assert _default(ProReJudge, "probe_steps") is None
    assert _default(ProReJudge, "probe_steps_min") == 1
    assert _default(ProbingJudgeWrapper, "probe_steps") is None
    judge = ProReJudge(*[object()] * 5)
    for length in (1, 3, 12, 40):
        assert judge.probe_budget(Trace("policy", "g", steps=[object()] * length)) == length
    ours = ProReJudge(*[object()] * 5, probe_steps=15, probe_steps_min=8)
    assert [ours.probe_budget(Trace("policy", "g", steps=[object()] * n)) for n in (3, 12, 40)] == [
        8,
        12,
        15,
    ]


# ------------------------------------------------------------------------------ UI-S1 (002)


def test_format_reward_requires_the_think_block_app_h() -> None:
    # "<think> ... </think> <action> ... </action>" is UI-S1's output format.
    assert _default(SemiOnlineReplayEnv, "require_think") is True


# ------------------------------------------------------------------------------ ADMIRE (001)


def test_format_term_penalises_invalid_syntax_only_eq12() -> None:
    # "R_format is set to -1 if the action syntax is invalid and 0 otherwise"
    assert _default(MilestoneWrapper, "format_penalty") == "malformed"
    assert _default(MilestoneVectorWrapper, "format_penalty") == "malformed"


def test_admire_hyperparameters_app_a() -> None:
    for name, value in {"delta": 0.75, "lambda0": 0.3, "decay": 0.99, "eta": 0.5}.items():
        assert _default(MilestoneWrapper, name) == value, name
