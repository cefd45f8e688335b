"""Trajectory JSONL: atomic whole-file writes, crash-safe appends, streaming reads."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from gui_gym.core.trajectory import (
    Step,
    Trajectory,
    TrajectoryWriter,
    atomic_write_text,
    read_jsonl,
    read_trajectories,
    write_trajectories,
)


def traj(i: int) -> Trajectory:
    return Trajectory(
        env_id="GuiGym/WikiHow-v0",
        task_id=f"t{i}",
        instruction="do it",
        steps=[
            Step(
                index=0,
                screen="<button id=0>OK</button>",
                action="CLICK(0)",
                reward=1.0,
                milestones=["m"],
            )
        ],
        success=True,
        task_reward=1.0,
        metadata={"score": np.float32(0.5), "tags": {"b", "a"}},
    )


def test_write_and_read_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    assert write_trajectories(path, [traj(0), traj(1)]) == 2
    back = list(read_trajectories(path))
    assert [t.task_id for t in back] == ["t0", "t1"]
    assert back[0].steps[0].milestones == ["m"]
    assert back[0].metadata == {"score": 0.5, "tags": ["a", "b"]}
    assert back[0].total_reward == 1.0


def test_atomic_write_leaves_old_file_on_failure(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_trajectories(path, [traj(0)])
    bad = traj(1)
    bad.metadata["fn"] = object()
    with pytest.raises(TypeError):
        write_trajectories(path, [traj(2), bad])
    assert [t.task_id for t in read_trajectories(path)] == ["t0"]
    assert [p.name for p in tmp_path.iterdir()] == ["t.jsonl"]  # no temp files left behind


def test_reader_skips_a_torn_last_line_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write_trajectories(path, [traj(0)])
    with path.open("a") as f:
        f.write('{"env_id": "GuiGym/Wiki')  # crash mid-append
    with pytest.warns(UserWarning, match="torn last line"):
        assert [t.task_id for t in read_trajectories(path)] == ["t0"]


def test_corrupt_middle_line_raises_with_its_line_number(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"a": 1}\n{broken\n{"a": 2}\n')
    with pytest.raises(ValueError, match=r"t\.jsonl:2: corrupt JSON record"):
        list(read_jsonl(path))


def test_writer_repairs_a_torn_tail_and_resumes(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TrajectoryWriter(path) as w:
        w.write(traj(0))
    with path.open("ab") as f:
        f.write(b'{"env_id": "half')
    with (
        pytest.warns(UserWarning, match="removing a torn last record"),
        TrajectoryWriter(path) as w,
    ):
        w.write(traj(1))
    assert [t.task_id for t in read_trajectories(path)] == ["t0", "t1"]


def test_writer_appends_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TrajectoryWriter(path, fsync=False) as w:
        for i in range(5):
            w.write({"i": i, "text": "line\nbreak"})
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 6
    assert [json.loads(line)["text"] for line in lines[:-1]] == ["line\nbreak"] * 5


def test_closed_writer_refuses_writes(tmp_path: Path) -> None:
    w = TrajectoryWriter(tmp_path / "t.jsonl")
    w.close()
    with pytest.raises(ValueError, match="closed"):
        w.write({"a": 1})


def test_atomic_write_text_creates_folders(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "c.json"
    atomic_write_text(path, "{}")
    assert path.read_text() == "{}"
    assert not any(name.startswith(".c.json") for name in os.listdir(path.parent))


def test_missing_required_field_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="missing 'task_id'"):
        Trajectory.from_dict({"env_id": "x", "instruction": "y"})
