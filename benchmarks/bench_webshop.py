"""WebShop benchmark (also ``gui-gym bench --webshop``): 100,000-product (or, with
``--build-size 1000000``, 1,000,000-product) catalog and index build time, search p50/p99 on
it, index memory, env steps/s on the default 10,000 catalog, and the
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
    parser.add_argument(
        "--build-size",
        type=int,
        default=100_000,
        choices=(100_000, 1_000_000),
        help="catalog to time build and search on (1,000,000: about 10 min and 5 GiB)",
    )
    args = parser.parse_args()
    report = run(args.out, build_size=args.build_size, env_steps=args.steps, pin=not args.no_pin)
    print(format_report(report))
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
