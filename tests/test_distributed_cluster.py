"""The Ray env pool on a real multi-node Ray cluster (no root needed).

``ray.cluster_utils.Cluster`` runs a head and two worker raylets on this host: separate Ray
nodes (own raylet, object store, node id and resources) that happen to share an address.
The head offers no CPU, so every env worker must land on a worker node; the test checks that
``RayVectorEnv`` spreads them over both, that ``collect_episodes`` survives losing a whole
node mid-episode (its workers rerun on the surviving node, every episode returned once, as
an undisturbed run gives it), and that no worker process outlives ``close()``.

The multi-host version (network namespaces, distinct IPs, ``ray start``) is
``scripts/ray_cluster_local.sh``; see docs/distributed.md.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.distributed import RayVectorEnv, WorkerRestartWarning, collect_episodes
from tests.conftest import require
from tests.test_distributed import first_candidate_policy, pids_alive

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def cluster():
    ray = require("ray", "distributed")
    if ray.is_initialized():  # another module's local Ray: this one needs its own cluster
        ray.shutdown()
    from ray.cluster_utils import Cluster

    # Fast node-failure detection (the default waits ~15 s of missed health checks).
    system_config = {
        "health_check_initial_delay_ms": 0,
        "health_check_period_ms": 500,
        "health_check_failure_threshold": 3,
    }
    head_args = {"num_cpus": 0, "include_dashboard": False, "_system_config": system_config}
    nodes = Cluster(initialize_head=True, head_node_args=head_args)
    workers = [nodes.add_node(num_cpus=2) for _ in range(2)]
    try:
        ray.init(address=nodes.address, log_to_driver=False)
        nodes.wait_for_nodes()
        yield nodes, workers
    finally:
        ray.shutdown()
        nodes.shutdown()


def make_android() -> gym.Env:
    return gym.make("GuiGym/AndroidWorld-v0", max_steps=3)


def test_workers_spread_over_nodes_and_survive_losing_a_node(cluster):
    import ray

    nodes, (first, second) = cluster
    alive = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    assert {nodes.head_node.node_id, first.node_id, second.node_id} <= alive

    # Half a CPU each: two per worker node when spread, four fit on one node after a loss.
    options = {"scheduling_strategy": "SPREAD", "num_cpus": 0.5}
    envs = RayVectorEnv(make_android, 4, step_timeout=30, actor_options=options)
    pids: list[int] = []
    try:
        placements = envs.worker_placements()
        pids = [p["pid"] for p in placements]
        on_node = [p["node_id"] for p in placements]
        assert sorted(on_node) == sorted([first.node_id] * 2 + [second.node_id] * 2)
        undisturbed = collect_episodes(envs, first_candidate_policy, 8, base_seed=40)
        calls = {"n": 0}

        def policy_losing_a_node(observations, infos):
            calls["n"] += 1
            if calls["n"] == 2:  # mid-episode: every worker has taken a step
                nodes.remove_node(second)  # its raylet and its env workers die
            return first_candidate_policy(observations, infos)

        with pytest.warns(WorkerRestartWarning, match="during episode"):
            episodes = collect_episodes(envs, policy_losing_a_node, 8, base_seed=40)
        moved = envs.worker_placements()
        pids += [p["pid"] for p in moved]
    finally:
        envs.close()
    assert [e.index for e in episodes] == list(range(8))
    assert not any(e.lost for e in episodes)
    # the two episodes on the lost node ran twice and are counted once
    assert sum(e.attempts for e in episodes) == 10
    assert envs.restarts == 2
    for got, want in zip(episodes, undisturbed):
        assert got.actions == want.actions and got.rewards == want.rewards
        assert got.final_info["task_id"] == want.final_info["task_id"]
    assert {p["node_id"] for p in moved} == {first.node_id}
    assert second.node_id not in {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    assert pids_alive(pids) == []
