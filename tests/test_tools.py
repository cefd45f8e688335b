"""The tool table (gui_gym.integrations.tools) covers the whole action grammar, its tools keep
their arguments as data and strict, and every simulated id's expert plays through TRL's
environment class by tool calls alone, with the success it has on its own."""

from __future__ import annotations

import itertools

import gymnasium as gym
import pytest

import gui_gym
from gui_gym.core.actions import Action, ActionType, parse_action
from gui_gym.integrations.tools import (
    TOOLS,
    TOOLS_BY_NAME,
    ToolArgumentError,
    action_form,
    build_action,
    tool_call,
)
from tests.conftest import require

_FIELD_VALUES = {
    "index": {"index": 1},
    "text": {"text": "t"},
    "direction": {"direction": "up"},
    "xy": {"x": 1.5, "y": 2.0},
    "label": {"label": "Next >"},
    "end_index": {"end_index": 2},
    "end": {"end_x": 3.0, "end_y": 4.0},
    "via": {"via": (5.0, 6.0)},
    "modifiers": {"modifiers": "ctrl"},
}


def grammar_forms() -> list[Action]:
    """One action per argument form the grammar can write and read back: every action type
    with every combination of fields that makes a valid action whose text parses to it."""
    forms = []
    for atype in ActionType:
        for r in range(len(_FIELD_VALUES) + 1):
            for combo in itertools.combinations(_FIELD_VALUES, r):
                fields = {k: v for c in combo for k, v in _FIELD_VALUES[c].items()}
                try:
                    action = Action(atype, **fields)
                    if parse_action(action.to_string()) == action:
                        forms.append(action)
                except (ValueError, AssertionError):  # DRAG with x, y but no end asserts
                    continue
    return forms


def test_every_action_type_and_argument_form_has_a_tool() -> None:
    forms = grammar_forms()
    assert {a.type for a in forms} == set(ActionType)  # every type has a form
    assert len(forms) >= 35
    for action in forms:
        name, arguments = tool_call(action)
        assert build_action(name, arguments) == action, (action, name)
    # and every tool performs a form the grammar has (no tool without an action)
    shapes = {action_form(a) for a in forms}
    for spec in TOOLS:
        if spec.name == "command":
            continue
        arguments = {
            p.name: {"int": 1, "float": 1.5, "str": "ctrl", "direction": "up", "points": [5, 6]}[
                p.kind
            ]
            for p in spec.params
        }
        if spec.name in ("input_text", "type_text", "select_option", "answer", "search"):
            arguments = {k: ("t" if v == "ctrl" else v) for k, v in arguments.items()}
        assert action_form(build_action(spec.name, arguments)) in shapes, spec.name


def test_tool_arguments_are_data_and_strictly_typed() -> None:
    # a text argument is never read as another action
    answer = build_action("answer", {"text": '<action>DONE()</action>"), CLICK(3'})
    assert answer == Action(ActionType.ANSWER, text='<action>DONE()</action>"), CLICK(3')
    typed = build_action("input_text", {"element_id": 0, "text": 'a") DONE("'})
    assert typed.type is ActionType.INPUT and typed.text == 'a") DONE("'
    bad = [
        ("click", {"element_id": 2.9}, "element_id must be an integer, got 2.9"),
        ("click", {"element_id": True}, "element_id must be an integer, got True"),
        ("click", {"element_id": "3"}, "element_id must be an integer, got '3'"),
        ("click", {"element_id": -1}, "element_id must be from 0"),
        ("input_text", {"element_id": 0, "text": None}, "text must be a string, got None"),
        ("input_text", {"element_id": 0}, "missing argument 'text'"),
        ("click_at", {"x": float("nan"), "y": 1}, "x must be a finite coordinate"),
        ("click_at", {"x": 1, "y": False}, "y must hold numbers, got False"),
        ("scroll", {"direction": "sideways"}, "direction must be one of up, down, left, right"),
        ("drag_at", {"x0": 0, "y0": 0, "x1": 1, "y1": 1, "via": [1]}, "via holds x, y pairs"),
        ("click", {"element_id": 1, "held_keys": "hyper"}, "click: modifiers must be"),
        ("click", {"element_id": 1, "index": 2}, "unknown argument(s) ['index']"),
        ("teleport", {}, "unknown tool 'teleport'"),
    ]
    for name, arguments, message in bad:
        with pytest.raises(ToolArgumentError, match=None) as err:
            build_action(name, arguments)
        assert message in str(err.value) and "\n" not in str(err.value), (name, str(err.value))
    assert set(TOOLS_BY_NAME) >= {"scroll", "click_at", "drag_at", "key", "search", "command"}


# ------------------------------------------------------------- experts through the TRL tools


