"""Progress models (ProgRM Sec. 2.3): the rule-based MilestoneProgress, and a tiny
transformers backbone + MLP + sigmoid built from a config, trained with BCE, checkpointed in
safetensors and resumed exactly. No downloads: tokenizers are built here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gui_gym.core.trajectory import Step, Trajectory
from gui_gym.models.progress import (
    MilestoneProgress,
    ProgressModel,
    ProgressQuery,
    format_state,
    trajectory_queries,
)
from gui_gym.rewards.progress import StepLabel, TrajectoryLabels
from gui_gym.train.progress_model import (
    ProgressExample,
    evaluate_mae,
    orm_examples,
    progress_examples,
)
from tests.conftest import require


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Tiny models train far faster on one thread than on two contended ones."""
    try:
        import torch
    except ImportError:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ----------------------------------------------------------------------- data plumbing


def episode(success: bool = True) -> Trajectory:
    steps = [
        Step(0, "home", 'INPUT(0, "bake")', action_description='type "bake"', milestones=["q"]),
        Step(1, "results", "CLICK(3)", action_description='click "Bake" link', milestones=["q"]),
        Step(2, "article", "SCROLL(down)", action_description="scroll down", milestones=["q", "a"]),
    ]
    return Trajectory("env", "bake", "Bake it", steps, final_screen="refs", success=success)


def test_queries_are_states_after_each_step() -> None:
    queries = trajectory_queries(episode())
    assert [q.screen for q in queries] == ["home", "results", "article", "refs"]
    assert queries[0].actions == ()
    assert queries[2].actions == ('type "bake"', 'click "Bake" link')
    assert queries[3].milestones == ("q", "a")
    text = format_state(queries[2])
    assert text.index("Bake it") < text.index('2. click "Bake" link') < text.index("article")


def test_progress_examples_pair_states_with_labels() -> None:
    labels = TrajectoryLabels(
        "bake",
        "env",
        [StepLabel(0.5, True, "k"), StepLabel(0.5, False, "i"), StepLabel(1.0, True, "k")],
    )
    examples = progress_examples([episode()], [labels])
    assert [e.target for e in examples] == [0.0, 0.5, 0.5, 1.0]
    assert [e.step for e in examples] == [-1, 0, 1, 2]
    assert examples[3].query.screen == "refs" and examples[3].key
    assert len(progress_examples([episode()], [labels], include_initial=False)) == 3
    with pytest.raises(ValueError, match="labels"):
        progress_examples([episode()], [TrajectoryLabels("bake", "env", [])])
    with pytest.raises(ValueError, match="label sets"):
        progress_examples([episode()], [])


def test_orm_examples_are_final_states_with_the_outcome() -> None:
    examples = orm_examples([episode(True), episode(False)])
    assert [e.target for e in examples] == [1.0, 0.0]
    assert all(e.query.screen == "refs" and len(e.query.actions) == 3 for e in examples)


# ---------------------------------------------------------------------- rule-based


def test_milestone_progress_is_the_fraction_reached() -> None:
    model = MilestoneProgress({"bake": 4})
    assert isinstance(model, ProgressModel)
    queries = trajectory_queries(episode())
    assert model.predict(queries) == pytest.approx([0.0, 0.25, 0.25, 0.5])
    own_total = ProgressQuery("g", (), "s", "other", ("a", "b"), milestone_total=2)
    assert model.predict([own_total]) == [1.0]
    assert evaluate_mae(model, [ProgressExample(queries[3], 0.75, True)]) == pytest.approx(0.25)


def test_milestone_progress_needs_a_total() -> None:
    with pytest.raises(ValueError, match="does not know"):
        MilestoneProgress().predict([ProgressQuery("g", (), "s", "nope")])
    with pytest.raises(ValueError, match=">= 1"):
        MilestoneProgress({"t": 0})


def test_milestone_totals_from_the_wikihow_suite() -> None:
    model = MilestoneProgress.from_env_id("GuiGym/WikiHow-v0")
    assert len(model.totals) == 577
    assert set(model.totals.values()) <= {3, 4, 5, 6}


