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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from gui_gym.core.trajectory import Trajectory
from gui_gym.rewards.semi_online import episode_level_advantages, group_std
from gui_gym.train.core import Algorithm, Trainer, TurnSample, iteration_rng, turns_from_trajectory
from gui_gym.train.rewards import clean_groups

__all__ = ["TRAIN_DEFAULTS", "OfflineGRPO", "OfflineGRPOConfig", "oracle_reward"]

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
    """

    group_size: int = 8
    states_per_iteration: int = 32
    reward: Literal["oracle", "prm"] = "oracle"
    prm_threshold: float = 0.5
    drop_flat_groups: bool = True

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
                (i, t) for i, expert in enumerate(env.dataset) for t in range(len(expert.steps))
            ]
            env.close()
        if not states:
            raise ValueError("offline GRPO needs at least one recorded state")
        self.states = list(states)

    # -- rollout: G actions from one recorded state --------------------------------------------

    def _anchor(self, index: int, step: int) -> tuple[Any, tuple[dict, dict], list[str]]:
        """The replay env at step ``step`` of trajectory ``index``, reached by the expert."""
        env = self.make_env()
        start = env.reset(options={"trajectory": index})
        history: list[str] = []
        for _ in range(step):
            observation, _, _, _, info = env.step(env.oracle_action())
            start = (observation, info)
            history.append(str(info.get("action_description", "")))
        return env, start, history

    def collect(self, trainer: Trainer, iteration: int) -> list[list[Trajectory]]:
        from gui_gym.train.local_rollout import continue_episodes

        rng = iteration_rng(trainer.config.seed, iteration)
        count = min(self.config.states_per_iteration, len(self.states))
        groups: list[list[Trajectory]] = []
        for pick in rng.choice(len(self.states), size=count, replace=False).tolist():
            index, step = self.states[pick]
            anchor, start, history = self._anchor(index, step)
            forks = [anchor.fork() for _ in range(self.config.group_size)]
            group = continue_episodes(
                trainer.policy,
                forks,
                [start] * len(forks),
                max_new_tokens=trainer.config.max_new_tokens,
                temperature=trainer.config.temperature,
                prompt=trainer.prompt,
                max_policy_steps=1,
                history=history,
            )
            if self.config.reward == "prm":
                self._prm_rewards(group, start, history, anchor, step)
            else:
                for trajectory in group:
                    if trajectory.steps:
                        info = trajectory.steps[0].info.get("semi_online", {})
                        trajectory.metadata["offline_reward"] = oracle_reward(info)
            groups.append(group)
            anchor.close()
        return groups

    def _prm_rewards(
        self,
        group: list[Trajectory],
        start: tuple[dict, dict],
        history: list[str],
        anchor: Any,
        step: int,
    ) -> None:
        from gui_gym.rewards.prm import PRMQuery

        observation = start[0]
        acted = [t for t in group if t.steps]
        queries = [
            PRMQuery(
                instruction=str(observation.get("instruction", "")),
                screen=str(observation.get("screen", "")),
                action=t.steps[0].action,
                action_description=t.steps[0].action_description,
                history=tuple(history),
                step=step,
            )
            for t in acted
        ]
        # a PRM that judges on the env sees the state before the action: fresh forks
        needs_env = getattr(self.prm, "requires_env", False)
        envs = [anchor.fork() for _ in acted] if needs_env else None
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
