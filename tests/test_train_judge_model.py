"""`--reward judge` with an LLM judge: ProRe's five components on a served or local model
(`--judge-model`, `--judge-url`), the stack's model not travelling to other processes, and
the CLI's one-line refusals."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from typer.testing import CliRunner

from tests.conftest import require

require("transformers", "llm")

import gui_gym  # noqa: E402,F401
from gui_gym.agents.base import run_episode  # noqa: E402
from gui_gym.agents.oracle import OracleAgent  # noqa: E402
from gui_gym.cli import app  # noqa: E402
from gui_gym.models.judge.llm import LLMEvaluator, LLMJudge, LLMReasoner  # noqa: E402
from gui_gym.models.llm import OpenAICompatLLM, TransformersLLM  # noqa: E402
from gui_gym.models.llm.stub_server import StubChatServer  # noqa: E402
from gui_gym.train.reward_stack import RewardStack  # noqa: E402
from tests.test_train_cli import TASK_ENV, first_task, word_policy  # noqa: E402

runner = CliRunner()

CLAIM = {"steps": [0], "reasoning": "the first screen", "claim": "the page was opened"}
REPLY = "\n".join(
    [
        "Analysis: the goal is met.",
        "Goal: look at the final page",  # the reasoner's plan
        '<action>ANSWER("seen")</action>',  # the evaluator's probe action
        json.dumps(  # the extractor's claims (either source) and the filter's decisions
            {
                "policy_claims": [CLAIM],
                "evaluator_claims": [CLAIM],
                "decisions": [{"claim": 0, "keep": True, "reason": "true"}],
            }
        ),
        "Status: success",  # the judge's verdict
    ]
)
"""One reply every ProRe component parses (each reads its own part), so a stub server can
stand in for a served judge model."""


def _pipeline(env: gym.Env) -> Any:
    """The ProRe pipeline of the stack's judge wrapper."""
    from gui_gym.wrappers import ProbingJudgeWrapper

    while not isinstance(env, ProbingJudgeWrapper):
        env = env.env  # type: ignore[attr-defined]
    return env.pipeline


@pytest.mark.parametrize(("verdict", "reward"), [("success", 1.0), ("failure", 0.0)])
def test_a_served_judge_model_runs_prores_components_and_its_verdict_is_the_reward(
    verdict: str, reward: float
) -> None:
    # the oracle succeeds every time: only the served model's verdict sets the reward
    server = StubChatServer(latency=0.0, reply=REPLY.replace("success", verdict))
    with server.running() as url:
        stack = RewardStack.from_text("judge", judge_model="judge-7b", judge_url=url)
        env = stack.wrap(gym.make(TASK_ENV, split="train", max_steps=8))
        pipeline = _pipeline(env)
        judge, reasoner = pipeline.judge, pipeline.reasoner
        assert isinstance(judge, LLMJudge) and isinstance(reasoner, LLMReasoner)
        assert isinstance(pipeline.evaluator, LLMEvaluator)
        assert isinstance(judge.llm, OpenAICompatLLM) and judge.llm.model == "judge-7b"
        trajectory = run_episode(env, OracleAgent(env), seed=0)
        env.close()
    final = trajectory.steps[-1].info
    assert server.requests > 0  # the components asked the served model
    assert trajectory.success and final["judge"]["verdict"] == verdict
    assert trajectory.steps[-1].reward == reward


def test_a_local_judge_model_is_one_model_per_stack_left_behind_when_pickled(
    tmp_path: Path,
) -> None:
    folder = word_policy(tmp_path / "judge")
    stack = RewardStack.from_text("judge", judge_model=folder)
    first = stack.wrap(gym.make(TASK_ENV, split="train", max_steps=3))
    second = stack.wrap(gym.make(TASK_ENV, split="train", max_steps=3))
    llm = _pipeline(first).judge.llm
    assert isinstance(llm, TransformersLLM)
    assert _pipeline(second).judge.llm is llm  # loaded once, shared by the stack's envs
    copy = pickle.loads(pickle.dumps(stack))  # what a process pool sends: settings, no model
    assert copy._shared == {} and copy.judge_model == folder
    # a tiny random model's answers are garbage: a documented invalid verdict, reward 0
    trajectory = run_episode(first, OracleAgent(first), seed=0)
    assert trajectory.steps[-1].info["judge"]["verdict"] in ("invalid", "failure")
    assert trajectory.steps[-1].reward == 0.0
    first.close()
    second.close()


def test_judge_model_settings_that_cannot_work_are_refused() -> None:
    with pytest.raises(ValueError, match="no 'judge' term"):
        RewardStack.from_text("outcome", judge_model="x")
    with pytest.raises(ValueError, match="judge_url needs judge_model"):
        RewardStack.from_text("judge", judge_url="http://localhost:1/v1")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--judge-model", "m"], "--judge-model is for the judge reward: add judge to --reward"),
        (["--reward", "judge", "--judge-url", "http://h:1/v1"], "--judge-url needs --judge-model"),
        (["--reward", "judge", "--judge-model", "m", "--judge-url", "h:1"], "must be an http(s)"),
        (
            ["--reward", "judge", "--judge-model", "nowhere"],
            "--judge-model nowhere: no such folder or file, and not a model name",
        ),
    ],
)
def test_train_cli_judge_flag_mistakes_are_one_line(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    model = word_policy(tmp_path / "policy")
    args = ["train", "--algo", "grpo", "--env", TASK_ENV, "--model", str(model)]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "run"), *extra])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "run" / "metrics.jsonl").exists()


def test_train_cli_trains_with_a_served_judge(tmp_path: Path) -> None:
    model = word_policy(tmp_path / "policy")
    server = StubChatServer(latency=0.0, reply=REPLY)
    with server.running() as url:
        result = runner.invoke(
            app,
            [
                "train",
                "--algo",
                "grpo",
                "--env",
                TASK_ENV,
                "--model",
                str(model),
                "--reward",
                "judge",
                "--judge-model",
                "judge-7b",
                "--judge-url",
                url,
                "--out",
                str(tmp_path / "run"),
                "--task",
                first_task(),
                "--env-arg",
                "max_steps=2",
                "--no-progress",
                "--set",
                "iterations=1",
                "--set",
                "group_size=2",
                "--set",
                "tasks_per_iteration=1",
                "--set",
                "max_new_tokens=4",
                "--set",
                "device=cpu",
            ],
        )
    assert result.exit_code == 0, result.output
    assert server.requests > 0
    assert (tmp_path / "run" / "metrics.jsonl").exists()
