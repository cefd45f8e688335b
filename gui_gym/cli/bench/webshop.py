"""WebShop speed: catalog and index build, search latency, index memory, env steps/s, and the
baseline agents' scores, written as JSON (``gui-gym bench --webshop``).

* **build**: the 100,000-product catalog generated and its BM25 index built, into an empty
  cache folder (so nothing is reused), then both read back from that cache;
* **search**: latency of uncached searches on the 100,000 catalog, for the test goals'
  instructions (long queries, what the greedy baseline sends) and for product-type names
  (short queries);
* **memory**: bytes of the 100,000 index's score arrays, its vocabulary, and its size on disk;
* **env**: random-policy steps/s of both ids on the default 10,000 catalog (the same
  measurement as ``gui-gym bench``), and steps/s over whole greedy-agent episodes, where every
  episode searches a query never seen before;
* **agents**: success rate and mean reward of the oracle, the BM25-greedy baseline and the
  random agent on the test goals.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import gui_gym
from gui_gym.cli.bench.envs import bench_gui_env, pin_to_one_core
from gui_gym.cli.bench.summary import machine
from gui_gym.core.trajectory import atomic_write_text

__all__ = [
    "bench_agents",
    "bench_build",
    "bench_compile",
    "bench_search",
    "check_search",
    "format_report",
    "format_search_report",
    "run",
    "run_search",
]


def _folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def bench_build(size: int = 100_000, keep_in: Path | None = None) -> dict[str, Any]:
    """Time generating the catalog and building its index from scratch, then loading both from
    the cache; report the index's memory and disk size.

    Args:
        size: Catalog size.
        keep_in: An empty cache folder to build in and keep (so :func:`bench_search` can reuse
            a 1,000,000 catalog); by default a temp folder, removed after.
    """
    from gui_gym.envs.webshop.catalog import catalog_path, load_catalog
    from gui_gym.envs.webshop.search import index_path, load_index

    if keep_in is not None and any(Path(keep_in).glob("catalog-*")):
        raise ValueError(f"{keep_in} already holds a catalog: the build would not be timed")
    folder = (
        Path(keep_in)
        if keep_in is not None
        else Path(tempfile.mkdtemp(prefix="gui-gym-webshop-bench-"))
    )
    try:
        t0 = time.perf_counter()
        catalog = load_catalog(size, folder=folder)
        t1 = time.perf_counter()
        index = load_index(catalog, folder=folder)
        t2 = time.perf_counter()
        catalog = load_catalog(size, folder=folder)
        t3 = time.perf_counter()
        index = load_index(catalog, folder=folder)
        t4 = time.perf_counter()
        return {
            "products": size,
            "goals": len(catalog.goals),
            "catalog_build_s": t1 - t0,
            "index_build_s": t2 - t1,
            "build_total_s": t2 - t0,
            "catalog_load_s": t3 - t2,
            "index_load_s": t4 - t3,
            "catalog_file_bytes": catalog_path(size, folder=folder).stat().st_size,
            "index_disk_bytes": _folder_bytes(index_path(catalog, folder)),
            "index_array_bytes": index.nbytes,
            "index_nonzeros": len(index.data),
            "vocabulary_terms": len(index.vocab),
        }
    finally:
        if keep_in is None:
            shutil.rmtree(folder, ignore_errors=True)


def _percentiles(ms: list[float]) -> dict[str, Any]:
    return {
        "queries": len(ms),
        "p50_ms": statistics.median(ms),
        "p95_ms": float(np.percentile(ms, 95)),
        "p99_ms": float(np.percentile(ms, 99)),
        "max_ms": max(ms),
    }


def bench_search(size: int = 100_000, queries: int = 1000, check: int = 0) -> dict[str, Any]:
    """Latency of uncached searches (milliseconds) on the catalog of ``size`` products.

    Args:
        size: Catalog size (read from the cache, built there when missing).
        queries: Goal instructions to time.
        check: When above 0, also compare the search with the reference full pass (numpy,
            every product scored) on that many goal instructions, 100 random word lists and
            edge queries, for k = 50 and 3; the report counts the differences (0 expected)
            and times the reference on the instructions, in the same process.
    """
    from gui_gym.envs.webshop.env import get_world
    from gui_gym.envs.webshop.search import tokenize
    from gui_gym.envs.webshop.tasks import instruction_query

    world = get_world(size)
    index = world.index
    long_queries = [instruction_query(g.instruction) for g in world.catalog.goals[:queries]]
    short_queries = sorted({p.product_type.goal_names[0] for p in world.catalog})

    def latencies(texts: list[str], search: Any = index._search) -> list[float]:
        out = []
        for text in texts:
            terms = tuple(tokenize(text))
            t0 = time.perf_counter()
            search(terms, 50)  # the uncached path
            out.append((time.perf_counter() - t0) * 1000)
        return out

    blocked = index._blocked()
    t0 = time.perf_counter()
    latencies(long_queries[:1])  # the first search lays out the blocks and loads the kernels
    first_s = time.perf_counter() - t0
    latencies(long_queries[:20])  # warm up caches of the CPU, not of the index
    result: dict[str, Any] = {
        "products": size,
        "method": "block-max" if blocked else "full pass",
        "kernel": "numba" if index._use_compiled() else "numpy",
        "block_size": index.block_size if blocked else None,
        "first_search_s": first_s,
        "index_array_bytes": index.nbytes,
        "layout_bytes": index.layout_nbytes,
    }
    for name, texts in (("instruction", long_queries), ("type_name", short_queries)):
        result[name] = _percentiles(latencies(texts))
    if check > 0:
        result["exactness"] = check_search(world, check)
    result["peak_rss_bytes"] = _peak_rss()
    return result


def check_search(world: Any, instructions: int) -> dict[str, Any]:
    """Compare ``world.index``'s search with the reference full pass (numpy, every product
    scored, selection by partition and lexsort) over ``instructions`` goal instructions, 100
    random word lists (seed 0) and edge queries, for k = 50 and k = 3."""
    import random

    from gui_gym.envs.webshop.search import SearchIndex, tokenize
    from gui_gym.envs.webshop.tasks import instruction_query

    index = world.index
    reference = SearchIndex(index.data, index.indices, index.indptr, index.vocab, index.num_docs)
    reference.compiled, reference.blocks_from = False, index.num_docs + 1
    rng = random.Random(0)
    words = sorted(index.vocab)
    goals = world.catalog.goals[:instructions]
    texts = [instruction_query(g.instruction) for g in goals]
    texts += [" ".join(rng.choices(words, k=rng.randint(1, 25))) for _ in range(100)]
    texts += ["", "qwertyuiop", "shampoo shampoo shampoo dry", world.catalog[0].title]
    differences, examples, reference_ms = 0, [], []
    for i, text in enumerate(texts):
        terms = tuple(tokenize(text))
        for k in (50, 3):
            t0 = time.perf_counter()
            expected = reference._search(terms, k)
            if k == 50 and i < len(goals):
                reference_ms.append((time.perf_counter() - t0) * 1000)
            if index._search(terms, k) != expected:
                differences += 1
                if len(examples) < 5:
                    examples.append({"query": text, "k": k})
    return {
        "queries": len(texts),
        "k": [50, 3],
        "comparisons": 2 * len(texts),
        "differences": differences,
        "examples": examples,
        "reference": "numpy full pass",
        "reference_instruction": _percentiles(reference_ms) if reference_ms else None,
    }


def _peak_rss() -> int | None:
    try:
        import resource
    except ImportError:  # not on this platform
        return None
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # KiB on Linux


def bench_compile() -> dict[str, Any]:
    """Seconds to compile the numba search kernels on first use (a fresh process with an empty
    numba cache), and to load them from that cache in a second process; None without numba."""
    import subprocess
    import sys

    from gui_gym.envs.webshop.search import compiled_kernels

    if compiled_kernels() is None:
        return {"compile_s": None, "cached_load_s": None}
    code = (  # both searches of a tiny index: the loops and argument types a catalog uses
        "import time, numpy as np\n"
        "t0 = time.perf_counter()\n"
        "from gui_gym.envs.webshop.search import SearchIndex\n"
        "ip, ix = np.array([0, 2, 3]), np.array([0, 1, 1], np.int32)\n"
        "index = SearchIndex(np.ones(3, np.float32), ix, ip, {'a': 0, 'b': 1}, 2, ['x', 'y'])\n"
        "index.blocks_from = 10**9; index._search(('a', 'b'), 1)\n"
        "index.blocks_from = 0; index._search(('a', 'b'), 1)\n"
        "print(time.perf_counter() - t0)\n"
    )
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="gui-gym-numba-") as folder:
        env = {**os.environ, "NUMBA_CACHE_DIR": folder}
        for name in ("compile_s", "cached_load_s"):
            done = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            )
            out[name] = float(done.stdout.split()[-1])
    return out


def run_search(
    out: str | Path | None = None,
    size: int = 1_000_000,
    queries: int = 1000,
    check: int = 400,
    pin: bool = True,
) -> dict[str, Any]:
    """Only the search measurements (no build): latency, exactness against the full pass,
    index and layout memory, numba compile time, on the cached catalog of ``size``."""
    cpu = pin_to_one_core() if pin else None
    report = {
        "benchmark": "webshop-search",
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {**machine(), "pinned_cpu": cpu},
        "versions": _versions(),
        "compile": bench_compile(),
        "search": bench_search(size, queries, check=check),
    }
    report["machine"]["load_average_after"] = machine()["load_average_1_5_15_min"]
    search = report["search"]
    report["headline"] = {  # what `gui-gym bench` summaries show
        "products": size,
        "instruction_p50_ms": search["instruction"]["p50_ms"],
        "instruction_p99_ms": search["instruction"]["p99_ms"],
        "differences_from_full_pass": search.get("exactness", {}).get("differences"),
    }
    if out is not None:
        atomic_write_text(out, json.dumps(report, indent=1) + "\n")
    return report


def _versions() -> dict[str, Any]:
    try:
        import numba

        numba_version = numba.__version__
    except ImportError:
        numba_version = None
    return {"gui_gym": gui_gym.__version__, "numpy": np.__version__, "numba": numba_version}


def format_search(s: dict[str, Any]) -> str:
    """One line of a :func:`bench_search` result (and one for its exactness check)."""
    line = (
        f"search on {s['products']:,} ({s.get('method', 'full pass')}, "
        f"{s.get('kernel', 'numpy')}): instruction p50 {s['instruction']['p50_ms']:.2f} ms "
        f"(p95 {s['instruction']['p95_ms']:.2f}, p99 {s['instruction']['p99_ms']:.2f}), type "
        f"name p50 {s['type_name']['p50_ms']:.2f} ms (p99 {s['type_name']['p99_ms']:.2f})"
    )
    if "first_search_s" in s:
        line += (
            f"; first search {s['first_search_s']:.1f} s, index {s['index_array_bytes'] / 2**20:.0f}"
            f" MiB + layout {s['layout_bytes'] / 2**20:.0f} MiB"
        )
    check = s.get("exactness")
    if check:
        ref = check["reference_instruction"]
        line += (
            f"\nexactness: {check['differences']} differences in {check['comparisons']} "
            f"comparisons ({check['queries']} queries x k = 50, 3) against the {check['reference']}"
            f" (its p50 {ref['p50_ms']:.2f} ms, p99 {ref['p99_ms']:.2f} ms)"
        )
    return line


def format_search_report(report: dict[str, Any]) -> str:
    """A plain-text summary of a :func:`run_search` report."""
    c, m = report["compile"], report["machine"]
    lines = [format_search(report["search"])]
    if c["compile_s"] is not None:
        lines.append(
            f"numba kernels: compile {c['compile_s']:.1f} s on first use, {c['cached_load_s']:.1f}"
            " s from the cache"
        )
    rss = report["search"].get("peak_rss_bytes")
    if rss:
        lines.append(f"peak process memory {rss / 2**30:.1f} GiB")
    lines.append(
        f"load average {m['load_average_1_5_15_min']} before, {m['load_average_after']} after"
    )
    return "\n".join(lines)


def bench_agents(size: int = 10_000, env_id: str = "GuiGym/WebShop-Text-v0") -> dict[str, Any]:
    """Success rate, mean reward and steps of the oracle, greedy and random agents on every
    test goal; steps/s over the greedy agent's episodes (one new search each)."""
    from gui_gym.agents import OracleAgent, RandomAgent, WebShopGreedyAgent, run_episode

    env = gym.make(env_id, catalog_size=size, split="test")
    tasks = env.unwrapped.suite.select("test")
    factories = {
        "oracle": lambda i: OracleAgent(env),
        "webshop-greedy": lambda i: WebShopGreedyAgent(env),
        "random": lambda i: RandomAgent(env, seed=i),
    }
    out: dict[str, Any] = {"env_id": env_id, "products": size, "test_goals": len(tasks)}
    for name, factory in factories.items():
        rewards, successes, steps = [], [], []
        t0 = time.perf_counter()
        for i, task in enumerate(tasks):
            trajectory = run_episode(env, factory(i), seed=i, options={"task": task.task_id})
            rewards.append(trajectory.task_reward)
            successes.append(trajectory.success)
            steps.append(len(trajectory.steps))
        elapsed = time.perf_counter() - t0
        out[name] = {
            "success_rate": float(np.mean(successes)),
            "mean_reward": float(np.mean(rewards)),
            "mean_steps": float(np.mean(steps)),
            "episode_steps_per_s": sum(steps) / elapsed,
        }
    env.close()
    return out


