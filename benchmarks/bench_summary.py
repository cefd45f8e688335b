"""Every benchmark's headline figures, and the machine and load they ran on, in one file
(the last step of ``make bench``).

Usage: python benchmarks/bench_summary.py [--results benchmarks/results] [--out FILE]
"""

from __future__ import annotations

import argparse
import json

from gui_gym.cli.bench.summary import write_summary


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--results", default="benchmarks/results")
    parser.add_argument("--out", default=None, help="default: RESULTS/summary.json")
    args = parser.parse_args()
    try:
        out = write_summary(args.results, args.out)
    except ValueError as err:
        parser.exit(2, f"bench_summary: error: {err}\n")
    summary = json.loads(out.read_text(encoding="utf-8"))
    print(f"{len(summary['benchmarks'])} benchmark report(s); machine {summary['machine']}")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
