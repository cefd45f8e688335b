"""train.sft and ``gui-gym sft``: a tiny model fine-tuned on oracle trajectories of a few
WikiHow train tasks succeeds on them where it failed before; exact resume; the prompt it
trains on is the one the agent builds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gui_gym.agents import LLMAgent
from gui_gym.cli import app
from gui_gym.models.llm import ScriptedLLM
from gui_gym.runs.record import record_dataset
from tests.conftest import require
from tests.tiny_llm import bpe_tokenizer, small_gpt2

ENV = "GuiGym/WikiHow-v0"


def _short_train_tasks(count: int = 3, steps: int = 3) -> list[str]:
    """The first ``count`` train tasks (in split order) the oracle solves in
    exactly ``steps`` steps: a handful of tasks a 32-dim model can learn on CPU in seconds."""
    import gymnasium as gym

    from gui_gym.agents import OracleAgent, run_episode

    env = gym.make(ENV, split="train")
    chosen = []
    for k, task in enumerate(t.task_id for t in env.unwrapped._pool):
        trajectory = run_episode(env, OracleAgent(env), seed=k, options={"task": task})
        if trajectory.success and len(trajectory.steps) == steps:
            chosen.append(task)
        if len(chosen) == count:
            break
    env.close()
    return chosen


TASKS = _short_train_tasks()


@pytest.fixture(scope="module")
def expert(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Oracle trajectories of three train tasks, and a tiny untrained model whose tokenizer
    was fitted on their prompts (no download)."""
    require("transformers", "llm")
    import torch

    from gui_gym.envs.replay.dataset import ExpertDataset
    from gui_gym.train.sft import build_examples

    torch.set_num_threads(1)  # a 32-dim model: threads only add overhead
    root = tmp_path_factory.mktemp("sft")
    record_dataset(
        ENV,
        "oracle",
        episodes=len(TASKS),
        out=root / "data",
        env_kwargs={"split": "train"},
        tasks=TASKS,
        progress=False,
    )
    examples = build_examples(
        ExpertDataset.load(root / "data").trajectories, LLMAgent(ScriptedLLM(lambda t: ""))
    )
    texts = [m["content"] for e in examples for m in e.prompt] + [e.completion for e in examples]
    tokenizer = bpe_tokenizer(texts)
    small_gpt2(len(tokenizer)).save_pretrained(root / "base")
    tokenizer.save_pretrained(root / "base")
    return {"root": root, "data": root / "data", "base": root / "base"}


