"""ALFWorld benchmark (also ``gui-gym bench --alfworld``): GuiGym/ALFWorld-v0 against raw
alfworld (TextWorld's PddlEnv with alfworld's demangler) on the same generated games and the
same random walk of admissible commands: steps/s, reset time, first-build time, and whether
every observation agreed.

Usage: python benchmarks/bench_alfworld.py [--games 6] [--steps 20]
       [--out benchmarks/results/bench_alfworld.json]
"""

from __future__ import annotations

import argparse

from gui_gym.cli.bench.alfworld import format_report, run


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="benchmarks/results/bench_alfworld.json")
    parser.add_argument("--games", type=int, default=6, help="train games (one per type first)")
    parser.add_argument("--steps", type=int, default=20, help="random-walk steps per game")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    report = run(args.out, games=args.games, steps=args.steps, seed=args.seed)
    print(format_report(report))
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
