"""Generation speed of :class:`gui_gym.models.llm.TransformersLLM`: tokens/s of each generation
path (``hf``: Hugging Face ``generate``; ``static``: the static-KV-cache loop; ``compiled``: the
same with a ``torch.compile``'d decode step) at several batch sizes, in one run on one machine,
written as JSON (``gui-gym bench --generation``; ``benchmarks/bench_generation.py``).

The model is built from a config with random weights (nothing is downloaded): ``tiny`` (a
2-layer, 64-wide Qwen2; the CPU default), ``small`` (4 layers, 256 wide) or ``0.5b``
(Qwen2.5-0.5B's shape: 24 layers, 896 wide, 151,936-token vocabulary). Prompts are random
words of ragged lengths (left padding, as in training); generation samples at temperature 1
(what the trainers do) for ``--new-tokens`` tokens, and tokens/s counts the completion tokens
returned (rows that sample the end token stop early, on every path alike). Each path and
batch size is run once untimed first, greedy (the compile happens there: its time is reported
as ``warmup_s``), then ``repeats`` timed sampling calls. The report says whether every path gave
the same tokens in the greedy call (``greedy_equal``). ``threads`` sets torch's CPU threads
(1 by default on CPU, so a loaded machine measures work rather than contention).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from gui_gym.cli.bench.summary import machine
from gui_gym.core.files import atomic_write_text

__all__ = ["MODELS", "build_model", "format_report", "run"]

#: model shapes (Qwen2 configs) by name
MODELS: dict[str, dict[str, int]] = {
    "tiny": {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 2048,
    },
    "small": {
        "hidden_size": 256,
        "intermediate_size": 768,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": 8192,
    },
    "0.5b": {  # Qwen2.5-0.5B's shape
        "hidden_size": 896,
        "intermediate_size": 4864,
        "num_hidden_layers": 24,
        "num_attention_heads": 14,
        "num_key_value_heads": 2,
        "vocab_size": 151936,
    },
}


def build_model(name: str, device: str, dtype: str, seed: int = 0) -> tuple[Any, Any]:
    """A random-weight Qwen2 of shape ``name`` and a word-level tokenizer over its vocabulary
    (``<pad>`` 0, ``<eos>`` 1, then ``w2``, ``w3``...)."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    if name not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {name!r}")
    shape = MODELS[name]
    vocab = {"<pad>": 0, "<eos>": 1}
    vocab.update({f"w{i}": i for i in range(2, shape["vocab_size"])})
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>")
    torch.manual_seed(seed)
    config = Qwen2Config(
        **shape,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        bos_token_id=1,
        eos_token_id=1,
        pad_token_id=0,
    )
    model = Qwen2ForCausalLM(config).to(device=device, dtype=getattr(torch, dtype)).eval()
    return model, tokenizer


def _prompts(batch: int, vocab_size: int, seed: int, lo: int = 16, hi: int = 48) -> list[str]:
    import random

    rng = random.Random(seed)
    return [
        " ".join(f"w{rng.randrange(2, vocab_size)}" for _ in range(rng.randint(lo, hi)))
        for _ in range(batch)
    ]


