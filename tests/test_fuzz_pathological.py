"""Issue 16 bar: no string an agent or a degenerate model sends makes a simulated env (or a
parser of model output) raise or hang.

Hypothesis builds pathological strings (a unit such as a space, a newline, a backtick, ``[``,
``<think>`` or ``\\u`` repeated up to 64k characters, between prefixes and suffixes that
steer them into each parser) plus the audit's reproductions. Every parser is linear by
construction, so each step is fast; ``pytest.mark.timeout`` turns a regression into a
failure instead of a hung run. Derandomized in CI (``CI=true``) so a failure reproduces.
"""

from __future__ import annotations

import contextlib
import json

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import gui_gym
from gui_gym.core.actions import ActionParseError, parse_action
from gui_gym.core.trajectory import json_default
from gui_gym.core.untrusted_text import load_json, strip_code_fence, tagged_blocks
from gui_gym.envs.replay import SAMPLE_DATASET
from gui_gym.models.judge import parse_claims, parse_decisions, parse_goal, parse_status
from gui_gym.models.milestones import parse_milestone_list
from gui_gym.rewards.milestones import placeholder_pattern
from tests.conftest import IN_CI

SIMULATED_IDS = [*gui_gym.ENV_IDS, "GuiGym/SemiOnlineReplay-v0"]

UNITS = (" ", "\n", "\t", "`", "```", "[", "{", "(", ")", ",", '"', "\\", "\\u", "\\ud83d",
         "0", "9", "<action>", "</action>", "<think>", "<think>x", "x</think>", "*", ":",
         "Status:", "CLICK(", "a=", "=", "<A>", "\ud83d", "😀", "é")  # fmt: skip
PREFIXES = ("", "```", "```json", "```\n", "CLICK", "CLICK(", "INPUT(0, ", 'ANSWER("',
            "<action>", "<think>", "{", "[", "search[", "click[", "Status: success",
            "Goal: ", "DONE(", "SCROLL(")  # fmt: skip
SUFFIXES = ("", "x", ")", '")', "```", "]", "}", "</action>", "</think>", ";")
LENGTHS = (1, 100, 1_500, 4_000, 19_980, 64_000)

REPRODUCTIONS = (
    "```\n" + "\n" * 1500 + "x",  # cubic fence regex: 6 s
    "```" + " " * 4000 + "x",  # 20 s
    "CLICK" + " " * 19_990 + "x",  # quadratic call regex: 7.6 s
    "<think>" * 2_850,  # thought extraction before the length limit
    "<think>" * 32_000,  # 51 s
    "CLICK(index=3, foo)",  # IndexError
    'ANSWER("\\ud83d")',  # a lone surrogate on screen
    "CLICK(1234567890)",  # a 10-digit index read as a label
    "[" * 100_000,
    '{"action_type": "click", "index": ' + "[" * 5_000,
    "Status: success" + " " * 1_200 + "x",
)


@st.composite
def pathological(draw: st.DrawFn) -> str:
    unit = draw(st.sampled_from(UNITS))
    length = draw(st.sampled_from(LENGTHS))
    body = unit * max(1, length // len(unit))
    return draw(st.sampled_from(PREFIXES)) + body + draw(st.sampled_from(SUFFIXES))


ANY_TEXT = st.one_of(pathological(), st.sampled_from(REPRODUCTIONS), st.text(max_size=200))
FUZZ = settings(
    max_examples=60,
    deadline=None,  # a slow shared CI machine is not a failure; the timeout bounds a hang
    derandomize=IN_CI,
    database=None if IN_CI else settings.default.database,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _make(env_id: str) -> gym.Env:
    if env_id == "GuiGym/SemiOnlineReplay-v0":
        return gym.make(env_id, dataset=SAMPLE_DATASET, max_steps=10_000)
    return gym.make(env_id, max_steps=10_000)


_ENVS: dict[str, gym.Env] = {}


def _env(env_id: str) -> gym.Env:
    if env_id not in _ENVS:
        _ENVS[env_id] = _make(env_id)
    return _ENVS[env_id]


def _assert_encodable(value: object) -> None:
    """What a recorder writes must encode as UTF-8 (a lone surrogate would not)."""
    json.dumps(value, default=json_default, ensure_ascii=False).encode("utf-8")


def _with_reproductions(test):
    """Every reproduction of the audit runs as an explicit example, whatever is drawn."""
    for text in REPRODUCTIONS:
        test = example(text=text, seed=0)(test)
    return test


@pytest.mark.timeout(240)
@pytest.mark.parametrize("env_id", SIMULATED_IDS)
@FUZZ
@_with_reproductions
@given(text=ANY_TEXT, seed=st.integers(0, 3))
def test_no_pathological_string_makes_an_env_raise_or_hang(
    env_id: str, text: str, seed: int
) -> None:
    env = _env(env_id)
    env.reset(seed=seed)
    obs, reward, terminated, truncated, info = env.step(text)
    assert isinstance(info["action_valid"], bool)
    if not info["action_valid"]:
        assert isinstance(info["action_error"], str) and info["action_error"]
    _assert_encodable(obs["screen"])
    _assert_encodable({k: v for k, v in info.items() if k != "semi_online"})
    if not (terminated or truncated):  # the env still works after it
        env.step("WAIT()")


def _text_reproductions(test):
    for text in REPRODUCTIONS:
        test = example(text=text)(test)
    return test


@pytest.mark.timeout(120)
@FUZZ
@_text_reproductions
@given(text=ANY_TEXT)
def test_model_output_parsers_return_or_raise_their_documented_error(text: str) -> None:
    """Each returns its typed result or raises its documented error (a ValueError)."""
    try:
        action = parse_action(text)
    except ActionParseError:
        pass
    else:
        _assert_encodable(action.to_dict())
    parsers = (
        parse_status,
        parse_goal,
        lambda t: parse_claims(t, "c", 3, "policy"),
        lambda t: parse_decisions(t, 2),
        parse_milestone_list,  # MilestoneGenerationError is a ValueError
        load_json,
    )
    for parse in parsers:
        with contextlib.suppress(ValueError):
            parse(text)
    tagged_blocks(text, "think")
    strip_code_fence(text)
    pattern = placeholder_pattern(text[:200] + " <Name>")
    assert pattern is not None
    pattern.fullmatch(text)


def teardown_module() -> None:
    for env in _ENVS.values():
        env.close()
