"""gui_gym.runs.probe: the oracle-solvable short task sets and greedy success that the
learning benchmarks measure with."""

from __future__ import annotations

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401
from gui_gym.agents.prompts import get_prompt
from gui_gym.models.llm import ScriptedLLM
from gui_gym.runs.probe import EpisodesLost, greedy_success, oracle_short_tasks

ENV = "GuiGym/WikiHow-v0"


def test_short_tasks_are_sorted_solved_within_the_bound_and_exclude_what_is_asked() -> None:
    tasks = oracle_short_tasks(ENV, "train", 2, 3)
    assert len(tasks) == 3 and tasks == sorted(tasks)
    env = gym.make(ENV, split="train", max_steps=2)
    for task in tasks:
        env.reset(seed=0, options={"task": task})
        steps, done, info = 0, False, {}
        while not done:
            _, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
            steps, done = steps + 1, terminated or truncated
        assert info["success"] and steps <= 2
    env.close()
    later = oracle_short_tasks(ENV, "train", 2, 2, exclude=tasks[:2])
    assert later[0] == tasks[2] and not set(later) & set(tasks[:2])
    assert oracle_short_tasks(ENV, "train", 2, 0) == []


def test_greedy_success_counts_the_episodes_an_llm_solves() -> None:
    tasks = oracle_short_tasks(ENV, "train", 2, 3)
    env = gym.make(ENV, split="all", max_steps=2)
    plans: dict[str, list[str]] = {}  # instruction -> the oracle's actions
    for task in tasks:
        observation, _ = env.reset(seed=0, options={"task": task})
        plan, done = [], False
        while not done:
            plan.append(env.unwrapped.oracle_action())
            _, _, terminated, truncated, _ = env.step(plan[-1])
            done = terminated or truncated
        plans[observation["instruction"]] = plan
    env.close()
    prompt = get_prompt("default")
    solved = list(plans)[:2]  # the third task's episode gets wrong answers
    asked = dict.fromkeys(plans, 0)

    def answer(text: str) -> str:
        for instruction in solved:
            if instruction in text:  # the next oracle action of this task's episode
                asked[instruction] += 1
                return prompt.completion(None, plans[instruction][asked[instruction] - 1])
        return prompt.completion(None, "BACK()")

    rate = greedy_success(ScriptedLLM(answer), ENV, tasks, max_steps=2, max_new_tokens=16)
    assert rate == 2 / 3
    garbage = ScriptedLLM(lambda text: "no action here")
    assert greedy_success(garbage, ENV, tasks, max_steps=2, max_new_tokens=16) == 0.0


class _ResetFails(gym.Wrapper):
    """WikiHow whose reset fails for one task, as an env on a full disk does."""

    broken = ""

    def reset(self, *, seed=None, options=None):  # type: ignore[override]
        if (options or {}).get("task") == self.broken:
            raise OSError(28, "No space left on device")
        return self.env.reset(seed=seed, options=options)


def _broken_wikihow(**kwargs: object) -> gym.Env:
    return _ResetFails(gym.make(ENV, **kwargs))


def test_greedy_success_refuses_a_rate_when_an_episode_is_lost() -> None:
    tasks = oracle_short_tasks(ENV, "train", 2, 3)
    _ResetFails.broken = tasks[1]
    broken = "Test/WikiHowResetFails-v0"
    if broken not in gym.registry:
        gym.register(broken, entry_point=_broken_wikihow)
    garbage = ScriptedLLM(lambda text: "no action here")
    with pytest.raises(EpisodesLost, match=r"1 of 3 .* lost to infra errors") as lost:
        greedy_success(garbage, broken, tasks, max_steps=2, max_new_tokens=16)
    assert list(lost.value.lost) == [tasks[1]]
    assert "No space left on device" in lost.value.lost[tasks[1]]
