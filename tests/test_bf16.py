"""bf16 where the device computes it natively (gui_gym.models.llm.precision): ``dtype="auto"``
picks it from the CPU's flags (``GUI_GYM_NATIVE_BF16`` overrides them here, so both paths run
on any machine), trainers autocast over fp32 weights, and the sampler's log-probs come from
the precision the trainer scores in: under bf16 they agree within :data:`BF16_TOLERANCE`
(docs/models.md), in fp32 within 1e-4."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from gui_gym.models.llm import precision
from tests.conftest import require

torch = require("torch", "llm")

#: Largest |sampler log-prob - scorer log-prob| allowed under bf16 for the tiny model here
#: (docs/models.md): the sampler's cached one-token decode steps and the scorer's whole-sequence
#: forward round differently in bf16 (8 bits of mantissa); it measured about 1e-3 (SmolLM2's
#: worst token, in benchmarks/bench_smollm2.py, 0.06-0.11).
BF16_TOLERANCE = 0.05


@pytest.fixture
def native(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GUI_GYM_NATIVE_BF16", "1")


@pytest.fixture
def emulated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GUI_GYM_NATIVE_BF16", "0")


def test_native_bf16_reads_the_cpu_flags_unless_overridden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GUI_GYM_NATIVE_BF16", raising=False)
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    if flags:
        first = next(line for line in flags.splitlines() if line.startswith("flags"))
        expected = "amx_bf16" in first.split() or "avx512_bf16" in first.split()
        assert precision.native_bf16() is expected
    monkeypatch.setenv("GUI_GYM_NATIVE_BF16", "1")
    assert precision.native_bf16() is True
    monkeypatch.setenv("GUI_GYM_NATIVE_BF16", "0")
    assert precision.native_bf16() is False


def test_auto_is_bf16_only_where_native(native: None, monkeypatch: pytest.MonkeyPatch) -> None:
    assert precision.resolve_dtype("auto", "cpu") == "bfloat16"
    assert precision.resolve_dtype("float32", "cpu") == "float32"
    monkeypatch.setenv("GUI_GYM_NATIVE_BF16", "0")
    assert precision.resolve_dtype("auto", "cpu") == "float32"
    with pytest.raises(ValueError, match="dtype must be one of auto, float32, bfloat16"):
        precision.resolve_dtype("float16", "cpu")


def test_bf16_on_a_cpu_without_it_warns_once_that_it_is_slow(
    emulated: None, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(precision, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="gui_gym.models.llm.precision"):
        assert precision.resolve_dtype("bfloat16", "cpu") == "bfloat16"
        precision.resolve_dtype("bfloat16", "cpu")
    warnings = [r for r in caplog.records if "slower than float32" in r.getMessage()]
    assert len(warnings) == 1 and "\n" not in warnings[0].getMessage()


def test_trainers_autocast_a_full_fine_tune_and_keep_a_lora_base_in_bf16(
    native: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gui_gym.train.config import TrainConfig
    from gui_gym.train.policy import _dtype, uses_autocast

    full = TrainConfig(model="m")
    lora = TrainConfig(model="m", lora=True)
    assert uses_autocast(full, "cpu") and _dtype("auto", "cpu") == torch.float32
    assert not uses_autocast(lora, "cpu") and _dtype("auto", "cpu", lora=True) == torch.bfloat16
    assert not uses_autocast(TrainConfig(model="m", dtype="float32"), "cpu")
    monkeypatch.setenv("GUI_GYM_NATIVE_BF16", "0")
    assert not uses_autocast(full, "cpu") and _dtype("auto", "cpu", lora=True) == torch.float32


def _sampled_and_scored(autocast: bool, score_autocast: bool, generation: str = "hf") -> float:
    """Max |sampler - scorer| log-prob over 8 sampled completions of a tiny GPT-2."""
    from gui_gym.models.llm import TransformersLLM
    from gui_gym.train.losses import TurnSample, score_completions
    from tests.tiny_llm import tiny_gpt2, tiny_tokenizer

    tokenizer = tiny_tokenizer()
    model = tiny_gpt2(len(tokenizer), seed=3)
    llm = TransformersLLM(model, tokenizer, device="cpu", autocast=autocast, generation=generation)
    torch.manual_seed(0)
    prompts = ["click the button", "open the app and search", "go back", "type the name"]
    rows = llm.generate_with_tokens(prompts, max_new_tokens=12, temperature=1.0, n=2)
    generations = [g for row in rows for g in row if g.completion_ids]
    turns = [
        TurnSample(
            prompt_ids=g.prompt_ids,
            completion_ids=g.completion_ids,
            advantages=[0.0] * len(g.completion_ids),
        )
        for g in generations
    ]
    with torch.no_grad(), precision.autocast("cpu", score_autocast):
        scored = score_completions(
            model, turns, pad_id=tokenizer.pad_token_id, temperature=1.0, device="cpu"
        )
    return max(
        float((s - torch.tensor(g.logprobs)).abs().max()) for s, g in zip(scored, generations)
    )


@pytest.mark.parametrize("generation", ["hf", "static"])
def test_sampler_and_scorer_log_probs_agree_in_each_precision(generation: str) -> None:
    assert _sampled_and_scored(False, False, generation) < 1e-4
    assert _sampled_and_scored(True, True, generation) < BF16_TOLERANCE


@pytest.mark.timeout(300)
def test_a_grpo_update_under_bf16_samples_in_the_precision_it_scores_in(
    native: None, tmp_path: Path
) -> None:
    from gui_gym.train import grpo
    from gui_gym.train.config import TrainConfig
    from gui_gym.train.trainer import Trainer
    from tests.rl_helpers import TASK, make_env, one_step_prompt, policy_folder

    folder = policy_folder(tmp_path / "policy")
    algorithm = grpo.GRPO(make_env, [TASK], grpo.GRPOConfig(tasks_per_iteration=1))
    config = TrainConfig.for_algorithm(
        grpo.TRAIN_DEFAULTS,
        model=str(folder),
        out=str(tmp_path / "run"),
        iterations=1,
        max_new_tokens=3,
        device="cpu",
        progress=False,
        micro_batch_turns=4,
        mini_batch_turns=8,
    )
    trainer = Trainer(config, algorithm, prompt=one_step_prompt)
    assert trainer.agent.llm.autocast is True
    assert next(trainer.policy.model.parameters()).dtype == torch.float32  # master weights
    groups = algorithm.collect(trainer, 0)
    turns = algorithm.advantages(trainer, groups, 0)
    stats = trainer.update(turns)
    assert stats["logprob_drift"] < BF16_TOLERANCE
