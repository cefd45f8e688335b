"""Generate the WebShop catalogs and their search indexes into the cache (or another folder).

The envs do this themselves on first use; run this to prepare a machine ahead of time (a CI
cache, a cluster's shared disk via GUI_GYM_CACHE), or to see the hash, sizes and timings.
Generation is deterministic: the same seed gives byte-identical catalogs on any machine.

Usage: python scripts/generate_webshop.py [--sizes 1000 10000 100000] [--cache-dir DIR]
           [--seed N] [--out catalog.json]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from gui_gym.core.trajectory import atomic_write_text
from gui_gym.envs.webshop.catalog import (
    CATALOG_SEED,
    CATALOG_SIZES,
    cache_dir,
    catalog_json,
    catalog_path,
    load_catalog,
)
from gui_gym.envs.webshop.generate import generate_catalog_data
from gui_gym.envs.webshop.search import index_path, load_index


def prepare(size: int, seed: int = CATALOG_SEED, folder: Path | None = None) -> dict[str, Any]:
    """Load or build the catalog of ``size`` products and its index in ``folder``; returns
    its hash, file paths and timings."""
    t0 = time.perf_counter()
    catalog = load_catalog(size, seed, folder)
    t1 = time.perf_counter()
    load_index(catalog, folder)
    t2 = time.perf_counter()
    return {
        "size": size,
        "hash": catalog.hash,
        "goals": len(catalog.goals),
        "catalog": catalog_path(size, seed, folder),
        "index": index_path(catalog, folder),
        "catalog_s": t1 - t0,
        "index_s": t2 - t1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=list(CATALOG_SIZES))
    parser.add_argument("--seed", type=int, default=CATALOG_SEED)
    parser.add_argument("--cache-dir", type=Path, default=None, help="default: $GUI_GYM_CACHE")
    parser.add_argument(
        "--out", type=Path, default=None, help="also write the (single) catalog's JSON here"
    )
    args = parser.parse_args()
    for size in args.sizes:
        if size not in CATALOG_SIZES:
            parser.error(f"--sizes: {size} is not one of {CATALOG_SIZES}")
    if args.out is not None:
        if len(args.sizes) != 1:
            parser.error("--out needs exactly one --sizes value")
        atomic_write_text(args.out, catalog_json(generate_catalog_data(args.sizes[0], args.seed)))
        print(f"catalog written to {args.out}")
        return
    print(f"cache folder: {args.cache_dir or cache_dir()}")
    for size in args.sizes:
        r = prepare(size, args.seed, args.cache_dir)
        print(
            f"{size:>7,} products, {r['goals']:,} goals, hash {r['hash'][:16]}: catalog "
            f"{r['catalog_s']:.1f} s ({r['catalog'].stat().st_size / 2**20:.1f} MiB), index "
            f"{r['index_s']:.1f} s"
        )


if __name__ == "__main__":
    main()
