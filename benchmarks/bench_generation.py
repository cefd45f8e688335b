"""Generation benchmark (also ``gui-gym bench --generation``): tokens/s of TransformersLLM's
generation paths (Hugging Face ``generate`` vs the static-KV-cache loop, with or without
``torch.compile``) at batch 1/8/64 in one run, on a model built from a config.

Usage:
    nice -n 10 python benchmarks/bench_generation.py                       # CPU, tiny model
    python benchmarks/bench_generation.py --device cuda --dtype bfloat16 --model 0.5b \\
        --batches 1 8 64 256 --paths hf static compiled                     # a GPU
"""

from __future__ import annotations

import argparse

from gui_gym.cli.bench.generation import MODELS, format_report, run


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="benchmarks/results/bench_generation.json")
    parser.add_argument("--model", default="tiny", choices=list(MODELS))
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument(
        "--paths", nargs="+", default=["hf", "static"], choices=["hf", "static", "compiled"]
    )
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    report = run(
        args.out,
        model=args.model,
        batches=tuple(args.batches),
        paths=tuple(args.paths),
        new_tokens=args.new_tokens,
        repeats=args.repeats,
        device=args.device,
        dtype=args.dtype,
        seed=args.seed,
    )
    print(format_report(report))
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
