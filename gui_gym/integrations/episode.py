"""One gui-gym episode driven from outside: what an engine adapter (verl's agent loop, ...)
needs to run a multi-turn conversation over an env with the reward stack.

::

    episode = ChatEpisode("GuiGym/WikiHow-v0", task_id="wh-0001", seed=3, reward="outcome+progress")
    messages = episode.reset()                 # the prompt format's first-step messages
    while not episode.done:
        text = my_model(messages)              # the engine generates (and keeps its tokens)
        messages.append({"role": "assistant", "content": text})
        reply = episode.step(text)             # None when the episode ended
        if reply is not None:
            messages.append(reply)             # the next screen as a user message
    result = episode.result()                  # reward_score, per-step rewards and components

The first turn is the chosen prompt format (:mod:`gui_gym.agents.prompts`) at step 0; each
later turn is :func:`observation_message`: what the env made of the action and the new screen
(and screenshot). The episode is one growing conversation, as engines that train on the whole
sequence (verl's agent loop, TRL's ``environment_factory``) hold it.

Rewards come from :class:`~gui_gym.train.reward_stack.RewardStack` (the ``--reward`` expressions
of ``gui-gym train``) and are read with its readers, never recomputed: the episode reward is
:func:`~gui_gym.train.reward_stack.episode_return` of the finished trajectory, and each step's
reward is split per term as every engine adapter splits it
(:func:`~gui_gym.integrations.reward_components.step_reward_components`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gui_gym.core.actions import ActionParseError, parse_action
from gui_gym.core.trajectory import Step, Trajectory
from gui_gym.integrations.reward_components import step_reward_components
from gui_gym.train.reward_stack import (
    RewardStack,
    admire_step_rewards,
    episode_return,
    reward_stream,
)

__all__ = [
    "ChatEpisode",
    "EpisodeResult",
    "observation_message",
    "reward_stack_for",
]

_STACKS: dict[tuple[Any, ...], RewardStack] = {}


def reward_stack_for(reward: str, **settings: Any) -> RewardStack:
    """The :class:`RewardStack` for ``reward`` and its settings, one per process: an engine
    makes one episode object per sample, and the stack's models (an embedder, a PRM) load
    once and serve them all.

    Raises:
        ValueError: for a bad reward expression or setting (as ``gui-gym train`` says it).
    """
    key = (reward, *sorted((k, str(v)) for k, v in settings.items()))
    if key not in _STACKS:
        _STACKS[key] = RewardStack.from_text(reward, **settings)
    return _STACKS[key]


def observation_message(
    observation: Mapping[str, Any], info: Mapping[str, Any], screenshot: bool = False
) -> dict[str, Any]:
    """The user message after a step: what the env made of the action, the new screen and,
    with ``screenshot``, the new screenshot as an image part."""
    if info.get("action_valid", True):
        feedback = f"Done: {info.get('action_description') or info.get('action', '')}"
    else:
        feedback = f"That action was not carried out: {info.get('action_error') or 'invalid'}"
    text = f"{feedback}\nScreen:\n{observation.get('screen', '')}\nWhat is the next action?"
    image = observation.get("screenshot") if screenshot else None
    if image is None:
        return {"role": "user", "content": text}
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": f"{feedback}\nCurrent screenshot:\n"},
            {"type": "image", "image": image},
            {"type": "text", "text": text[len(feedback) :]},
        ],
    }


@dataclass
class EpisodeResult:
    """What a finished (or cut) episode earned.

    Attributes:
        reward_score: The episode reward: :func:`episode_return` of the trajectory (the
            outcome, every per-step shaping term and ADMIRE's deferred milestone credit).
        step_rewards: ``r_t`` per step (:func:`reward_stream`).
        admire_step_rewards: ADMIRE's ``R_total(t)`` per step (the outcome on every step,
            for step-level advantages).
        components: Per step, ``reward`` (the wrapped env's), ``task_reward`` (the task's
            own) and the reward split per term of the stack
            (:func:`~gui_gym.integrations.reward_components.step_reward_components`: every
            term of the expression, ``outcome``, ``progress``, ``prm``, ``format``, ``judge``,
            ``orm``, summing to ``reward``); ``milestone`` holds ADMIRE's deferred credit
            ``R_mil(t)`` once the episode ended.
        success: Whether the task was completed.
        num_steps: Env steps taken.
        ended: True when the env ended the episode (done, answer, success or its step
            limit); False when the engine stopped it first (a token budget), then no outcome
            was scored.
        trajectory: The episode as gui-gym records it.
    """

    reward_score: float
    step_rewards: list[float]
    admire_step_rewards: list[float]
    components: list[dict[str, float]]
    success: bool
    num_steps: int
    ended: bool
    trajectory: Trajectory

    def summary(self) -> dict[str, float]:
        """Scalars of the episode with the same keys for every episode (engines log them as
        metrics): ``success``, ``num_steps``, ``ended``, and the sum of each term."""
        terms = ("task_reward", "progress", "prm", "format", "milestone", "judge", "orm")
        out = {
            "success": float(self.success),
            "num_steps": float(self.num_steps),
            "ended": float(self.ended),
        }
        for term in terms:
            out[term] = float(sum(c.get(term, 0.0) for c in self.components))
        return out


@dataclass
class ChatEpisode:
    """One episode of ``env_id`` on one task and seed, with the reward stack around the env.

    Args:
        env_id: A registered gui-gym id.
        task_id: The task (None: the env draws one from its split with ``seed``).
        seed: The reset seed.
        reward: A ``--reward`` expression (``outcome``, ``outcome+progress``, ...).
        prompt: A prompt format name (:data:`~gui_gym.agents.prompts.PROMPTS`).
        screenshot: Show screenshots (the first prompt and each later turn carry one).
        max_steps: The env's step limit (None: the env's default).
        env_kwargs: More ``gym.make`` arguments (``split``, ``category``, ...).
        stack_settings: :class:`RewardStack` settings (``embedder``, ``milestone_store``,
            ``prm_model``, ``progress_model``, ``orm_model``, ``progress_k``,
            ``milestone_mode``).
        format_eta: ADMIRE's format weight added to the episode reward when no milestone
            wrapper holds it (as ``gui-gym train``'s GRPO ``format_eta``; 0 leaves it out).

    Raises:
        ValueError: for a bad reward expression, setting, env argument or task id.
    """

    env_id: str
    task_id: str | None = None
    seed: int | None = None
    reward: str = "outcome"
    prompt: str = "default"
    screenshot: bool = False
    max_steps: int | None = None
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    stack_settings: dict[str, Any] = field(default_factory=dict)
    format_eta: float = 0.0

    def __post_init__(self) -> None:
        import gymnasium as gym

        import gui_gym  # noqa: F401  (registers the ids)
        from gui_gym.agents.prompts import get_prompt

        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int)
        ):
            raise ValueError(f"seed must be an int or None, got {self.seed!r}")
        if not self.format_eta >= 0:
            raise ValueError(f"format_eta must be >= 0, got {self.format_eta!r}")
        self.format = get_prompt(self.prompt)
        self.stack = reward_stack_for(self.reward, **self.stack_settings)
        kwargs = dict(self.env_kwargs)
        if self.max_steps is not None:
            kwargs["max_steps"] = self.max_steps
        if self.screenshot:
            kwargs["screenshot"] = True
        if self.task_id is not None:
            kwargs["task"] = self.task_id
        self.env = self.stack.wrap(gym.make(self.env_id, **kwargs))
        self.done = False
        self.ended = False
        self._observation: dict[str, Any] = {}
        self._trajectory: Trajectory | None = None
        self._components: list[dict[str, float]] = []

    def reset(self) -> list[dict[str, Any]]:
        """Reset the env; the prompt format's messages for the first step."""
        from gui_gym.agents.prompts import PromptInput

        observation, info = self.env.reset(seed=self.seed)
        self._observation = observation
        self.done = self.ended = False
        self._components = []
        self._trajectory = Trajectory(
            env_id=self.env_id,
            task_id=str(info.get("task_id", self.task_id or "")),
            instruction=str(observation.get("instruction", "")),
            seed=self.seed,
            agent=f"engine:{self.format.name}",
        )
        return self.format.build(
            PromptInput(
                instruction=str(observation.get("instruction", "")),
                screen=str(observation.get("screen", "")),
                step=0,
                screenshot=observation.get("screenshot") if self.screenshot else None,
                info=dict(info),
            )
        )

    def action_of(self, text: str) -> str:
        """The action a completion sends to the env, read as
        :class:`~gui_gym.agents.llm.LLMAgent` reads it: the format's ``<action>`` block as a
        canonical action string, or the whole text when it does not parse (the env then
        reports what was wrong, and format rewards see it)."""
        _, action_text = self.format.parse(text)
        try:
            return parse_action(action_text).to_string()
        except ActionParseError:
            return text

    def step(self, text: str) -> dict[str, Any] | None:
        """Send the action in the completion ``text`` to the env; the next user message, or
        None when the episode ended.

        Raises:
            RuntimeError: before :meth:`reset` or after the episode ended.
        """
        if self._trajectory is None or self.done:
            raise RuntimeError("ChatEpisode.step needs a running episode: call reset() first")
        screen = str(self._observation.get("screen", ""))
        action = self.action_of(text)
        observation, reward, terminated, truncated, info = self.env.step(action)
        trajectory = self._trajectory
        trajectory.steps.append(
            Step.from_transition(
                len(trajectory.steps), screen, action, reward, terminated, truncated, info
            )
        )
        self._components.append(
            {
                "reward": float(reward),
                "task_reward": float(info.get("task_reward", 0.0)),
                **step_reward_components(self.env, reward, info, self.stack.weights),
            }
        )
        self._observation = observation
        if terminated or truncated:
            self.done = self.ended = True
            trajectory.final_screen = str(observation.get("screen", ""))
            trajectory.success = bool(info.get("success", False))
            trajectory.task_reward = float(info.get("task_reward", 0.0))
            return None
        return observation_message(observation, info, self.screenshot)

    def stop(self) -> None:
        """End the episode from outside (the engine's token budget ran out): no outcome is
        scored, the shaping earned so far stays."""
        self.done = True

    def result(self) -> EpisodeResult:
        """The rewards of the episode (after :meth:`step` returned None, or :meth:`stop`).

        With a ``milestone`` term the task's milestones are refined from this episode when it
        succeeded (ADMIRE Algorithm 1 with a batch of one: an engine's agent loop sees one
        episode at a time) and the episode is scored with them.
        """
        trajectory = self._trajectory
        if trajectory is None or not self.done:
            raise RuntimeError("ChatEpisode.result needs a finished episode")
        components = [dict(c) for c in self._components]
        if "milestone" in self.stack.weights and trajectory.steps and self.ended:
            self.stack.refine_milestones(self.env, [[trajectory]])
            milestone = trajectory.steps[-1].info.get("milestone", {})
            for c, r_mil in zip(components, milestone.get("episode_rewards") or []):
                c["milestone"] = float(r_mil)  # ADMIRE's R_mil(t) (Eq. 10/11)
        return EpisodeResult(
            reward_score=episode_return(trajectory, self.format_eta),
            step_rewards=reward_stream(trajectory),
            admire_step_rewards=admire_step_rewards(trajectory, self.format_eta),
            components=components,
            success=trajectory.success,
            num_steps=len(trajectory.steps),
            ended=self.ended,
            trajectory=trajectory,
        )

    def close(self) -> None:
        self.env.close()