# ---------------------------------------------------------------------------- learned


def word_tokenizer(texts: list[str]):
    """A word-level tokenizer built right here (tokenizers + PreTrainedTokenizerFast)."""
    tokenizers = require("tokenizers", "llm")
    transformers = require("transformers", "llm")
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    tok.normalizer = tokenizers.normalizers.Lowercase()
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    trainer = tokenizers.trainers.WordLevelTrainer(special_tokens=["[PAD]", "[UNK]", "[EOS]"])
    tok.train_from_iterator(texts, trainer=trainer)
    tok.post_processor = tokenizers.processors.TemplateProcessing(
        single="$A [EOS]", special_tokens=[("[EOS]", tok.token_to_id("[EOS]"))]
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]"
    )


SCREENS = {"home": 0.0, "results": 0.3, "article": 0.7, "references": 1.0}


def toy_examples(n: int = 48) -> list[ProgressExample]:
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        screen = list(SCREENS)[i % 4]
        noise = " ".join(rng.choice(["tips", "warnings", "steps", "views"], size=3))
        query = ProgressQuery("learn to bake bread", (), f"{screen} page {noise}", "bake")
        out.append(ProgressExample(query, SCREENS[screen], i % 2 == 0))
    return out


def tiny_model(examples: list[ProgressExample], kind: str = "gpt2", pooling: str = "last"):
    torch = require("torch", "llm")
    from gui_gym.models.progress import ProgRM, tiny_backbone_config

    tokenizer = word_tokenizer([format_state(e.query) for e in examples])
    torch.manual_seed(0)
    config = tiny_backbone_config(len(tokenizer), kind=kind, hidden=32, layers=1, heads=2)
    return ProgRM.from_config(config, tokenizer, max_length=64, pooling=pooling, device="cpu")


def test_tiny_backbone_trains_and_lowers_its_loss() -> None:
    from gui_gym.train.progress_model import ProgressTrainConfig, ProgressTrainer

    examples = toy_examples()
    model = tiny_model(examples)
    trainer = ProgressTrainer(
        model, examples, ProgressTrainConfig(epochs=8, batch_size=8, lr=3e-3), progress=False
    )
    before = trainer.evaluate(examples)
    result = trainer.train()
    after = trainer.evaluate(examples)
    assert after["loss"] < before["loss"] - 0.05
    assert after["mae"] < before["mae"]
    assert result.epochs[-1]["train_loss"] < result.epochs[0]["train_loss"]
    assert result.global_step == 8 * 6
    values = model.predict([e.query for e in examples[:4]])
    assert values.shape == (4,) and np.all((values >= 0) & (values <= 1))
    assert values[3] > values[0]  # references page beats home page


def test_bert_backbone_with_mean_pooling_also_works() -> None:
    examples = toy_examples(8)
    model = tiny_model(examples, kind="bert", pooling="mean")
    values = model.predict([e.query for e in examples])
    assert values.shape == (8,) and np.all((values > 0) & (values < 1))


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    from gui_gym.models.progress import ProgRM

    examples = toy_examples(8)
    model = tiny_model(examples)
    path = model.save(tmp_path / "model")
    assert (path / "model.safetensors").is_file()
    assert not list(tmp_path.glob(".*tmp"))  # no temporary folder left behind
    back = ProgRM.load(path, device="cpu")
    queries = [e.query for e in examples]
    assert np.allclose(back.predict(queries), model.predict(queries))
    assert back.kind == "progrm" and back.max_length == 64
    model.save(path)  # replacing an existing model works
    with pytest.raises(FileNotFoundError, match="no progress model"):
        ProgRM.load(tmp_path)


def parameters(model) -> list[np.ndarray]:
    return [p.detach().cpu().numpy().copy() for p in model.network.parameters()]


