"""The agent protocols and an episode runner shared by the CLI, examples and benchmarks.

Two kinds of policy:

* :class:`Agent`: one env at a time (``reset`` then ``act`` per step), holding its own
  per-episode state; the oracle, random and WebShop agents.
* :class:`BatchAgent`: acts on many envs at once and keeps no per-env state: the rollout
  engine (:mod:`gui_gym.runs.rollout`) hands it each env's observation, info and the
  episode's earlier :class:`Turn` s, and it returns one :class:`AgentStep` per env.
  ``act_batch`` is the synchronous form (a local model generates for the whole batch in one
  call); ``aact_batch``, when present, is the asynchronous form a server backend uses (the
  engine then keeps one request in flight per env). :class:`~gui_gym.agents.llm.LLMAgent`
  is the batch agent.

An :class:`AgentStep` is what one decision produced::

    AgentStep(action="CLICK(3)",            # sent to env.step as is
              prompt=[...] or "...",         # what the model saw
              text="Thought: ... Action: CLICK(3)",   # the whole generation
              prompt_ids=[...], completion_ids=[...], logprobs=[...],  # when the backend gives them
              thought="...")

``completion_ids`` are the ids the policy sampled and ``logprobs`` their log-probabilities
under the sampling distribution: a trainer scores exactly these ids and never re-tokenizes
``text`` (decode-then-encode can change ids, e.g. two word pieces merging into one token).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np

from gui_gym.core.actions import Action
from gui_gym.core.trajectory import Step, Trajectory

__all__ = ["Agent", "AgentStep", "BatchAgent", "Turn", "history_description", "run_episode"]


@dataclass
class AgentStep:
    """One decision of a policy.

    Attributes:
        action: The action string sent to ``env.step`` (the parsed action in canonical form
            when the generation held one, else the raw generation: the env's invalid-action
            path and the format rewards deal with it).
        prompt: What the policy was shown: a string or a list of chat messages (a message's
            ``content`` may be a list of parts, ``{"type": "text", "text": ...}`` and
            ``{"type": "image", "image": <HxWx3 uint8 array>}``); None for agents without one.
        text: The whole generation (thought and action); for non-LLM agents the action.
        prompt_ids: Token ids the model was conditioned on, when the backend gives them.
        completion_ids: Token ids the model sampled (up to and including its end token).
        logprobs: Log-probability of each of ``completion_ids`` under the sampling
            distribution (the behaviour policy), same length as ``completion_ids``.
        vision: For a vision-language policy, the screenshots shown (content keys into its
            LLM's ``image_store``) and the processor settings' key (see
            :mod:`gui_gym.models.llm.vision_inputs`).
        thought: The reasoning part of ``text``, when the output format has one.
    """

    action: str
    prompt: str | list[dict[str, Any]] | None = None
    text: str = ""
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    logprobs: list[float] | None = None
    vision: dict[str, Any] | None = None
    thought: str | None = None

    def __post_init__(self) -> None:
        if (
            self.completion_ids is not None
            and self.logprobs is not None
            and len(self.completion_ids) != len(self.logprobs)
        ):
            raise ValueError(
                f"AgentStep has {len(self.completion_ids)} completion ids but "
                f"{len(self.logprobs)} log-probs; they must pair one to one"
            )


@dataclass
class Turn:
    """One earlier step of the current episode, as a batch agent's prompt may need it.

    Attributes:
        screen: The rendered screen the action was chosen on.
        screenshot: That screen's screenshot (HxWx3 uint8), when the env makes them.
        step: What the agent produced.
        action_description: What the prompt's history shows for the step:
            :func:`history_description` of the info after it (what the env understood the
            action to be, or what its own history kept).
        action_valid: Whether the env accepted it.
    """

    screen: str
    step: AgentStep
    screenshot: np.ndarray | None = None
    action_description: str = ""
    action_valid: bool = True
    info: dict[str, Any] = field(default_factory=dict)


def history_description(info: dict[str, Any]) -> str:
    """How a step enters an agent's prompt history (:attr:`Turn.action_description`): the
    env's ``info["history_description"]`` when it keeps its own history (UI-S1's semi-online
    replay shows the expert's action on a patched step), else ``info["action_description"]``.
    """
    return str(info.get("history_description") or info.get("action_description", ""))


@runtime_checkable
class BatchAgent(Protocol):
    """A stateless policy over a batch of envs (see the module docstring).

    ``act_batch(observations, infos, histories)`` returns one :class:`AgentStep` per env;
    ``histories[i]`` lists env ``i``'s earlier turns of this episode (empty at its first
    step; None means no history for any env). Raise
    :class:`~gui_gym.models.llm.LLMError` when the backend cannot answer (the engine marks
    those episodes ``infra_error``); a malformed generation is not an error.
    """

    name: str

    def act_batch(
        self,
        observations: Sequence[dict[str, Any]],
        infos: Sequence[dict[str, Any]],
        histories: Sequence[Sequence[Turn]] | None = None,
    ) -> list[AgentStep]: ...


@runtime_checkable
class Agent(Protocol):
    """A policy over gui-gym observations.

    ``act`` returns an :class:`~gui_gym.core.actions.Action` or an action string in any form
    ``parse_action`` accepts (model output included). ``reset`` is called at each episode start.
    """

    name: str

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None: ...

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action | str: ...


def run_episode(
    env: gym.Env,
    agent: Agent,
    *,
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    record_trees: bool = False,
) -> Trajectory:
    """Run one episode of ``agent`` in ``env`` and return it as a :class:`Trajectory`.

    Args:
        env: A (possibly wrapped) gui-gym env.
        agent: The policy.
        seed: Passed to ``env.reset``.
        options: Passed to ``env.reset`` (e.g. ``{"task": "..."}``).
        record_trees: Also store each step's UI tree (larger files).
    """
    observation, info = env.reset(seed=seed, options=options)
    agent.reset(observation, info)
    base = env.unwrapped
    task = getattr(base, "task", None)
    spec = getattr(env, "spec", None)
    trajectory = Trajectory(
        env_id=spec.id if spec is not None else type(base).__name__,
        task_id=info.get("task_id", ""),
        instruction=observation.get("instruction", ""),
        seed=seed,
        agent=getattr(agent, "name", type(agent).__name__),
        metadata={"category": getattr(task, "category", ""), "split": getattr(task, "split", "")},
    )
    done = False
    index = 0
    while not done:
        tree = base.ui_tree.to_dict() if record_trees and hasattr(base, "ui_tree") else None
        screen = observation.get("screen", "")
        action = agent.act(observation, info)
        observation, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        trajectory.steps.append(
            Step.from_transition(
                index,
                screen,
                action,
                reward,
                terminated,
                truncated,
                info,
                thought=getattr(agent, "last_thought", None),
                tree=tree,
            )
        )
        last = getattr(agent, "last_step", None)
        if isinstance(last, AgentStep):  # an LLM agent: keep its prompt and exact tokens
            record = trajectory.steps[-1]
            record.completion = last.text
            record.prompt_ids = last.prompt_ids
            record.completion_ids = last.completion_ids
            record.logprobs = last.logprobs
            record.vision = last.vision
        index += 1
    trajectory.finish(observation, info)
    return trajectory
