"""The static-KV-cache generation path (gui_gym.models.llm.fast_generate) against Hugging Face
``generate`` (TransformersLLM(generation="hf"), the reference): the same tokens at temperature 0
and the same log-probs to 1e-5, for one prompt and a ragged left-padded batch with rows ending
mid-batch; sampled log-probs equal to a rescoring forward pass; the compiled step; and the
fallbacks (a config the loop cannot reproduce, a compile that fails)."""

from __future__ import annotations

import logging

import pytest

from tests.conftest import require
from tests.tiny_llm import tiny_gpt2, tiny_tokenizer

PROMPTS = [
    "click the search button and open the article",
    "go",
    "open the app settings and type a note to the contact name",
]


@pytest.fixture(scope="module")
def parts():
    require("transformers", "llm")
    tok = tiny_tokenizer()
    return tiny_gpt2(len(tok), seed=3), tok


def _llm(parts, generation: str, **kwargs):
    from gui_gym.models.llm import TransformersLLM

    model, tok = parts
    return TransformersLLM(model, tok, device="cpu", generation=generation, **kwargs)


def _assert_same(reference, fast) -> None:
    assert len(reference) == len(fast)
    for ref_row, fast_row in zip(reference, fast, strict=True):
        for ref, got in zip(ref_row, fast_row, strict=True):
            assert got.prompt_ids == ref.prompt_ids
            assert got.completion_ids == ref.completion_ids
            assert got.finish_reason == ref.finish_reason
            assert got.text == ref.text
            assert got.logprobs == pytest.approx(ref.logprobs, abs=1e-5)


def _rescored(model, generation, temperature: float) -> list[float]:
    import torch

    ids = torch.tensor([generation.prompt_ids + generation.completion_ids])
    with torch.no_grad():
        logits = model(ids).logits[0].float() / temperature
    scores = torch.log_softmax(logits, -1)
    p = len(generation.prompt_ids)
    return [scores[p - 1 + k, t].item() for k, t in enumerate(generation.completion_ids)]


@pytest.mark.parametrize("prompts", [PROMPTS[:1], PROMPTS], ids=["batch1", "ragged3"])
def test_static_path_equals_generate_token_for_token_at_temperature_0(parts, prompts) -> None:
    hf, fast = _llm(parts, "hf"), _llm(parts, "static")
    assert fast.generation_path() == "static"
    reference = hf.generate_with_tokens(prompts, max_new_tokens=24, temperature=0.0, n=2)
    got = fast.generate_with_tokens(prompts, max_new_tokens=24, temperature=0.0, n=2)
    assert all(len(g.completion_ids) == 24 for row in reference for g in row)
    _assert_same(reference, got)


def test_rows_ending_mid_batch_stop_where_generate_stops_them(parts) -> None:
    """An extra end id (as a generation config's eos list gives) that one row's greedy
    completion reaches at step 3: that row stops there, the others run on, on both paths."""
    model, _ = parts
    hf = _llm(parts, "hf")
    free = hf.generate_with_tokens(PROMPTS, max_new_tokens=12, temperature=0.0)
    stop_at = free[1][0].completion_ids[3]
    config = model.generation_config
    saved = config.eos_token_id
    config.eos_token_id = [saved, stop_at]
    try:
        reference = hf.generate_with_tokens(PROMPTS, max_new_tokens=12, temperature=0.0)
        got = _llm(parts, "static").generate_with_tokens(PROMPTS, max_new_tokens=12)
    finally:
        config.eos_token_id = saved
    finishes = [row[0].finish_reason for row in reference]
    assert "stop" in finishes
    assert len(reference[1][0].completion_ids) <= 4
    assert reference[1][0].completion_ids[-1] == stop_at
    assert max(len(row[0].completion_ids) for row in reference) > 4  # others ran on
    _assert_same(reference, got)


def test_sampled_logprobs_equal_a_rescoring_forward_pass(parts) -> None:
    import torch

    model, tok = parts
    fast = _llm(parts, "static")
    torch.manual_seed(7)
    rows = fast.generate_with_tokens(PROMPTS, max_new_tokens=16, temperature=1.0, n=3)
    assert [len(r) for r in rows] == [3, 3, 3]
    completions = set()
    for prompt, row in zip(PROMPTS, rows, strict=True):
        for g in row:
            assert g.prompt_ids == tok(prompt)["input_ids"]  # no padding kept
            assert 0 < len(g.completion_ids) == len(g.logprobs) <= 16
            assert all(0 <= t < model.config.vocab_size for t in g.completion_ids)
            assert g.logprobs == pytest.approx(_rescored(model, g, 1.0), abs=1e-5)
            completions.add(tuple(g.completion_ids))
    assert len(completions) > 1  # sampled, not greedy
    torch.manual_seed(7)
    again = fast.generate_with_tokens(PROMPTS, max_new_tokens=16, temperature=1.0, n=3)
    assert [[g.completion_ids for g in r] for r in again] == [
        [g.completion_ids for g in r] for r in rows
    ]


