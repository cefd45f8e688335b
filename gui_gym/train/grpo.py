"""GRPO for multi-turn GUI agents: ADMIRE's step-level form, the episode-level form, RLOO and
DAPO's clip-higher and dynamic sampling as options.

Read top to bottom: the hyperparameters, how a batch is collected (``tasks_per_iteration``
tasks, ``group_size`` episodes each from the same seed), the advantages, and the loss (the
shared clipped surrogate of :func:`gui_gym.train.losses.policy_loss`).

* ``level="step"`` (ADMIRE Eq. 12-13): every step's total reward ``R_total(t)`` (outcome,
  format and milestone terms, :func:`gui_gym.train.reward_stack.admire_step_rewards`) is
  normalised by the mean and standard deviation over *all steps of all episodes* of its group
  (:func:`gui_gym.rewards.milestones.step_grpo_advantages`), and the objective averages over
  steps (``loss_agg="turn_mean"``).
* ``level="episode"`` (GRPO, Shao et al.; ARPO): one return per episode, normalised over the
  group (:func:`gui_gym.rewards.semi_online.episode_level_advantages`), broadcast to every
  token of the episode.
* ``baseline="rloo"`` replaces mean/std normalisation by the leave-one-out baseline
  (:func:`gui_gym.rewards.advantages.rloo_advantages`), as in ADMIRE Table 4.
* ``TrainConfig.clip_eps_high=0.28`` is DAPO's clip-higher; ``drop_flat_groups`` is its
  dynamic-sampling filter (a group whose rewards are all equal teaches nothing);
  ``overlong_buffer`` its soft overlong punishment (Sec. 3.4,
  :func:`gui_gym.rewards.advantages.overlong_penalty`), added to each step's reward.
* ADMIRE's format term ``eta R_format(t)`` (``format_eta``, 0.5) is in every arm's reward,
  with or without milestones: its outcome and process-reward baselines are ``R_total`` with
  ``lambda = 0`` (Sec. 3.3), so the comparison isolates the milestone term.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from gui_gym.core.trajectory import Trajectory
from gui_gym.rewards.advantages import overlong_penalty, rloo_advantages
from gui_gym.rewards.milestones import step_grpo_advantages
from gui_gym.rewards.semi_online import episode_level_advantages, group_std
from gui_gym.train.config import epoch_draw, iteration_rng
from gui_gym.train.losses import TurnSample, turns_from_trajectory
from gui_gym.train.reward_stack import admire_step_rewards, clean_groups, episode_return
from gui_gym.train.trainer import Algorithm, Trainer

__all__ = [
    "GRPO",
    "TRAIN_DEFAULTS",
    "GRPOConfig",
    "check_group_sizes",
]

TRAIN_DEFAULTS: dict[str, Any] = {"loss_agg": "turn_mean", "kl_coef": 0.0}
"""ADMIRE Eq. 12 averages over steps; ADMIRE trains without a KL loss (App. A.1.2)."""


def check_group_sizes(group_size: int, tasks_per_iteration: int) -> None:
    """Refuse a group too small to have a baseline, or no task per iteration.

    Raises:
        ValueError: naming the setting and its value.
    """
    if group_size < 2:
        raise ValueError(f"group_size must be >= 2 (a group needs a baseline), got {group_size}")
    if tasks_per_iteration < 1:
        raise ValueError(f"tasks_per_iteration must be >= 1, got {tasks_per_iteration}")


@dataclass
class GRPOConfig:
    """GRPO's own hyperparameters.

    Attributes:
        group_size: Episodes per task per iteration, same seed; 8 in ADMIRE App. A.1.2.
        tasks_per_iteration: Distinct tasks per iteration; 4 in ADMIRE App. A.1.2.
        level: ``step`` (ADMIRE Eq. 13) or ``episode``.
        baseline: ``grpo`` (mean/std over the group) or ``rloo`` (leave-one-out mean).
        drop_flat_groups: Drop groups whose rewards do not vary (DAPO dynamic sampling).
        format_eta: ADMIRE's ``eta``, the weight of ``R_format(t)`` (-1 for an action that
            does not parse) in ``R_total`` (Sec. 3.3; 0.5 in App. A). A milestone wrapper
            adds the term with its own ``eta``; this one applies to arms without it.
        overlong_buffer: DAPO's soft overlong band ``L_cache`` as a fraction of
            ``max_new_tokens`` (``L_max``); 0 turns the penalty off. The ``dapo`` preset sets
            0.2 (DAPO: 4,096 of 20,480 tokens, Sec. 3.4).
        eps: Added to standard deviations.
    """

    group_size: int = 8
    tasks_per_iteration: int = 4
    level: Literal["step", "episode"] = "step"
    baseline: Literal["grpo", "rloo"] = "grpo"
    drop_flat_groups: bool = False
    format_eta: float = 0.5  # ADMIRE Sec. 3.3 / App. A: eta = 0.5
    overlong_buffer: float = 0.0  # DAPO Sec. 3.4 (the dapo preset: 0.2)
    eps: float = 1e-6

    def __post_init__(self) -> None:
        check_group_sizes(self.group_size, self.tasks_per_iteration)
        if self.level not in ("step", "episode"):
            raise ValueError(f"level must be 'step' or 'episode', got {self.level!r}")
        if self.baseline not in ("grpo", "rloo"):
            raise ValueError(f"baseline must be 'grpo' or 'rloo', got {self.baseline!r}")
        if not self.format_eta >= 0:
            raise ValueError(f"format_eta must be >= 0, got {self.format_eta!r}")
        if not 0.0 <= self.overlong_buffer <= 1.0:
            raise ValueError(
                f"overlong_buffer must be a fraction of max_new_tokens in [0, 1], got "
                f"{self.overlong_buffer!r}"
            )


class GRPO(Algorithm):
    """Group-relative policy optimisation over episodes of one task from one seed.

    Args:
        make_env: Builds the (reward-wrapped) env; it must accept ``options={"task": id}``.
        tasks: Task ids to train on (drawn ``tasks_per_iteration`` at a time).
        config: :class:`GRPOConfig`.
    """

    name: ClassVar[str] = "grpo"
    config_class: ClassVar[type] = GRPOConfig
    """The config a subclass builds when given none (ARPO's, GiGPO's)."""

    def __init__(
        self,
        make_env: Callable[[], Any],
        tasks: list[str],
        config: Any = None,
    ):
        if not tasks:
            raise ValueError(f"{type(self).__name__} needs at least one task id to train on")
        self.make_env = make_env
        self.tasks = list(tasks)
        self.config = config or self.config_class()

    # -- rollout: G episodes of each task from one seed ------------------------------------

    def collect(self, trainer: Trainer, iteration: int) -> list[list[Trajectory]]:
        rng = iteration_rng(trainer.config.seed, iteration)
        count = min(self.config.tasks_per_iteration, len(self.tasks))
        chosen = [
            self.tasks[i]
            for i in epoch_draw(trainer.config.seed, iteration, len(self.tasks), count)
        ]
        seeds = rng.integers(2**31, size=count).tolist()
        requests = [
            {"seed": seed, "options": {"task": task}}
            for task, seed in zip(chosen, seeds)
            for _ in range(self.config.group_size)
        ]
        episodes = trainer.run_episodes(self.make_env, requests)
        size = self.config.group_size
        return [episodes[i : i + size] for i in range(0, len(episodes), size)]

    # -- advantages ---------------------------------------------------------------------------

    def advantages(
        self, trainer: Trainer, groups: list[list[Trajectory]], iteration: int
    ) -> list[TurnSample]:
        turns: list[TurnSample] = []
        episode = 0
        eta = self.config.format_eta
        limit = trainer.config.max_new_tokens if self.config.overlong_buffer else 1
        buffer = round(self.config.overlong_buffer * limit)

        def overlong(trajectory: Trajectory) -> list[float]:
            if not buffer:
                return [0.0] * len(trajectory.steps)
            return [
                overlong_penalty(len(s.completion_ids or []), limit, buffer)
                for s in trajectory.steps
            ]

        for group in clean_groups(groups):
            if self.config.level == "step":
                rewards = [
                    [r + p for r, p in zip(admire_step_rewards(t, eta), overlong(t))] for t in group
                ]
                if (
                    self.config.drop_flat_groups
                    and group_std([r for row in rewards for r in row]) == 0
                ):
                    continue
                if self.config.baseline == "rloo":
                    flat = rloo_advantages([r for row in rewards for r in row])
                    per_step, start = [], 0
                    for row in rewards:
                        per_step.append(flat[start : start + len(row)])
                        start += len(row)
                else:
                    per_step = [list(a) for a in step_grpo_advantages(rewards, eps=self.config.eps)]
            else:
                returns = [episode_return(t, eta) + sum(overlong(t)) for t in group]
                if self.config.drop_flat_groups and group_std(returns) == 0:
                    continue
                if self.config.baseline == "rloo":
                    per_episode = rloo_advantages(returns)
                else:
                    per_episode = episode_level_advantages(returns, eps=self.config.eps)
                per_step = [[a] * len(t.steps) for a, t in zip(per_episode, group)]
            for trajectory, advantages in zip(group, per_step):
                turns.extend(turns_from_trajectory(trajectory, advantages, episode=episode))
                episode += 1
        return turns
