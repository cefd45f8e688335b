"""Offline GRPO on recorded single-step states, as GUI-Shepherd App. C trains on AndroidControl.

Read top to bottom: the hyperparameters, the batch (anchor states of recorded expert
trajectories, ``group_size`` actions sampled from each identical state), the reward, the
advantages and the loss.

* States: step ``t`` of a recorded expert trajectory, reached by replaying the expert's
  actions in a :class:`~gui_gym.envs.replay.SemiOnlineReplayEnv` (so the history is the
  recorded one), then ``fork()`` ed ``group_size`` times: every action of a group is sampled
  from exactly the same state.
* Reward (App. C): ``oracle``: 1 for the expert's action type plus 1 when its arguments match
  too (the paper's type reward plus text-match reward; our actions also name an element, so
  the argument match covers the index as well); ``prm``: 1 when a process reward model
  accepts the action (score >= ``prm_threshold``), else 0.
* Advantages: GRPO's group normalisation over the ``group_size`` actions of one state
  (:func:`gui_gym.rewards.semi_online.episode_level_advantages`).
* Loss: the shared clipped surrogate with KL 0.01 (App. C); :data:`TRAIN_DEFAULTS` sets it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import gymnasium as gym

from gui_gym.core.trajectory import Trajectory
from gui_gym.rewards.semi_online import episode_level_advantages, group_std
from gui_gym.train.config import epoch_draw
from gui_gym.train.losses import TurnSample, turns_from_trajectory
from gui_gym.train.reward_stack import clean_groups
from gui_gym.train.trainer import Algorithm, Trainer

__all__ = [
    "TRAIN_DEFAULTS",
    "OfflineGRPO",
    "OfflineGRPOConfig",
    "RecordedState",
    "oracle_reward",
]

TRAIN_DEFAULTS: dict[str, Any] = {"kl_coef": 0.01, "update_epochs": 1}
"""GUI-Shepherd App. C: KL loss coefficient 0.01."""


@dataclass
class OfflineGRPOConfig:
    """Offline GRPO's own hyperparameters (GUI-Shepherd App. C).

    Attributes:
        group_size: Actions sampled per state; 8 in App. C.
        states_per_iteration: States per batch (overall batch size 32 in App. C).
        reward: ``oracle`` (type and argument match) or ``prm``.
        prm_threshold: PRM score at which an action counts as accepted.
        drop_flat_groups: Skip states where every sampled action earned the same reward.
            Off: App. C runs standard GRPO (Shao et al.), which keeps every group; a flat
            group's advantages are 0, but its samples still count in the KL term (0.01) and
            in the loss's mean. DAPO's filter is an option, not the paper's.
    """

    group_size: int = 8
    states_per_iteration: int = 32
    reward: Literal["oracle", "prm"] = "oracle"
    prm_threshold: float = 0.5
    drop_flat_groups: bool = False  # GUI-Shepherd App. C: standard GRPO, no group filter

    def __post_init__(self) -> None:
        if self.group_size < 2:
            raise ValueError(f"group_size must be >= 2, got {self.group_size}")
        if self.states_per_iteration < 1:
            raise ValueError(f"states_per_iteration must be >= 1, got {self.states_per_iteration}")
        if self.reward not in ("oracle", "prm"):
            raise ValueError(f"reward must be 'oracle' or 'prm', got {self.reward!r}")


def oracle_reward(semi_online_info: dict[str, Any]) -> float:
    """GUI-Shepherd App. C's oracle reward from the replay env's match scores: the action-type
    match (0/1) plus the argument match (0/1, only with the right type)."""
    type_ok = float(bool(semi_online_info.get("type_ok")))
    return type_ok + type_ok * float(bool(semi_online_info.get("exact_ok")))


class RecordedState(gym.Wrapper):
    """A replay env that starts at step ``step`` of the recorded trajectory (reached by
    replaying the expert's actions on reset) and ends after one action: a recorded
    single-step state, as GUI-Shepherd's offline data are. The replay is deterministic, so
    every reset with the same trajectory gives the identical state.

    Raises:
        ValueError: on reset, when the trajectory has no step ``step``.
    """

    def __init__(self, env: gym.Env, step: int):
        super().__init__(env)
        self.step_index = int(step)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        observation, info = self.env.reset(seed=seed, options=options)
        for _ in range(self.step_index):
            observation, _, terminated, truncated, info = self.env.step(
                self.env.unwrapped.oracle_action()
            )
            if terminated or truncated:
                raise ValueError(f"the recorded trajectory has no step {self.step_index}")
        return observation, info

    def step(self, action: Any) -> Any:
        observation, reward, terminated, truncated, info = self.env.step(action)
        return observation, reward, terminated, True, info


def _recorded_state(make_env: Callable[[], Any], step: int) -> RecordedState:
    return RecordedState(make_env(), step)


class OfflineGRPO(Algorithm):
    """GRPO over single recorded states with an oracle or PRM reward.

    Args:
        make_env: Builds a :class:`~gui_gym.envs.replay.SemiOnlineReplayEnv` over the
            recorded dataset.
        config: :class:`OfflineGRPOConfig`.
        prm: A :class:`~gui_gym.models.prm.ProcessRewardModel` for ``reward="prm"``.
        states: ``(trajectory index, step index)`` pairs to train on; default every step of
            every trajectory of the env's dataset.
    """

    name: ClassVar[str] = "offline_grpo"

    def __init__(
        self,
        make_env: Callable[[], Any],
        config: OfflineGRPOConfig | None = None,
        *,
        prm: Any = None,
        states: list[tuple[int, int]] | None = None,
    ):
        self.make_env = make_env
        self.config = config or OfflineGRPOConfig()
        if self.config.reward == "prm" and prm is None:
            raise ValueError("reward='prm' needs a process reward model (prm=...)")
        self.prm = prm
        if states is None:
            env = make_env()
            states = [
                (i, t)
                for i, expert in enumerate(env.unwrapped.dataset)
                for t in range(len(expert.steps))
            ]
            env.close()
        if not states:
            raise ValueError("offline GRPO needs at least one recorded state")
        self.states = list(states)
        self._factories: dict[int, Callable[[], Any]] = {}

    # -- rollout: G actions from one recorded state --------------------------------------------

    def _factory(self, step: int) -> Callable[[], Any]:
        # one callable per anchor step, so the trainer's rollout engine for it is reused
        if step not in self._factories:
            self._factories[step] = functools.partial(_recorded_state, self.make_env, step)
        return self._factories[step]

    def collect(self, trainer: Trainer, iteration: int) -> list[list[Trajectory]]:
        count = min(self.config.states_per_iteration, len(self.states))
        groups: list[list[Trajectory]] = []
        for pick in epoch_draw(trainer.config.seed, iteration, len(self.states), count):
            index, step = self.states[pick]
            requests = [{"seed": 0, "options": {"trajectory": index}}] * self.config.group_size
            group = trainer.run_episodes(self._factory(step), requests)
            if self.config.reward == "prm":
                self._prm_rewards(group, index, step)
            else:
                for trajectory in group:
                    if trajectory.steps:
                        info = trajectory.steps[0].info.get("semi_online", {})
                        trajectory.metadata["offline_reward"] = oracle_reward(info)
            groups.append(group)
        return groups

    def _prm_rewards(self, group: list[Trajectory], index: int, step: int) -> None:
        from gui_gym.rewards.prm import PRMQuery

        acted = [t for t in group if t.steps and t.infra_error is None]
        queries = [
            PRMQuery(
                instruction=t.instruction,
                screen=t.steps[0].screen,
                action=t.steps[0].action,
                action_description=t.steps[0].action_description,
                step=step,
            )
            for t in acted
        ]
        envs = None
        if getattr(self.prm, "requires_env", False):  # it judges on the state before the action
            envs = []
            for _ in acted:
                env = self._factory(step)()
                env.reset(seed=0, options={"trajectory": index})
                envs.append(env)
        scores = self.prm.score(queries, envs) if queries else []
        for trajectory, score in zip(acted, scores):
            trajectory.metadata["offline_reward"] = float(score >= self.config.prm_threshold)

    # -- advantages ---------------------------------------------------------------------------

    def advantages(
        self, trainer: Trainer, groups: list[list[Trajectory]], iteration: int
    ) -> list[TurnSample]:
        turns: list[TurnSample] = []
        episode = 0
        for group in clean_groups(groups):
            rewards = [float(t.metadata["offline_reward"]) for t in group]
            if self.config.drop_flat_groups and group_std(rewards) == 0:
                continue
            for trajectory, advantage in zip(group, episode_level_advantages(rewards)):
                turns.extend(turns_from_trajectory(trajectory, [advantage], episode=episode))
                episode += 1
        return turns
