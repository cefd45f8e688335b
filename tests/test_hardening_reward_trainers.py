"""The PRM and progress-model trainers stop on non-finite numbers and refuse impossible
checkpoint counters, as the RL and SFT trainers do (issue 33 items 7-8, the reward-model
trainers): one line naming where, the last good checkpoint kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import require

torch = require("torch", "llm")
torch.set_num_threads(1)

from gui_gym.train.trainer import TrainingDiverged  # noqa: E402
from tests.test_progress_model import tiny_model, toy_examples  # noqa: E402


def _poison(model) -> None:
    with torch.no_grad():
        next(model.parameters()).fill_(float("nan"))


def _prm_and_steps():
    from gui_gym.models.prm import TransformersPRM
    from gui_gym.rewards.prm import LabelledStep, PRMQuery, PromptTemplate

    steps = [
        LabelledStep(
            PRMQuery(instruction="open the app", screen=f"screen {i}", action=f"CLICK({i % 3})"),
            i % 2,
            task_id=f"t{i % 4}",
            source="oracle" if i % 2 else "random_failed",
        )
        for i in range(16)
    ]
    template = PromptTemplate()
    texts = [template.render(s.query, " True", " False") for s in steps]
    prm = TransformersPRM.tiny(texts, vocab_size=400, n_positions=128, max_length=128, seed=0)
    return prm, steps


def test_prm_training_stops_on_a_non_finite_loss_keeping_the_checkpoint(tmp_path: Path) -> None:
    from gui_gym.train.prm import PRMTrainConfig, train_prm

    prm, steps = _prm_and_steps()
    config = PRMTrainConfig(epochs=2, batch_size=8, checkpoint_every=1, rationale_weight=0.0)
    train_prm(prm, steps, config=config, out_dir=tmp_path, progress=False, max_updates=1)
    state = json.loads((tmp_path / "checkpoint" / "trainer_state.json").read_text())
    _poison(prm.model)
    with pytest.raises(TrainingDiverged, match=r"^epoch 1 update 1: the loss went non-finite"):
        train_prm(prm, steps, config=config, out_dir=tmp_path, progress=False, resume=False)
    # the checkpoint of update 1 is the one kept
    kept = json.loads((tmp_path / "checkpoint" / "trainer_state.json").read_text())
    assert kept["updates"] == state["updates"] == 1


def test_prm_resume_refuses_counters_past_the_run(tmp_path: Path) -> None:
    from gui_gym.train.prm import PRMTrainConfig, train_prm

    prm, steps = _prm_and_steps()
    config = PRMTrainConfig(epochs=1, batch_size=8, checkpoint_every=1, rationale_weight=0.0)
    train_prm(prm, steps, config=config, out_dir=tmp_path, progress=False, max_updates=1)
    file = tmp_path / "checkpoint" / "trainer_state.json"
    data = json.loads(file.read_text())
    data["epoch"] = 10**6
    file.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"trainer_state.json: field 'epoch' is 1000000"):
        train_prm(prm, steps, config=config, out_dir=tmp_path, progress=False)


def test_progress_training_stops_on_a_non_finite_loss(tmp_path: Path) -> None:
    from gui_gym.train.progress_model import ProgressTrainConfig, ProgressTrainer

    examples = toy_examples(16)
    model = tiny_model(examples)
    _poison(model.network)
    trainer = ProgressTrainer(
        model, examples, ProgressTrainConfig(epochs=1, batch_size=8), checkpoint_dir=tmp_path
    )
    with pytest.raises(TrainingDiverged, match=r"^epoch 1 batch 1: the loss went non-finite"):
        trainer.train()


def test_progress_resume_refuses_counters_past_the_run(tmp_path: Path) -> None:
    from gui_gym.train.progress_model import ProgressTrainConfig, ProgressTrainer

    examples = toy_examples(16)
    config = ProgressTrainConfig(epochs=1, batch_size=8, checkpoint_every=1)
    ProgressTrainer(tiny_model(examples), examples, config, checkpoint_dir=tmp_path).train()
    latest = ProgressTrainer(
        tiny_model(examples), examples, config, checkpoint_dir=tmp_path
    ).latest_checkpoint()
    file = latest / "trainer_state.json"
    data = json.loads(file.read_text())
    data["batch_in_epoch"] = 999
    file.write_text(json.dumps(data))
    again = ProgressTrainer(tiny_model(examples), examples, config, checkpoint_dir=tmp_path)
    with pytest.raises(ValueError, match=r"field 'batch_in_epoch' is 999, past this run's 2"):
        again.train(resume=True)