def test_sampling_at_temperature_0_7_records_the_tempered_distribution(parts) -> None:
    import torch

    model, _ = parts
    torch.manual_seed(1)
    rows = _llm(parts, "static").generate_with_tokens(PROMPTS[:2], 10, temperature=0.7, n=2)
    for row in rows:
        for g in row:
            assert g.logprobs == pytest.approx(_rescored(model, g, 0.7), abs=1e-5)


def test_compiled_step_traces_as_one_graph_and_gives_the_same_tokens(parts) -> None:
    """The decode step under torch.compile(fullgraph=True) with the eager backend (the
    tracing, without waiting minutes for CPU code generation in a test)."""
    from gui_gym.models.llm.fast_generate import StaticGenerator

    hf = _llm(parts, "hf")
    compiled = _llm(parts, "compiled")
    compiled._static = StaticGenerator(compiled.model, compile=True, backend="eager")
    reference = hf.generate_with_tokens(PROMPTS, max_new_tokens=10, temperature=0.0)
    got = compiled.generate_with_tokens(PROMPTS, max_new_tokens=10, temperature=0.0)
    assert compiled._static.compile_failed is None
    _assert_same(reference, got)


def test_a_failing_compile_falls_back_to_the_eager_step_with_one_warning(
    parts, monkeypatch, caplog
) -> None:
    import torch

    def broken_compile(fn, **kwargs):
        def call(*args, **kw):
            raise RuntimeError("no compiler for this backend")

        return call

    monkeypatch.setattr(torch, "compile", broken_compile)
    fast = _llm(parts, "compiled")
    reference = _llm(parts, "hf").generate_with_tokens(PROMPTS, 8, temperature=0.0)
    with caplog.at_level(logging.WARNING, logger="gui_gym.models.llm.fast_generate"):
        got = fast.generate_with_tokens(PROMPTS, 8, temperature=0.0)
        again = fast.generate_with_tokens(PROMPTS, 8, temperature=0.0)
    assert "no compiler for this backend" in fast._static.compile_failed
    warnings = [r for r in caplog.records if "generating without compile" in r.message]
    assert len(warnings) == 1
    _assert_same(reference, got)
    _assert_same(reference, again)


def test_a_generation_config_the_loop_cannot_reproduce_uses_generate(parts) -> None:
    from gui_gym.models.llm.fast_generate import unsupported_reason

    model, _ = parts
    assert _llm(parts, "auto").generation_path() == "static"  # auto on CPU: the eager loop
    fast = _llm(parts, "static")
    assert fast.generation_path() == "static"
    model.generation_config.repetition_penalty = 1.3
    try:
        assert "repetition_penalty=1.3" in unsupported_reason(model)
        assert fast.generation_path() == "hf"
        reference = _llm(parts, "hf").generate_with_tokens(PROMPTS, 8, temperature=0.0)
        _assert_same(reference, fast.generate_with_tokens(PROMPTS, 8, temperature=0.0))
    finally:
        model.generation_config.repetition_penalty = 1.0
    assert fast.generation_path() == "static"


def test_a_lora_policy_generates_on_the_static_path(parts) -> None:
    """The trainers' policy is often a PEFT model: the loop sees through the wrapper."""
    require("peft", "llm")
    import copy

    from peft import LoraConfig, get_peft_model

    model, tok = parts
    lora = get_peft_model(
        copy.deepcopy(model), LoraConfig(r=4, target_modules=["c_attn"], lora_dropout=0.0)
    )
    from gui_gym.models.llm import TransformersLLM

    hf = TransformersLLM(lora, tok, device="cpu", generation="hf")
    fast = TransformersLLM(lora, tok, device="cpu", generation="static")
    assert fast.generation_path() == "static"
    _assert_same(
        hf.generate_with_tokens(PROMPTS, 10, temperature=0.0),
        fast.generate_with_tokens(PROMPTS, 10, temperature=0.0),
    )


def test_an_unknown_generation_mode_is_a_clear_error(parts) -> None:
    with pytest.raises(ValueError, match="generation must be one of auto, compiled, static, hf"):
        _llm(parts, "vllm")


def test_generation_benchmark_reports_every_path_and_batch(tmp_path) -> None:
    """The benchmark's report (figures are not asserted: only its shape and the greedy check)."""
    import json

    require("transformers", "llm")
    from gui_gym.cli.bench.generation import format_report, run

    out = tmp_path / "gen.json"
    report = run(out, batches=(1, 3), new_tokens=4, repeats=1)
    assert json.loads(out.read_text()) == report
    assert report["greedy_equal"] is True
    assert [(r["path"], r["batch"]) for r in report["results"]] == [
        ("hf", 1),
        ("static", 1),
        ("hf", 3),
        ("static", 3),
    ]
    assert all(0 < r["tokens"] <= 3 * 4 and r["tokens_per_s"] > 0 for r in report["results"])
    assert set(report["speedup_vs_hf"]) == {"static@1", "static@3"}
    assert "static" in format_report(report)
    with pytest.raises(ValueError, match="paths are hf, static, compiled"):
        run(None, paths=("vllm",))
