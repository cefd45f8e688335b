"""RL training throughput: rollout steps/s, training tokens/s, peak memory and (on CUDA) model
FLOPs utilisation, for one model and batch.

It times the two halves of an RL iteration on WikiHow with the step-level GRPO trainer:
the rollout (the shared engine, one batched generation per round for ``num_envs`` envs) and
the update (scoring ``pi_old``, then forward/backward over every turn for ``update_epochs``).
MFU counts ``2 N`` FLOPs per token for each forward and ``6 N`` for each forward+backward
(``N`` = parameters; attention FLOPs left out, so it is a lower bound) against the GPU's
dense bf16 peak (``--peak-tflops``; known for H100/H200/A100).

Usage::

    python benchmarks/train_throughput.py                       # tiny model, CPU
    python benchmarks/train_throughput.py --device cuda --model /models/Qwen2.5-0.5B-Instruct \\
        --num-envs 64 --group-size 8 --max-new-tokens 128

Writes ``benchmarks/results/train_throughput_<device>.json``.
"""

from __future__ import annotations

import json
import platform
import resource
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import tyro

PEAK_BF16_TFLOPS = {"H100": 989.0, "H200": 989.0, "A100": 312.0, "L40S": 362.0, "A10": 125.0}
"""Dense bf16 tensor-core peaks (vendor datasheets), matched against the device name."""


@dataclass
class Args:
    model: str = "tiny"  # a Hugging Face folder, or "tiny" (random GPT-2 built here)
    device: str = "cpu"
    env_id: str = "GuiGym/WikiHow-v0"
    num_envs: int = 16
    group_size: int = 8
    tasks_per_iteration: int = 2
    max_steps: int = 4
    max_new_tokens: int = 32
    micro_batch_turns: int = 8
    update_epochs: int = 1
    lora: bool = False
    iterations: int = 2  # the first is a warm-up and is not reported
    peak_tflops: float | None = None
    out: str = "benchmarks/results"


def _peak(device_name: str, given: float | None) -> float | None:
    if given is not None:
        return given
    for key, value in PEAK_BF16_TFLOPS.items():
        if key in device_name:
            return value
    return None


def main(args: Args) -> dict:
    import torch

    from gui_gym.train.runner import build_tiny_policy, env_texts, make_trainer

    torch.set_num_threads(max(1, torch.get_num_threads()))
    model = args.model
    if model == "tiny":
        model = str(build_tiny_policy(Path(tempfile.mkdtemp()) / "tiny", env_texts(args.env_id)))
    out_dir = Path(tempfile.mkdtemp())
    trainer = make_trainer(
        "grpo",
        args.env_id,
        model=model,
        reward="outcome",
        lora=args.lora,
        env_kwargs={"split": "train", "max_steps": args.max_steps},
        settings={
            "out": str(out_dir),
            "device": args.device,
            "num_envs": args.num_envs,
            "generation_batch_size": args.num_envs,
            "group_size": args.group_size,
            "tasks_per_iteration": args.tasks_per_iteration,
            "max_new_tokens": args.max_new_tokens,
            "micro_batch_turns": args.micro_batch_turns,
            "mini_batch_turns": 10_000,
            "update_epochs": args.update_epochs,
            "iterations": args.iterations,
            "progress": False,
            "save_every": 10_000,
        },
        resume=False,
    )
    cuda = args.device.startswith("cuda")
    params = sum(p.numel() for p in trainer.policy.model.parameters())
    rows = []
    for iteration in range(args.iterations):
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        groups = trainer.algorithm.collect(trainer, iteration)
        if cuda:
            torch.cuda.synchronize()
        rollout_s = time.perf_counter() - start
        steps = sum(len(t.steps) for g in groups for t in g)
        turns = trainer.algorithm.advantages(trainer, groups, iteration)
        start = time.perf_counter()
        stats = trainer.update(turns)
        if cuda:
            torch.cuda.synchronize()
        update_s = time.perf_counter() - start
        tokens = sum(len(t.prompt_ids) + len(t.completion_ids) for t in turns)
        # pi_old scoring (forward) + update_epochs x forward/backward
        flops = (2 + 6 * args.update_epochs) * params * tokens
        row = {
            "iteration": iteration,
            "rollout_steps": steps,
            "rollout_seconds": rollout_s,
            "rollout_steps_per_second": steps / rollout_s if rollout_s else None,
            "train_turns": stats.get("turns", 0),
            "train_tokens": tokens,
            "update_seconds": update_s,
            "train_tokens_per_second": tokens / update_s if update_s else None,
            "update_tflops_per_second": flops / update_s / 1e12 if update_s else None,
        }
        if cuda:
            row["peak_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
        rows.append(row)
        print(json.dumps(row))
    trainer.close()
    measured = rows[1:] or rows
    device_name = torch.cuda.get_device_name() if cuda else platform.processor() or "cpu"
    peak = _peak(device_name, args.peak_tflops) if cuda else None
    mean = {
        key: sum(r[key] for r in measured if r[key] is not None) / len(measured)
        for key in (
            "rollout_steps_per_second",
            "train_tokens_per_second",
            "update_tflops_per_second",
        )
    }
    result = {
        "args": asdict(args),
        "device": device_name,
        "parameters": params,
        "iterations": rows,
        **mean,
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "peak_gpu_memory_gib": max((r.get("peak_memory_gib", 0.0) for r in rows), default=None)
        if cuda
        else None,
        "mfu": mean["update_tflops_per_second"] / peak if peak else None,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"train_throughput_{'cuda' if cuda else 'cpu'}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {path}")
    return result


if __name__ == "__main__":
    main(tyro.cli(Args))
