"""Issue 33, items 1-3: two runs never write one output (the second is refused, naming the
holder's PID, and its cleanup removes nothing), a trajectory writer never cuts another
process's record, and a kill at either rename of a checkpoint swap resumes from the last
complete checkpoint with no temporaries left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gui_gym.core.files import (
    OutputInUseError,
    lock_output,
    recover_folder,
    write_folder_atomically,
)
from gui_gym.core.trajectory import TrajectoryWriter, read_jsonl
from tests.conftest import require

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _holder(path: Path) -> subprocess.Popen[str]:
    """A second process that holds ``path``'s output lock until its stdin closes."""
    code = textwrap.dedent(
        f"""
        import sys
        from gui_gym.core.files import lock_output
        with lock_output({str(path)!r}):
            print("held", flush=True)
            sys.stdin.read()
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _release(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=30)


# ----------------------------------------------------------------- item 1: one run per output


def test_a_second_lock_on_an_output_names_the_holder_and_the_lock_is_reentrant(
    tmp_path: Path,
) -> None:
    out = tmp_path / "data"
    proc = _holder(out)
    try:
        with (
            pytest.raises(
                OutputInUseError, match=rf"in use by another gui-gym run \(PID {proc.pid}\)"
            ),
            lock_output(out),
        ):
            pass
    finally:
        _release(proc)
    with lock_output(out), lock_output(out):  # free again, and re-entrant in one process
        assert (tmp_path / ".data.lock").read_text() == str(os.getpid())
    assert not (tmp_path / ".data.lock").exists()  # removed on release


@pytest.mark.parametrize(
    ("command", "out_name"),
    [
        (["record", "GuiGym/WikiHow-v0", "--agent", "random", "--episodes", "1"], "data"),
        (["eval", "GuiGym/WikiHow-v0", "--agent", "random", "--episodes", "1"], "res.json"),
    ],
)
def test_a_second_run_into_a_held_output_is_refused_and_removes_nothing(
    tmp_path: Path, command: list[str], out_name: str
) -> None:
    from gui_gym.cli import app

    out = tmp_path / out_name
    # the first run has not created its output yet (the race that deleted it before)
    proc = _holder(out)
    try:
        result = CliRunner().invoke(app, [*command, "--out", str(out), "--no-progress"])
        # meanwhile the first run writes its output
        if out_name == "data":
            out.mkdir()
            (out / "trajectories.jsonl").write_text('{"kept": 1}\n')
        else:
            out.write_text("{}\n")
    finally:
        _release(proc)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and f"(PID {proc.pid})" in lines[0] and str(out) in lines[0]
    assert out.exists()  # the refused run's cleanup never removes the other run's output


# ------------------------------------------------------- item 2: a writer never cuts a record


def test_opening_a_writer_never_cuts_a_record_another_process_is_appending(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    TrajectoryWriter(path).close()
    code = textwrap.dedent(
        f"""
        import os, sys, time
        real = os.write

        def slow(fd, data):  # one record written in two pieces, a pause between
            half = len(data) // 2
            real(fd, data[:half])
            print("half", flush=True)
            time.sleep(1.0)
            return half + real(fd, data[half:])

        from gui_gym.core.trajectory import TrajectoryWriter
        with TrajectoryWriter({str(path)!r}) as writer:
            os.write = slow
            writer.write({{"first": "x" * 2000}})
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=ENV, cwd=ROOT
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "half"
    with TrajectoryWriter(path) as writer:  # opened while the other is mid-append
        writer.write({"second": 1})
    assert proc.wait(timeout=30) == 0
    records = list(read_jsonl(path))
    assert records == [{"first": "x" * 2000}, {"second": 1}]


# ------------------------------------------------- item 3: a kill inside the checkpoint swap

KILL = """
import os, sys
from pathlib import Path
kill_at = int(sys.argv[1])
real = os.replace
calls = 0

def replace(src, dst):  # a SIGKILL at exactly the kill_at-th rename of the folder
    global calls
    if Path(src).name == NAME or Path(dst).name == NAME:
        calls += 1
        if calls == kill_at:
            os._exit(9)
    return real(src, dst)

os.replace = replace
"""


@pytest.mark.parametrize("rename", [1, 2])
def test_a_kill_at_either_rename_of_a_folder_swap_keeps_the_last_complete_folder(
    tmp_path: Path, rename: int
) -> None:
    target = tmp_path / "checkpoint"
    write_folder_atomically(target, lambda f: (f / "v").write_text("1"))
    code = (
        f"NAME = 'checkpoint'\n{KILL}\n"
        "from gui_gym.core.files import write_folder_atomically\n"
        f"write_folder_atomically({str(target)!r}, lambda f: (f / 'v').write_text('2'))\n"
    )
    run = subprocess.run([sys.executable, "-c", code, str(rename)], env=ENV, cwd=ROOT, timeout=60)
    assert run.returncode == 9
    assert sorted(p.name for p in tmp_path.iterdir()) != ["checkpoint"]  # a leftover
    recover_folder(target)
    assert (target / "v").read_text() == "1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]


@pytest.mark.parametrize("rename", [1, 2])
def test_a_trainer_killed_at_either_rename_resumes_from_its_last_checkpoint(
    tmp_path: Path, rename: int
) -> None:
    require("torch", "llm")
    from gui_gym.train.trainer import load_metrics
    from tests.rl_helpers import policy_folder

    policy = policy_folder(tmp_path / "tiny")
    out = tmp_path / "run"
    setup = textwrap.dedent(
        f"""
        import torch
        torch.set_num_threads(1)
        from tests.test_train_algorithms import build, config_for
        from tests.rl_helpers import one_step_prompt
        from gui_gym.train.trainer import Trainer
        algorithm, defaults = build("grpo")
        config = config_for(defaults, {str(policy)!r}, {str(out)!r}, iterations=3, save_every=1)
        trainer = Trainer(config, algorithm, prompt=one_step_prompt)
        """
    )
    # renames of checkpoint/: 1 at iteration 0's save (none there yet), 2 and 3 at
    # iteration 1's: kill at its first (checkpoint/ -> .checkpoint.old.*) or second
    code = f"NAME = 'checkpoint'\n{KILL}\n{setup}\ntrainer.train()\n"
    run = subprocess.run(
        [sys.executable, "-c", code, str(rename + 1)], env=ENV, cwd=ROOT, timeout=300
    )
    assert run.returncode == 9
    resume = f"{setup}\nprint('iteration', trainer.iteration, flush=True)\ntrainer.train()\n"
    again = subprocess.run(
        [sys.executable, "-c", resume],
        env=ENV,
        cwd=ROOT,
        timeout=300,
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert "iteration 1" in again.stdout  # the last complete checkpoint: after iteration 0
    assert [m["iteration"] for m in load_metrics(out)] == [0, 1, 2]
    leftovers = [p.name for p in out.iterdir() if p.name.startswith((".checkpoint", ".model"))]
    assert leftovers == []
    json.loads((out / "checkpoint" / "trainer_state.json").read_text())


# ------------------------------------------------------------- item 7: non-finite numbers


def test_json_writers_write_non_finite_numbers_as_null(tmp_path: Path) -> None:
    import math

    import numpy as np

    from gui_gym.core.trajectory import dumps_json, write_jsonl

    write_jsonl(tmp_path / "m.jsonl", [{"loss": math.nan, "r": [np.float32("inf"), 1e308]}])
    assert list(read_jsonl(tmp_path / "m.jsonl")) == [{"loss": None, "r": [None, 1e308]}]
    assert dumps_json({"x": -math.inf}) == '{"x": null}'


def test_a_trainer_whose_loss_goes_nan_stops_naming_the_iteration_and_keeps_its_checkpoint(
    tmp_path: Path,
) -> None:
    require("torch", "llm")
    from gui_gym.train.losses import policy_loss
    from gui_gym.train.trainer import Trainer, TrainingDiverged, load_metrics
    from tests.rl_helpers import one_step_prompt, policy_folder
    from tests.test_train_algorithms import build, config_for

    algorithm, defaults = build("grpo")
    config = config_for(
        defaults, policy_folder(tmp_path / "tiny"), tmp_path / "run", iterations=3, save_every=1
    )
    trainer = Trainer(config, algorithm, prompt=one_step_prompt)

    def loss(trainer: Trainer, inputs: object) -> tuple[object, dict[str, float]]:
        value, parts = policy_loss(inputs)
        if trainer.iteration == 1:  # what --set learning_rate=1e6 does a few updates in
            value = value * float("nan")
            parts = {k: float("nan") for k in parts}
        return value, parts

    algorithm.loss = loss  # type: ignore[method-assign]
    with pytest.raises(TrainingDiverged, match=r"^iteration 1: .*non-finite.*last good checkpoint"):
        trainer.train()
    assert [m["iteration"] for m in load_metrics(tmp_path / "run")] == [0]
    state = json.loads((tmp_path / "run" / "checkpoint" / "trainer_state.json").read_text())
    assert state["iteration"] == 1  # the state after iteration 0, the last good one


# ------------------------------------------------- items 8-9: checkpoints that are garbage


def _checkpoint(folder: Path) -> tuple[object, object]:
    torch = require("torch", "llm")
    from gui_gym.train.checkpoint import torch_rng_tensors, write_checkpoint

    model = torch.nn.Linear(64, 32)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(torch.ones(2, 64)).sum().backward()
    optimizer.step()
    weights = {f"policy.{n}": p.detach().clone() for n, p in model.named_parameters()}
    state = {"algorithm": "sft", "epoch": 1, "batch": 0, "history": []}
    write_checkpoint(
        folder, weights=weights, optimizer=optimizer, state=state, rng=torch_rng_tensors()
    )
    return model, optimizer


@pytest.mark.parametrize("name", ["weights.safetensors", "optimizer.safetensors"])
def test_a_checkpoint_tensor_of_0xff_bytes_is_refused_naming_the_file(
    tmp_path: Path, name: str
) -> None:
    from gui_gym.train.checkpoint import load_optimizer_state, read_checkpoint

    folder = tmp_path / "checkpoint"
    model, optimizer = _checkpoint(folder)
    data = bytearray((folder / name).read_bytes())
    data[-4096:] = b"\xff" * 4096  # the header stays valid: the values read as NaN
    (folder / name).write_bytes(bytes(data))
    with pytest.raises(ValueError, match=rf"{name}: tensor .* NaN or infinite"):
        read_checkpoint(folder)
        load_optimizer_state(optimizer, folder)


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("epoch", 1.5, "field 'epoch' must be a whole number"),
        ("batch", -3, "field 'batch' must be a whole number"),
        ("epoch", 10**12, "field 'epoch' must be a whole number"),
        ("history", "oops", "field 'history' must be a list"),
    ],
)
def test_a_bad_trainer_state_field_is_refused_naming_the_file_and_field(
    tmp_path: Path, field: str, value: object, reason: str
) -> None:
    from gui_gym.train.checkpoint import read_checkpoint

    folder = tmp_path / "checkpoint"
    _checkpoint(folder)
    state = json.loads((folder / "trainer_state.json").read_text())
    (folder / "trainer_state.json").write_text(json.dumps({**state, field: value}))
    with pytest.raises(ValueError, match=rf"trainer_state.json: {reason}"):
        read_checkpoint(folder)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda m: m.pop("scalars"), "optimizer.json: field 'scalars' must be an object"),
        (lambda m: m.update(param_groups="x"), "optimizer.json: field 'param_groups'"),
        (lambda m: m["scalars"].update({"99.step": 1}), "entry '99.step' names no parameter"),
    ],
)
def test_a_bad_optimizer_json_is_refused_naming_the_file_and_field(
    tmp_path: Path, change: object, reason: str
) -> None:
    from gui_gym.train.checkpoint import load_optimizer_state

    folder = tmp_path / "checkpoint"
    _, optimizer = _checkpoint(folder)
    meta = json.loads((folder / "optimizer.json").read_text())
    change(meta)  # type: ignore[operator]
    (folder / "optimizer.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=reason):
        load_optimizer_state(optimizer, folder)


def test_an_optimizer_tensor_of_the_wrong_shape_is_refused(tmp_path: Path) -> None:
    torch = require("torch", "llm")
    from gui_gym.train.checkpoint import load_optimizer_state

    folder = tmp_path / "checkpoint"
    _checkpoint(folder)
    other = torch.optim.AdamW(torch.nn.Linear(8, 4).parameters())
    with pytest.raises(ValueError, match=r"optimizer.safetensors: tensor '0.exp_avg' has shape"):
        load_optimizer_state(other, folder)


def test_a_full_disk_in_eval_is_one_line_saying_so_and_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gui_gym.core.trajectory as trajectory
    from gui_gym.cli import app

    class FullDisk:  # a regular file's short write: what a full disk does to os.write
        def __getattr__(self, name: str) -> object:
            return getattr(os, name)

        def write(self, fd: int, data: bytes) -> int:
            return os.write(fd, data[: len(data) // 2])

    monkeypatch.setattr(trajectory, "os", FullDisk())
    out = tmp_path / "res.json"
    command = ["eval", "GuiGym/WikiHow-v0", "--agent", "random", "--episodes", "2"]
    result = CliRunner().invoke(app, [*command, "--out", str(out), "--no-progress"])
    assert result.exit_code == 1, result.output
    last = result.output.strip().splitlines()[-1]
    assert "the disk is full" in last and str(tmp_path) in last, result.output
    assert "Traceback" not in result.output
