"""ARPO (Lu et al. 2025): trajectory-level GRPO with a replay buffer of successful episodes,
GUI-Shepherd's second ORM baseline (Table 1; App. B.3).

Read top to bottom: the hyperparameters, the batch (one task per iteration, a group of 8
episodes from one seed: GUI-Shepherd App. B.3 "selects one task per iteration and
simultaneously rolls out a group of 8 trajectories"), the replay, the advantages, and the loss
(the shared clipped surrogate).

ARPO's advantages are GRPO's at the trajectory level: one return per episode (the outcome
reward of an ORM, plus whatever else the reward stack adds), normalised by the group's mean
and standard deviation (:func:`gui_gym.rewards.semi_online.episode_level_advantages`) and
broadcast to every token of the episode. With a sparse outcome most groups of a hard task
fail together, and a group whose returns are all equal has zero advantages: it teaches
nothing. ARPO's experience replay fixes that:

1. every successful episode is kept in a per-task buffer (the newest ``replay_capacity``);
2. a group in which no episode succeeded has one of its episodes replaced by a success of the
   same task drawn from the buffer (:func:`replay_into_group`), so the group has a success to
   push towards and failures to push away from.

A replayed episode was sampled by an older policy; its ``pi_old`` is recomputed with the
current weights before the update, as for every turn of the batch (the trainer scores turns
whose ``old_logprobs`` are unset), so the clipped ratio starts at 1 for it too.

ARPO's task filter (training only on tasks the base agent sometimes solves) is a choice of
``--task`` ids here, not part of the algorithm.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from gui_gym.core.trajectory import Trajectory
from gui_gym.train.grpo import GRPO, GRPOConfig
from gui_gym.train.losses import TurnSample
from gui_gym.train.reward_stack import clean_groups
from gui_gym.train.trainer import Trainer

__all__ = ["ARPO", "TRAIN_DEFAULTS", "ARPOConfig", "remember_successes", "replay_into_group"]

TRAIN_DEFAULTS: dict[str, Any] = {
    "loss_agg": "token_mean",
    "kl_coef": 0.0,
    "update_epochs": 1,  # verl's ppo_epochs: GUI-Shepherd reproduces ARPO on verl (App. B.3)
}
"""No KL term, as GUI-Shepherd's PPO runs (App. B.2); the token-mean loss of GRPO on
trajectories (each token of an episode carries the episode's advantage)."""


@dataclass
class ARPOConfig(GRPOConfig):
    """ARPO's hyperparameters (GRPO's, at the episode level, plus the replay buffer).

    Attributes:
        group_size: Episodes per task per iteration; 8 in GUI-Shepherd App. B.3.
        tasks_per_iteration: Tasks per iteration; 1 in GUI-Shepherd App. B.3.
        replay_capacity: Successful episodes kept per task, newest first out last (ours:
            neither paper's text fixes it).
        level: Always ``episode`` (ARPO is trajectory-level GRPO).
        format_eta: 0: ARPO is an ORM-based GRPO (GUI-Shepherd App. B.3), its reward the
            task outcome alone; ADMIRE's format term is not part of it.
    """

    group_size: int = 8
    tasks_per_iteration: int = 1
    level: str = "episode"
    format_eta: float = 0.0  # GUI-Shepherd App. B.3: ARPO's reward is the outcome
    replay_capacity: int = 4

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.level != "episode":
            raise ValueError(
                f"ARPO is trajectory-level: level must be 'episode', got {self.level!r}"
            )
        if (
            isinstance(self.replay_capacity, bool)
            or not isinstance(self.replay_capacity, int)
            or self.replay_capacity < 1
        ):
            raise ValueError(
                f"replay_capacity must be a positive int, got {self.replay_capacity!r}"
            )


def remember_successes(
    buffer: dict[str, list[Trajectory]], group: Sequence[Trajectory], capacity: int
) -> int:
    """Add the group's successful episodes to ``buffer[task_id]``, keeping the newest
    ``capacity`` of each task. Returns how many were added."""
    added = 0
    for trajectory in group:
        if trajectory.success:
            kept = buffer.setdefault(trajectory.task_id, [])
            kept.append(trajectory)
            del kept[:-capacity]
            added += 1
    return added


def replay_into_group(
    group: Sequence[Trajectory],
    buffer: dict[str, list[Trajectory]],
    rng: np.random.Generator,
) -> tuple[list[Trajectory], bool]:
    """ARPO's experience replay: a group with no success gets its last episode replaced by a
    success of the same task drawn uniformly from the buffer.

    Returns:
        ``(group, replayed)``: the group to compute advantages on, and whether a buffered
        episode went into it. A group with a success, or whose task has nothing in the
        buffer, is returned as it is.
    """
    group = list(group)
    if not group or any(t.success for t in group):
        return group, False
    stored = buffer.get(group[0].task_id) or []
    if not stored:
        return group, False
    group[-1] = stored[int(rng.integers(len(stored)))]
    return group, True


class ARPO(GRPO):
    """Trajectory-level GRPO with a per-task replay buffer of successes (Lu et al. 2025).

    Args:
        make_env: Builds the (reward-wrapped) env; it must accept ``options={"task": id}``.
        tasks: Task ids to train on (``tasks_per_iteration`` drawn each iteration).
        config: :class:`ARPOConfig`.
    """

    name: ClassVar[str] = "arpo"
    config_class: ClassVar[type] = ARPOConfig
    config: ARPOConfig

    def __init__(
        self,
        make_env: Callable[[], Any],
        tasks: list[str],
        config: ARPOConfig | None = None,
    ):
        super().__init__(make_env, tasks, config)
        self.buffer: dict[str, list[Trajectory]] = {}
        self.replayed = 0  # groups that took a buffered success, over the run

    # -- replay, then GRPO's episode-level advantages ---------------------------------------

    def advantages(
        self, trainer: Trainer, groups: list[list[Trajectory]], iteration: int
    ) -> list[TurnSample]:
        # a generator of the run seed and the iteration: a resumed run draws the same episodes
        rng = np.random.default_rng([trainer.config.seed, iteration, 0xA4])
        mixed = []
        for group in clean_groups(groups):
            group, replayed = replay_into_group(group, self.buffer, rng)
            if replayed:
                self.replayed += 1
            else:  # a replayed group had no success of its own to keep
                remember_successes(self.buffer, group, self.config.replay_capacity)
            mixed.append(group)
        return super().advantages(trainer, mixed, iteration)

    # -- checkpoint state and metrics -------------------------------------------------------

    def metrics(self) -> dict[str, Any]:
        return {
            "replayed_groups": self.replayed,
            "replay_buffer_episodes": sum(len(v) for v in self.buffer.values()),
        }

    def state_dict(self) -> dict[str, Any]:
        return {
            **self.metrics(),
            "replay_buffer": {
                task: [t.to_dict() for t in kept] for task, kept in sorted(self.buffer.items())
            },
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.replayed = int(state.get("replayed_groups", 0))
        self.buffer = {
            task: [Trajectory.from_dict(t) for t in kept]
            for task, kept in state.get("replay_buffer", {}).items()
        }
