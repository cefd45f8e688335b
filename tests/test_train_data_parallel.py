"""Data-parallel training (train.data_parallel) with two real processes on gloo: an update of
a global batch equals the one-process update of it, only rank 0 writes files, and a resumed
two-process run makes exactly the uninterrupted run's next update."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require

torch = require("torch", "llm")
torch.set_num_threads(1)

from gui_gym.train import grpo, ppo  # noqa: E402
from gui_gym.train.config import TrainConfig  # noqa: E402
from gui_gym.train.data_parallel import DataParallel  # noqa: E402
from gui_gym.train.losses import TurnSample  # noqa: E402
from gui_gym.train.trainer import Trainer  # noqa: E402
from tests.rl_helpers import TASK, make_env, one_step_prompt, policy_folder  # noqa: E402

WORLD = 2


def _config(defaults: dict[str, Any], folder: Path | str, out: Path | str, **settings: Any):
    base = dict(
        model=str(folder),
        out=str(out),
        iterations=2,
        learning_rate=2e-2,
        update_epochs=2,
        mini_batch_turns=3,  # 7 turns: mini-batches of 3, 3 and 1 (one process gets none)
        micro_batch_turns=2,
        max_new_tokens=1,
        device="cpu",
        progress=False,
        save_every=1,
    )
    return TrainConfig.for_algorithm(defaults, **{**base, **settings})


def _global_batch() -> list[TurnSample]:
    """Seven turns of different lengths, advantages, critic targets and rollout values (some
    outside the value-clip band)."""
    rows = [
        ([9], [3, 1], [1.0, 1.0], 1.0),
        ([9, 4], [5], [-1.0], 0.0),
        ([9], [4, 6, 1], [0.5, 0.5, 0.5], 0.5),
        ([10], [3], [2.0], 1.0),
        ([9, 7, 8], [7, 1], [-0.3, -0.3], 0.1),
        ([10, 3], [8], [0.8], 0.2),
        ([9], [6, 1], [-1.5, -1.5], 0.0),
    ]
    return [
        TurnSample(prompt, completion, advantages, returns=target, old_value=0.3 - 0.1 * i)
        for i, (prompt, completion, advantages, target) in enumerate(rows)
    ]


def _ppo_update(folder: Path, out: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """One PPO update (policy and critic) of the global batch: the gradient each optimizer
    step applied (``step{k}.<name>``, after the all-reduce and clipping), the weights after
    it (``final.<name>``), and the update's statistics."""
    algorithm = ppo.PPO(make_env, [TASK], ppo.PPOConfig(critic_learning_rate=1e-2))
    trainer = Trainer(_config(ppo.TRAIN_DEFAULTS, folder, out), algorithm, prompt=one_step_prompt)
    named = [
        *(("policy." + n, p) for n, p in trainer.policy.model.named_parameters()),
        *(("critic." + n, p) for n, p in algorithm.critic.named_parameters()),
    ]
    seen: dict[str, Any] = {}

    def record(optimizer: Any, args: Any, kwargs: Any) -> None:
        step = len({key.split(".")[0] for key in seen})
        for name, param in named:
            if param.grad is not None:
                seen[f"step{step}.{name}"] = param.grad.detach().clone()

    handle = trainer.optimizer.register_step_pre_hook(record)
    stats = trainer.update(_global_batch())
    handle.remove()
    seen.update({f"final.{name}": param.detach().clone() for name, param in named})
    return seen, stats


def _grpo_trainer(folder: Path, out: Path | str, iterations: int) -> Trainer:
    algorithm = grpo.GRPO(make_env, [TASK], grpo.GRPOConfig(tasks_per_iteration=1))
    config = _config(grpo.TRAIN_DEFAULTS, folder, out, iterations=iterations, update_epochs=1)
    return Trainer(config, algorithm, prompt=one_step_prompt)