def test_resume_continues_exactly(tmp_path: Path) -> None:
    from gui_gym.train.progress_model import ProgressTrainConfig, ProgressTrainer

    examples = toy_examples(24)
    config = ProgressTrainConfig(
        epochs=2, batch_size=8, lr=3e-3, checkpoint_every=2, keep_checkpoints=10
    )
    straight = tiny_model(examples)
    ProgressTrainer(straight, examples, config, progress=False).train()

    interrupted = tiny_model(examples)
    first = ProgressTrainer(
        interrupted, examples, config, checkpoint_dir=tmp_path / "ck", progress=False
    )
    first.train()
    assert (tmp_path / "ck" / "latest").read_text().strip() == "step-00000006"
    # Start again from the checkpoint written mid-way through the first epoch.
    resumed = tiny_model(examples)
    second = ProgressTrainer(resumed, examples, config, progress=False)
    second.load_checkpoint(tmp_path / "ck" / "step-00000002")
    assert (second.epoch, second.batch_in_epoch, second.global_step) == (0, 2, 2)
    result = second.train()
    assert result.global_step == 6
    for a, b in zip(parameters(straight), parameters(resumed)):
        assert np.allclose(a, b, atol=1e-6)


def test_resume_from_latest_checkpoint(tmp_path: Path) -> None:
    from gui_gym.train.progress_model import ProgressTrainConfig, ProgressTrainer

    examples = toy_examples(16)
    model = tiny_model(examples)
    one = ProgressTrainConfig(epochs=1, batch_size=8)
    ProgressTrainer(model, examples, one, checkpoint_dir=tmp_path, progress=False).train()
    two = ProgressTrainConfig(epochs=2, batch_size=8)
    trainer = ProgressTrainer(
        tiny_model(examples), examples, two, checkpoint_dir=tmp_path, progress=False
    )
    result = trainer.train(resume=True)
    assert result.global_step == 4 and len(result.epochs) == 2
    assert len(list(tmp_path.glob("step-*"))) == 2  # keep_checkpoints
    with pytest.raises(ValueError, match="same data"):
        ProgressTrainer(tiny_model(examples), examples[:8], two, checkpoint_dir=tmp_path).train(
            resume=True
        )
    with pytest.raises(FileNotFoundError):
        ProgressTrainer(model, examples, two, checkpoint_dir=tmp_path / "none").train(resume=True)


def test_checkpoints_are_in_the_trainers_shared_format(tmp_path: Path) -> None:
    from gui_gym.train.checkpoint import CHECKPOINT_FILES, read_checkpoint
    from gui_gym.train.progress_model import ProgressTrainConfig, ProgressTrainer

    examples = toy_examples(16)
    config = ProgressTrainConfig(epochs=1, batch_size=8)
    ProgressTrainer(tiny_model(examples), examples, config, checkpoint_dir=tmp_path).train()
    folder = tmp_path / "step-00000002"
    assert sorted(p.name for p in folder.iterdir()) == sorted(CHECKPOINT_FILES)
    state, weights, rng = read_checkpoint(folder)
    assert state["algorithm"] == "progress_model" and state["global_step"] == 2
    assert all(name.startswith("progress.") for name in weights) and "torch_cpu" in rng


def test_a_checkpoint_of_the_previous_format_is_refused_by_name(tmp_path: Path) -> None:
    from gui_gym.models.progress import ProgRM
    from gui_gym.train.progress_model import ProgressTrainConfig, ProgressTrainer

    examples = toy_examples(16)
    model = tiny_model(examples)
    # The previous trainer wrote the model's own files plus trainer.json/.safetensors.
    old = model.save(tmp_path / "step-00000002")
    (old / "trainer.json").write_text('{"global_step": 2}')
    (old / "trainer.safetensors").write_bytes(b"")
    (tmp_path / "latest").write_text("step-00000002\n")
    trainer = ProgressTrainer(
        model, examples, ProgressTrainConfig(batch_size=8), checkpoint_dir=tmp_path
    )
    with pytest.raises(ValueError, match="previous format") as err:
        trainer.train(resume=True)
    assert str(old) in str(err.value) and "ProgRM.load" in str(err.value)
    with pytest.raises(ValueError, match="previous format"):
        trainer.load_checkpoint(old)
    assert ProgRM.load(old, device="cpu").kind == "progrm"  # the way out the message names


