"""The agent protocol and an episode runner shared by the CLI, examples and benchmarks."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import gymnasium as gym

from gui_gym.core.actions import Action
from gui_gym.core.trajectory import Step, Trajectory

__all__ = ["Agent", "run_episode"]


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
        index += 1
    trajectory.finish(observation, info)
    return trajectory