def run(
    out: str | Path | None,
    *,
    model: str = "tiny",
    batches: tuple[int, ...] = (1, 8, 64),
    paths: tuple[str, ...] = ("hf", "static"),
    new_tokens: int = 32,
    repeats: int = 2,
    device: str = "cpu",
    dtype: str = "float32",
    seed: int = 0,
    threads: int | None = None,
) -> dict[str, Any]:
    """Measure every path at every batch size; write the JSON report to ``out`` (if given)."""
    import torch

    if threads is None and device == "cpu":
        threads = 1
    if threads is not None:
        torch.set_num_threads(threads)

    from gui_gym.models.llm import TransformersLLM

    for path in paths:
        if path not in ("hf", "static", "compiled"):
            raise ValueError(f"paths are hf, static, compiled; got {path!r}")
    net, tokenizer = build_model(model, device, dtype, seed)
    vocab_size = MODELS[model]["vocab_size"]
    llms = {
        path: TransformersLLM(
            net, tokenizer, device=device, batch_size=max(batches), generation=path
        )
        for path in paths
    }
    results: list[dict[str, Any]] = []
    greedy_equal = True
    for batch in batches:
        prompts = _prompts(batch, vocab_size, seed + batch)
        greedy: dict[str, list[list[int]]] = {}
        for path, llm in llms.items():
            # the untimed first call (greedy, same shapes as the timed ones: any compile
            # happens here) also checks that every path gives the same tokens
            t0 = time.perf_counter()
            rows = llm.generate_with_tokens(prompts, max_new_tokens=new_tokens, temperature=0.0)
            _sync(torch, device)
            warmup = time.perf_counter() - t0
            greedy[path] = [r[0].completion_ids for r in rows]
            tokens = 0
            t0 = time.perf_counter()
            c0 = time.process_time()
            for r in range(repeats):
                torch.manual_seed(seed + r)
                rows = llm.generate_with_tokens(prompts, new_tokens, temperature=1.0)
                tokens += sum(len(g.completion_ids) for row in rows for g in row)
            _sync(torch, device)
            seconds = time.perf_counter() - t0
            cpu = time.process_time() - c0
            results.append(
                {
                    "path": path,
                    "batch": batch,
                    "tokens": tokens,
                    "seconds": round(seconds, 4),
                    "tokens_per_s": round(tokens / seconds, 1),
                    "ms_per_step": round(1000 * seconds / (repeats * new_tokens), 2),
                    "cpu_s": round(cpu, 4),
                    "warmup_s": round(warmup, 2),
                }
            )
        first = next(iter(greedy.values()))
        greedy_equal = greedy_equal and all(v == first for v in greedy.values())
    speedups = {}
    for row in results:
        if row["path"] == "hf":
            continue
        base = next(r for r in results if r["path"] == "hf" and r["batch"] == row["batch"])
        speedups[f"{row['path']}@{row['batch']}"] = round(
            row["tokens_per_s"] / base["tokens_per_s"], 2
        )
    fallbacks = {
        path: llm._static.compile_failed
        for path, llm in llms.items()
        if llm._static is not None and llm._static.compile_failed
    }
    report = {
        "benchmark": "generation",
        "model": model,
        "shape": MODELS[model],
        "parameters": sum(p.numel() for p in net.parameters()),
        "device": device if device == "cpu" else torch.cuda.get_device_name(device),
        "dtype": dtype,
        "torch": torch.__version__,
        "transformers": __import__("transformers").__version__,
        "new_tokens": new_tokens,
        "repeats": repeats,
        "temperature": 1.0,
        "seed": seed,
        "threads": torch.get_num_threads(),
        "greedy_equal": greedy_equal,
        "compile_fallbacks": fallbacks,
        "results": results,
        "speedup_vs_hf": speedups,
        "machine": machine(),
    }
    if out is not None:
        path_out = Path(out)
        path_out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path_out, json.dumps(report, indent=2) + "\n")
    return report


def _sync(torch: Any, device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def format_report(report: dict[str, Any]) -> str:
    """A table: path, batch, tokens/s, ms per decode step, and the speed-up over ``hf``."""
    lines = [
        f"generation: {report['model']} ({report['parameters']:,} parameters) on "
        f"{report['device']} {report['dtype']}, {report['new_tokens']} new tokens, "
        f"greedy tokens equal across paths: {report['greedy_equal']}",
        f"{'path':<10}{'batch':>6}{'tokens/s':>12}{'ms/step':>10}{'vs hf':>8}{'warmup s':>10}",
    ]
    for row in report["results"]:
        ratio = report["speedup_vs_hf"].get(f"{row['path']}@{row['batch']}", 1.0)
        lines.append(
            f"{row['path']:<10}{row['batch']:>6}{row['tokens_per_s']:>12,.1f}"
            f"{row['ms_per_step']:>10.2f}{ratio:>8.2f}{row['warmup_s']:>10.2f}"
        )
    return "\n".join(lines)
