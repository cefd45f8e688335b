"""MilestoneStore: versioned per-task milestones in one JSON file; atomic writes survive a
writer killed mid-write, and a file lock keeps concurrent writers from losing versions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gui_gym.rewards.milestone_store import MilestoneStore, StaleMilestonesError

REPO = Path(__file__).resolve().parent.parent


def _python(code: str, *args: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_versions_history_and_placeholders(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    assert store.get("t") is None and store.milestones("t") == [] and store.version("t") == 0
    first = store.commit(
        "t",
        ["Open <App>", "Type <Name> as the contact name"],
        expected_version=0,
        generator="llm",
        instruction="Add a contact",
        meta={"seed": 3},
    )
    assert first is not None and first.version == 1 and first.kind == "init"
    second = store.commit("t", ["Open <App>", "Save the contact"], expected_version=1)
    assert second is not None and second.version == 2 and second.kind == "refine"
    assert store.milestones("t") == ["Open <App>", "Save the contact"]
    assert [v.version for v in store.history("t")] == [1, 2]
    assert store.history("t")[0].milestones == ("Open <App>", "Type <Name> as the contact name")
    assert store.history("t")[0].meta == {"seed": 3}
    assert store.instruction("t") == "Add a contact"
    assert "t" in store and len(store) == 1 and store.task_ids() == ["t"]
    raw = (tmp_path / "m.json").read_text()
    assert "<Name>" in raw  # stored verbatim, not escaped or stripped
    assert MilestoneStore(tmp_path / "m.json").milestones("t") == store.milestones("t")


def test_unchanged_milestones_add_no_version(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    store.commit("t", ["a", "b"])
    assert store.commit("t", [" a ", "b"]) is None
    assert store.version("t") == 1


def test_a_commit_from_a_stale_version_is_refused(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    store.commit("t", ["a"], expected_version=0)
    other = MilestoneStore(tmp_path / "m.json")  # another worker
    other.commit("t", ["a", "b"], expected_version=1)
    with pytest.raises(StaleMilestonesError, match="version 2, not 1"):
        store.commit("t", ["c"], expected_version=1)
    assert store.milestones("t") == ["a", "b"]  # sees the other worker's write


def test_bad_milestones_and_bad_files_raise(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    with pytest.raises(ValueError, match="empty"):
        store.commit("t", [])
    with pytest.raises(ValueError, match="non-empty string"):
        store.commit("t", ["ok", "  "])
    with pytest.raises(ValueError, match="list of strings"):
        store.commit("t", "not a list")  # type: ignore[arg-type]
    assert not (tmp_path / "m.json").exists()
    bad = tmp_path / "bad.json"
    bad.write_text('{"something": "else"}')
    with pytest.raises(ValueError, match="not a milestone store"):
        MilestoneStore(bad).get("t")
    bad.write_text("{torn")
    with pytest.raises(ValueError, match="not valid JSON"):
        MilestoneStore(bad).commit("t", ["a"])
    assert bad.read_text() == "{torn"  # never silently replaced


def test_update_reads_the_latest_version_under_the_lock(tmp_path: Path) -> None:
    store = MilestoneStore(tmp_path / "m.json")
    seen = []

    def append(current):
        seen.append(current.version if current else 0)
        return [*(current.milestones if current else ()), f"m{len(seen)}"]

    store.update("t", append)
    MilestoneStore(tmp_path / "m.json").update("t", append)
    store.update("t", append)
    assert seen == [0, 1, 2]
    assert store.milestones("t") == ["m1", "m2", "m3"]
    assert store.update("t", lambda current: None) is None


def test_a_writer_killed_mid_write_leaves_the_previous_version(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    store = MilestoneStore(path)
    store.commit("t", ["first"])
    # The writer kills itself at fsync: the new file is fully written to its temporary name
    # but not yet renamed into place, and it holds the file lock when it dies.
    code = """
        import os, signal, sys
        from gui_gym.rewards.milestone_store import MilestoneStore
        store = MilestoneStore(sys.argv[1])
        os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)
        store.commit("t", ["second"], meta={"pad": "x" * 100000})
    """
    writer = _python(code, str(path))
    assert writer.wait(timeout=60) == -signal.SIGKILL
    fresh = MilestoneStore(path, lock_timeout=10)
    assert fresh.milestones("t") == ["first"] and fresh.version("t") == 1
    json.loads(path.read_text())  # whole
    assert fresh.commit("t", ["third"], expected_version=1) is not None  # lock was released
    assert fresh.milestones("t") == ["third"]


def test_a_writer_killed_at_a_random_moment_never_tears_the_file(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    code = """
        import sys
        from gui_gym.rewards.milestone_store import MilestoneStore
        store = MilestoneStore(sys.argv[1])
        i = 0
        while True:
            i += 1
            store.commit("t", [f"step {i}"], meta={"pad": "y" * 200000})
    """
    writer = _python(code, str(path))
    deadline = time.monotonic() + 30
    while MilestoneStore(path).version("t") < 3:
        assert time.monotonic() < deadline, writer.stderr.read() if writer.poll() else "slow"
        time.sleep(0.01)
    time.sleep(0.05)
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)
    store = MilestoneStore(path, lock_timeout=10)
    version = store.version("t")
    assert version >= 3
    assert store.milestones("t") == [f"step {version}"]
    assert [v.version for v in store.history("t")] == list(range(1, version + 1))
    assert store.commit("t", ["after"], expected_version=version) is not None


def test_two_concurrent_writers_lose_no_version(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    code = """
        import sys, time
        from pathlib import Path
        from gui_gym.rewards.milestone_store import MilestoneStore
        store = MilestoneStore(sys.argv[1])
        name, folder = sys.argv[2], Path(sys.argv[1]).parent
        other = "b" if name == "a" else "a"
        (folder / f"ready-{name}").touch()
        while not (folder / "go").exists():  # start together
            time.sleep(0.001)
        deadline = time.monotonic() + 60
        for i in range(40):
            # lock-step: update i waits for the other's update i - 1, so the two interleave
            # however the scheduler runs them (under load one used to finish all 40 first)
            while sum(m.startswith(other) for m in store.milestones("shared")) < i:
                if time.monotonic() > deadline:
                    sys.exit(f"{name}: {other} made no progress for 60 s")
                time.sleep(0.001)
            store.update(
                "shared",
                lambda cur: [*(cur.milestones if cur else ()), f"{name}-{i}"],
                generator=name,
            )
            store.commit(f"own-{name}", [f"{name}-{i}"])
    """
    writers = [_python(code, str(path), name) for name in ("a", "b")]
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"ready-{name}").exists() for name in ("a", "b")):
        assert time.monotonic() < deadline and all(w.poll() is None for w in writers)
        time.sleep(0.01)
    (tmp_path / "go").touch()
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err.decode()
    store = MilestoneStore(path)
    shared = store.milestones("shared")
    expected = [f"{name}-{i}" for name in ("a", "b") for i in range(40)]
    assert sorted(shared) == sorted(expected)
    assert [v.version for v in store.history("shared")] == list(range(1, 81))
    writers_seen = [v.generator for v in store.history("shared")]
    assert writers_seen != sorted(writers_seen)  # the two really interleaved (lock-step)
    assert store.version("own-a") == store.version("own-b") == 40
    assert not list(tmp_path.glob(".m.json.*.tmp"))  # no temporary file left behind


def test_milestones_command_shows_current_and_history_and_refuses_bad_files(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gui_gym.cli import app

    runner = CliRunner()
    path = tmp_path / "m.json"
    store = MilestoneStore(path)
    store.commit("task-a", ["open the app", 'type "<Name>" into "Name" input'], generator="llm")
    store.commit("task-a", ["open the app", "click Save"], kind="refine")
    store.commit("task-b", ["scroll down"])
    result = runner.invoke(app, ["milestones", str(path)])
    assert result.exit_code == 0, result.output
    assert "task-a" in result.output and "task-b" in result.output
    assert "v2 refine" in result.output and "2. click Save" in result.output
    assert "<Name>" not in result.output  # only the current version without --history
    result = runner.invoke(
        app, ["milestones", str(path), "--task", "task-a", "--history", "--json"]
    )
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    assert list(shown) == ["task-a"]
    assert [v["version"] for v in shown["task-a"]["versions"]] == [1, 2]
    assert shown["task-a"]["versions"][0]["milestones"][1] == 'type "<Name>" into "Name" input'
    assert runner.invoke(app, ["milestones", str(path), "--task", "nope"]).exit_code != 0
    assert runner.invoke(app, ["milestones", str(tmp_path / "missing.json")]).exit_code != 0
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "something else"}')
    result = runner.invoke(app, ["milestones", str(broken)])
    assert result.exit_code != 0 and "not a milestone store" in result.output
    assert broken.read_text() == '{"format": "something else"}'  # never rewritten
