"""Policies that can propose several candidate actions: what best-of-N verification needs."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np

from gui_gym.core.actions import Action

__all__ = ["LLMPolicy", "NoisyOraclePolicy", "SamplingPolicy"]


@runtime_checkable
class SamplingPolicy(Protocol):
    """A policy that proposes ``n`` candidate actions for the current step.

    Candidates may repeat (a sampled LLM often proposes the same action twice) and may be
    action strings in any form ``parse_action`` accepts, model output included.
    """

    def sample(
        self, observation: dict[str, Any], info: dict[str, Any], n: int
    ) -> list[Action | str]:
        """``n`` independent proposals for the current step."""
        ...


class NoisyOraclePolicy:
    """The task's expert with probability ``p``, a uniformly random sensible action otherwise.

    The noisy policy of the best-of-N benchmark: each proposal is, independently, the
    expert's action (``env.unwrapped.oracle_action()``) with probability ``p`` and otherwise
    one of ``env.unwrapped.candidate_actions()`` drawn uniformly (which may happen to be the
    expert's too). Acting with one proposal per step makes it an :class:`~gui_gym.agents.Agent`.

    Args:
        env: The env it acts in (read for the expert and the candidate list).
        p: Probability that a proposal is the expert's action.
        seed: Seed of its own generator.

    Raises:
        ValueError: when ``p`` is outside [0, 1].
        TypeError: when ``env`` is not a gui-gym env.
    """

    def __init__(self, env: gym.Env, p: float = 0.5, seed: int | None = None):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be in [0, 1], got {p!r}")
        base = env.unwrapped
        if not (hasattr(base, "oracle_action") and hasattr(base, "candidate_actions")):
            raise TypeError(
                f"{type(base).__name__} has no oracle_action()/candidate_actions(); is it a GuiEnv?"
            )
        self._env = base
        self.p = float(p)
        self.name = f"noisy-oracle(p={self.p:g})"
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        """Restart the generator (e.g. once per episode, for reproducible comparisons)."""
        self.rng = np.random.default_rng(seed)

    def sample(self, observation: dict[str, Any], info: dict[str, Any], n: int) -> list[Action]:
        """``n`` proposals, each the expert's with probability ``p``.

        Raises:
            ValueError: when ``n < 1``.
        """
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        out: list[Action] = []
        expert: Action | None = None
        candidates: list[Action] | None = None
        for _ in range(n):
            if self.rng.random() < self.p:
                if expert is None:
                    expert = self._env.oracle_action()
                out.append(expert)
            else:
                if candidates is None:
                    candidates = self._env.candidate_actions()
                out.append(candidates[int(self.rng.integers(len(candidates)))])
        return out

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        """Nothing to reset (call :meth:`seed` to restart the random stream)."""

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        """Act with one proposal: the noisy policy alone."""
        return self.sample(observation, info, 1)[0]


_LLM_POLICY_PROMPT = """You operate an app for a user, one action at a time.
Goal: {instruction}
Your earlier actions:
{history}
Current screen, one element per line with its index:
{screen}
Reply with your next action inside <action>...</action>, using one of: CLICK(i), \
LONG_CLICK(i), INPUT(i, "text"), SCROLL(up|down|left|right), GOBACK(), HOME(), \
OPEN_APP("name"), ANSWER("text"), DONE()."""


class LLMPolicy:
    """An LLM agent that samples with temperature: a :class:`SamplingPolicy` over any
    :class:`gui_gym.models.llm.LLM` (local transformers, an OpenAI-compatible server, or a
    scripted one).

    Each proposal is one completion of a prompt holding the goal, the earlier actions and the
    screen; the completion is returned as text, and ``parse_action`` reads the action from
    it (``<action>...</action>`` blocks included). With ``temperature > 0`` the ``n``
    completions differ, which is what best-of-N verification needs.

    Args:
        llm: The model (``generate(prompts, max_new_tokens, temperature, n)``).
        temperature: Sampling temperature of the proposals.
        max_new_tokens: Budget of one completion.
        history_length: Earlier action descriptions shown.
        prompt_template: A ``str.format`` template with ``{instruction}``, ``{history}`` and
            ``{screen}`` fields (ours by default).

    Raises:
        TypeError: when ``llm`` has no ``generate`` method.
        ValueError: for a negative temperature or a template missing a field.
    """

    def __init__(
        self,
        llm: Any,
        *,
        temperature: float = 1.0,
        max_new_tokens: int = 64,
        history_length: int = 8,
        prompt_template: str = _LLM_POLICY_PROMPT,
    ):
        if not callable(getattr(llm, "generate", None)):
            raise TypeError(
                f"{type(llm).__name__} has no generate(); pass a gui_gym.models.llm.LLM"
            )
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature!r}")
        for field in ("{instruction}", "{history}", "{screen}"):
            if field not in prompt_template:
                raise ValueError(f"prompt_template lacks the {field} field")
        self.llm = llm
        self.temperature = float(temperature)
        self.max_new_tokens = int(max_new_tokens)
        self.history_length = int(history_length)
        self.prompt_template = prompt_template
        self.name = f"llm({type(llm).__name__}, T={self.temperature:g})"
        self._history: list[str] = []

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        """Start an episode: clear the action history."""
        self._history = []

    def prompt(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        """The prompt for the current step (also records the previous step's action)."""
        if info.get("step", 0) > 0 and info.get("action_valid", False):
            self._history.append(str(info.get("action_description", "")))
        recent = self._history[-self.history_length :] if self.history_length else []
        history = "\n".join(f"- {h}" for h in recent) or "- (none yet)"
        return self.prompt_template.format(
            instruction=observation.get("instruction", ""),
            history=history,
            screen=observation.get("screen", ""),
        )

    def sample(self, observation: dict[str, Any], info: dict[str, Any], n: int) -> list[str]:
        """``n`` completions of the step prompt.

        Raises:
            ValueError: when ``n < 1`` or the LLM returns the wrong number of completions.
        """
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        out = self.llm.generate(
            [self.prompt(observation, info)],
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature,
            n=n,
        )
        if len(out) != 1 or len(out[0]) != n:
            raise ValueError(
                f"{type(self.llm).__name__}.generate returned {out!r} for 1 prompt, n={n}"
            )
        return [str(text) for text in out[0]]

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        """Act with one completion (the LLM agent alone)."""
        return self.sample(observation, info, 1)[0]
