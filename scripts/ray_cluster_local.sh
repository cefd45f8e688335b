#!/usr/bin/env bash
# A real multi-node Ray cluster on one Linux host, for benchmarks/bench_ray_cluster.py.
#
# Each "host" is a network namespace with its own address on a bridge (as machines on a LAN):
#
#   gg-rc-head  10.213.0.1  ray start --head  (the driver runs here too)
#   gg-rc-w1    10.213.0.2  ray start --address=10.213.0.1:6379
#   gg-rc-w2    10.213.0.3  ray start --address=10.213.0.1:6379
#
# The nodes talk over TCP between distinct IPs, as a real cluster's do (they still share this
# host's CPUs, disk and /dev/shm). Every process this script starts lives in one of its
# namespaces; on any exit (success, error, Ctrl-C) the trap kills exactly those processes
# (`ip netns pids`, never a name match and never `ray stop`, which would stop every Ray on
# the host), deletes the namespaces and the bridge, and checks that nothing is left.
#
# Usage (root; Linux with iproute2):
#   PYTHON=/path/to/python scripts/ray_cluster_local.sh [bench_ray_cluster.py arguments]
#   e.g. nice -n 10 scripts/ray_cluster_local.sh --steps 1000 \
#            --out benchmarks/results/bench_ray_cluster.json
set -euo pipefail

PYTHON=${PYTHON:-python}
RAY=${RAY:-$(dirname "$(command -v "$PYTHON")")/ray}
PREFIX=${GG_RC_PREFIX:-gg-rc}
SUBNET=${GG_RC_SUBNET:-10.213.0}
WORKER_CPUS=${GG_RC_WORKER_CPUS:-2}
HEAD_CPUS=${GG_RC_HEAD_CPUS:-1}
TMP_ROOT=${GG_RC_TMP:-/tmp/${PREFIX}}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BRIDGE=${PREFIX}-br
NODES=(head w1 w2)
HEAD_IP=${SUBNET}.1

die() { echo "ray_cluster_local.sh: $*" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || die "needs root (it creates network namespaces); run with sudo"
command -v ip >/dev/null || die "needs iproute2's ip"
[[ -x $RAY ]] || die "no ray executable at $RAY (set PYTHON to a Python with gui-gym[distributed])"
for node in "${NODES[@]}"; do
    if ip netns list | grep -qw "${PREFIX}-${node}"; then
        die "namespace ${PREFIX}-${node} exists: another run is going on or a previous one was killed with SIGKILL (ip netns del ${PREFIX}-${node})"
    fi
done

teardown() {
    local status=$?
    trap - EXIT INT TERM
    set +e
    for signal in TERM KILL; do
        for node in "${NODES[@]}"; do
            local pids
            pids=$(ip netns pids "${PREFIX}-${node}" 2>/dev/null)
            [[ -n $pids ]] && kill -s "$signal" $pids 2>/dev/null
        done
        for _ in $(seq 50); do  # up to 5 s for them to exit
            local left=0
            for node in "${NODES[@]}"; do
                [[ -n $(ip netns pids "${PREFIX}-${node}" 2>/dev/null) ]] && left=1
            done
            [[ $left -eq 0 ]] && break
            sleep 0.1
        done
    done
    local leftover=0
    for node in "${NODES[@]}"; do
        local pids
        pids=$(ip netns pids "${PREFIX}-${node}" 2>/dev/null)
        if [[ -n $pids ]]; then
            echo "ray_cluster_local.sh: processes left in ${PREFIX}-${node}: $pids" >&2
            leftover=1
        fi
        ip netns del "${PREFIX}-${node}" 2>/dev/null
        ip link del "${PREFIX}-${node}-v" 2>/dev/null
    done
    ip link del "$BRIDGE" 2>/dev/null
    rm -rf "$TMP_ROOT"
    # `ray start --head` records its address for `address="auto"` in /tmp/ray: drop ours.
    if grep -qs "^${HEAD_IP}:" /tmp/ray/ray_current_cluster; then rm -f /tmp/ray/ray_current_cluster; fi
    if [[ $leftover -eq 0 ]]; then
        echo "ray_cluster_local.sh: torn down; no process of the cluster is left" >&2
    else
        status=1
    fi
    exit "$status"
}
trap teardown EXIT INT TERM

# The LAN: a bridge, and one veth pair per node (one end in its namespace).
ip link add "$BRIDGE" type bridge
ip link set "$BRIDGE" up
number=1
for node in "${NODES[@]}"; do
    ns=${PREFIX}-${node}
    ip netns add "$ns"
    ip link add "${ns}-v" type veth peer name eth0 netns "$ns"
    ip link set "${ns}-v" master "$BRIDGE" up
    ip -n "$ns" addr add "${SUBNET}.${number}/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    number=$((number + 1))
done

# Ray 2.5x clusters authenticate every RPC with a shared token: one for this cluster, given to
# every node and the driver (on a real cluster, copy it to each node or set RAY_AUTH_TOKEN).
RAY_AUTH_TOKEN=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
in_ns() {
    local ns=$1
    shift
    ip netns exec "${PREFIX}-${ns}" env PYTHONPATH="$REPO" RAY_USAGE_STATS_ENABLED=0 \
        RAY_AUTH_MODE=token RAY_AUTH_TOKEN="$RAY_AUTH_TOKEN" "$@"
}

mkdir -p "$TMP_ROOT"
echo "starting the head at ${HEAD_IP}:6379 (${HEAD_CPUS} CPU)" >&2
in_ns head "$RAY" start --head --node-ip-address="$HEAD_IP" --port=6379 \
    --num-cpus="$HEAD_CPUS" --include-dashboard=false --disable-usage-stats \
    --temp-dir="$TMP_ROOT/head" >"$TMP_ROOT/head.log" 2>&1 || { cat "$TMP_ROOT/head.log" >&2; exit 1; }
number=2
for node in w1 w2; do
    ip_address=${SUBNET}.${number}
    echo "starting worker node $node at $ip_address (${WORKER_CPUS} CPUs)" >&2
    in_ns "$node" "$RAY" start --address="${HEAD_IP}:6379" --node-ip-address="$ip_address" \
        --num-cpus="$WORKER_CPUS" --resources="{\"env_host\": ${WORKER_CPUS}}" \
        --disable-usage-stats --temp-dir="$TMP_ROOT/$node" \
        >"$TMP_ROOT/$node.log" 2>&1 || { cat "$TMP_ROOT/$node.log" >&2; exit 1; }
    number=$((number + 1))
done

# The driver, on the head node (as on a real cluster's head).
in_ns head "$PYTHON" "$REPO/benchmarks/bench_ray_cluster.py" --address "${HEAD_IP}:6379" \
    --worker-ips "${SUBNET}.2" "${SUBNET}.3" --kill-node-ip "${SUBNET}.3" "$@"
