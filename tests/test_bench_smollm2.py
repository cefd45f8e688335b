"""benchmarks/bench_smollm2.py runs end to end on tiny sizes (a tiny llama GGUF in place of
SmolLM2, converted through the same registry code) and writes every figure docs/models.md
quotes; speed itself is never asserted."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tests.conftest import require
from tests.tiny_gguf import write_tiny_llama_gguf

require("gguf", "llm")
PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_smollm2.py"


@pytest.mark.timeout(600)
def test_bench_smollm2_writes_every_arm_side_by_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GUI_GYM_CACHE", str(tmp_path / "cache"))
    gguf = write_tiny_llama_gguf(tmp_path / "tiny.gguf", context=2048)
    out = tmp_path / "bench.json"
    spec = importlib.util.spec_from_file_location("bench_smollm2", PATH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    argv = ["bench_smollm2.py", "--quick", "--model", str(gguf), "--threads", "1"]
    argv += ["--prompt-chars", "40", "--grpo-prompt", "16", "--grpo-completion", "8"]
    monkeypatch.setattr(sys, "argv", [*argv, "--out", str(out)])
    bench.main()
    report = json.loads(out.read_text())
    assert set(report["sft"]) == set(report["grpo_update"]) == {"fp32", "bf16_autocast"}
    arms = {(row["arm"], row["batch"]) for row in report["generation"]}
    for batch in (1, 4):
        for arm in ("fp32_hf", "fp32_static", "bf16_weights_hf", "bf16_autocast_hf"):
            assert (arm, batch) in arms
    assert report["greedy_equal_within_precision"]["fp32@4"] is True
    gaps = report["sampler_vs_scorer_max_abs_logprob_gap"]
    assert gaps["fp32_hf"] < 1e-4 and gaps["fp32_static"] < 1e-4
    assert "sft_bf16_autocast" in report["speedup_vs_fp32"]
    assert len(report["load_average_at_start"]) == 3 and "native_bf16" in report
