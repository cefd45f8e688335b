"""Helpers the AndroidWorld app tests share: an env on one template, actions on elements
found by their attributes, the oracle run until a condition holds, and the score."""

from __future__ import annotations

import json
from collections.abc import Callable

import gymnasium as gym

import gui_gym  # noqa: F401
from gui_gym.core.actions import Action, ActionType
from gui_gym.envs.androidworld.tasks import TASKS

ENV_ID = "GuiGym/AndroidWorld-v0"


def templates_of(*modules: str) -> list[str]:
    """Sorted names of the templates defined in the given ``tasks`` modules (``"sms"``)."""
    return sorted(
        name for name, cls in TASKS.items() if cls.__module__.rsplit(".", 1)[-1] in modules
    )


def make(name: str, seed: int = 0) -> gym.Env:
    """The AndroidWorld env on template ``name``, reset with ``seed``."""
    env = gym.make(ENV_ID, task=name)
    env.reset(seed=seed)
    return env


def assert_clean_start(name: str, seed: int = 5) -> gym.Env:
    """Reset template ``name`` and check the start: no milestone reached yet, parameters
    that survive a JSON round trip, and an instruction with every slot filled."""
    env = make(name, seed=seed)
    base = env.unwrapped
    assert base.milestones == []
    params = base.task.params
    assert json.loads(json.dumps(params)) == params
    assert "{" not in base.task.instruction
    return env


def step(env: gym.Env, action: Action | str) -> dict:
    """Step and return the info dict."""
    *_, info = env.step(action)
    return info


def act(env: gym.Env, kind: ActionType, **criteria) -> dict:
    """``kind`` on the element matching ``criteria``; asserts it exists and the step is valid."""
    element = env.unwrapped.ui_tree.find_one(**criteria)
    assert element is not None, f"nothing matches {criteria} on\n{env.unwrapped.ui_tree.text}"
    info = step(env, Action(kind, index=element.index))
    assert info["action_valid"], info["action_error"]
    return info


def click(env: gym.Env, **criteria) -> dict:
    """CLICK the element matching ``criteria``."""
    return act(env, ActionType.CLICK, **criteria)


def long_click(env: gym.Env, **criteria) -> dict:
    """LONG_CLICK the element matching ``criteria``."""
    return act(env, ActionType.LONG_CLICK, **criteria)


def type_in(env: gym.Env, text: str, **criteria) -> None:
    """INPUT ``text`` into the editable element matching ``criteria``."""
    element = env.unwrapped.ui_tree.find_one(editable=True, **criteria)
    assert element is not None, f"no field {criteria} on\n{env.unwrapped.ui_tree.text}"
    info = step(env, Action(ActionType.INPUT, index=element.index, text=text))
    assert info["action_valid"], info["action_error"]


def fill(env: gym.Env, field: str, text: str) -> None:
    """INPUT ``text`` into the form field ``field`` (its handler arg)."""
    type_in(env, text, handler_arg=field)


def oracle_until(env: gym.Env, done: Callable[[], bool], limit: int = 20) -> None:
    """Step the oracle until ``done()`` holds, at most ``limit`` steps; asserts it then holds."""
    for _ in range(limit):
        if done():
            return
        info = step(env, env.unwrapped.oracle_action())
        assert info["action_valid"], info["action_error"]
    assert done()


def score(env: gym.Env) -> float:
    """The task's state score (:meth:`AndroidWorldTask.score`) on the current phone state."""
    return env.unwrapped.task.score(env.unwrapped.state)


def success(env: gym.Env) -> float:
    """The task's success (answer checks included) in the current context."""
    base = env.unwrapped
    return base.task.is_successful(base.context())
