"""A real run to look at: WikiHow episodes with every single-env reward wrapper stacked.

:func:`record_sample_run` plays the oracle and a random agent on WikiHow test tasks through
the ProRe judge (rule-based, one probe), ADMIRE milestones (learned from the oracle's
successes with a hashing embedder), ProgRM progress (milestone fraction) and the GUI-Shepherd
PRM (rule judge), and writes each episode with its UI trees (and optionally screenshots) as
a trajectory file. No model and no download is needed, so the viewer's docs, tests and
benchmark all show the same reward components a real training run would.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import gymnasium as gym
from PIL import Image

from gui_gym.core.trajectory import Step, Trajectory, TrajectoryWriter

__all__ = ["record_sample_run"]


def _stack(env: gym.Env, store: Path) -> gym.Env:
    from gui_gym.models.embeddings import HashingEmbedder
    from gui_gym.models.milestones import CosineMatcher, TrajectoryMilestoneGenerator
    from gui_gym.models.prm import RulePRM
    from gui_gym.models.progress import MilestoneProgress
    from gui_gym.wrappers import (
        MilestoneWrapper,
        PRMWrapper,
        ProbingJudgeWrapper,
        ProgressRewardWrapper,
    )

    embedder = HashingEmbedder(dim=256)
    env = ProbingJudgeWrapper(env, n_probes=1)  # innermost: it replaces the final reward
    env = MilestoneWrapper(
        env,
        store,
        generator=TrajectoryMilestoneGenerator(embedder),
        matcher=CosineMatcher(embedder),
        credit="online",
    )
    env = ProgressRewardWrapper(env, MilestoneProgress())
    return PRMWrapper(env, RulePRM())


def record_sample_run(
    path: str | Path,
    episodes: int = 20,
    *,
    seed: int = 0,
    screenshots: bool = False,
    random_every: int = 2,
    max_steps: int = 12,
) -> Path:
    """Record ``episodes`` WikiHow test episodes with stacked reward wrappers to ``path``.

    Args:
        path: The trajectory file (JSON Lines) to write; an existing file is appended to.
        episodes: How many episodes.
        seed: Episode ``i`` is reset with ``seed + i``.
        screenshots: Save each step's screenshot as a PNG in ``<stem>_shots/`` beside the file
            (``Step.screenshot`` holds the relative path).
        random_every: Every ``random_every``-th episode is played by a random agent (the
            others by the oracle), so the run has failures too; 0 for oracle only.
        max_steps: Step budget of each episode.

    Returns:
        ``path``.
    """
    import gui_gym  # noqa: F401  (registers the ids)
    from gui_gym.agents import OracleAgent, RandomAgent

    path = Path(path)
    shots = path.parent / f"{path.stem}_shots"
    base = gym.make("GuiGym/WikiHow-v0", split="test", max_steps=max_steps, screenshot=screenshots)
    with tempfile.TemporaryDirectory() as scratch, TrajectoryWriter(path) as writer:
        env = _stack(base, Path(scratch) / "milestones.json")
        try:
            for i in range(episodes):
                random = random_every > 0 and i % random_every == random_every - 1
                agent: Any = RandomAgent(env, seed=seed + i) if random else OracleAgent(env)
                writer.write(_episode(env, agent, seed + i, shots if screenshots else None, i))
        finally:
            env.close()
    return path


def _episode(env: gym.Env, agent: Any, seed: int, shots: Path | None, number: int) -> Trajectory:
    observation, info = env.reset(seed=seed)
    agent.reset(observation, info)
    base = env.unwrapped
    task = base.task
    trajectory = Trajectory(
        env_id="GuiGym/WikiHow-v0",
        task_id=info.get("task_id", ""),
        instruction=observation.get("instruction", ""),
        seed=seed,
        agent=getattr(agent, "name", type(agent).__name__),
        metadata={"category": task.category, "split": task.split},
    )
    done = False
    while not done:
        k = len(trajectory.steps)
        screen, tree = observation["screen"], base.ui_tree.to_dict()
        shot = None
        if shots is not None:
            shots.mkdir(parents=True, exist_ok=True)
            name = f"e{number:05d}_{k:03d}.png"
            Image.fromarray(observation["screenshot"]).save(shots / name)
            shot = f"{shots.name}/{name}"
        action = agent.act(observation, info)
        observation, reward, terminated, truncated, info = env.step(action)
        trajectory.steps.append(
            Step.from_transition(
                k, screen, action, reward, terminated, truncated, info, tree=tree, screenshot=shot
            )
        )
        done = terminated or truncated
    trajectory.finish(observation, info)
    return trajectory
