"""`gui-gym train` end to end on WikiHow with a tiny model, and ADMIRE's once-per-batch
milestone refinement (every trajectory of a batch scored with one milestone version)."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest
from typer.testing import CliRunner

from tests.conftest import require

torch = require("torch", "llm")
torch.set_num_threads(1)

from gui_gym.cli import app  # noqa: E402
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine  # noqa: E402
from gui_gym.train.reward_stack import RewardStack, admire_step_rewards  # noqa: E402

runner = CliRunner()
TASK_ENV = "GuiGym/WikiHow-v0"


def word_policy(path: Path) -> Path:
    """A tiny GPT-2 over the word tokenizer, long enough for WikiHow screens."""
    from transformers import GPT2Config, GPT2LMHeadModel

    from tests.tiny_llm import tiny_tokenizer

    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=4096,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=1,
        eos_token_id=1,
        pad_token_id=0,
    )
    GPT2LMHeadModel(config).save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


def first_task() -> str:
    import gui_gym  # noqa: F401

    env = gym.make(TASK_ENV, split="train")
    task = env.unwrapped.task_ids[0]
    env.close()
    return task


@pytest.mark.slow
def test_train_cli_runs_and_resumes(tmp_path: Path) -> None:
    model = word_policy(tmp_path / "policy")
    out = tmp_path / "run"
    args = [
        "train",
        "--algo",
        "grpo",
        "--env",
        TASK_ENV,
        "--model",
        str(model),
        "--reward",
        "outcome+0.3*milestone",
        "--embedder",
        "hashing",
        "--out",
        str(out),
        "--task",
        first_task(),
        "--env-arg",
        "max_steps=2",
        "--no-progress",
        "--set",
        "group_size=2",
        "--set",
        "tasks_per_iteration=1",
        "--set",
        "max_new_tokens=4",
        "--set",
        "device=cpu",
        "--set",
        "save_every=1",
    ]
    first = runner.invoke(app, [*args, "--set", "iterations=1"])
    assert first.exit_code == 0, first.output
    second = runner.invoke(app, [*args, "--set", "iterations=2"])
    assert second.exit_code == 0, second.output
    assert "iterations 1..2" in second.output  # resumed, did not start over
    lines = (out / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["iteration"] for line in lines] == [0, 1]
    assert any((out / "model").glob("*.safetensors"))
    assert json.loads((out / "config.json").read_text())["loss_agg"] == "turn_mean"


def test_train_cli_bad_settings_are_one_line_errors(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["train", "--algo", "ppo", "--env", TASK_ENV, "--model", str(tmp_path), "--set", "clip=1"],
    )
    assert result.exit_code == 2
    assert "unknown setting(s) clip for ppo; allowed:" in result.output
    assert "Traceback" not in result.output


def test_milestones_are_refined_once_per_batch(tmp_path: Path) -> None:
    import gui_gym  # noqa: F401
    from gui_gym.agents.oracle import OracleAgent
    from gui_gym.agents.random_agent import RandomAgent

    task = first_task()
    stack = RewardStack.from_text(
        "outcome+milestone", embedder="hashing", milestone_store=tmp_path / "milestones.json"
    )

    def make_env() -> gym.Env:
        return stack.wrap(gym.make(TASK_ENV, task=task, max_steps=6))

    def oracle_or_random(env: gym.Env, seed: int) -> object:
        return OracleAgent(env) if seed < 2 else RandomAgent(env, seed=seed)

    engine = RolloutEngine(make_env, oracle_or_random, num_envs=3, info_keys=("milestone",))
    batch = engine.run([EpisodeSpec(task, seed) for seed in (0, 1, 2)])
    engine.close()
    assert [t.success for t in batch] == [True, True, False]
    # during the batch the milestones were fixed (none yet): no milestone credit
    assert all(t.steps[-1].info["milestone"]["K"] == 0 for t in batch)
    updates = stack.refine_milestones(make_env(), [batch], epoch=0)
    assert updates[task]["status"] == "initialized"
    version = updates[task]["version"]
    for trajectory in batch:
        scored = trajectory.steps[-1].info["milestone"]
        assert scored["version"] == version and scored["K"] > 0
        assert len(scored["episode_total_rewards"]) == len(trajectory.steps)
    # an oracle success hits every milestone: R_total(t) >= R_outcome = 1 on each step
    assert min(admire_step_rewards(batch[0])) >= 1.0
    assert max(admire_step_rewards(batch[2])) < 1.0


@pytest.mark.parametrize("algo", ["semi_online", "offline_grpo"])
def test_runner_builds_the_replay_algorithms(algo: str, tmp_path: Path) -> None:
    from gui_gym.envs.replay import SAMPLE_DATASET
    from gui_gym.train.runner import make_trainer
    from tests.rl_helpers import policy_folder

    sizes = (
        {"trajectories_per_iteration": 2, "group_size": 2, "max_resamples": 0}
        if algo == "semi_online"
        else {"states_per_iteration": 2, "group_size": 2}
    )
    trainer = make_trainer(
        algo,
        "GuiGym/SemiOnlineReplay-v0",
        model=policy_folder(tmp_path / "policy"),
        env_kwargs={"dataset": str(SAMPLE_DATASET)},
        settings={
            "out": str(tmp_path / "run"),
            "iterations": 1,
            "max_new_tokens": 2,
            "device": "cpu",
            "progress": False,
            **sizes,
        },
    )
    assert trainer.config.kl_coef == (1e-4 if algo == "semi_online" else 0.01)  # the papers'
    metrics = trainer.train()
    assert len(metrics) == 1 and metrics[0]["infra_errors"] == 0


def test_train_cli_passes_the_progress_history_length(tmp_path: Path, monkeypatch) -> None:
    """`--progress-k` reaches the trainer (ProgRM Table 4's k ablation from the CLI)."""
    import gui_gym.train.runner as train_runner

    seen: dict = {}

    def capture(*args, **kwargs):
        seen.update(kwargs)
        raise ValueError("captured")

    monkeypatch.setattr(train_runner, "make_trainer", capture)
    base = ["train", "--algo", "reinforce_pp", "--env", TASK_ENV, "--model", str(tmp_path)]
    result = runner.invoke(app, [*base, "--reward", "outcome+progress", "--progress-k", "3"])
    assert result.exit_code == 2 and "captured" in result.output
    assert seen["progress_k"] == 3 and seen["reward"] == "outcome+progress"
    default = runner.invoke(app, base)
    assert default.exit_code == 2 and seen["progress_k"] == 1
