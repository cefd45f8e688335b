"""RayVectorEnv on a multi-node Ray cluster: placement, speed, and surviving a lost node.

Run it as the driver of a running cluster (``ray start --head`` on one node, ``ray start
--address=...`` on the others); ``scripts/ray_cluster_local.sh`` builds such a cluster on
one Linux host out of network namespaces (three nodes with distinct IPs) and runs this.

What it measures, for each env of ``benchmarks/bench_ray.py``, in one run:

* ``direct``: one env stepped in this process; ``sync_2``: ``SyncVectorEnv`` with 2 envs;
* ``ray_1_head`` / ``ray_1_remote``: one Ray worker on the driver's node / on a worker node:
  their step time minus ``direct`` is the per-step cost of a same-node / cross-node hop;
* ``ray_2_head``: 2 workers on the driver's node (the one-node pool);
* ``ray_2_cluster``: 2 workers spread over the worker nodes (one each, checked).

Then, with ``--kill-node-ip``, ``collect_episodes`` over 4 workers spread over the worker
nodes while that node's raylet and its workers are killed mid-run (SIGKILL, as a machine
crash): the episodes returned, how many reran, where the workers ended up, how long it took.

Usage::

    nice -n 10 scripts/ray_cluster_local.sh --steps 1000   # builds the cluster, runs this
    python benchmarks/bench_ray_cluster.py --address HEAD_IP:6379 --worker-ips IP1 IP2 \\
        [--kill-node-ip IP2] [--out benchmarks/results/bench_ray_cluster.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

import gui_gym  # noqa: F401  (registers the ids)
from benchmarks.bench_ray import CONFIGS, baseline_row, time_vector
from gui_gym.distributed import RayVectorEnv, collect_episodes, episode_stats

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the harness, when loaded by path too
from harness import machine_at_end, write_json


def cluster_nodes() -> list[dict[str, Any]]:
    """``ray.nodes()``, reduced to what the report needs."""
    import ray

    return [
        {
            "node_id": n["NodeID"],
            "ip": n["NodeManagerAddress"],
            "alive": n["Alive"],
            "cpus": n["Resources"].get("CPU", 0.0),
            "env_host": n["Resources"].get("env_host", 0.0),
        }
        for n in ray.nodes()
    ]


def on_node(node_id: str) -> dict[str, Any]:
    """Actor options pinning a worker to one node (hard affinity)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node_id, soft=False)}


def timed_pool(
    make: Callable[[], gym.Env], n: int, options: dict[str, Any], batches: list[Any]
) -> tuple[dict[str, Any], list[str]]:
    """Start a pool of ``n`` workers with ``options``, time it, return its node IPs."""
    started = time.perf_counter()
    pool = RayVectorEnv(make, n, actor_options=options)
    start_seconds = time.perf_counter() - started
    try:
        ips = [p["node_ip"] for p in pool.worker_placements()]
        timing = time_vector(pool, batches)
    finally:
        pool.close()
    timing["start_seconds"] = round(start_seconds, 2)
    timing["worker_ips"] = ips
    return timing, ips


