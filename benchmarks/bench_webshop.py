"""WebShop benchmark (also ``gui-gym bench --webshop``): 100,000-product catalog and index
build time, search p50 on it, index memory, env steps/s on the default 10,000 catalog, and the
oracle / BM25-greedy / random agents on the test goals.

Usage: python benchmarks/bench_webshop.py [--out benchmarks/results/bench_webshop.json]
"""

from __future__ import annotations

import argparse

from gui_gym.cli.bench.webshop import format_report, run


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="benchmarks/results/bench_webshop.json")
    parser.add_argument("--steps", type=int, default=20_000, help="random-policy env steps")
    parser.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    args = parser.parse_args()
    report = run(args.out, env_steps=args.steps, pin=not args.no_pin)
    print(format_report(report))
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
