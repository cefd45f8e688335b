"""Environment speed benchmark (also ``gui-gym bench``): steps/s and resets/s per id, text-only
and with screenshots, and CartPole-v1 in the same run for a machine-independent ratio.

Usage: python benchmarks/bench_envs.py [--out benchmarks/results/bench_envs.json] [--steps N]
"""

from __future__ import annotations

import argparse

from gui_gym.cli.bench.envs import format_report, run


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="benchmarks/results/bench_envs.json")
    parser.add_argument("--steps", type=int, default=20_000, help="text-only steps per id")
    parser.add_argument("--screenshot-steps", type=int, default=2_000)
    parser.add_argument("--ids", nargs="*", default=None)
    parser.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    args = parser.parse_args()
    report = run(args.ids, args.steps, args.screenshot_steps, out=args.out, pin=not args.no_pin)
    print(format_report(report))
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
