"""Small task sets and greedy success: what learning benchmarks and examples measure.

* :func:`oracle_short_tasks`: the tasks of a split the env's oracle solves within a few
  steps (a tiny policy can learn them; a benchmark's train and held-out sets).
* :func:`greedy_success`: one greedy episode per task through the rollout engine, the
  fraction that succeeded. It raises :class:`EpisodesLost` when an episode was lost to
  infrastructure rather than score fewer episodes (or none) without a word.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["EpisodesLost", "greedy_success", "oracle_short_tasks"]


class EpisodesLost(RuntimeError):
    """Some evaluation episodes ended in an infra error (a failed reset, a dead env):
    a success rate over the rest would not be the rate over the tasks asked for.

    ``lost`` maps each lost task to its error's text.
    """

    def __init__(self, env_id: str, lost: dict[str, str], total: int) -> None:
        self.lost = lost
        first_task, first_error = next(iter(lost.items()))
        super().__init__(
            f"{len(lost)} of {total} {env_id} evaluation episodes were lost to infra errors "
            f"(first: task {first_task!r}: {first_error}); no success rate is given for an "
            "incomplete evaluation"
        )


def oracle_short_tasks(
    env_id: str,
    split: str,
    max_oracle_steps: int,
    count: int,
    *,
    exclude: Iterable[str] = (),
    **env_kwargs: Any,
) -> list[str]:
    """The first ``count`` tasks of ``split`` (sorted ids, none of ``exclude``) that the env's
    ``oracle_action()`` solves within ``max_oracle_steps`` steps (seed 0).

    AndroidWorld's splits hold the same 116 task templates, so excluding the train tasks
    gives held-out tasks of templates the train tasks do not include.
    """
    import gymnasium as gym

    import gui_gym  # noqa: F401  (registers the envs)

    env = gym.make(env_id, split=split, max_steps=max_oracle_steps, **env_kwargs)
    chosen: list[str] = []
    try:
        for task in sorted(set(env.unwrapped.task_ids) - set(exclude)):
            if len(chosen) == count:
                break
            env.reset(seed=0, options={"task": task})
            info: dict[str, Any] = {}
            done = False
            while not done:
                _, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
                done = terminated or truncated
            if info.get("success"):
                chosen.append(task)
    finally:
        env.close()
    return chosen


def greedy_success(
    llm: Any,
    env_id: str,
    tasks: list[str],
    *,
    max_steps: int,
    max_new_tokens: int,
    seed: int = 0,
    **env_kwargs: Any,
) -> float:
    """Greedy success of ``llm`` (an :class:`~gui_gym.models.llm.LLM`, the default agent
    prompt) over one episode per task of ``env_id`` (``split="all"``), all in one batch.

    Raises :class:`EpisodesLost` when any episode ended in an infra error: a rate over
    the episodes left (0.0 when none were) would read as the model's failure.
    """
    import gymnasium as gym

    from gui_gym.agents.llm import LLMAgent
    from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine

    def make_env() -> Any:
        return gym.make(env_id, split="all", max_steps=max_steps, **env_kwargs)

    agent = LLMAgent(llm, temperature=0.0, max_new_tokens=max_new_tokens)
    engine = RolloutEngine(make_env, agent, num_envs=max(1, len(tasks)))
    try:
        episodes = engine.run([EpisodeSpec(task, seed) for task in tasks])
    finally:
        engine.close()
    lost = {t.task_id: str(t.infra_error) for t in episodes if t.infra_error is not None}
    if lost:
        raise EpisodesLost(env_id, lost, len(episodes))
    return sum(t.success for t in episodes) / max(1, len(episodes))
