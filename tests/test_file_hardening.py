"""Issue 16, items 14-19: files (user files, caches, checkpoints, crash leftovers) never crash
without naming the file, never lose data, and an untrusted input never reads or writes
outside its folder."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gui_gym.core.trajectory import (
    Trajectory,
    TrajectoryWriter,
    open_run_log,
    read_jsonl,
    read_trajectories,
)
from gui_gym.envs.replay import DatasetError
from gui_gym.envs.replay.androidcontrol import convert_androidcontrol, image_folder_name
from gui_gym.envs.replay.dataset import ExpertDatasetWriter
from gui_gym.rewards.milestone_store import MilestoneStore
from tests.conftest import require

GOOD = {"env_id": "GuiGym/WikiHow-v0", "task_id": "t", "instruction": "do it", "steps": []}


# ------------------------------------------------------------- item 14: trajectories and logs


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("[1, 2]", "must be a JSON object, got list"),
        ("null", "must be a JSON object, got NoneType"),
        (json.dumps({**GOOD, "steps": [[1, 2]]}), "steps[0]: a step must be a JSON object"),
        (json.dumps({**GOOD, "steps": {"0": {}}}), "'steps' must be a list"),
        (json.dumps({**GOOD, "steps": [{"screen": "s"}]}), "steps[0]: malformed step"),
        ("[" * 50_000 + "]" * 50_000, "nested 50000 levels deep"),
    ],
)
def test_a_bad_trajectory_line_names_the_file_and_line(
    tmp_path: Path, line: str, reason: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + line + "\n")
    with pytest.raises(ValueError) as err:
        list(read_trajectories(path))
    assert f"{path}:2:" in str(err.value) and reason in str(err.value)


def test_a_bad_progress_label_file_line_names_the_file_and_line(tmp_path: Path) -> None:
    from gui_gym.rewards.progress import read_labeled_trajectories

    path = tmp_path / "labelled.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + "[1, 2]\n")
    with pytest.raises(ValueError, match=rf"{path}:2: a trajectory record must be a JSON object"):
        read_labeled_trajectories(path, require_labels=False)


def test_a_bad_run_log_line_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "run.episodes.jsonl"
    header = {"agent": "oracle"}
    path.write_text(json.dumps({"header": header}) + "\n" + '{"episode": 0}\n' + "[3]\n")
    with pytest.raises(ValueError, match=rf"{path}:3: a run-log record must be a JSON object"):
        open_run_log(path, header)
    path.write_text(json.dumps({"header": header}) + "\n" + '{"episode": 0, "bogus": 1}\n')

    def row(record: dict) -> tuple[int, str]:
        return record["episode"], record["task_id"]

    with pytest.raises(ValueError, match=rf"{path}:2: not a record of this run \(KeyError"):
        open_run_log(path, header, parse=row)
    path.write_text(json.dumps({"header": header}) + "\n" + '{"episode": 0, "task_id": "a"}\n')
    writer, done = open_run_log(path, header, parse=row)
    writer.close()
    assert done == [(0, "a")]


# ------------------------------------------------------------ item 14: milestone stores


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"format": "gui-gym/milestones", "version": 1, "tasks": {"t": \xff\xfe}}', "UTF-8"),
        (b"[" * 100_000, "nested"),
    ],
)
def test_a_broken_milestone_store_names_the_file(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    path = tmp_path / "m.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=reason) as err:
        MilestoneStore(path).task_ids()
    assert str(path) in str(err.value)


def test_a_milestone_store_with_a_list_meta_is_refused_and_the_cli_says_why(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from gui_gym.cli import app

    path = tmp_path / "m.json"
    MilestoneStore(path).commit("t", ["open the app"])
    data = json.loads(path.read_text())
    data["tasks"]["t"]["versions"][0]["meta"] = ["not", "a", "dict"]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"versions\[0\]\.meta must be an object, got list"):
        MilestoneStore(path).task_ids()
    result = CliRunner().invoke(app, ["milestones", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "meta must be an object" in result.output
    assert path.read_text() == json.dumps(data)  # never rewritten


# ------------------------------------------------------------------ item 14: safetensors


@pytest.mark.parametrize("damage", ["truncated header", "lying header"])
def test_a_bad_safetensors_file_names_its_path(tmp_path: Path, damage: str) -> None:
    require("torch", "llm")
    from gui_gym.models.progress import ProgRM, tiny_backbone_config
    from tests.test_progress_model import tiny_model, toy_examples

    model = tiny_model(toy_examples(4))
    assert isinstance(model, ProgRM) and tiny_backbone_config
    path = model.save(tmp_path / "model")
    weights = path / "model.safetensors"
    raw = weights.read_bytes()
    if damage == "truncated header":
        weights.write_bytes(raw[:20])
    else:  # the header claims more bytes than the file holds
        weights.write_bytes((10**9).to_bytes(8, "little") + raw[8:])
    with pytest.raises(ValueError, match=r"model\.safetensors: cannot read it") as err:
        ProgRM.load(path, device="cpu")
    assert str(weights) in str(err.value)


# --------------------------------------------------------- item 16: a record without "\n"


def test_the_writer_keeps_a_complete_last_record_that_lacks_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps({**GOOD, "task_id": "u"}))
    assert [r["task_id"] for r in read_jsonl(path)] == ["t", "u"]  # the reader accepts it
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is "torn" here
        with TrajectoryWriter(path) as writer:
            writer.write(Trajectory("GuiGym/WikiHow-v0", "v", "do it"))
    assert [t.task_id for t in read_trajectories(path)] == ["t", "u", "v"]
    path.write_text(json.dumps(GOOD) + "\n" + '{"task_id": "tor')  # a torn one is still cut
    with pytest.warns(UserWarning, match="torn"):
        TrajectoryWriter(path).close()
    assert path.read_text() == json.dumps(GOOD) + "\n"


# ------------------------------------------------- item 17: temporaries of a killed recorder


def test_resuming_a_dataset_removes_temporaries_a_killed_run_left(tmp_path: Path) -> None:
    source = {"kind": "recorded"}
    ExpertDatasetWriter(tmp_path, source, (360, 720)).close()
    leftovers = [
        tmp_path / "images" / "00003" / ".004.png.x1y2z3.tmp",
        tmp_path / ".manifest.json.abc.tmp",
    ]
    for stale in leftovers:
        stale.parent.mkdir(parents=True, exist_ok=True)
        stale.write_bytes(b"half a file")
    keep = tmp_path / "images" / "00003" / "003.png"
    keep.write_bytes(b"a finished image")
    ExpertDatasetWriter(tmp_path, source, (360, 720)).close()
    assert not any(p.exists() for p in leftovers)
    assert keep.exists()


# ---------------------------------------------------- item 18: convert stays in its folder


def _episode(tmp: Path, **fields) -> Path:
    folder = tmp / "input"
    (folder / "shots").mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.zeros((24, 12, 3), np.uint8)).save(folder / "shots" / "a.png")
    episode = {
        "episode_id": 1,
        "goal": "go home",
        "actions": [{"action_type": "navigate_home"}],
        "screenshots": ["shots/a.png"],
        **fields,
    }
    path = folder / "episodes.jsonl"
    path.write_text(json.dumps(episode) + "\n")
    return path


@pytest.mark.parametrize("shot", ["ABSOLUTE", "../secret.png", "shots/../../secret.png", "LINK"])
def test_convert_never_reads_a_screenshot_outside_its_input_folder(
    tmp_path: Path, shot: str
) -> None:
    secret = tmp_path / "secret.png"
    Image.fromarray(np.full((24, 12, 3), 255, np.uint8)).save(secret)
    if shot == "ABSOLUTE":
        shot = str(secret)
    elif shot == "LINK":
        (tmp_path / "input" / "shots").mkdir(parents=True)
        (tmp_path / "input" / "shots" / "link.png").symlink_to(secret)
        shot = "shots/link.png"
    source = _episode(tmp_path, screenshots=[shot])
    out = tmp_path / "out"
    with pytest.raises(DatasetError, match="outside the input folder"):
        convert_androidcontrol(source, out)
    assert not list(out.rglob("*.png"))


@pytest.mark.parametrize("episode_id", ["..", ".", "", "../../x", "a/b", ".hidden"])
def test_convert_keeps_images_under_images_whatever_the_episode_id(
    tmp_path: Path, episode_id: str
) -> None:
    source = _episode(tmp_path, episode_id=episode_id)
    out = tmp_path / "out"
    convert_androidcontrol(source, out)
    images = list(out.rglob("*.png"))
    assert len(images) == 1
    assert images[0].resolve().parent.parent == (out / "images").resolve()
    assert not images[0].parent.name.startswith(".")


def test_image_folder_names_never_collide_or_escape() -> None:
    assert image_folder_name(17) == "17" and image_folder_name("b-7") == "b-7"
    assert image_folder_name("a/b") != image_folder_name("a_b")
    assert image_folder_name("..").startswith("_")


# ----------------------------------------------------- item 19: saving over a foreign folder


def test_saving_a_progress_model_over_a_foreign_folder_is_refused(tmp_path: Path) -> None:
    require("torch", "llm")
    from tests.test_progress_model import tiny_model, toy_examples

    model = tiny_model(toy_examples(4))
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "thesis.tex").write_text("years of work")
    with pytest.raises(FileExistsError, match="not a progress-model checkpoint"):
        model.save(folder)
    assert (folder / "thesis.tex").read_text() == "years of work"
    (tmp_path / "empty").mkdir()
    model.save(tmp_path / "empty")  # an empty folder is fine
    model.save(tmp_path / "empty")  # and so is its own checkpoint
    with pytest.raises(FileExistsError, match="is a file"):
        model.save(folder / "thesis.tex")


def test_saving_a_prm_over_a_foreign_folder_is_refused(tmp_path: Path) -> None:
    require("torch", "llm")
    require("transformers", "llm")
    from gui_gym.models.prm import TransformersPRM

    prm = TransformersPRM.tiny(["a b c"], vocab_size=300, n_positions=64, max_length=64)
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="not a PRM checkpoint"):
        prm.save(folder)
    assert (folder / "notes.txt").read_text() == "keep me"
    prm.save(tmp_path / "prm")
    prm.save(tmp_path / "prm")


def test_atomic_writes_give_files_and_folders_the_umask_mode_not_tempfiles_0600(
    tmp_path: Path,
) -> None:
    import os
    import stat

    from gui_gym.core.files import atomic_write_text, write_folder_atomically

    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "result.json", "{}")
        folder = write_folder_atomically(
            tmp_path / "model", lambda tmp: (tmp / "config.json").write_text("{}")
        )
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "result.json").stat().st_mode) == 0o644
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    # A file replaced keeps the mode its owner gave it.
    os.chmod(tmp_path / "result.json", 0o600)
    atomic_write_text(tmp_path / "result.json", "[]")
    assert stat.S_IMODE((tmp_path / "result.json").stat().st_mode) == 0o600
    assert (tmp_path / "result.json").read_text() == "[]"
