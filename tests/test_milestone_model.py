"""Models by name where the train and agent APIs did not take them yet: ADMIRE's own milestone
generator in training (`--milestone-model`, `--milestone-url`: `LLMMilestoneGenerator` on a
local or served LLM, the LLM-free `TrajectoryMilestoneGenerator` by default) and
`make_llm_agent` on a registry name or a `.gguf` file."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest
from typer.testing import CliRunner

from tests.conftest import require

torch = require("torch", "llm")
require("transformers", "llm")
require("gguf", "llm")
torch.set_num_threads(1)

import gui_gym  # noqa: E402,F401
from gui_gym.agents.base import run_episode  # noqa: E402
from gui_gym.agents.oracle import OracleAgent  # noqa: E402
from gui_gym.cli import app  # noqa: E402
from gui_gym.models.llm import OpenAICompatLLM, TransformersLLM  # noqa: E402
from gui_gym.models.llm.local import LocalModel, ModelError  # noqa: E402
from gui_gym.models.llm.stub_server import StubChatServer  # noqa: E402
from gui_gym.models.milestones import (  # noqa: E402
    LLMMilestoneGenerator,
    TrajectoryMilestoneGenerator,
)
from gui_gym.rewards.milestone_store import MilestoneStore  # noqa: E402
from gui_gym.train.reward_stack import RewardStack  # noqa: E402
from tests.test_local_models import cache, packaged, tiny_gguf  # noqa: E402,F401 (fixtures)
from tests.test_train_cli import TASK_ENV, first_task, word_policy  # noqa: E402

runner = CliRunner()

MILESTONES = ["Open the <Entry> page", "Save the <Entry>"]
"""What the served milestone model answers (a JSON array, as ADMIRE's prompts ask)."""


def _generator(stack: RewardStack) -> object:
    generator, _matcher = stack._model("milestone", stack._milestone_models)
    return generator


def _oracle_success(stack: RewardStack, task: str) -> tuple[gym.Env, object]:
    """An env made by ``stack`` and one successful (expert) episode of ``task`` on it."""
    env = stack.wrap(gym.make(TASK_ENV, task=task, max_steps=8))
    trajectory = run_episode(env, OracleAgent(env), seed=0)
    assert trajectory.success
    return env, trajectory


def test_without_a_milestone_model_the_generator_is_the_llm_free_one(tmp_path: Path) -> None:
    stack = RewardStack.from_text(
        "outcome+milestone", embedder="hashing", milestone_store=tmp_path / "m.json"
    )
    assert isinstance(_generator(stack), TrajectoryMilestoneGenerator)


def test_make_trainer_with_a_local_milestone_model_refines_through_admires_generator(
    tmp_path: Path,
) -> None:
    from gui_gym.train.runner import make_trainer

    task = first_task()
    judge = word_policy(tmp_path / "writer")
    trainer = make_trainer(
        "grpo",
        TASK_ENV,
        model=word_policy(tmp_path / "policy"),
        reward="outcome+0.3*milestone",
        embedder="hashing",
        tasks=[task],
        milestone_model=judge,
        settings={"out": str(tmp_path / "run"), "device": "cpu", "progress": False},
    )
    stack = trainer.algorithm.make_env.args[2]  # make_env_factory's partial
    generator = _generator(stack)
    assert isinstance(generator, LLMMilestoneGenerator)
    assert isinstance(generator.llm, TransformersLLM)
    assert type(stack._milestone_models()[1]).__name__ == "CosineMatcher"  # matcher unchanged
    env, trajectory = _oracle_success(stack, task)
    generator.max_new_tokens = 16  # a random model's answer: short garbage is enough
    updates = stack.refine_milestones(env, [[trajectory]], epoch=0)
    env.close()
    # the tiny random model writes no JSON array: ADMIRE's generator refused it, the store is
    # untouched (the trajectory generator would have initialised the task's milestones)
    assert updates[task]["status"] == "rejected", updates
    assert "model_error" not in updates[task]  # the model answered; its answer did not parse
    assert MilestoneStore(tmp_path / "run" / "milestones.json").get(task) is None


def test_a_served_milestone_model_writes_the_milestones_of_a_success(tmp_path: Path) -> None:
    task = first_task()
    server = StubChatServer(latency=0.0, reply=json.dumps(MILESTONES))
    with server.running() as url:
        stack = RewardStack.from_text(
            "outcome+milestone",
            embedder="hashing",
            milestone_store=tmp_path / "m.json",
            milestone_model="milestones-7b",
            milestone_url=url,
        )
        generator = _generator(stack)
        assert isinstance(generator, LLMMilestoneGenerator)
        assert isinstance(generator.llm, OpenAICompatLLM) and generator.llm.model == "milestones-7b"
        env, trajectory = _oracle_success(stack, task)
        updates = stack.refine_milestones(env, [[trajectory]], epoch=0)
        env.close()
    assert server.requests == 1  # one initialisation prompt (Eq. 6)
    assert updates[task]["status"] == "initialized"
    record = MilestoneStore(tmp_path / "m.json").get(task)
    assert record is not None and list(record.milestones) == MILESTONES
    assert record.generator == "llm"


def test_milestone_model_settings_that_cannot_work_are_refused() -> None:
    with pytest.raises(ValueError, match="no 'milestone' term"):
        RewardStack.from_text("outcome", milestone_model="x")
    with pytest.raises(ValueError, match="milestone_url needs milestone_model"):
        RewardStack.from_text("outcome+milestone", milestone_url="http://localhost:1/v1")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--milestone-model", "m"],
            "--milestone-model is for the milestone reward: add milestone to --reward",
        ),
        (
            ["--reward", "outcome+milestone", "--milestone-url", "http://h:1/v1"],
            "--milestone-url needs --milestone-model",
        ),
        (
            ["--reward", "milestone", "--milestone-model", "m", "--milestone-url", "h:1"],
            "--milestone-url must be an http(s)",
        ),
        (
            ["--reward", "outcome+milestone", "--milestone-model", "nowhere"],
            "--milestone-model nowhere: no such folder or file, and not a model name; names:",
        ),
    ],
)
def test_train_cli_milestone_flag_mistakes_are_one_line(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    args = ["train", "--algo", "grpo", "--env", TASK_ENV, "--model", str(tmp_path)]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "run"), *extra])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert message in result.output and "Traceback" not in result.output


