"""Issue 16, item 10: one rule for every consumer of model output. A parser returns its typed
result or raises its documented error; a wrapper turns a failed model into the neutral reward
with a warning and an ``info`` flag, never an exception mid-rollout."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.agents import OracleAgent
from gui_gym.core.untrusted_text import load_json
from gui_gym.models.embeddings import HashingEmbedder
from gui_gym.models.judge import parse_claims, parse_decisions, parse_goal, parse_status
from gui_gym.models.llm import LLMError, ScriptedLLM
from gui_gym.models.milestones import (
    CosineMatcher,
    LLMJudgeMatcher,
    LLMMilestoneGenerator,
    MilestoneGenerationError,
    TrajectoryMilestoneGenerator,
    parse_milestone_list,
)
from gui_gym.rewards.milestone_store import MilestoneStore
from gui_gym.rewards.milestones import placeholder_pattern
from gui_gym.wrappers import MilestoneVectorWrapper, MilestoneWrapper

TASK = "clean_oil_paint_brushes-bookmark"
KEY_STEPS = [
    'type "clean oil paint brushes" into "Search wikiHow" input',
    'click "How to Clean Oil Paint Brushes" link',
    'click "Bookmark" button',
]
DEEP = "[" * 100_000


def _server_error(prompt: str) -> str:
    raise LLMError("http://judge/v1 failed 5 times; last error: 500 Internal Server Error")


def _run_oracle(env: gym.Env) -> list[dict]:
    oracle = OracleAgent(env)
    _, info = env.reset(seed=0)
    infos, done = [info], False
    while not done:
        _, _, terminated, truncated, info = env.step(oracle.act({}, info))
        infos.append(info)
        done = terminated or truncated
    return infos


# ----------------------------------------------------------------------------- parsers


@pytest.mark.timeout(20)
def test_deeply_nested_json_is_a_parser_error_not_a_recursion_error() -> None:
    with pytest.raises(ValueError, match="nested 100000 levels"):
        load_json(DEEP)
    with pytest.raises(MilestoneGenerationError, match="not valid JSON"):
        parse_milestone_list(DEEP)
    with pytest.raises(ValueError, match="invalid JSON"):
        parse_claims("{" + '"claims": ' + DEEP + "}", "claims", 3, "policy")
    with pytest.raises(ValueError, match="invalid JSON"):
        parse_decisions('{"decisions": ' + DEEP + "}", 2)
    assert load_json('{"a": [[1]]}') == {"a": [[1]]}
    assert load_json(b'["\\u00e9"]') == ["\u00e9"]
    with pytest.raises(ValueError, match="UTF-8"):
        load_json(b"\xff\xfe")


@pytest.mark.timeout(20)
def test_judge_reply_parsers_are_linear_on_degenerate_replies() -> None:
    # the old multi-line patterns took 7 s on 1,200 spaces and ran past a minute on 2,500
    for text in ("Status: success" + " " * 60_000 + "x", "\n" * 60_000, " " * 60_000):
        with pytest.raises(ValueError, match="no line 'Status"):
            parse_status(text)
    with pytest.raises(ValueError, match="no line starting with 'Goal:'"):
        parse_goal("Goal" + " " * 60_000 + "x")
    assert parse_status("Analysis: done\n**Status:** success.") == "success"
    assert parse_goal("Analysis: a\n**Goal**: find the note") == "find the note"
    claims = parse_claims(
        '```json\n{"c": [{"steps": [0], "claim": "x"}]}\n```' + "`" * 60_000, "c", 1, "p"
    )
    assert claims[0].text == "x"


@pytest.mark.timeout(20)
def test_placeholder_milestones_match_in_linear_time() -> None:
    pattern = placeholder_pattern("<A>" * 60 + " done")
    assert pattern is not None
    assert not pattern.fullmatch("x" * 20_000)  # 60 lazy wildcards backtracked for ever
    assert pattern.fullmatch("y" * 60 + " done")
    assert not pattern.fullmatch("y" * 59 + " done")  # each placeholder takes a character


def test_llm_judge_matcher_propagates_only_llm_errors() -> None:
    matcher = LLMJudgeMatcher(ScriptedLLM(_server_error))
    with pytest.raises(LLMError):
        matcher.score("click ok", "click ok")


# ---------------------------------------------------------------------------- wrappers


def _wrap(store: Path, **kwargs) -> MilestoneWrapper:
    env = gym.make("GuiGym/WikiHow-v0", task=TASK, max_steps=20)
    embedder = HashingEmbedder(dim=512)
    kwargs.setdefault("generator", TrajectoryMilestoneGenerator(embedder))
    kwargs.setdefault("matcher", CosineMatcher(embedder))
    return MilestoneWrapper(env, store, **kwargs)


def test_a_generator_server_error_on_the_last_step_is_neutral(tmp_path: Path, caplog) -> None:
    path = tmp_path / "m.json"
    env = _wrap(path, generator=LLMMilestoneGenerator(ScriptedLLM(_server_error)))
    with caplog.at_level(logging.WARNING):
        infos = _run_oracle(env)
    end = infos[-1]["milestone"]
    assert end["success"] and end["update"]["status"] == "rejected"
    assert "500 Internal Server Error" in end["update"]["model_error"]
    assert "left unchanged" in caplog.text and not path.exists()


@pytest.mark.parametrize(
    "answer", [DEEP, '{"milestones": {"a": 1}}', "[1, 2]", "null", '["a", ' * 5000]
)
def test_garbage_generator_answers_are_rejected_not_raised(tmp_path: Path, answer: str) -> None:
    env = _wrap(tmp_path / "m.json", generator=LLMMilestoneGenerator(ScriptedLLM(lambda p: answer)))
    end = _run_oracle(env)[-1]["milestone"]
    assert end["update"]["status"] == "rejected" and end["update"]["reason"]


def test_a_matcher_server_error_scores_no_hit_with_a_flag(tmp_path: Path, caplog) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    store.commit(TASK, KEY_STEPS)
    env = _wrap(store.path, matcher=LLMJudgeMatcher(ScriptedLLM(_server_error)), adaptive=False)
    with caplog.at_level(logging.WARNING):
        infos = _run_oracle(env)
    steps = [i["milestone"] for i in infos[1:]]
    assert [s["hit"] for s in steps] == [False, False, False]
    assert all("LLMError" in s["model_error"] for s in steps)
    assert steps[-1]["success"] and steps[-1]["episode_rewards"] == [0.0, 0.0, 0.0]
    assert "milestone matcher failed" in caplog.text


def test_a_matcher_that_fails_only_when_re_matching_keeps_the_old_milestones(
    tmp_path: Path,
) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    store.commit(TASK, KEY_STEPS[:2])  # the success refines these; re-matching then fails
    calls = {"n": 0}

    def judge(prompt: str) -> str:
        calls["n"] += 1
        if calls["n"] > 2:
            raise LLMError("judge went away")
        return "yes"

    generator = LLMMilestoneGenerator(ScriptedLLM(lambda prompt: json.dumps(KEY_STEPS)))
    env = _wrap(store.path, matcher=LLMJudgeMatcher(ScriptedLLM(judge)), generator=generator)
    end = _run_oracle(env)[-1]["milestone"]
    assert (
        end["update"]["status"] == "refined" and "judge went away" in end["update"]["model_error"]
    )
    assert end["milestones"] == KEY_STEPS[:2] and end["hits"] == [0, 1]


def test_the_vector_wrapper_flags_a_matcher_error_per_sub_env(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    store.commit(TASK, KEY_STEPS)
    envs = gym.vector.SyncVectorEnv(
        [lambda: gym.make("GuiGym/WikiHow-v0", task=TASK, max_steps=5)] * 2
    )
    wrapped = MilestoneVectorWrapper(
        envs,
        store,
        generator=TrajectoryMilestoneGenerator(HashingEmbedder(dim=64)),
        matcher=LLMJudgeMatcher(ScriptedLLM(_server_error)),
        adaptive=False,
    )
    wrapped.reset(seed=0)
    # sub-env 1's action is invalid, so it is not scored and carries no error
    _, _, _, _, info = wrapped.step(np.array(['INPUT(0, "clean oil paint brushes")', "garbage"]))
    component = info["milestone"]
    assert list(component["hit"]) == [False, False]
    assert "LLMError" in component["model_error"][0] and component["model_error"][1] is None
    wrapped.close()


@pytest.mark.timeout(20)
def test_typed_text_and_instruction_readers_stay_fast_on_degenerate_text() -> None:
    from gui_gym.models.judge import analyse_task
    from gui_gym.rewards.milestones import alignment_text, generalize_typed_text

    many = 'type "' + '" into ' * 20_000
    assert alignment_text(many).startswith("type into ")
    assert generalize_typed_text(many, many) == many
    assert alignment_text('type "pasta" into "Search" input') == 'type into "Search" input'
    assert (
        generalize_typed_text('type "a" into "Name" input', 'type "b" into "Name" input')
        == 'type "<Text>" into "Name" input'
    )
    analyse_task("message:" + "in " * 30_000 + ".")  # quadratic patterns read 4,096 chars