def kill_node(ip: str) -> list[int]:
    """SIGKILL the raylet of the node at ``ip`` on this host and every process under it
    (its env workers): a crashed machine, as far as Ray can tell."""
    import psutil

    killed = []
    for process in psutil.process_iter(["name", "cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if "raylet" in (process.info["name"] or "") and f"={ip}" in cmdline:
            for victim in [*process.children(recursive=True), process]:
                try:
                    victim.kill()
                    killed.append(victim.pid)
                except psutil.NoSuchProcess:
                    pass
    if not killed:
        raise RuntimeError(f"no raylet with node address {ip} runs on this host")
    return killed


def node_loss_run(ip: str, episodes: int) -> dict[str, Any]:
    """collect_episodes on 4 workers spread over the worker nodes; the node at ``ip`` is
    killed once the workers are mid-episode."""
    from benchmarks.bench_ray import wikihow_text

    # Half an env_host slot each: a node holds 4 after the other is lost.
    options = {"resources": {"env_host": 0.5}, "scheduling_strategy": "SPREAD", "num_cpus": 0}
    pool = RayVectorEnv(wikihow_text, 4, step_timeout=120, actor_options=options)
    calls = {"n": 0}
    killed: list[int] = []
    actions = ["CLICK(1)", "SCROLL(down)", "CLICK(2)", "GOBACK()", "CLICK(0)"]

    def policy(observations: list[Any], infos: list[dict[str, Any]]) -> list[str]:
        calls["n"] += 1
        if calls["n"] == 20:
            killed.extend(kill_node(ip))
        return [actions[(i["episode"] + i["episode_step"]) % len(actions)] for i in infos]

    try:
        before = [p["node_ip"] for p in pool.worker_placements()]
        started = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = collect_episodes(pool, policy, episodes, base_seed=0)
        seconds = time.perf_counter() - started
        after = [p["node_ip"] for p in pool.worker_placements()]
    finally:
        pool.close()
    return {
        "episodes_requested": episodes,
        "episodes_returned": len(result),
        "distinct_indices": len({e.index for e in result}),
        "reran": sum(e.attempts > 1 for e in result),
        "attempts": sum(e.attempts for e in result),
        "stats": episode_stats(result),
        "restarts": pool.restarts,
        "killed_pids": len(killed),
        "worker_ips_before": before,
        "worker_ips_after": after,
        "warnings": sorted({str(w.message) for w in caught})[:6],
        "seconds": round(seconds, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", required=True, help="the head's HOST:PORT")
    parser.add_argument("--worker-ips", nargs="+", required=True, help="the worker nodes' IPs")
    parser.add_argument("--steps", type=int, default=1000, help="vector steps per arm")
    parser.add_argument("--episodes", type=int, default=40, help="episodes of the node-loss run")
    parser.add_argument("--kill-node-ip", default=None, help="kill this worker node mid-run")
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/bench_ray_cluster.json")
    )
    args = parser.parse_args()
    import ray

    started = time.perf_counter()
    ray.init(address=args.address, log_to_driver=False)
    connect_seconds = time.perf_counter() - started
    try:
        nodes = cluster_nodes()
        head_ip = args.address.rsplit(":", 1)[0]
        by_ip = {n["ip"]: n for n in nodes if n["alive"]}
        missing = [ip for ip in [head_ip, *args.worker_ips] if ip not in by_ip]
        if missing:
            raise SystemExit(f"no live Ray node at {missing}; the cluster has {sorted(by_ip)}")
        head = by_ip[head_ip]
        remote = by_ip[args.worker_ips[0]]
        print(f"{len(by_ip)} live nodes: {sorted(by_ip)}", flush=True)
        results: dict[str, Any] = {}
        for name, make in CONFIGS.items():
            row, batches1, batches2 = baseline_row(name, make, args.steps)
            row["ray_1_head"], _ = timed_pool(make, 1, on_node(head["node_id"]), batches1)
            row["ray_1_remote"], _ = timed_pool(make, 1, on_node(remote["node_id"]), batches1)
            row["ray_2_head"], _ = timed_pool(make, 2, on_node(head["node_id"]), batches2)
            spread = {"resources": {"env_host": 1}, "scheduling_strategy": "SPREAD"}
            row["ray_2_cluster"], ips = timed_pool(make, 2, spread, batches2)
            if sorted(ips) != sorted(args.worker_ips[:2]):
                raise RuntimeError(
                    f"the spread pool's workers ran on {ips}, not one per worker node"
                )
            direct_us = row["direct"]["us_per_step"]
            row["hop_us_per_step"] = {
                "same_node": round(row["ray_1_head"]["us_per_vector_step"] - direct_us, 1),
                "cross_node": round(row["ray_1_remote"]["us_per_vector_step"] - direct_us, 1),
            }
            rate = {k: row[k]["env_steps_per_s"] for k in ("sync_2", "ray_2_head", "ray_2_cluster")}
            row["cluster_vs_sync"] = round(rate["ray_2_cluster"] / rate["sync_2"], 3)
            row["cluster_vs_one_node"] = round(rate["ray_2_cluster"] / rate["ray_2_head"], 3)
            results[name] = row
            print(
                f"{name}: direct {row['direct']['env_steps_per_s']:.0f}/s, sync x2 "
                f"{rate['sync_2']:.0f}/s, ray x2 one node {rate['ray_2_head']:.0f}/s, "
                f"ray x2 over 2 nodes {rate['ray_2_cluster']:.0f}/s; hop "
                f"{row['hop_us_per_step']['same_node']:.0f} us same node, "
                f"{row['hop_us_per_step']['cross_node']:.0f} us cross node",
                flush=True,
            )
        node_loss = None
        if args.kill_node_ip is not None:
            node_loss = node_loss_run(args.kill_node_ip, args.episodes)
            print(f"node loss: {json.dumps(node_loss)}", flush=True)
        nodes_at_end = cluster_nodes()
    finally:
        ray.shutdown()
    report = {
        "benchmark": "bench_ray_cluster",
        "address": args.address,
        "connect_seconds": round(connect_seconds, 2),
        "nodes": nodes,
        "nodes_at_end": nodes_at_end,
        "results": results,
        "node_loss": node_loss,
        "machine": machine_at_end(),
    }
    write_json(args.out, report, end="")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