@pytest.mark.slow
def test_sft_on_oracle_trajectories_raises_success(expert: dict[str, Path]) -> None:
    runner = CliRunner()
    root = expert["root"]
    before = _eval_on(runner, expert["base"], root / "before.json")
    result = runner.invoke(
        app,
        [
            "sft", "--dataset", str(expert["data"]), "--model", str(expert["base"]),
            "--out", str(root / "sft"), "--epochs", "80", "--lr", "1e-2",
            "--batch-size", "8", "--eval-fraction", "0", "--no-progress",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "model written to" in result.output
    report = json.loads((root / "sft" / "sft_report.json").read_text())
    assert report["losses"][-1] < 0.1 * report["losses"][0]
    after = _eval_on(runner, root / "sft", root / "after.json")
    assert before == 0.0
    assert after >= 2 / 3, f"success before SFT {before:.0%}, after {after:.0%}"


def _eval_on(runner: CliRunner, model: Path, out: Path) -> float:
    """``gui-gym eval --agent llm`` on exactly the recorded tasks (one env per task id,
    episode seeds as recorded)."""
    rates = []
    for k, task in enumerate(TASKS):
        result = runner.invoke(
            app,
            [
                "eval", ENV, "--agent", "llm", "--model", str(model), "--split", "train",
                "--episodes", "1", "--seed", str(k), "--max-new-tokens", "20",
                "--env-arg", f"task={task}", "--env-arg", "max_steps=4",
                "--out", str(out.with_suffix(f".{k}.json")), "--no-progress",
            ],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        rates.append(
            json.loads(out.with_suffix(f".{k}.json").read_text())["summary"]["success_rate"]
        )
    return sum(rates) / len(rates)


def test_sft_resumes_exactly_after_an_interruption(
    expert: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import torch
    from safetensors.torch import load_file

    from gui_gym.train import sft

    config = sft.SFTConfig(
        epochs=2, lr=1e-3, batch_size=3, eval_fraction=0.0, checkpoint_every=1, seed=1
    )
    sft.train_sft(expert["data"], expert["base"], tmp_path / "full", config, progress=False)

    saves = {"n": 0}
    original = sft._save_checkpoint

    def crash_after_two(*args: Any, **kwargs: Any) -> None:
        original(*args, **kwargs)
        saves["n"] += 1
        if saves["n"] == 2:
            raise KeyboardInterrupt  # killed mid-run, just after a checkpoint

    monkeypatch.setattr(sft, "_save_checkpoint", crash_after_two)
    with pytest.raises(KeyboardInterrupt):
        sft.train_sft(expert["data"], expert["base"], tmp_path / "cut", config, progress=False)
    monkeypatch.setattr(sft, "_save_checkpoint", original)
    report = sft.train_sft(expert["data"], expert["base"], tmp_path / "cut", config, progress=False)
    assert report.resumed_from_step == 2
    full = load_file(str(tmp_path / "full" / "model.safetensors"))
    cut = load_file(str(tmp_path / "cut" / "model.safetensors"))
    assert full.keys() == cut.keys()
    assert all(torch.equal(full[k], cut[k]) for k in full)
    changed = load_file(str(expert["base"] / "model.safetensors"))
    assert any(not torch.equal(full[k], changed[k]) for k in full if k in changed)
    other = sft.SFTConfig(epochs=2, lr=2e-3, batch_size=3, eval_fraction=0.0, seed=1)
    with pytest.raises(ValueError, match=r"other settings \(lr: 0.001 -> 0.002\)"):
        sft.train_sft(expert["data"], expert["base"], tmp_path / "cut", other, progress=False)
    # the epoch count may change: a finished 2-epoch run cannot become a 1-epoch one...
    shorter = sft.SFTConfig(epochs=1, lr=1e-3, batch_size=3, eval_fraction=0.0, seed=1)
    with pytest.raises(ValueError, match="past the end of a 1-epoch run"):
        sft.train_sft(expert["data"], expert["base"], tmp_path / "cut", shorter, progress=False)
    # ...but it continues for a third epoch, from where it stopped
    longer = sft.SFTConfig(epochs=3, lr=1e-3, batch_size=3, eval_fraction=0.0, seed=1)
    more = sft.train_sft(expert["data"], expert["base"], tmp_path / "cut", longer, progress=False)
    assert more.resumed_from_step == report.optimizer_steps
    assert more.optimizer_steps == report.optimizer_steps * 3 // 2


def test_sft_examples_are_the_agents_own_prompts(expert: dict[str, Path]) -> None:
    import gymnasium as gym

    from gui_gym.agents.base import run_episode
    from gui_gym.envs.replay.dataset import ExpertDataset
    from gui_gym.train.sft import build_examples

    [trajectory] = [
        t for t in ExpertDataset.load(expert["data"]).trajectories if t.task_id == TASKS[1]
    ]
    examples = build_examples([trajectory], LLMAgent(ScriptedLLM(lambda t: "")))
    # replay the expert's actions through LLMAgent and compare what it is shown
    actions = iter([e.action for e in examples])
    seen: list[Any] = []

    def reply(text: str) -> str:
        return f"<action>{next(actions)}</action>"

    agent = LLMAgent(ScriptedLLM(reply))
    original = agent.act_batch

    def spy(observations: Any, infos: Any, histories: Any = None) -> Any:
        seen.extend(agent.build_prompt(o, i, h) for o, i, h in zip(observations, infos, histories))
        return original(observations, infos, histories)

    agent.act_batch = spy  # type: ignore[method-assign]
    env = gym.make(ENV, split="train")
    run_episode(env, agent, seed=1, options={"task": TASKS[1]})
    assert seen == [e.prompt for e in examples]
    assert examples[0].completion == f"<action>{examples[0].action}</action>"


def test_sft_cli_errors_are_one_line(tmp_path: Path, expert: dict[str, Path]) -> None:
    runner = CliRunner()
    cases = [
        (["--dataset", str(tmp_path / "none"), "--model", str(expert["base"])], "no such folder"),
        (["--dataset", str(expert["data"]), "--model", str(tmp_path)], "no config.json"),
        (
            ["--dataset", str(expert["data"]), "--model", str(expert["base"]), "--prompt", "x"],
            "unknown prompt 'x'",
        ),
        (
            ["--dataset", str(expert["data"]), "--model", str(expert["base"]), "--epochs", "0"],
            "epochs must be",
        ),
    ]
    for args, message in cases:
        result = runner.invoke(app, ["sft", *args, "--out", str(tmp_path / "o")])
        assert result.exit_code == 2, result.output
        assert message in result.output and "Traceback" not in result.output


def test_sft_checkpoints_in_the_rl_trainers_format(expert: dict[str, Path], tmp_path: Path) -> None:
    from gui_gym.train import sft
    from gui_gym.train.checkpoint import CHECKPOINT_FILES, read_checkpoint

    config = sft.SFTConfig(epochs=1, lr=1e-3, batch_size=4, eval_fraction=0.0, seed=1)
    sft.train_sft(expert["data"], expert["base"], tmp_path / "run", config, progress=False)
    folder = tmp_path / "run" / "checkpoint"
    assert sorted(p.name for p in folder.iterdir()) == sorted(CHECKPOINT_FILES)
    state, weights, rng = read_checkpoint(folder)
    assert state["algorithm"] == "sft" and state["epoch"] == 1 and not state["lora"]
    assert weights and all(name.startswith("policy.") for name in weights)
    assert "torch_cpu" in rng
    # a checkpoint of another trainer, or of the format SFT wrote before, is refused by name
    state["algorithm"] = "grpo"
    (folder / "trainer_state.json").write_text(json.dumps(state))
    with pytest.raises(ValueError, match="is a 'grpo' checkpoint, not an SFT one"):
        sft.train_sft(expert["data"], expert["base"], tmp_path / "run", config, progress=False)
    (folder / "weights.safetensors").rename(folder / "trainable.safetensors")
    with pytest.raises(ValueError, match=r"has no weights\.safetensors"):
        sft.train_sft(expert["data"], expert["base"], tmp_path / "run", config, progress=False)


def test_sft_stops_on_a_non_finite_loss_naming_the_batch_and_keeps_its_checkpoint(
    expert: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # issue 33: SFT went on to "model written" with a NaN loss; now it stops as RL does
    import torch

    from gui_gym.train import sft
    from gui_gym.train.trainer import TrainingDiverged

    config = sft.SFTConfig(
        epochs=1, lr=1e-3, batch_size=3, eval_fraction=0.0, checkpoint_every=1, seed=1
    )
    original = torch.nn.functional.cross_entropy
    calls = {"n": 0}

    def nan_on_the_third(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        loss = original(*args, **kwargs)
        return loss * float("nan") if calls["n"] == 3 else loss

    monkeypatch.setattr(torch.nn.functional, "cross_entropy", nan_on_the_third)
    out = tmp_path / "run"
    with pytest.raises(TrainingDiverged, match=r"^epoch 0 batch 2: the loss went non-finite"):
        sft.train_sft(expert["data"], expert["base"], out, config, progress=False)
    state = json.loads((out / "checkpoint" / "trainer_state.json").read_text())
    assert state["optimizer_steps"] == 2 and not (out / "model.safetensors").exists()


def test_sft_refuses_a_checkpoint_whose_epoch_is_past_the_run(
    expert: dict[str, Path], tmp_path: Path
) -> None:
    from gui_gym.train import sft

    config = sft.SFTConfig(
        epochs=1, lr=1e-3, batch_size=3, eval_fraction=0.0, checkpoint_every=1, seed=1
    )
    out = tmp_path / "run"
    sft.train_sft(expert["data"], expert["base"], out, config, progress=False)
    file = out / "checkpoint" / "trainer_state.json"
    state = json.loads(file.read_text())
    file.write_text(json.dumps({**state, "epoch": 10**6}))  # accepted before: "model written"
    with pytest.raises(ValueError, match=r"trainer_state.json: field 'epoch' is 1000000, past"):
        sft.train_sft(expert["data"], expert["base"], out, config, progress=False)


def test_library_sft_takes_the_output_lock(expert: dict[str, Path], tmp_path: Path) -> None:
    # issue 33: library calls that write outputs lock them as the CLI does
    from gui_gym.core.files import OutputInUseError
    from gui_gym.train import sft
    from tests.test_hardening_outputs import _holder, _release

    out = tmp_path / "run"
    holder = _holder(out)
    try:
        config = sft.SFTConfig(epochs=1, lr=1e-3, batch_size=3, eval_fraction=0.0, seed=1)
        with pytest.raises(OutputInUseError, match=rf"PID {holder.pid}"):
            sft.train_sft(expert["data"], expert["base"], out, config, progress=False)
    finally:
        _release(holder)
    assert not out.exists()  # the refused run wrote nothing
