"""SmolLM2-135M-Instruct speed, side by side in one run: tokens/s of SFT steps, a GRPO update,
and generation at batch 1/8/32, in fp32 against bf16 (autocast over fp32 weights for
training; bf16 weights and autocast for generation) against the static-KV-cache and compiled
generation paths. Also the log-prob gap between sampler and scorer in each precision.

The model is the registry's (``gui-gym models``; converted into the cache on first use). The
machine's load average is recorded at the start and the end: on a shared machine the figures
are noisy, the ratios (same run, same load) less so. Whether the CPU computes bf16 natively
(AMX-BF16 / AVX512-BF16) is recorded too: without it torch emulates bf16 and it is slower
than fp32.

Usage:
    nice -n 10 python benchmarks/bench_smollm2.py                 # ~10 minutes on 2 cores
    python benchmarks/bench_smollm2.py --quick                    # smaller sizes, no compile
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import machine_at_end, write_json


def _load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _sft_steps(model: Any, torch: Any, *, bf16: bool, batch: int, length: int, steps: int) -> dict:
    """Full fine-tuning steps (next-token loss on every token, AdamW), 1 untimed + ``steps``."""
    from gui_gym.models.llm.precision import autocast

    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    generator = torch.Generator().manual_seed(0)
    vocab = model.config.vocab_size
    seconds = 0.0
    losses = []
    for step in range(steps + 1):
        ids = torch.randint(0, vocab, (batch, length), generator=generator)
        t0 = time.perf_counter()
        with autocast("cpu", bf16):
            logits = model(input_ids=ids).logits.float()
        loss = torch.nn.functional.cross_entropy(
            logits[:, :-1].reshape(-1, vocab), ids[:, 1:].reshape(-1)
        )
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step:
            seconds += time.perf_counter() - t0
            losses.append(float(loss.detach()))
    model.eval()
    tokens = steps * batch * length
    return {
        "tokens": tokens,
        "seconds": round(seconds, 2),
        "tokens_per_s": round(tokens / seconds, 1),
        "loss": losses,
    }


def _grpo_update(
    model: Any, torch: Any, *, bf16: bool, turns: int, prompt: int, completion: int, updates: int
) -> dict:
    """GRPO updates through the trainers' own scoring and loss (``score_completions``,
    ``policy_loss``): pi_old scored without grad, then the clipped surrogate's forward and
    backward and an AdamW step; 1 untimed + ``updates`` timed."""
    from gui_gym.models.llm.precision import autocast
    from gui_gym.train.config import TrainConfig
    from gui_gym.train.losses import LossInputs, TurnSample, policy_loss, score_completions

    config = TrainConfig(model="unused", kl_coef=0.0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-6)
    generator = torch.Generator().manual_seed(1)
    vocab = model.config.vocab_size
    seconds = 0.0
    for update in range(updates + 1):
        batch = [
            TurnSample(
                prompt_ids=torch.randint(0, vocab, (prompt,), generator=generator).tolist(),
                completion_ids=torch.randint(0, vocab, (completion,), generator=generator).tolist(),
                advantages=[1.0 if i % 2 else -1.0] * completion,
            )
            for i in range(turns)
        ]
        t0 = time.perf_counter()
        with torch.no_grad(), autocast("cpu", bf16):
            old = score_completions(model, batch, pad_id=0, temperature=1.0, device="cpu")
        with autocast("cpu", bf16):
            logp = score_completions(model, batch, pad_id=0, temperature=1.0, device="cpu")
            loss, _ = policy_loss(
                LossInputs(
                    turns=batch,
                    logp=logp,
                    old_logp=[o.detach() for o in old],
                    ref_logp=None,
                    advantages=[torch.tensor(t.advantages) for t in batch],
                    total_tokens=turns * completion,
                    total_turns=turns,
                    config=config,
                )
            )
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if update:
            seconds += time.perf_counter() - t0
    tokens = updates * turns * (prompt + completion)
    return {
        "tokens": tokens,
        "seconds": round(seconds, 2),
        "tokens_per_s": round(tokens / seconds, 1),
    }


def _prompts(batch: int, chars: int) -> list[str]:
    """Agent-like prompts: a WikiHow screen and its instruction, a different task per row."""
    import gymnasium as gym

    import gui_gym  # noqa: F401

    env = gym.make("GuiGym/WikiHow-v0", split="test")
    out = []
    for i in range(batch):
        obs, _ = env.reset(seed=i)
        out.append(f"Task: {obs['instruction']}\nScreen:\n{obs['screen'][:chars]}\nNext action?")
    env.close()
    return out


def _generation(llm: Any, torch: Any, prompts: list[str], new_tokens: int, repeats: int) -> dict:
    t0 = time.perf_counter()
    greedy = llm.generate_with_tokens(prompts, max_new_tokens=new_tokens, temperature=0.0)
    warmup = time.perf_counter() - t0
    tokens, seconds = 0, 0.0
    for r in range(repeats):
        torch.manual_seed(r)
        t0 = time.perf_counter()
        rows = llm.generate_with_tokens(prompts, max_new_tokens=new_tokens, temperature=1.0)
        seconds += time.perf_counter() - t0
        tokens += sum(len(g.completion_ids) for row in rows for g in row)
    return {
        "tokens": tokens,
        "seconds": round(seconds, 2),
        "tokens_per_s": round(tokens / seconds, 1),
        "warmup_s": round(warmup, 1),
        "greedy": [row[0].completion_ids for row in greedy],
        "sampled": rows,
    }


def _logprob_gap(llm: Any, rows: list[list[Any]], torch: Any) -> float:
    """Largest |sampler log-prob - scorer log-prob| over the sampled tokens, the scorer run
    on the same weights under the same autocast as the sampler."""
    from gui_gym.models.llm.precision import autocast
    from gui_gym.train.losses import TurnSample, score_completions

    turns = [
        TurnSample(
            prompt_ids=g.prompt_ids,
            completion_ids=g.completion_ids,
            advantages=[0.0] * len(g.completion_ids),
        )
        for row in rows
        for g in row
        if g.completion_ids
    ]
    with torch.no_grad(), autocast("cpu", llm.autocast):
        scored = score_completions(
            llm.model, turns, pad_id=llm.tokenizer.pad_token_id, temperature=1.0, device="cpu"
        )
    sampled = [g.logprobs for row in rows for g in row if g.completion_ids]
    return max(float((s.float() - torch.tensor(lp)).abs().max()) for s, lp in zip(scored, sampled))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="benchmarks/results/bench_smollm2.json")
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: all)")
    parser.add_argument("--train-batch", type=int, default=4)
    parser.add_argument("--train-length", type=int, default=128)
    parser.add_argument("--train-steps", type=int, default=2)
    parser.add_argument("--grpo-turns", type=int, default=8)
    parser.add_argument("--gen-batches", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--new-tokens", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--prompt-chars", type=int, default=400, help="screen text per prompt")
    parser.add_argument(
        "--bf16-batches",
        type=int,
        nargs="*",
        default=None,
        help="batches the bf16 generation arms run at (default: every batch)",
    )
    parser.add_argument("--grpo-prompt", type=int, default=96)
    parser.add_argument("--grpo-completion", type=int, default=32)
    parser.add_argument(
        "--compiled-batches",
        type=int,
        nargs="*",
        default=[8],
        help="batches the compiled path is measured at (each shape compiles, minutes on CPU)",
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, no compile")
    args = parser.parse_args()
    if args.quick:
        args.train_batch, args.train_length, args.train_steps = 2, 64, 1
        args.grpo_turns, args.gen_batches, args.new_tokens = 2, [1, 4], 8
        args.compiled_batches = []

    import torch
    import transformers

    from gui_gym.models.llm import TransformersLLM
    from gui_gym.models.llm.local import resolve_model
    from gui_gym.models.llm.precision import native_bf16

    if args.threads:
        torch.set_num_threads(args.threads)
    started = time.perf_counter()
    load_start = _load_average()
    folder = resolve_model(args.model)
    base = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    report: dict[str, Any] = {
        "benchmark": "smollm2",
        "model": args.model,
        "parameters": sum(p.numel() for p in base.parameters()),
        "native_bf16": native_bf16(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "threads": torch.get_num_threads(),
        "load_average_at_start": load_start,
        "settings": {k: v for k, v in vars(args).items() if k != "out"},
    }

    def fp32_and_bf16(label: str, run: Any) -> dict[str, Any]:
        """``run(model, bf16)`` on a fresh copy of the model under each precision."""
        print(f"{label} ...", flush=True)
        rows = {}
        for arm, bf16 in (("fp32", False), ("bf16_autocast", True)):
            model = copy.deepcopy(base)
            rows[arm] = run(model, bf16)
            del model
            print(f"  {arm}: {rows[arm]['tokens_per_s']} tokens/s", flush=True)
        return rows

    sft = fp32_and_bf16(
        "SFT steps",
        lambda model, bf16: _sft_steps(
            model,
            torch,
            bf16=bf16,
            batch=args.train_batch,
            length=args.train_length,
            steps=args.train_steps,
        ),
    )
    report["sft"] = sft
    grpo = fp32_and_bf16(
        "GRPO update",
        lambda model, bf16: _grpo_update(
            model,
            torch,
            bf16=bf16,
            turns=args.grpo_turns,
            prompt=args.grpo_prompt,
            completion=args.grpo_completion,
            updates=1,
        ),
    )
    report["grpo_update"] = grpo

    print("generation ...", flush=True)
    bf16_model = copy.deepcopy(base).to(torch.bfloat16)
    arms: dict[str, tuple[Any, bool, str]] = {
        "fp32_hf": (base, False, "hf"),
        "fp32_static": (base, False, "static"),
        "bf16_weights_hf": (bf16_model, False, "hf"),
        "bf16_weights_static": (bf16_model, False, "static"),
        "bf16_autocast_hf": (base, True, "hf"),
    }
    generation: list[dict[str, Any]] = []
    gaps: dict[str, float] = {}
    greedy_equal: dict[str, bool] = {}
    for batch in args.gen_batches:
        prompts = _prompts(batch, args.prompt_chars)
        chosen = dict(arms)
        if args.bf16_batches is not None and batch not in args.bf16_batches:
            chosen = {k: v for k, v in chosen.items() if not k.startswith("bf16")}
        if batch in args.compiled_batches:
            chosen["fp32_compiled"] = (base, False, "compiled")
        greedy_by_arm = {}
        for arm, (net, autocast, path) in chosen.items():
            llm = TransformersLLM(
                net, tokenizer, device="cpu", batch_size=batch, generation=path, autocast=autocast
            )
            row = _generation(llm, torch, prompts, args.new_tokens, args.repeats)
            greedy_by_arm[arm] = row.pop("greedy")
            sampled = row.pop("sampled")
            if batch == args.gen_batches[0] or arm not in gaps:
                gaps[arm] = max(gaps.get(arm, 0.0), round(_logprob_gap(llm, sampled, torch), 6))
            generation.append({"arm": arm, "batch": batch, **row})
            print(f"  batch {batch} {arm}: {row['tokens_per_s']} tokens/s", flush=True)
        # exact paths of one precision give the same greedy tokens
        for prefix in ("fp32", "bf16_weights"):
            same = [v for k, v in greedy_by_arm.items() if k.startswith(prefix)]
            greedy_equal[f"{prefix}@{batch}"] = all(v == same[0] for v in same)
    report["generation"] = generation
    report["greedy_equal_within_precision"] = greedy_equal
    report["sampler_vs_scorer_max_abs_logprob_gap"] = gaps

    def speedup(rows: dict, arm: str) -> float:
        return round(rows[arm]["tokens_per_s"] / rows["fp32"]["tokens_per_s"], 2)

    report["speedup_vs_fp32"] = {
        "sft_bf16_autocast": speedup(sft, "bf16_autocast"),
        "grpo_bf16_autocast": speedup(grpo, "bf16_autocast"),
        **{
            f"generation_{r['arm']}@{r['batch']}": round(
                r["tokens_per_s"]
                / next(
                    g["tokens_per_s"]
                    for g in generation
                    if g["arm"] == "fp32_hf" and g["batch"] == r["batch"]
                ),
                2,
            )
            for r in generation
            if r["arm"] != "fp32_hf"
        },
    }
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["machine"] = machine_at_end()
    write_json(args.out, report)
    for key, value in report["speedup_vs_fp32"].items():
        print(f"{key}: {value}x")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
