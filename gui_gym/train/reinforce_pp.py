"""REINFORCE++ for multi-turn GUI agents, as ProgRM trains its actor (Sec. 2.4, 3.1).

Read top to bottom: the hyperparameters, the batch (``tasks_per_iteration`` tasks,
``episodes_per_task`` episodes each; no groups are needed), the advantages, and the loss.

REINFORCE++ has no critic and no per-group baseline:

1. the KL to the reference model is folded into the *token rewards*: every sampled token
   earns ``-kl_coef * (log pi_old - log pi_ref)`` (OpenRLHF's k1 reward penalty);
2. each turn's reward (``r_t`` from the reward stack: outcome, progress, ...) sits on the turn's
   last token, and per-token returns run backwards with ``gamma_token`` inside a turn and
   ``gamma_turn`` between turns (ProgRM follows Wen et al.'s token-level credit assignment;
   :func:`gui_gym.rewards.advantages.token_level_returns`);
3. the returns of every token of the *whole batch* are normalised together
   (:func:`gui_gym.rewards.advantages.global_batch_normalise`), not per prompt.

The loss is the shared clipped surrogate, averaged over tokens, with no KL term (the KL is
already in the reward).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from gui_gym.core.trajectory import Trajectory
from gui_gym.rewards.advantages import global_batch_normalise, token_level_returns
from gui_gym.train.config import epoch_draw, iteration_rng
from gui_gym.train.losses import LossInputs, TurnSample, policy_loss, turns_from_trajectory
from gui_gym.train.reward_stack import clean_groups, reward_stream
from gui_gym.train.trainer import Algorithm, Trainer

__all__ = ["TRAIN_DEFAULTS", "ReinforcePP", "ReinforcePPConfig"]

TRAIN_DEFAULTS: dict[str, Any] = {
    "loss_agg": "token_mean",
    "kl_coef": 0.0,
    "update_epochs": 1,  # OpenRLHF's max_epochs; ProgRM's Table 6 values are lost in our copy
    "adam_beta2": 0.95,  # ProgRM App. D: Adam betas (0.9, 0.95) for online RL too
}
"""REINFORCE++ averages over tokens and keeps the KL in the reward, not the loss."""


@dataclass
class ReinforcePPConfig:
    """REINFORCE++'s own hyperparameters.

    Attributes:
        tasks_per_iteration: Tasks per batch.
        episodes_per_task: Episodes per task per batch (1 is plain REINFORCE++; more gives
            the global normalisation more samples of each task).
        reward_kl_coef: Weight of the per-token KL penalty in the reward; 0.01 is OpenRLHF's
            default ``init_kl_coef`` (ProgRM states none).
        gamma_turn: Discount between turns (OpenRLHF's default 1.0). ProgRM gives its inter-
            and intra-turn discounts in its Table 6, whose values the copy of the paper this
            project works from lost (only the caption survives); 1.0 keeps the outcome at full
            strength over the short WikiHow episodes, as Wen et al.'s default does.
        gamma_token: Discount between tokens of one turn (1.0: Wen et al. do not discount
            inside an action).
    """

    tasks_per_iteration: int = 8
    episodes_per_task: int = 1
    reward_kl_coef: float = 0.01
    gamma_turn: float = 1.0
    gamma_token: float = 1.0

    def __post_init__(self) -> None:
        if self.tasks_per_iteration < 1 or self.episodes_per_task < 1:
            raise ValueError("tasks_per_iteration and episodes_per_task must be >= 1")
        if self.reward_kl_coef < 0:
            raise ValueError(f"reward_kl_coef must be >= 0, got {self.reward_kl_coef!r}")


class ReinforcePP(Algorithm):
    """REINFORCE++ with token-level KL in the reward and global batch normalisation.

    Args:
        make_env: Builds the (reward-wrapped) env; it must accept ``options={"task": id}``.
        tasks: Task ids to train on.
        config: :class:`ReinforcePPConfig`.
    """

    name: ClassVar[str] = "reinforce_pp"

    def __init__(
        self,
        make_env: Callable[[], Any],
        tasks: list[str],
        config: ReinforcePPConfig | None = None,
    ):
        if not tasks:
            raise ValueError("REINFORCE++ needs at least one task id to train on")
        self.make_env = make_env
        self.tasks = list(tasks)
        self.config = config or ReinforcePPConfig()

    @property
    def needs_reference(self) -> bool:
        return self.config.reward_kl_coef > 0

    # -- rollout ------------------------------------------------------------------------------

    def collect(self, trainer: Trainer, iteration: int) -> list[list[Trajectory]]:
        rng = iteration_rng(trainer.config.seed, iteration)
        chosen = epoch_draw(
            trainer.config.seed, iteration, len(self.tasks), self.config.tasks_per_iteration
        )
        requests = [
            {"seed": int(rng.integers(2**31)), "options": {"task": self.tasks[i]}}
            for i in chosen
            for _ in range(self.config.episodes_per_task)
        ]
        return [[t] for t in trainer.run_episodes(self.make_env, requests)]

    # -- advantages ---------------------------------------------------------------------------

    def advantages(
        self, trainer: Trainer, groups: list[list[Trajectory]], iteration: int
    ) -> list[TurnSample]:
        episodes = [g[0] for g in clean_groups(groups, minimum=1)]
        per_episode = [
            turns_from_trajectory(t, [0.0] * len(t.steps), episode=i)
            for i, t in enumerate(episodes)
        ]
        turns = [turn for row in per_episode for turn in row]
        if not turns:
            return []
        trainer.old_logprobs(turns)
        if self.needs_reference:
            trainer.reference_logprobs(turns)
        returns: list[list[float]] = []
        for trajectory, row in zip(episodes, per_episode):
            penalties = [
                [
                    -self.config.reward_kl_coef * (old - ref)
                    for old, ref in zip(turn.old_logprobs, turn.ref_logprobs or turn.old_logprobs)
                ]
                for turn in row
            ]
            returns.extend(
                token_level_returns(
                    reward_stream(trajectory),
                    penalties,
                    gamma_turn=self.config.gamma_turn,
                    gamma_token=self.config.gamma_token,
                )
            )
        for turn, advantages in zip(turns, global_batch_normalise(returns)):
            turn.advantages = advantages
        return turns

    # -- loss ---------------------------------------------------------------------------------

    def loss(self, trainer: Trainer, inputs: LossInputs) -> tuple[Any, dict[str, float]]:
        return policy_loss(inputs, kl_in_loss=False)  # the KL is in the reward already