def run(
    out: str | Path | None = None,
    build_size: int = 100_000,
    env_steps: int = 20_000,
    pin: bool = True,
) -> dict[str, Any]:
    """Every WebShop measurement; JSON written to ``out`` when given."""
    cpu = pin_to_one_core() if pin else None
    if build_size >= 1_000_000:  # build once, in a private cache the search then reads
        search_cache = Path(tempfile.mkdtemp(prefix="gui-gym-webshop-bench-"))
        previous = os.environ.get("GUI_GYM_CACHE")
        try:
            build = bench_build(build_size, keep_in=search_cache / "webshop")
            os.environ["GUI_GYM_CACHE"] = str(search_cache)
            search = bench_search(build_size)
        finally:
            if previous is None:
                os.environ.pop("GUI_GYM_CACHE", None)
            else:
                os.environ["GUI_GYM_CACHE"] = previous
            from gui_gym.envs.webshop.env import get_world

            get_world.cache_clear()
            shutil.rmtree(search_cache, ignore_errors=True)
    else:
        build = bench_build(build_size)
        search = bench_search(build_size)
    envs = []
    for env_id in ("GuiGym/WebShop-v0", "GuiGym/WebShop-Text-v0"):
        for screenshot, steps in ((False, env_steps), (True, max(200, env_steps // 10))):
            envs.append(bench_gui_env(env_id, steps, 200, screenshot))
    report = {
        "benchmark": "webshop",
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {**machine(), "pinned_cpu": cpu},
        "versions": _versions(),
        "build": build,
        "search": search,
        "env": envs,
        "agents": [bench_agents(1_000), bench_agents(10_000)],
    }
    if out is not None:
        atomic_write_text(out, json.dumps(report, indent=1) + "\n")
    return report


def format_report(report: dict[str, Any]) -> str:
    """A plain-text summary of a :func:`run` report."""
    b, s = report["build"], report["search"]
    lines = [
        f"build {b['products']:,} products: catalog {b['catalog_build_s']:.1f} s + index "
        f"{b['index_build_s']:.1f} s = {b['build_total_s']:.1f} s; from cache "
        f"{b['catalog_load_s']:.2f} s + {b['index_load_s']:.2f} s",
        f"index: {b['index_array_bytes'] / 2**20:.1f} MiB arrays ({b['index_nonzeros']:,} "
        f"non-zeros, {b['vocabulary_terms']:,} terms), {b['index_disk_bytes'] / 2**20:.1f} MiB "
        f"on disk; catalog file {b['catalog_file_bytes'] / 2**20:.1f} MiB",
        format_search(s),
    ]
    for r in report["env"]:
        lines.append(
            f"{r['id']:<26} screenshot={r['screenshot']!s:<5} {r['steps_per_s']:>8,.0f} steps/s "
            f"{r['resets_per_s']:>8,.0f} resets/s"
        )
    for a in report["agents"]:
        for name in ("oracle", "webshop-greedy", "random"):
            r = a[name]
            lines.append(
                f"{a['products']:>7,} catalog, {a['test_goals']} test goals: {name:<15} success "
                f"{r['success_rate']:.1%} reward {r['mean_reward']:.3f} steps {r['mean_steps']:.1f}"
                f" ({r['episode_steps_per_s']:,.0f} steps/s)"
            )
    return "\n".join(lines)
