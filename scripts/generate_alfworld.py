"""Build ALFWorld game folders into the cache ahead of use.

``GuiGym/ALFWorld-v0`` builds a game on its first use (generation, PDDL translation, and a
planner check that it is solvable and not won at step 0); run this to prepare a machine or a
shared cache (``GUI_GYM_CACHE``) before training, in parallel worker processes. Generation is
deterministic: the same split, index and seed give the same game on any machine. The planner
check runs under a CPU-time and memory bound (``GUI_GYM_ALFWORLD_PLANNER_CPU_S``, default 300;
``GUI_GYM_ALFWORLD_PLANNER_MEMORY_MB``, default 256); a placement it cannot solve within it is
replaced by the game's next draw (shown as ``draw N``; ``build.json`` in the folder says why).

Usage: python scripts/generate_alfworld.py [--split train] [--start 0] [--count 100]
           [--seed 0] [--workers 2]
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from gui_gym.envs.alfworld.env import build_game, game_dir
from gui_gym.envs.alfworld.generate import COUNTS, SPLITS


def prepare(split: str, index: int, seed: int) -> dict[str, Any]:
    """Build (or find) one game folder; its path, build time and task type."""
    import json

    folder = game_dir(split, index, seed)
    t0 = time.perf_counter()
    built = not (folder / "game.tw-pddl").exists()
    if built:
        build_game(split, index, seed, folder)
    task_type = json.loads((folder / "traj_data.json").read_text())["task_type"]
    try:
        build = json.loads((folder / "build.json").read_text())
    except (OSError, ValueError):
        build = {}
    return {
        "game": f"{split}/{index:04d}",
        "type": task_type,
        "built": built,
        "seconds": time.perf_counter() - t0,
        "draw": build.get("draw", 0),
        "planner_cpu_s": build.get("planner_cpu_s"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", choices=SPLITS, default="train")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=None, help="default: the whole split")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    end = COUNTS[args.split] if args.count is None else args.start + args.count
    if not 0 <= args.start < end:
        parser.error(f"--start and --count must select games in 0..{COUNTS[args.split] - 1}")
    indices = range(args.start, end)
    with ProcessPoolExecutor(max_workers=max(1, args.workers)) as pool:
        futures = [pool.submit(prepare, args.split, i, args.seed) for i in indices]
        for future in futures:
            row = future.result()
            state = "built" if row["built"] else "cached"
            extra = f" (draw {row['draw']})" if row["draw"] else ""
            print(
                f"{row['game']} {row['type']:<31} {state} {row['seconds']:.1f} s{extra}",
                flush=True,
            )
    print(f"games in {game_dir(args.split, 0, args.seed).parent}")


if __name__ == "__main__":
    main()
