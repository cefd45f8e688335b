"""The scripted expert with mistakes: a policy of middling skill for judge benchmarks and
test-time-scaling experiments."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from gui_gym.core.actions import Action, ActionType

__all__ = ["FallibleOracleAgent"]


class FallibleOracleAgent:
    """Follows ``env.unwrapped.oracle_action()`` but slips in three ways, each per step:

    * with probability ``random_prob`` it takes a uniformly random candidate action instead
      (a wrong tap, a stray scroll, typing the wrong word);
    * with probability ``stop_prob`` it declares the task complete early with ``DONE()``
      (the "typed it but never saved" failure that looks successful in a trajectory);
    * when the expert answers, with probability ``wrong_answer_prob`` it answers with a
      different label from the screen instead.

    Because the expert is stateless (it acts from the current state), the agent recovers
    from its slips when it has steps left. With all probabilities 0 it is the oracle.

    Args:
        env: The env it acts in (read for the expert and the candidate actions only).
        random_prob: Chance per step of a random candidate action.
        stop_prob: Chance per step of a premature ``DONE()``.
        wrong_answer_prob: Chance that an answer is replaced by a wrong one.
        seed: Seed of its own generator.

    Raises:
        ValueError: for a probability outside [0, 1].
        TypeError: when the env has no scripted expert.
    """

    name = "fallible-oracle"

    def __init__(
        self,
        env: gym.Env,
        random_prob: float = 0.15,
        stop_prob: float = 0.05,
        wrong_answer_prob: float = 0.3,
        seed: int | None = None,
    ):
        for label, p in (
            ("random_prob", random_prob),
            ("stop_prob", stop_prob),
            ("wrong_answer_prob", wrong_answer_prob),
        ):
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{label} must be in [0, 1], got {p!r}")
        self._env = env.unwrapped
        if not hasattr(self._env, "oracle_action") or not hasattr(self._env, "candidate_actions"):
            raise TypeError(f"{type(self._env).__name__} has no scripted expert; is it a GuiEnv?")
        self.random_prob = float(random_prob)
        self.stop_prob = float(stop_prob)
        self.wrong_answer_prob = float(wrong_answer_prob)
        self.rng = np.random.default_rng(seed)

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        pass

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        expert = self._env.oracle_action()
        if self.stop_prob and not expert.is_terminal and self.rng.random() < self.stop_prob:
            return Action(ActionType.DONE)
        if self.random_prob and self.rng.random() < self.random_prob:
            candidates = self._env.candidate_actions()
            return candidates[int(self.rng.integers(len(candidates)))]
        if (
            expert.type is ActionType.ANSWER
            and self.wrong_answer_prob
            and self.rng.random() < self.wrong_answer_prob
        ):
            labels = sorted(
                {
                    e.label
                    for e in self._env.ui_tree.elements
                    if e.label and e.label.strip().lower() != (expert.text or "").strip().lower()
                }
            )
            if labels:
                return Action(ActionType.ANSWER, text=labels[int(self.rng.integers(len(labels)))])
        return expert
