"""GiGPO (Group-in-Group Policy Optimisation; Feng et al. 2025, verl-agent, arXiv 2505.10978):
GRPO's episode groups plus step groups of the actions taken from the same anchor state.

Read top to bottom: the hyperparameters, the rollout (GRPO's: ``tasks_per_iteration`` tasks,
``group_size`` episodes each from the same seed, so the episodes of a group start in the same
state and revisit shared states), the advantages, and the loss (the shared clipped
surrogate of :func:`gui_gym.train.losses.policy_loss`).

* **Episode level** (Eq. 3): each episode's return ``R(tau)`` (the stack's per-step rewards
  plus ADMIRE's format term, as every GRPO arm has it) relative to its group.
* **Step level** (Eq. 5-7): each step's discounted return (``gamma`` 0.95) relative to the
  other steps of the group taken from the same **anchor state**. gui-gym's anchor is the
  screen the policy was shown (``Step.screen``, the rendered UI tree): the simulated apps
  render a screen from their state deterministically, so equal screens are an exact match,
  never a fuzzy one (verl-agent's exact-match grouping). Two states that differ only in what
  the screen does not show share an anchor, as they share the policy's observation.
* ``A = A^E + omega A^S`` (Eq. 8, :func:`gui_gym.rewards.advantages.gigpo_advantages`),
  broadcast to every token of the step; ``loss_agg="token_mean"`` and a ``k3`` KL loss of
  0.01 as verl-agent's scripts train GiGPO (``use_kl_loss``, ``low_var_kl``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, ClassVar

from gui_gym.core.trajectory import Trajectory
from gui_gym.rewards.advantages import GIGPO_GAMMA, gigpo_advantages
from gui_gym.train.grpo import GRPO, check_group_sizes
from gui_gym.train.losses import TurnSample, turns_from_trajectory
from gui_gym.train.reward_stack import clean_groups, shaped_step_rewards
from gui_gym.train.trainer import Trainer

__all__ = ["TRAIN_DEFAULTS", "GiGPO", "GiGPOConfig", "anchor_key"]

TRAIN_DEFAULTS: dict[str, Any] = {"loss_agg": "token_mean", "kl_coef": 0.01, "kl_estimator": "k3"}
"""verl-agent's GiGPO scripts: token-mean loss, a low-variance (k3) KL loss of 0.01."""


@dataclass
class GiGPOConfig:
    """GiGPO's own hyperparameters.

    Attributes:
        group_size: Episodes per task per iteration, same seed (verl-agent: 8).
        tasks_per_iteration: Distinct tasks per iteration.
        gamma: Discount of the step returns (verl-agent: 0.95).
        step_weight: ``omega``, the weight of the step-level advantage (1.0).
        std_norm: Divide both advantages by their group's standard deviation
            (``mean_std_norm``); False is ``mean_norm``, verl-agent's scripts' choice.
        format_eta: ADMIRE's ``eta`` on ``R_format(t)``, so that a GiGPO arm has the same
            reward as the GRPO arms it is compared with (0 turns it off).
        eps: Added to standard deviations.
    """

    group_size: int = 8
    tasks_per_iteration: int = 4
    gamma: float = GIGPO_GAMMA
    step_weight: float = 1.0
    std_norm: bool = False
    format_eta: float = 0.5
    eps: float = 1e-6

    def __post_init__(self) -> None:
        check_group_sizes(self.group_size, self.tasks_per_iteration)
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {self.gamma!r}")
        if not self.step_weight >= 0:
            raise ValueError(f"step_weight must be >= 0, got {self.step_weight!r}")
        if not self.format_eta >= 0:
            raise ValueError(f"format_eta must be >= 0, got {self.format_eta!r}")


def anchor_key(step: Any) -> str:
    """A step's anchor state: a digest of the screen it was chosen on."""
    return hashlib.sha1(str(step.screen).encode("utf-8"), usedforsecurity=False).hexdigest()


class GiGPO(GRPO):
    """GiGPO over episodes of one task from one seed: GRPO's rollout and arguments (its
    ``config`` a :class:`GiGPOConfig`), two-level advantages."""

    name: ClassVar[str] = "gigpo"
    config_class: ClassVar[type] = GiGPOConfig
    config: GiGPOConfig

    def advantages(
        self, trainer: Trainer, groups: list[list[Trajectory]], iteration: int
    ) -> list[TurnSample]:
        turns: list[TurnSample] = []
        episode = 0
        config = self.config
        for group in clean_groups(groups):
            per_step = gigpo_advantages(
                [shaped_step_rewards(t, config.format_eta) for t in group],
                [[anchor_key(s) for s in t.steps] for t in group],
                gamma=config.gamma,
                step_weight=config.step_weight,
                std_norm=config.std_norm,
                eps=config.eps,
            )
            for trajectory, advantages in zip(group, per_step):
                turns.extend(turns_from_trajectory(trajectory, advantages, episode=episode))
                episode += 1
        return turns
