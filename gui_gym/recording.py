"""Record expert trajectories from a live env into an expert dataset (``gui-gym record``).

Episode ``i`` runs the split's task ``i`` (cycling) with seed ``seed + i``, as ``gui-gym eval``
schedules them, so a recording is reproducible and a rerun after a crash records exactly the
episodes that are missing. Each finished episode's images are written first and its line
last (see :class:`~gui_gym.envs.replay.dataset.ExpertDatasetWriter`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from gui_gym.agents.base import Agent
from gui_gym.core.trajectory import Step, Trajectory
from gui_gym.envs.replay.dataset import IMAGES_DIR, ExpertDatasetWriter

__all__ = ["RecordReport", "record_dataset"]


@dataclass(frozen=True)
class RecordReport:
    """What a recording run did.

    Attributes:
        out: The dataset folder.
        episodes: Episodes in the dataset now.
        recorded: Episodes recorded by this run (the rest were there already).
        successes: Successful episodes among all in the dataset.
    """

    out: Path
    episodes: int
    recorded: int
    successes: int


def _thought_from_description(description: str) -> str:
    return f"Next I should {description}."


def record_dataset(
    env_id: str,
    agent: str | Callable[[gym.Env], Agent] = "oracle",
    *,
    episodes: int,
    out: str | Path,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    tasks: Sequence[str] | None = None,
    screenshots: bool = False,
    thoughts: str = "agent",
    progress: bool = True,
) -> RecordReport:
    """Run ``agent`` for ``episodes`` episodes of ``env_id`` and store them as expert data.

    Args:
        env_id: A registered gui-gym id with an oracle (``GuiGym/WikiHow-v0``,
            ``GuiGym/AndroidWorld-v0``, ...).
        agent: ``"oracle"`` (the task's scripted expert), another built-in agent name, or a
            factory ``env -> Agent``.
        episodes: Episodes the dataset should hold when done.
        out: The dataset folder; an existing recording with the same settings is resumed.
        seed: Base seed: episode ``i`` is reset with ``seed + i``.
        env_kwargs: Extra ``gym.make`` arguments (``split``, ``max_steps``, ...).
        tasks: Task ids to cycle through instead of the split's tasks in order.
        screenshots: Also save each step's screenshot as a PNG under ``images/``.
        thoughts: ``"agent"`` (the agent's ``last_thought`` when it has one) or
            ``"describe"`` (a templated thought from the action description, for agents
            that do not reason, such as the oracle).
        progress: Show a progress bar.

    Returns:
        A :class:`RecordReport`.

    Raises:
        ValueError: for a bad argument, or a folder that holds a different recording.
    """
    from gui_gym.evaluation import make_agent

    if not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be a positive int, got {episodes!r}")
    if thoughts not in ("agent", "describe"):
        raise ValueError(f"thoughts must be 'agent' or 'describe', got {thoughts!r}")
    kwargs = dict(env_kwargs or {})
    env = gym.make(env_id, screenshot=screenshots, **kwargs)
    base = env.unwrapped
    if not hasattr(base, "oracle_action"):
        env.close()
        raise ValueError(f"{env_id} is not a gui-gym env (it has no oracle_action)")
    agent_name = agent if isinstance(agent, str) else getattr(agent, "__name__", "custom")
    pool = list(tasks) if tasks else [t.task_id for t in getattr(base, "_pool", [])]
    source = {
        "kind": "recorded",
        "env_id": env_id,
        "agent": agent_name,
        "seed": seed,
        "env_kwargs": kwargs,
        **({"tasks": pool} if tasks else {}),
        "screenshots": screenshots,
        "thoughts": thoughts,
    }
    width, height = getattr(base, "screen_size", (360, 720))
    recorded = 0
    writer = ExpertDatasetWriter(out, source, (width, height))
    try:
        done = writer.recorded_ids()
        todo = [i for i in range(episodes) if f"{i:05d}" not in done]
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=episodes, initial=episodes - len(todo), desc=f"record {env_id}")
        for i in todo:
            policy = make_agent(agent, env, seed + i) if isinstance(agent, str) else agent(env)
            options = {"task": pool[i % len(pool)]} if pool else None
            trajectory = _record_episode(
                env, policy, i, seed + i, options, writer, env_id, screenshots, thoughts
            )
            writer.write(trajectory)
            recorded += 1
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
    finally:
        writer.close()
        env.close()
    from gui_gym.envs.replay.dataset import ExpertDataset

    dataset = ExpertDataset.load(out, include_failed=True)
    successes = sum(t.success for t in dataset)
    return RecordReport(Path(out), len(dataset), recorded, successes)


def _record_episode(
    env: gym.Env,
    policy: Agent,
    episode: int,
    seed: int,
    options: dict[str, Any] | None,
    writer: ExpertDatasetWriter,
    env_id: str,
    screenshots: bool,
    thoughts: str,
) -> Trajectory:
    base = env.unwrapped
    observation, info = env.reset(seed=seed, options=options)
    policy.reset(observation, info)
    task = getattr(base, "task", None)
    tag = f"{episode:05d}"
    trajectory = Trajectory(
        env_id=env_id,
        task_id=info.get("task_id", ""),
        instruction=observation["instruction"],
        seed=seed,
        agent=getattr(policy, "name", type(policy).__name__),
        metadata={
            "trajectory_id": tag,
            "episode": episode,
            "category": getattr(task, "category", ""),
            "split": getattr(task, "split", ""),
            "vocabulary": list(getattr(task, "vocabulary", ()) or ()),
        },
    )
    done = False
    k = 0
    while not done:
        tree = base.ui_tree.to_dict()
        screen = observation["screen"]
        shot = None
        if screenshots:
            shot = writer.save_image(f"{IMAGES_DIR}/{tag}/{k:03d}.png", observation["screenshot"])
        action = policy.act(observation, info)
        thought = getattr(policy, "last_thought", None)
        observation, reward, terminated, truncated, info = env.step(action)
        if thought is None and thoughts == "describe":
            thought = _thought_from_description(info.get("action_description", ""))
        trajectory.steps.append(
            Step.from_transition(
                k,
                screen,
                action,
                reward,
                terminated,
                truncated,
                info,
                thought=thought,
                tree=tree,
                screenshot=shot,
            )
        )
        done = terminated or truncated
        k += 1
    trajectory.finish(observation, info)
    trajectory.metadata["final_tree"] = base.ui_tree.to_dict()
    if screenshots:
        trajectory.metadata["final_screenshot"] = writer.save_image(
            f"{IMAGES_DIR}/{tag}/final.png", observation["screenshot"]
        )
    return trajectory
