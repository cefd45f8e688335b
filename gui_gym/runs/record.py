"""Record expert trajectories from a live env into an expert dataset (``gui-gym record``).

Episode ``i`` runs the split's task ``i`` (cycling) with seed ``seed + i``, as ``gui-gym eval``
schedules them (through the same rollout engine), so a recording is reproducible and a rerun
after a crash records exactly the episodes that are missing. Each finished episode's images are written first and its line
last (see :class:`~gui_gym.envs.replay.dataset.ExpertDatasetWriter`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from gui_gym.agents.base import Agent
from gui_gym.agents.named import make_agent
from gui_gym.core.progress import progress_bar, progress_enabled
from gui_gym.core.trajectory import Step, Trajectory
from gui_gym.envs.replay.dataset import IMAGES_DIR, ExpertDataset, ExpertDatasetWriter
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine, as_batch_agent

__all__ = ["RecordReport", "record_dataset"]


@dataclass(frozen=True)
class RecordReport:
    """What a recording run did.

    Attributes:
        out: The dataset folder.
        episodes: Episodes in the dataset now.
        recorded: Episodes recorded by this run (the rest were there already).
        successes: Successful episodes among all in the dataset.
        lost: Episodes of this run lost to infrastructure (an env that raised, a dead
            worker): not written; a rerun records them.
    """

    out: Path
    episodes: int
    recorded: int
    successes: int
    lost: int = 0


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
    suite = getattr(base, "suite", None)
    if isinstance(agent, str):
        try:
            make_agent(agent, env, seed)  # an unknown name fails here, not per episode
        finally:
            env.close()
    else:
        env.close()
    recorded = 0
    lost = 0
    writer = ExpertDatasetWriter(out, source, (width, height))

    def tag(trajectory: Trajectory) -> str:
        return f"{trajectory.metadata['episode']:05d}"

    def on_step(trajectory: Trajectory, step: Step, observation: dict[str, Any]) -> None:
        if screenshots:
            step.screenshot = writer.save_image(
                f"{IMAGES_DIR}/{tag(trajectory)}/{step.index:03d}.png", observation["screenshot"]
            )

    def on_end(trajectory: Trajectory, observation: dict[str, Any], info: dict[str, Any]) -> None:
        if screenshots:
            trajectory.metadata["final_screenshot"] = writer.save_image(
                f"{IMAGES_DIR}/{tag(trajectory)}/final.png", observation["screenshot"]
            )

    def finished(position: int, trajectory: Trajectory) -> None:
        nonlocal recorded, lost
        if trajectory.infra_error is not None:  # not the agent's doing: recorded on a rerun
            lost += 1
            return
        task = _task(suite, trajectory.task_id)
        trajectory.env_id = env_id
        trajectory.metadata.update(
            trajectory_id=tag(trajectory),
            vocabulary=list(getattr(task, "vocabulary", ()) or ()),
        )
        if thoughts == "describe":
            for step in trajectory.steps:
                if step.thought is None:
                    step.thought = _thought_from_description(step.action_description)
        writer.write(trajectory)  # its images are on disk already: the line comes last
        recorded += 1
        if bar is not None:
            bar.update(1)

    bar = None
    try:
        done = writer.recorded_ids()
        todo = [i for i in range(episodes) if f"{i:05d}" not in done]
        if progress_enabled(progress):
            bar = progress_bar(
                total=episodes, initial=episodes - len(todo), desc=f"record {env_id}"
            )
        if todo:
            engine = RolloutEngine(
                env_id,
                as_batch_agent(agent),
                num_envs=1,
                env_kwargs={"screenshot": screenshots, **kwargs},
                record_trees=True,
                record_prompts=False,
                on_step=on_step,
                on_end=on_end,
            )
            with engine:
                engine.run(
                    [
                        EpisodeSpec(pool[i % len(pool)] if pool else None, seed + i, episode=i)
                        for i in todo
                    ],
                    on_episode=finished,
                )
    finally:
        if bar is not None:
            bar.close()
        writer.close()
    dataset = ExpertDataset.load(out, include_failed=True)
    successes = sum(t.success for t in dataset)
    return RecordReport(Path(out), len(dataset), recorded, successes, lost)


def _task(suite: Any, task_id: str) -> Any:
    try:
        return suite[task_id] if suite is not None else None
    except KeyError:
        return None