def test_fit_resumes_an_interrupted_run_exactly(tmp_path: Path) -> None:
    from gui_gym.rewards.progress import label_env
    from gui_gym.train.progress_model import ProgressTrainConfig, fit_progress_model

    pool = [episode(True), episode(False)]
    labels = label_env(pool, {"bake": 2})
    settings = {"hidden": 16, "layers": 1, "progress": False, "device": "cpu"}
    two = ProgressTrainConfig(epochs=2, batch_size=4)
    straight, _ = fit_progress_model(pool, labels, config=two, **settings)
    one = ProgressTrainConfig(epochs=1, batch_size=4)
    fit_progress_model(pool, labels, config=one, out=tmp_path, **settings)
    assert (tmp_path / "init" / "progress_model.json").is_file()
    resumed, result = fit_progress_model(
        pool, labels, config=two, out=tmp_path, resume=True, **settings
    )
    assert result.global_step == 4 and len(result.epochs) == 2
    for a, b in zip(parameters(straight), parameters(resumed)):
        assert np.array_equal(a, b)


def test_bad_settings_are_rejected() -> None:
    from gui_gym.models.progress import ProgRM
    from gui_gym.train.progress_model import ProgressTrainConfig, ProgressTrainer

    examples = toy_examples(4)
    model = tiny_model(examples)
    with pytest.raises(ValueError, match="lr"):
        ProgressTrainConfig(lr=0.0)
    with pytest.raises(ValueError, match="epochs"):
        ProgressTrainConfig(epochs=-1)
    with pytest.raises(ValueError, match="no training examples"):
        ProgressTrainer(model, [])
    bad = [ProgressExample(examples[0].query, 1.5, True)]
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ProgressTrainer(model, bad)
    with pytest.raises(ValueError, match="pooling"):
        ProgRM(model.network.backbone, model.tokenizer, pooling="max")
    with pytest.raises(ValueError, match="kind"):
        ProgRM(model.network.backbone, model.tokenizer, kind="prm")


def test_fit_builds_trains_and_saves_progrm_and_orm(tmp_path: Path) -> None:
    require("torch", "llm")
    from gui_gym.models.progress import ProgRM
    from gui_gym.rewards.progress import label_env
    from gui_gym.train.progress_model import ProgressTrainConfig, fit_progress_model

    pool = [episode(True), episode(False)]
    labels = label_env(pool, {"bake": 2})
    config = ProgressTrainConfig(epochs=1, batch_size=4)
    model, result = fit_progress_model(
        pool, labels, config=config, out=tmp_path / "p", hidden=16, layers=1, progress=False
    )
    assert result.global_step == 2  # 8 states balanced 1:1 = 8, batch 4
    assert ProgRM.load(tmp_path / "p" / "model").kind == "progrm"
    orm, _ = fit_progress_model(
        pool, kind="orm", config=config, hidden=16, layers=1, progress=False
    )
    assert orm.kind == "orm"
    with pytest.raises(ValueError, match="needs progress labels"):
        fit_progress_model(pool, None, kind="progrm")


def test_word_tokenizer_builder() -> None:
    require("tokenizers", "llm")
    from gui_gym.models.progress import build_word_tokenizer

    tok = build_word_tokenizer(["Click the Search button", "type pasta"], vocab_size=50)
    ids = tok(["click SEARCH"])["input_ids"][0]
    assert ids[-1] == tok.convert_tokens_to_ids("[EOS]")
    assert tok.convert_ids_to_tokens(ids[:2]) == ["click", "search"]
    with pytest.raises(ValueError, match="vocab_size"):
        build_word_tokenizer(["x"], vocab_size=2)
