"""``RecordTrajectories``: write every finished episode to a JSONL file as it ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym

from gui_gym.core.trajectory import Step, Trajectory, TrajectoryWriter

__all__ = ["RecordTrajectories"]


class RecordTrajectories(
    gym.Wrapper[dict[str, Any], Any, dict[str, Any], Any], gym.utils.RecordConstructorArgs
):
    """Append each finished episode to ``path`` (JSON Lines, one trajectory per line).

    Each episode is written with a single append and fsync when it ends, so a crash loses at
    most the episode in progress and never corrupts earlier ones; reopening the file resumes
    it (a torn last line is cut). Unfinished episodes (reset or close mid-episode) are not
    written. The reward recorded is the reward this wrapper sees, so put it outermost to
    record shaped rewards and innermost to record the task reward only.

    Args:
        env: The env to record.
        path: The JSONL file.
        record_trees: Also store each step's UI tree (larger files, needed for replay).
        agent_name: Stored in each trajectory's ``agent`` field.
    """

    def __init__(
        self, env: gym.Env, path: str | Path, record_trees: bool = False, agent_name: str = ""
    ):
        gym.utils.RecordConstructorArgs.__init__(
            self, path=str(path), record_trees=record_trees, agent_name=agent_name
        )
        gym.Wrapper.__init__(self, env)
        self.path = Path(path)
        self.record_trees = record_trees
        self.agent_name = agent_name
        self._writer = TrajectoryWriter(self.path)
        self._current: Trajectory | None = None
        self._screen = ""
        self._tree: dict[str, Any] | None = None
        self.episodes_written = 0

    def _snapshot(self, observation: dict[str, Any]) -> None:
        self._screen = observation.get("screen", "")
        base = self.env.unwrapped
        self._tree = (
            base.ui_tree.to_dict() if self.record_trees and hasattr(base, "ui_tree") else None
        )

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        observation, info = self.env.reset(seed=seed, options=options)
        task = getattr(self.env.unwrapped, "task", None)
        spec = self.env.spec
        self._current = Trajectory(
            env_id=spec.id if spec is not None else type(self.env.unwrapped).__name__,
            task_id=info.get("task_id", ""),
            instruction=observation.get("instruction", ""),
            seed=seed,
            agent=self.agent_name,
            metadata={
                "category": getattr(task, "category", ""),
                "split": getattr(task, "split", ""),
            },
        )
        self._snapshot(observation)
        return observation, info

    def step(self, action: Any):
        observation, reward, terminated, truncated, info = self.env.step(action)
        if self._current is not None:
            self._current.steps.append(
                Step.from_transition(
                    len(self._current.steps),
                    self._screen,
                    action,
                    reward,
                    terminated,
                    truncated,
                    info,
                    tree=self._tree,
                )
            )
            if terminated or truncated:
                self._current.finish(observation, info)
                self._writer.write(self._current)
                self.episodes_written += 1
                self._current = None
            else:
                self._snapshot(observation)
        return observation, reward, terminated, truncated, info

    def close(self) -> None:
        self._writer.close()
        super().close()
