"""Rollout engine throughput: steps/s against a stub OpenAI-compatible server with a fixed
latency (1, 8, 64, 256 concurrent WikiHow envs), and tokens/s of batched local generation.

Server part: the stub server (``python -m gui_gym.models.llm.stub_server``) runs in its own
process with ``--latency`` seconds per request; the engine drives ``N`` WikiHow envs with an
``LLMAgent`` over ``OpenAICompatLLM`` (one request in flight per env, all from one asyncio
loop). The ideal is ``N / latency`` steps/s; ``--profile`` adds the client's own CPU profile
at 64 envs (where the client, not the server, would be the limit).

Local part: the same engine with an ``LLMAgent`` over ``TransformersLLM`` (one batched
generation per step over all ``N`` envs), and raw ``generate_with_tokens`` at each batch
size, reporting generated tokens/s. The model is ``--model DIR`` or, by default, a GPT-2
with random weights built from a config (``--local-size small``: 12 layers x 768, about
GPT-2 small; ``tiny`` for a CPU smoke run) with a byte-level BPE tokenizer fitted on WikiHow
prompts: no download.

Usage::

    python benchmarks/rollout_throughput.py                      # CPU: server part + tiny local
    python benchmarks/rollout_throughput.py --device cuda --local-size small --skip-server
    python benchmarks/rollout_throughput.py --quick              # a few seconds, for tests

Writes JSON (``--out``) and a plot beside it (``.png``).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import platform
import pstats
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gui_gym  # noqa: F401
from gui_gym.agents import LLMAgent
from gui_gym.core.trajectory import atomic_write_text
from gui_gym.models.llm import OpenAICompatLLM, ScriptedLLM, TransformersLLM
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine

ENV = "GuiGym/WikiHow-v0"


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    """The stub server in its own process; returns it and its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "gui_gym.models.llm.stub_server", "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http"):
        process.kill()
        raise RuntimeError(f"the stub server did not start (said {url!r})")
    return process, url


def server_run(
    url: str, envs: int, seconds: float, max_steps: int, profile: bool
) -> dict[str, Any]:
    """Steps/s of ``envs`` envs against the server for about ``seconds`` (after a warm-up)."""
    llm = OpenAICompatLLM("stub", url, max_concurrency=max(envs, 1), max_retries=0)
    agent = LLMAgent(llm, history=4)
    engine = RolloutEngine(
        ENV, agent, num_envs=envs, env_kwargs={"split": "train", "max_steps": max_steps}
    )
    with engine:
        engine.run([EpisodeSpec(None, i) for i in range(envs)])  # warm-up: connections, caches
        engine.reset_stats()
        episodes = envs
        profiler = cProfile.Profile() if profile else None
        started = time.perf_counter()
        seed = envs
        while time.perf_counter() - started < seconds:
            if profiler is not None:
                profiler.enable()
            engine.run([EpisodeSpec(None, seed + i) for i in range(episodes)])
            if profiler is not None:
                profiler.disable()
            seed += episodes
        stats = engine.stats
    row: dict[str, Any] = {
        "envs": envs,
        "steps": stats.steps,
        "seconds": stats.seconds,
        "steps_per_second": stats.steps_per_second,
        "infra_errors": stats.infra_errors,
    }
    if profiler is not None:
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(15)
        row["profile_top_tottime"] = text.getvalue().splitlines()[:40]
        total = sum(v[2] for v in pstats.Stats(profiler).stats.values())  # type: ignore[attr-defined]
        row["client_cpu_seconds_per_step"] = total / max(stats.steps, 1)
    return row


def _local_model(size: str, model: str | None, device: str) -> TransformersLLM:
    if model:
        return TransformersLLM(model, device=device, batch_size=1024)
    import gymnasium as gym
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    env = gym.make(ENV, split="train")
    texts = []
    agent = LLMAgent(ScriptedLLM(lambda text: ""))  # prompt building only
    for seed in range(20):
        observation, info = env.reset(seed=seed)
        texts += [m["content"] for m in agent.build_prompt(observation, info)]
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    core.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=4000,
            special_tokens=["<pad>", "<eos>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>")
    dims = {"tiny": (64, 2, 2), "small": (768, 12, 12)}[size]
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=2048,
        n_embd=dims[0],
        n_layer=dims[1],
        n_head=dims[2],
        bos_token_id=1,
        eos_token_id=1,
        pad_token_id=0,
    )
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    net = GPT2LMHeadModel(config).to(dtype)
    return TransformersLLM(net, tokenizer, device=device, batch_size=1024)


