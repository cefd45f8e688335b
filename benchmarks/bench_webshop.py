"""WebShop benchmark (also ``gui-gym bench --webshop``): 100,000-product (or, with
``--build-size 1000000``, 1,000,000-product) catalog and index build time, search p50/p99 on
it, index memory, env steps/s on the default 10,000 catalog, and the
oracle / BM25-greedy / random agents on the test goals.

With ``--search-only``, only the search on the cached catalog of ``--build-size`` products
(built into the cache first if it is missing): p50/p95/p99 over goal instructions, the
first search (block layout) time, index and layout memory, the numba compile time, and
exactness against the numpy full pass (differences over ``--check`` instructions plus 104
other queries, k = 50 and 3; 0 expected).

Usage: python benchmarks/bench_webshop.py [--out benchmarks/results/bench_webshop.json]
       python benchmarks/bench_webshop.py --search-only --build-size 1000000 \\
           --out benchmarks/results/bench_webshop_search.json
"""

from __future__ import annotations

import argparse

from gui_gym.cli.bench.webshop import format_report, format_search_report, run, run_search


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default=None, help="JSON report (default by mode)")
    parser.add_argument("--steps", type=int, default=20_000, help="random-policy env steps")
    parser.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    parser.add_argument(
        "--build-size",
        type=int,
        default=100_000,
        choices=(100_000, 1_000_000),
        help="catalog to time build and search on (1,000,000: about 10 min and 5 GiB)",
    )
    parser.add_argument(
        "--search-only",
        action="store_true",
        help="only the search on the cached catalog (no build, env or agents)",
    )
    parser.add_argument(
        "--queries", type=int, default=1000, help="goal instructions timed (--search-only)"
    )
    parser.add_argument(
        "--check",
        type=int,
        default=400,
        help="goal instructions compared with the full pass (--search-only; 0: none)",
    )
    args = parser.parse_args()
    if args.queries < 1 or args.check < 0:
        parser.error("--queries must be at least 1 and --check at least 0")
    if args.search_only:
        out = args.out or "benchmarks/results/bench_webshop_search.json"
        report = run_search(
            out, args.build_size, queries=args.queries, check=args.check, pin=not args.no_pin
        )
        print(format_search_report(report))
    else:
        out = args.out or "benchmarks/results/bench_webshop.json"
        report = run(out, build_size=args.build_size, env_steps=args.steps, pin=not args.no_pin)
        print(format_report(report))
    print(f"written to {out}")


if __name__ == "__main__":
    main()
