"""Baselines as the papers define them (issue 31 item 6), with worked numbers:

* ADMIRE's outcome and process arms keep ``eta R_format(t)`` of ``R_total`` (Sec. 3.3), as
  its milestone arm does;
* ProgRM Table 1's ORM baseline is a learned outcome reward model (``--reward orm``);
* DAPO's soft overlong punishment (Sec. 3.4) in the ``dapo`` preset;
* offline GRPO keeps flat groups (GUI-Shepherd App. C runs standard GRPO).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import pytest

from gui_gym.core.trajectory import Step, Trajectory
from gui_gym.rewards.advantages import overlong_penalty
from gui_gym.train.reward_stack import (
    RewardStack,
    admire_format_rewards,
    admire_step_rewards,
    episode_return,
    outcome_reward,
    parse_reward,
)
from tests.conftest import require


def episode(actions: list[str], success: bool, lengths: list[int] | None = None) -> Trajectory:
    reward = 1.0 if success else 0.0
    last = len(actions) - 1
    lengths = lengths or [2] * len(actions)
    return Trajectory(
        env_id="GuiGym/WikiHow-v0",
        task_id="t",
        instruction="do t",
        seed=0,
        steps=[
            Step(
                index=i,
                screen="s",
                action=a,
                reward=reward if i == last else 0.0,
                task_reward=reward if i == last else 0.0,
                terminated=i == last,
                prompt_ids=[5, 6],
                completion_ids=list(range(7, 7 + n)),
            )
            for i, (a, n) in enumerate(zip(actions, lengths, strict=True))
        ],
        success=success,
        task_reward=reward,
    )


# ------------------------------------------------------------------ ADMIRE's format term


def test_admire_outcome_arm_keeps_the_format_term() -> None:
    good = episode(["CLICK(1)", "CLICK(2)"], success=True)
    sloppy = episode(["click the button", "CLICK(2)"], success=False)
    assert admire_format_rewards(good) == [0.0, 0.0]
    assert admire_format_rewards(sloppy) == [-1.0, 0.0]
    # R_total(t) = R_outcome + eta R_format(t) with lambda = 0, eta = 0.5 (App. A)
    assert admire_step_rewards(good, 0.5) == [1.0, 1.0]
    assert admire_step_rewards(sloppy, 0.5) == [-0.5, 0.0]
    assert admire_step_rewards(sloppy) == [0.0, 0.0]  # eta 0: the outcome alone
    assert episode_return(sloppy, 0.5) == -0.5


def test_step_grpo_outcome_arm_penalises_the_unparsable_step() -> None:
    require("torch", "llm")
    from gui_gym.train.grpo import GRPO, GRPOConfig

    assert GRPOConfig().format_eta == 0.5  # ADMIRE App. A
    group = [
        episode(["CLICK(1)", "CLICK(2)"], success=True),
        episode(["click the button", "CLICK(2)"], success=False),
    ]
    algorithm = GRPO(lambda: None, ["t"], GRPOConfig(group_size=2))
    trainer = SimpleNamespace(config=SimpleNamespace(seed=0, max_new_tokens=8))
    turns = algorithm.advantages(trainer, [group], 0)
    # rewards over the group's steps: [1, 1, -0.5, 0]; mean 0.375, std 0.6495
    mean, std = 0.375, (((0.625**2) * 2 + 0.875**2 + 0.375**2) / 4) ** 0.5
    expected = [(r - mean) / (std + 1e-6) for r in (1.0, 1.0, -0.5, 0.0)]
    assert [t.advantages[0] for t in turns] == pytest.approx(expected, abs=1e-6)
    # before: the malformed step and the well-formed failing step were tied (both 0)
    assert turns[2].advantages[0] < turns[3].advantages[0]


# -------------------------------------------------------------------- DAPO's overlong shaping


def test_overlong_penalty_worked_numbers() -> None:
    # DAPO Sec. 3.4: L_max 20,480 with a 4,096-token buffer
    assert overlong_penalty(16384, 20480, 4096) == 0.0
    assert overlong_penalty(18432, 20480, 4096) == pytest.approx(-0.5)
    assert overlong_penalty(20480, 20480, 4096) == pytest.approx(-1.0)
    assert overlong_penalty(30000, 20480, 4096) == -1.0
    assert overlong_penalty(20480, 20480, 0) == 0.0  # off
    with pytest.raises(ValueError, match="buffer <= max_length"):
        overlong_penalty(10, 8, 9)


def test_dapo_preset_penalises_completions_that_run_into_the_limit() -> None:
    require("torch", "llm")
    from gui_gym.train.grpo import GRPO, GRPOConfig
    from gui_gym.train.runner import resolve_algorithm

    assert resolve_algorithm("dapo", {})[1]["overlong_buffer"] == 0.2
    # max_new_tokens 10, buffer 2 tokens: lengths 8 -> 0, 9 -> -0.5, 10 -> -1
    group = [
        episode(["CLICK(1)"], success=True, lengths=[8]),
        episode(["CLICK(1)"], success=True, lengths=[9]),
        episode(["CLICK(1)"], success=True, lengths=[10]),
    ]
    config = GRPOConfig(group_size=3, overlong_buffer=0.2, format_eta=0.0)
    algorithm = GRPO(lambda: None, ["t"], config)
    trainer = SimpleNamespace(config=SimpleNamespace(seed=0, max_new_tokens=10))
    turns = algorithm.advantages(trainer, [group], 0)
    rewards = [1.0, 0.5, 0.0]
    mean, std = 0.5, (0.5 / 3) ** 0.5
    expected = [(r - mean) / (std + 1e-6) for r in rewards]
    assert [t.advantages[0] for t in turns] == pytest.approx(expected, abs=1e-6)
    with pytest.raises(ValueError, match="overlong_buffer must be a fraction"):
        GRPOConfig(overlong_buffer=2.0)


# ---------------------------------------------------------------- offline GRPO's flat groups


def test_offline_grpo_keeps_flat_groups_as_standard_grpo_does() -> None:
    require("torch", "llm")
    from gui_gym.train.offline_grpo import OfflineGRPO, OfflineGRPOConfig

    assert OfflineGRPOConfig().drop_flat_groups is False  # GUI-Shepherd App. C
    flat = [episode(["CLICK(1)"], success=False) for _ in range(2)]
    varied = [episode(["CLICK(1)"], success=False) for _ in range(2)]
    for t, reward in zip(flat + varied, (1.0, 1.0, 2.0, 0.0), strict=True):
        t.metadata["offline_reward"] = reward
    algorithm = OfflineGRPO(lambda: None, OfflineGRPOConfig(group_size=2), states=[(0, 0)])
    turns = algorithm.advantages(SimpleNamespace(config=SimpleNamespace(seed=0)), [flat, varied], 0)
    assert len(turns) == 4  # the flat group stays (its KL term and share of the mean)
    assert [t.advantages[0] for t in turns[:2]] == [0.0, 0.0]
    dropping = OfflineGRPO(
        lambda: None, OfflineGRPOConfig(group_size=2, drop_flat_groups=True), states=[(0, 0)]
    )
    assert len(dropping.advantages(None, [flat, varied], 0)) == 2


# ---------------------------------------------------------------------- ProgRM's learned ORM


class FixedORM:
    def __init__(self, score: float):
        self.score = score
        self.queries: list = []

    def predict(self, queries):
        self.queries.extend(queries)
        return [self.score] * len(queries)


def test_the_orm_reward_replaces_the_outcome_at_the_end() -> None:
    import gui_gym  # noqa: F401
    from gui_gym.wrappers import OutcomeModelWrapper

    orm = FixedORM(0.8)
    env = OutcomeModelWrapper(gym.make("GuiGym/WikiHow-v0", max_steps=2), orm)
    env.reset(seed=0)
    _, r1, term, trunc, info = env.step("SCROLL(down)")
    assert (r1, term or trunc, "orm" in info) == (0.0, False, False)
    _, r2, term, trunc, info = env.step("SCROLL(down)")
    assert trunc and info["orm"] == {"reward": 0.8, "task_reward": 0.0}
    assert r2 == pytest.approx(0.8)
    [query] = orm.queries  # one query, at the final state [g, a_1..a_T, o_T+1]
    assert len(query.actions) == 2
    trajectory = episode(["CLICK(1)"], success=False)
    trajectory.steps[-1].info["orm"] = info["orm"]
    assert outcome_reward(trajectory) == 0.8


def test_the_orm_term_needs_a_learned_orm(tmp_path: Path) -> None:
    require("torch", "llm")
    from gui_gym.models.progress import ProgRM, build_word_tokenizer, tiny_backbone_config

    assert parse_reward("orm+progress") == {"orm": 1.0, "progress": 1.0, "outcome": 1.0}
    with pytest.raises(ValueError, match="judge and orm both replace"):
        parse_reward("judge+orm")
    with pytest.raises(ValueError, match="takes no weight"):
        parse_reward("0.5*orm")
    with pytest.raises(ValueError, match="needs a learned outcome reward model"):
        RewardStack.from_text("orm")
    tokenizer = build_word_tokenizer(["open the menu", "Current screen: home"])
    config = tiny_backbone_config(len(tokenizer), hidden=16, layers=1, heads=2)
    for kind in ("orm", "progrm"):
        ProgRM.from_config(config, tokenizer, kind=kind, device="cpu").save(tmp_path / kind)
    env = RewardStack.from_text("orm", orm_model=tmp_path / "orm").wrap(
        gym.make("GuiGym/WikiHow-v0", max_steps=1)
    )
    env.reset(seed=0)
    *_, info = env.step("SCROLL(down)")
    assert 0.0 <= info["orm"]["reward"] <= 1.0
    with pytest.raises(ValueError, match="not an outcome reward model"):
        RewardStack.from_text("orm", orm_model=tmp_path / "progrm").wrap(
            gym.make("GuiGym/WikiHow-v0", max_steps=1)
        )
