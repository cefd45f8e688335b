"""UI-S1's semi-online RL over :class:`~gui_gym.envs.replay.SemiOnlineReplayEnv` (Sec. 3.2-3.4,
Eq. 9-13, Algorithm 1, App. F).

Read top to bottom: the hyperparameters, the batch with dynamic sampling, the advantages and
the loss.

* Rollouts: ``group_size`` rollouts of each of ``trajectories_per_iteration`` expert
  trajectories; the env keeps the policy's own history and patches mismatches with the expert
  action within its budget (``epsilon``, ``patch``: the env does it, Sec. 3.3), and the
  prompt history shows the patched step as the env kept it (``info["history_description"]``).
  With ``patch="on_policy_thought"`` the policy being trained writes the patched step's
  thought, ``M(I, a*, H_t, S_t)`` of UI-S1 Table 5 (:class:`PolicyThoughtPatch`), before the
  next observation is made, so the next prompt's history holds it.
* Advantages: UI-S1's dual-level advantages ``A = A^E + omega A^S`` (Eq. 9-12), computed by
  :func:`gui_gym.rewards.semi_online.dual_level_advantages` from the rollout each episode's
  final ``info["semi_online"]`` reports.
* Dynamic sampling (Sec. 3.4): a group whose advantages have standard deviation at most
  ``eta`` (0.3) teaches little; it is rolled out again with a new seed, up to
  ``max_resamples`` times, and dropped if it never passes.
* Loss: the shared clipped surrogate averaged over all tokens (``1/K``, Eq. 13) with a KL
  penalty of 1e-4 (Table 9); :data:`TRAIN_DEFAULTS` sets both.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from gui_gym.core.trajectory import Trajectory
from gui_gym.rewards.semi_online import (
    DEFAULT_ETA,
    DEFAULT_GAMMA,
    DEFAULT_OMEGA,
    Rollout,
    dual_level_advantages,
    passes_dynamic_sampling,
)
from gui_gym.train.config import epoch_draw, iteration_rng
from gui_gym.train.losses import TurnSample, turns_from_trajectory
from gui_gym.train.reward_stack import clean_groups
from gui_gym.train.trainer import Algorithm, Trainer

__all__ = ["TRAIN_DEFAULTS", "PolicyThoughtPatch", "SemiOnline", "SemiOnlineConfig"]

TRAIN_DEFAULTS: dict[str, Any] = {
    "loss_agg": "token_mean",
    "kl_coef": 1e-4,  # UI-S1 Table 9 kl_loss_coef
    "update_epochs": 1,  # verl's ppo_epochs (UI-S1 trains on verl and sets no other)
    "mini_batches": 4,  # UI-S1 Table 9 fixed_num_mini_batches
}
"""Shared settings UI-S1 fixes: the 1/K token-level objective (Eq. 13) and kl_loss_coef 1e-4
(Table 9)."""


@dataclass
class SemiOnlineConfig:
    """UI-S1's own hyperparameters (Table 9).

    Attributes:
        group_size: Rollouts per expert trajectory (``N``).
        trajectories_per_iteration: Expert trajectories per batch (train_batch_size 32).
        gamma: Future-reward discount of Eq. 9 (0.5).
        omega: Weight of the step-level advantage in Eq. 12 (1.0).
        eta: Dynamic-sampling threshold on the advantages' standard deviation (0.3).
        max_resamples: Extra rollouts of a group that fails the threshold before dropping it.
        truncate: Return truncation of Eq. 9 (``segment``) or the Table 8 ablation
            (``rollout``).
    """

    group_size: int = 8
    trajectories_per_iteration: int = 32
    gamma: float = DEFAULT_GAMMA
    omega: float = DEFAULT_OMEGA
    eta: float = DEFAULT_ETA
    max_resamples: int = 2
    truncate: Literal["segment", "rollout"] = "segment"

    def __post_init__(self) -> None:
        if self.group_size < 2:
            raise ValueError(f"group_size must be >= 2, got {self.group_size}")
        if self.trajectories_per_iteration < 1 or self.max_resamples < 0:
            raise ValueError("trajectories_per_iteration must be >= 1 and max_resamples >= 0")


class PolicyThoughtPatch:
    """UI-S1's on-policy thought patch (Sec. 3.3, Table 5): ``M(I, a*, H_t, S_t)``, the policy
    being trained writing the reasoning for the expert action that replaced its own.

    A :class:`~gui_gym.envs.replay.env.ThoughtGenerator`: the env calls it during the patched
    step with the instruction, the expert action, the screen and the history kept so far; it
    asks the policy with :func:`~gui_gym.envs.replay.env.thought_prompt` (our wording of
    UI-S1 App. I: reason from the goal and the history to this action, never saying it was
    given). The thought's tokens are not trained on: it only enters the history.

    Args:
        llm: The policy's generator (e.g. ``trainer.agent.llm``, a
            :class:`~gui_gym.models.llm.TransformersLLM` sharing the trained weights).
        max_new_tokens: Length budget of a thought.
        temperature: Sampling temperature (the policy's own).
    """

    def __init__(self, llm: Any, *, max_new_tokens: int = 256, temperature: float = 1.0):
        self.llm = llm
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.calls = 0

    def __call__(
        self,
        instruction: str,
        expert_action: str,
        screen: str,
        history: list[tuple[str, str | None]],
    ) -> str:
        from gui_gym.envs.replay.env import HistoryEntry, render_history, thought_prompt

        entries = [HistoryEntry(action, thought, False) for action, thought in history]
        prompt = thought_prompt(instruction, render_history(entries, 65536), screen, expert_action)
        [[text]] = self.llm.generate(
            [[{"role": "user", "content": prompt}]],
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature,
        )
        self.calls += 1
        return text


def _env_with_policy_thoughts(make_env: Callable[[], Any], patcher: PolicyThoughtPatch) -> Any:
    """``make_env()``, its replay env given ``patcher`` when it patches on-policy and has no
    thought writer of its own."""
    env = make_env()
    base = env.unwrapped
    if getattr(base, "patch", None) == "on_policy_thought" and base.thought_fn is None:
        base.thought_fn = patcher
    return env


class SemiOnline(Algorithm):
    """UI-S1 semi-online RL.

    Args:
        make_env: Builds a :class:`~gui_gym.envs.replay.SemiOnlineReplayEnv` (accepting
            ``options={"trajectory": index}``).
        trajectories: Indices (or ids) of the expert trajectories to train on.
        config: :class:`SemiOnlineConfig`.
    """

    name: ClassVar[str] = "semi_online"

    def __init__(
        self,
        make_env: Callable[[], Any],
        trajectories: list[int | str],
        config: SemiOnlineConfig | None = None,
    ):
        if not trajectories:
            raise ValueError("semi-online RL needs at least one expert trajectory")
        self.make_env = make_env
        self.trajectories = list(trajectories)
        self.config = config or SemiOnlineConfig()
        self.dropped_groups = 0
        self.resampled_groups = 0
        self.thought_patch: PolicyThoughtPatch | None = None
        # the factory the rollouts use: make_env, its env given the policy's thought patch
        self.rollout_make_env: Callable[[], Any] = make_env

    def setup(self, trainer: Trainer) -> None:
        # the env writes on-policy patch thoughts with the policy being trained
        self.thought_patch = PolicyThoughtPatch(
            trainer.agent.llm,
            max_new_tokens=trainer.config.max_new_tokens,
            temperature=trainer.config.temperature,
        )
        self.rollout_make_env = functools.partial(
            _env_with_policy_thoughts, self.make_env, self.thought_patch
        )

    def _dual(self, group: list[Trajectory]) -> Any:
        rollouts = [Rollout.from_info(t.steps[-1].info) for t in group]
        return dual_level_advantages(
            rollouts,
            gamma=self.config.gamma,
            omega=self.config.omega,
            truncate=self.config.truncate,
        )

    def _passes(self, group: list[Trajectory]) -> bool:
        clean = clean_groups([group])
        return bool(clean) and passes_dynamic_sampling(
            [a for row in self._dual(clean[0]).combined for a in row], self.config.eta
        )

    # -- rollout with dynamic sampling ---------------------------------------------------------

    def collect(self, trainer: Trainer, iteration: int) -> list[list[Trajectory]]:
        rng = iteration_rng(trainer.config.seed, iteration)
        count = min(self.config.trajectories_per_iteration, len(self.trajectories))
        picks = epoch_draw(trainer.config.seed, iteration, len(self.trajectories), count)
        chosen = [self.trajectories[i] for i in picks]
        size = self.config.group_size

        def roll(keys: list[Any]) -> list[list[Trajectory]]:
            requests = [
                {"seed": int(rng.integers(2**31)), "options": {"trajectory": key}}
                for key in keys
                for _ in range(size)
            ]
            episodes = trainer.run_episodes(self.rollout_make_env, requests)
            return [episodes[i : i + size] for i in range(0, len(episodes), size)]

        groups = roll(chosen)
        for _ in range(self.config.max_resamples):
            failing = [i for i, g in enumerate(groups) if not self._passes(g)]
            if not failing:
                break
            self.resampled_groups += len(failing)
            for i, group in zip(failing, roll([chosen[i] for i in failing])):
                groups[i] = group
        kept = [g for g in groups if self._passes(g)]
        self.dropped_groups += len(groups) - len(kept)
        return kept

    # -- advantages ---------------------------------------------------------------------------

    def advantages(
        self, trainer: Trainer, groups: list[list[Trajectory]], iteration: int
    ) -> list[TurnSample]:
        turns: list[TurnSample] = []
        episode = 0
        for group in clean_groups(groups):
            dual = self._dual(group)
            for trajectory, advantages in zip(group, dual.combined):
                turns.extend(turns_from_trajectory(trajectory, advantages, episode=episode))
                episode += 1
        return turns

    def state_dict(self) -> dict[str, Any]:
        return {"dropped_groups": self.dropped_groups, "resampled_groups": self.resampled_groups}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.dropped_groups = int(state.get("dropped_groups", 0))
        self.resampled_groups = int(state.get("resampled_groups", 0))