def _worker(rank: int, port: int, folder: str, root: str) -> None:
    """One of the two processes: the checks' data go to ``root/results``."""
    from safetensors.torch import save_file

    torch.set_num_threads(1)
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        WORLD_SIZE=str(WORLD),
        LOCAL_RANK=str(rank),
    )
    torch.distributed.init_process_group("gloo", rank=rank, world_size=WORLD)
    base, results = Path(root), Path(root) / "results"
    try:
        # 1. one update of the global batch
        weights, stats = _ppo_update(Path(folder), base / "update")
        save_file(weights, str(results / f"update{rank}.safetensors"))
        (results / f"stats{rank}.json").write_text(json.dumps(stats))

        # 2. training from a relative --out inside a per-process folder: what rank 1 would
        # write lands in its own folder
        own = base / f"cwd{rank}"
        own.mkdir()
        os.chdir(own)
        trainer = _grpo_trainer(Path(folder), "run", iterations=2)
        metrics = trainer.train()
        trained = {n: p.detach().clone() for n, p in trainer.policy.model.named_parameters()}
        save_file(trained, str(results / f"trained{rank}.safetensors"))
        (results / f"metrics{rank}.json").write_text(json.dumps(metrics))

        # 3. exact resume (a shared absolute --out)
        straight = _grpo_trainer(Path(folder), base / "straight", iterations=2)
        straight.train()
        _grpo_trainer(Path(folder), base / "resumed", iterations=1).train()
        resumed = _grpo_trainer(Path(folder), base / "resumed", iterations=2)
        start = resumed.iteration
        resumed.train()
        same = all(
            torch.equal(a, b)
            for a, b in zip(straight.policy.model.parameters(), resumed.policy.model.parameters())
        )
        (results / f"resume{rank}.json").write_text(json.dumps({"start": start, "same": same}))
    finally:
        torch.distributed.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def two_process_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Run :func:`_worker` in two spawned processes once; the folder and the policy."""
    root = tmp_path_factory.mktemp("dp")
    (root / "results").mkdir()
    folder = policy_folder(root / "policy")
    # forked, not spawned: the children start with torch and transformers imported (half the
    # CPU time); safe because every torch test module sets one thread at import, so no
    # OpenMP pool exists to be inherited, and each worker sets one thread again (as
    # DataLoader workers do)
    torch.multiprocessing.start_processes(
        _worker,
        args=(_free_port(), str(folder), str(root)),
        nprocs=WORLD,
        join=True,
        start_method="fork",
    )
    return root, folder


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_two_process_update_equals_the_one_process_update(
    two_process_run: tuple[Path, Path], tmp_path: Path
) -> None:
    from safetensors.torch import load_file

    root, folder = two_process_run
    alone, alone_stats = _ppo_update(folder, tmp_path / "alone")
    first = load_file(str(root / "results" / "update0.safetensors"))
    second = load_file(str(root / "results" / "update1.safetensors"))
    assert sorted(first) == sorted(alone)
    steps = {key.split(".")[0] for key in alone} - {"final"}
    assert len(steps) == 6  # 2 epochs of 3 mini-batches
    assert any(".critic." in key or key.startswith("step0.critic.") for key in alone)
    for key, value in alone.items():
        # both processes hold identical gradients and weights after every all-reduced step
        assert torch.equal(first[key], second[key]), key
        error = float((first[key] - value).abs().max())
        scale = float(value.abs().max())
        if key.startswith("step0."):
            # the first step's summed gradient is the one-process gradient of the mini-batch
            assert error <= 1e-5 * scale + 1e-10, (key, error, scale)
        elif key.startswith("step"):
            # later steps start from weights that differ by Adam-amplified round-off
            assert error <= 1e-3 * scale + 1e-9, (key, error, scale)
        else:
            # Adam divides by sqrt(v): round-off in a gradient that is zero in exact
            # arithmetic (GPT-2's key bias) moves a weight by a small fraction of lr (2e-2)
            assert error <= 1e-3, (key, error)
    stats = json.loads((root / "results" / "stats0.json").read_text())
    for key in ("pg_loss", "value_loss", "grad_norm", "clip_fraction"):
        assert stats[key] == pytest.approx(alone_stats[key], rel=1e-4, abs=1e-6), key
    assert stats["turns"] == alone_stats["turns"] == 7


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_only_rank_zero_writes_and_both_ranks_train_the_same_weights(
    two_process_run: tuple[Path, Path],
) -> None:
    from safetensors.torch import load_file

    root, _ = two_process_run
    run = root / "cwd0" / "run"
    assert sorted(p.name for p in run.iterdir()) == [
        "checkpoint",
        "config.json",
        "metrics.jsonl",
        "model",
    ]
    assert not (root / "cwd1" / "run").exists()  # rank 1 wrote nothing
    a = load_file(str(root / "results" / "trained0.safetensors"))
    b = load_file(str(root / "results" / "trained1.safetensors"))
    assert all(torch.equal(a[n], b[n]) for n in a)
    from gui_gym.train.trainer import TIMING_METRICS

    metrics = [
        [
            {k: v for k, v in m.items() if k not in TIMING_METRICS}  # each process's own clock
            for m in json.loads((root / "results" / f"metrics{r}.json").read_text())
        ]
        for r in (0, 1)
    ]
    assert metrics[0] == metrics[1]
    # each process rolled out half of the group of 8; every process saw all 8
    assert [m["episodes"] for m in metrics[0]] == [8, 8]
    state = json.loads((run / "checkpoint" / "trainer_state.json").read_text())
    assert state["world_size"] == 2 and len(state["ranks"]) == 1
    rng = load_file(str(run / "checkpoint" / "rng.safetensors"))
    assert not torch.equal(rng["torch_cpu"], rng["rank1.torch_cpu"])  # a stream per process


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_resumed_two_process_run_makes_the_uninterrupted_update(
    two_process_run: tuple[Path, Path],
) -> None:
    root, _ = two_process_run
    for rank in (0, 1):
        result = json.loads((root / "results" / f"resume{rank}.json").read_text())
        assert result == {"start": 1, "same": True}


def test_shards_cover_the_items_once_in_order() -> None:
    for count in (0, 1, 5, 8):
        parts = [list(DataParallel(r, 3).shard(count)) for r in range(3)]
        assert [i for part in parts for i in part] == list(range(count))
        assert max(map(len, parts)) - min(map(len, parts)) <= 1
    assert DataParallel(1, 2, local_rank=1).device("cuda") == "cuda:1"
    assert DataParallel().device("cuda") == "cuda"
    assert DataParallel(0, 2).seed(5) == 5 and DataParallel(1, 2).seed(5) != 5
    with pytest.raises(ValueError, match="rank 2 is not in a group of 2"):
        DataParallel(2, 2)


def test_one_process_collectives_are_identities() -> None:
    alone = DataParallel()
    assert not alone.enabled and alone.is_main
    assert alone.gather_json({"a": 1.5}) == [{"a": 1.5}]
    assert alone.gather_shards([1, 2]) == [1, 2]
    assert alone.broadcast_json([3]) == [3]
    assert alone.all_reduce_sum({"x": 2.0}) == {"x": 2.0}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_accelerate_launch_runs_the_cli_data_parallel(tmp_path: Path) -> None:
    """The documented command: ``accelerate launch --multi_gpu`` starts torchrun workers,
    which on a machine without GPUs join a gloo group."""
    import subprocess
    import sys

    import gui_gym
    from tests.test_train_cli import TASK_ENV, first_task, word_policy

    require("accelerate", "llm")
    model = word_policy(tmp_path / "policy")
    out = tmp_path / "run"
    root = Path(gui_gym.__file__).resolve().parents[1]
    env = {
        **os.environ,
        "PYTHONPATH": str(root),
        "OMP_NUM_THREADS": "1",
        "CUDA_VISIBLE_DEVICES": "",
    }
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu",
        "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
        "--dynamo_backend", "no", "--main_process_port", str(_free_port()),
        "-m", "gui_gym.cli", "train", "--algo", "grpo", "--env", TASK_ENV,
        "--model", str(model), "--out", str(out), "--task", first_task(),
        "--env-arg", "max_steps=1", "--set", "iterations=1", "--set", "max_new_tokens=2",
        "--set", "tasks_per_iteration=1", "--set", "group_size=2", "--set", "device=cpu",
        "--no-progress",
    ]  # fmt: skip
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=540)
    # both ends of stderr and stdout: where a rank died (start-up, training or teardown)
    # is in the head, the launcher's summary in the tail
    assert result.returncode == 0, (
        f"stdout: ...{result.stdout[-1500:]}\nstderr head: {result.stderr[:3000]}\n"
        f"stderr tail: ...{result.stderr[-2000:]}"
    )
    assert result.stdout.count("grpo: iterations 0..1") == 1  # rank 0 alone reports
    assert "(2 processes)" in result.stdout
    state = json.loads((out / "checkpoint" / "trainer_state.json").read_text())
    assert state["world_size"] == 2
    assert [json.loads(line)["episodes"] for line in (out / "metrics.jsonl").open()] == [2]


def _shutdown_worker(rank: int, port: int, root: str, peer_dies: bool) -> None:
    """Join a two-process gloo group as :meth:`DataParallel.from_environment` would, then
    shut down: rank 1 arrives late (or, with ``peer_dies``, exits without shutting down)."""
    import time
    import warnings

    from gui_gym.train import data_parallel

    torch.set_num_threads(1)
    torch.distributed.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD
    )
    data_parallel._STARTED_BY_US.append(True)
    data_parallel.SHUTDOWN_BARRIER_SECONDS = 20
    base = Path(root)
    if rank == 1:
        time.sleep(1.0)
        if peer_dies:
            os._exit(0)  # gone without a word, as a killed worker
        (base / "rank1_arrived").write_text("")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data_parallel.shutdown_data_parallel()
    (base / f"rank{rank}.json").write_text(
        json.dumps(
            {
                "peer_arrived_first": (base / "rank1_arrived").exists(),
                "initialized": torch.distributed.is_initialized(),
                "warnings": [str(w.message) for w in caught],
            }
        )
    )


@pytest.mark.timeout(300)
@pytest.mark.parametrize("peer_dies", [False, True], ids=["both_finish", "peer_died"])
def test_shutdown_waits_for_every_process_and_a_dead_one_is_a_warning(
    tmp_path: Path, peer_dies: bool
) -> None:
    """A finished process destroys the group only when the others have finished too (no
    rank tears gloo down under another); a process that died costs a warning, not a hang."""
    torch.multiprocessing.start_processes(
        _shutdown_worker,
        args=(_free_port(), str(tmp_path), peer_dies),
        nprocs=WORLD,
        join=True,
        start_method="fork",
    )
    first = json.loads((tmp_path / "rank0.json").read_text())
    assert first["initialized"] is False
    if peer_dies:
        assert [w for w in first["warnings"] if "data parallel shutdown" in w], first
        assert not (tmp_path / "rank1.json").exists()
    else:
        assert first["peer_arrived_first"] is True and first["warnings"] == []
        assert json.loads((tmp_path / "rank1.json").read_text())["initialized"] is False
