"""MiniWoB++ speed benchmark (also ``gui-gym bench --miniwob``): steps/s through gui-gym
against raw ``miniwob`` on the same tasks in the same run, text-only and with screenshots.

Usage: python benchmarks/bench_miniwob.py [--out benchmarks/results/bench_miniwob.json]
"""

from __future__ import annotations

import argparse

from gui_gym.cli.bench.miniwob import DEFAULT_TASKS, format_report, run


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="benchmarks/results/bench_miniwob.json")
    parser.add_argument("--episodes", type=int, default=20, help="expert episodes per task")
    parser.add_argument("--tasks", nargs="*", default=list(DEFAULT_TASKS))
    args = parser.parse_args()
    report = run(args.tasks, args.episodes, out=args.out)
    print(format_report(report))
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