def local_runs(
    llm: TransformersLLM, sizes: list[int], new_tokens: int, max_steps: int
) -> list[dict[str, Any]]:
    """Per batch size: raw batched generation tokens/s, and the engine's steps/s."""
    import gymnasium as gym
    import torch

    env = gym.make(ENV, split="train")
    observation, info = env.reset(seed=0)
    agent = LLMAgent(llm, history=4, temperature=1.0, max_new_tokens=new_tokens)
    prompt = agent.build_prompt(observation, info)
    rows = []
    for size in sizes:
        llm.generate_with_tokens([prompt] * min(size, 8), max_new_tokens=4, temperature=1.0)
        if str(llm.device).startswith("cuda"):
            torch.cuda.synchronize()
        started = time.perf_counter()
        rows_out = llm.generate_with_tokens(
            [prompt] * size, max_new_tokens=new_tokens, temperature=1.0
        )
        if str(llm.device).startswith("cuda"):
            torch.cuda.synchronize()
        seconds = time.perf_counter() - started
        tokens = sum(len(g.completion_ids or []) for row in rows_out for g in row)
        engine = RolloutEngine(
            ENV, agent, num_envs=size, env_kwargs={"split": "train", "max_steps": max_steps}
        )
        with engine:
            engine.run([EpisodeSpec(None, i) for i in range(size)])
            stats = engine.stats
        rows.append(
            {
                "batch": size,
                "generate_seconds": seconds,
                "generated_tokens": tokens,
                "tokens_per_second": tokens / seconds,
                "prompt_tokens": len(rows_out[0][0].prompt_ids or []),
                "engine_envs": size,
                "engine_steps_per_second": stats.steps_per_second,
                "engine_agent_calls": stats.agent_calls,
            }
        )
        print(
            f"local batch {size:4d}: {tokens / seconds:10.0f} tokens/s generated, engine "
            f"{stats.steps_per_second:8.1f} steps/s",
            flush=True,
        )
    return rows


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    server = report.get("server", [])
    if server:
        envs = [r["envs"] for r in server]
        axes[0].plot(envs, [r["steps_per_second"] for r in server], "o-", label="measured")
        axes[0].plot(envs, [n / report["latency"] for n in envs], "--", label="ideal N / latency")
        axes[0].set_xscale("log", base=2)
        axes[0].set_yscale("log")
        axes[0].set_xlabel("concurrent envs")
        axes[0].set_ylabel("steps/s")
        axes[0].set_title(f"stub server, {report['latency'] * 1000:.0f} ms latency")
        axes[0].legend()
    local = report.get("local", [])
    if local:
        batches = [r["batch"] for r in local]
        axes[1].plot(batches, [r["tokens_per_second"] for r in local], "o-")
        axes[1].set_xscale("log", base=2)
        axes[1].set_xlabel("batch (envs)")
        axes[1].set_ylabel("generated tokens/s")
        axes[1].set_title(f"local {report['local_model']} on {report['device']}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="benchmarks/results/rollout_throughput.json")
    parser.add_argument("--latency", type=float, default=0.05, help="stub server seconds")
    parser.add_argument("--envs", type=int, nargs="*", default=[1, 8, 64, 256])
    parser.add_argument("--seconds", type=float, default=5.0, help="per server measurement")
    parser.add_argument("--max-steps", type=int, default=10, help="episode length")
    parser.add_argument("--profile", action="store_true", help="profile the client at 64 envs")
    parser.add_argument("--skip-server", action="store_true")
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--device", default="cpu", help="local generation: cpu or cuda")
    parser.add_argument("--local-size", choices=("tiny", "small"), default="tiny")
    parser.add_argument("--model", default=None, help="a local HF folder instead of a config")
    parser.add_argument("--local-batches", type=int, nargs="*", default=[1, 8, 64, 256])
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--quick", action="store_true", help="seconds, not minutes (tests)")
    args = parser.parse_args()
    if args.quick:
        args.envs, args.seconds, args.max_steps = [1, 8], 0.5, 3
        args.local_batches, args.new_tokens = [1, 4], 4
    report: dict[str, Any] = {
        "latency": args.latency,
        "device": args.device,
        "machine": platform.node(),
        "python": platform.python_version(),
        "local_model": args.model or f"gpt2-{args.local_size} (random weights)",
    }
    if args.device.startswith("cuda"):
        import torch

        report["gpu"] = torch.cuda.get_device_name(0)
    if not args.skip_server:
        process, url = start_server(args.latency)
        try:
            report["server"] = []
            for envs in args.envs:
                row = server_run(
                    url, envs, args.seconds, args.max_steps, args.profile and envs == 64
                )
                row["ideal_steps_per_second"] = envs / args.latency
                row["fraction_of_ideal"] = row["steps_per_second"] / row["ideal_steps_per_second"]
                report["server"].append(row)
                print(
                    f"server {envs:4d} envs: {row['steps_per_second']:8.1f} steps/s "
                    f"({row['fraction_of_ideal']:.0%} of ideal {row['ideal_steps_per_second']:.0f})",
                    flush=True,
                )
        finally:
            process.kill()
            process.wait()
    if not args.skip_local:
        llm = _local_model(args.local_size, args.model, args.device)
        report["local"] = local_runs(llm, args.local_batches, args.new_tokens, args.max_steps)
    out = Path(args.out)
    atomic_write_text(out, json.dumps(report, indent=1) + "\n")
    plot(report, out.with_suffix(".png"))
    print(f"written to {out} and {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