def test_train_cli_resolves_a_milestone_model_name_and_passes_a_served_one(
    cache: Path,  # noqa: F811
    packaged: LocalModel,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gui_gym.train.runner as train_runner

    seen: dict = {}

    def capture(*args: object, **kwargs: object) -> None:
        seen.clear()
        seen.update(kwargs)
        raise ValueError("captured")

    monkeypatch.setattr(train_runner, "make_trainer", capture)
    base = ["train", "--algo", "grpo", "--env", TASK_ENV, "--model", str(tmp_path)]
    result = runner.invoke(app, base)  # no --milestone-model: the LLM-free default
    assert result.exit_code == 2 and "captured" in result.output
    assert seen["milestone_model"] is None and seen["milestone_url"] is None
    named = [*base, "--reward", "outcome+milestone", "--milestone-model", packaged.name]
    result = runner.invoke(app, named)
    assert result.exit_code == 2 and "captured" in result.output, result.output
    assert seen["milestone_model"] == str(cache / packaged.name)  # converted, then its folder
    assert (cache / packaged.name / "config.json").is_file()
    served = ["--milestone-model", "qwen-7b", "--milestone-url", "http://localhost:1/v1"]
    result = runner.invoke(app, [*base, "--reward", "outcome+milestone", *served])
    assert result.exit_code == 2 and "captured" in result.output, result.output
    assert seen["milestone_model"] == "qwen-7b"
    assert seen["milestone_url"] == "http://localhost:1/v1"


def test_make_llm_agent_takes_a_registry_name(
    cache: Path,  # noqa: F811
    packaged: LocalModel,  # noqa: F811
) -> None:
    from gui_gym.agents.llm import LLMAgent
    from gui_gym.agents.named import make_llm_agent

    agent = make_llm_agent("llm", packaged.name, device="cpu")
    assert isinstance(agent, LLMAgent) and isinstance(agent.llm, TransformersLLM)
    assert (cache / packaged.name / "config.json").is_file()
    with pytest.raises(ModelError, match=r"--model nope: .*not a model name; names: ") as err:
        make_llm_agent("llm", "nope")
    assert "tiny-test" in str(err.value) and "\n" not in str(err.value)