def _expert_alone(env_id: str, task: str, seed: int, **kwargs) -> tuple[bool, int]:
    env = gym.make(env_id, **kwargs)
    try:
        env.reset(seed=seed, options={"task": task})
        u, done, steps = env.unwrapped, False, 0
        while not done:
            _, _, terminated, truncated, info = env.step(u.oracle_action())
            done, steps = terminated or truncated, steps + 1
        return bool(info.get("success")), steps
    finally:
        env.close()


def _expert_through_tools(env_class: type, task: str, seed: int) -> tuple[bool, int, set]:
    env = env_class()
    env.reset(task_id=task, seed=seed)
    used = set()
    try:
        while env._state == "running":
            name, arguments = tool_call(env._env.unwrapped.oracle_action())
            used.add(f"{name}(element)" if name == "scroll" and "element_id" in arguments else name)
            result = getattr(env, name)(**arguments)
            assert not str(result).startswith("Error"), (task, name, arguments, result)
        return bool(env._metric("success")), int(env._metric("steps")), used
    finally:
        env._finalizer()


def _check_ids(env_id: str, tasks, **kwargs) -> set:
    require("trl", "trl")
    from gui_gym.integrations.trl import make_environment_factory

    env_class = make_environment_factory(env_id, **kwargs)
    used: set = set()
    solved = 0
    for task in tasks:
        alone = _expert_alone(env_id, task, 0, **kwargs)
        success, steps, names = _expert_through_tools(env_class, task, 0)
        assert (success, steps) == alone, (env_id, task)
        used |= names
        solved += success
    assert solved == len(tasks)  # every expert here solves its task on its own (seed 0)
    return used


@pytest.mark.parametrize("env_id", ["GuiGym/AndroidWorld-v0", "GuiGym/AndroidWorldPlus-v0"])
def test_every_androidworld_template_expert_plays_through_the_tools(env_id: str) -> None:
    tasks = gym.make(env_id).unwrapped.task_ids
    used = _check_ids(env_id, tasks)
    if env_id == "GuiGym/AndroidWorld-v0":
        # the forms the first tools lacked: a slider scrolled by element, drawn strokes
        assert {"scroll(element)", "click_at", "open_app", "answer"} <= used, used


@pytest.mark.parametrize("env_id", ["GuiGym/WikiHow-v0", "GuiGym/WebShop-v0"])
def test_wikihow_and_webshop_experts_play_through_the_tools(env_id: str) -> None:
    tasks = gym.make(env_id, split="test").unwrapped.task_ids[:10]
    _check_ids(env_id, tasks, split="test")


def test_webshop_text_expert_searches_and_clicks_labels_through_the_tools() -> None:
    tasks = gym.make("GuiGym/WebShop-Text-v0", split="test").unwrapped.task_ids[:10]
    used = _check_ids("GuiGym/WebShop-Text-v0", tasks, split="test")
    assert {"search", "click_label"} <= used, used


def test_simulated_ids_are_the_ones_checked() -> None:
    # a new simulated id needs its expert run through the tools here
    assert set(gui_gym.ENV_IDS) == {
        "GuiGym/WikiHow-v0",
        "GuiGym/AndroidWorld-v0",
        "GuiGym/AndroidWorldPlus-v0",
        "GuiGym/WebShop-v0",
        "GuiGym/WebShop-Text-v0",
    }


def test_alfworld_expert_plays_by_typed_commands_through_the_tools(tmp_path, monkeypatch) -> None:
    require("alfworld", "alfworld")
    require("trl", "trl")
    from gui_gym.integrations.trl import make_environment_factory

    monkeypatch.setenv("GUI_GYM_CACHE", str(tmp_path))  # the two cheapest games, built here
    kwargs = {"num_games": {"train": 30, "valid_seen": 2, "valid_unseen": 6}}
    env_class = make_environment_factory("GuiGym/ALFWorld-v0", **kwargs)
    for task in ("train/0012", "train/0013"):  # pick-and-place, look-at-in-light
        alone = _expert_alone("GuiGym/ALFWorld-v0", task, 0, **kwargs)
        env = env_class()
        env.reset(task_id=task, seed=0)
        assert env.command("fly to the moon").startswith("Error: command: no listed command")
        while env._state == "running":
            action = env._env.unwrapped.oracle_action()
            tree = env._env.unwrapped.ui_tree
            if action.type is ActionType.CLICK:  # the listed command, typed as its text
                [text] = [e.text for e in tree.elements if e.index == action.index]
                result = env.command(text)
            else:
                name, arguments = tool_call(action)
                result = getattr(env, name)(**arguments)
            assert not str(result).startswith("Error"), (task, action, result)
        # the refused command took no step; the expert's own success and step count
        assert (bool(env._metric("success")), int(env._metric("steps"))) == alone
        assert alone[0]
        env._finalizer()
