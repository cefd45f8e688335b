"""Expert datasets: recording (atomic, resumable), validation, the AndroidControl converter."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from gui_gym.cli import app
from gui_gym.envs.replay import DatasetError, ExpertDataset, SemiOnlineReplayEnv
from gui_gym.envs.replay.androidcontrol import convert_androidcontrol
from gui_gym.runs.record import record_dataset
from gui_gym.runs.sop import evaluate_sop
from tests.replay_data import make_dataset

DATA = Path(__file__).parent / "data"
runner = CliRunner()
WIKIHOW = {"split": "test"}


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- recording -----------------------------------------------------------------------------------


def test_record_writes_trees_screens_actions_and_images(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    report = record_dataset(
        "GuiGym/WikiHow-v0",
        "oracle",
        episodes=2,
        out=out,
        env_kwargs=WIKIHOW,
        screenshots=True,
        thoughts="describe",
        progress=False,
    )
    assert (report.episodes, report.recorded, report.successes) == (2, 2, 2)
    records = lines(out / "trajectories.jsonl")
    step = records[0]["steps"][0]
    assert step["action"].startswith("INPUT(0,") and step["tree"]["elements"]
    assert step["screen"].startswith("<input id=0")
    assert step["thought"].startswith("Next I should type")
    image = Image.open(out / step["screenshot"])
    assert image.size == (360, 720)
    assert (out / records[0]["metadata"]["final_screenshot"]).is_file()
    data = ExpertDataset.load(out)
    assert data[0].steps[0].screenshot is not None and data[0].final_tree.elements


def test_record_resumes_after_a_crash(tmp_path: Path) -> None:
    crashed, fresh = tmp_path / "crashed", tmp_path / "fresh"
    kwargs = {"env_kwargs": WIKIHOW, "screenshots": True, "progress": False}
    record_dataset("GuiGym/WikiHow-v0", "oracle", episodes=2, out=crashed, **kwargs)
    # killed while writing episode 2: its images are on disk, its line is torn
    (crashed / "images" / "00002").mkdir()
    (crashed / "images" / "00002" / "000.png").write_bytes(b"\x89PNG half")
    with (crashed / "trajectories.jsonl").open("a") as f:
        f.write('{"env_id": "GuiGym/WikiHow-v0", "task_id": "x", "ste')
    with pytest.warns(UserWarning, match="torn"):
        report = record_dataset("GuiGym/WikiHow-v0", "oracle", episodes=4, out=crashed, **kwargs)
    assert (report.episodes, report.recorded) == (4, 2)
    record_dataset("GuiGym/WikiHow-v0", "oracle", episodes=4, out=fresh, **kwargs)
    assert lines(crashed / "trajectories.jsonl") == lines(fresh / "trajectories.jsonl")
    for name in ("000.png", "final.png"):
        assert (crashed / "images/00002" / name).read_bytes() == (
            fresh / "images/00002" / name
        ).read_bytes()
    # nothing left half-written
    assert not list(crashed.rglob("*.tmp"))
    again = record_dataset("GuiGym/WikiHow-v0", "oracle", episodes=4, out=crashed, **kwargs)
    assert again.recorded == 0


def test_record_refuses_to_mix_runs(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    record_dataset(
        "GuiGym/WikiHow-v0", "oracle", episodes=1, out=out, env_kwargs=WIKIHOW, progress=False
    )
    with pytest.raises(DatasetError, match="made with"):
        record_dataset(
            "GuiGym/WikiHow-v0", "random", episodes=1, out=out, env_kwargs=WIKIHOW, progress=False
        )


def test_record_androidworld_and_replay_with_the_oracle(tmp_path: Path) -> None:
    out = tmp_path / "aw"
    result = runner.invoke(
        app,
        [
            "record",
            "GuiGym/AndroidWorld-v0",
            "--out",
            str(out),
            "--episodes",
            "3",
            "--task",
            "ContactsAddContact",
            "--task",
            "SystemWifiTurnOff",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "3 episodes (3 recorded now, 3 successful)" in result.output
    summary, rows = evaluate_sop(out, "oracle", progress=False)
    assert (summary.sop.pg, summary.sop.tsr) == (1.0, 1.0)
    assert [r.task_id for r in rows] == ["ContactsAddContact", "SystemWifiTurnOff"] * 1 + [
        "ContactsAddContact"
    ]


# -- validation ----------------------------------------------------------------------------------


@pytest.fixture
def small(tmp_path: Path) -> Path:
    return make_dataset(
        tmp_path / "d",
        [["CLICK(0)", "SCROLL(down)"], ["CLICK(0)"], ["SCROLL(down)"]],
        screenshots=True,
    )


def test_a_corrupt_line_names_the_file_and_line(small: Path) -> None:
    path = small / "trajectories.jsonl"
    text = path.read_text().splitlines()
    text[1] = text[1][: len(text[1]) // 2]  # a line cut short
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(DatasetError, match=r"trajectories\.jsonl:2: corrupt JSON record"):
        ExpertDataset.load(small)
    data = ExpertDataset.load(small, skip_bad=True)
    assert len(data) == 2 and len(data.skipped) == 1 and ":2:" in data.skipped[0]


def test_a_torn_last_line_is_skipped_with_a_warning(small: Path) -> None:
    with (small / "trajectories.jsonl").open("a") as f:
        f.write('{"env_id": "test", "task_id": "t')  # a crash mid-append
    with pytest.warns(UserWarning, match=r"jsonl:4: skipping a torn last line"):
        assert len(ExpertDataset.load(small)) == 3


def test_a_missing_image_names_the_file_line_and_image(small: Path) -> None:
    (small / "images" / "2" / "0.png").unlink()
    with pytest.raises(
        DatasetError, match=r"jsonl:3: steps\[0\]: screenshot images/2/0.png does not exist"
    ):
        ExpertDataset.load(small)
    assert len(ExpertDataset.load(small, skip_bad=True)) == 2


def test_bad_records_are_reported_precisely(small: Path) -> None:
    path = small / "trajectories.jsonl"
    records = lines(path)
    records[0]["steps"][1]["action"] = "JUMP(3)"
    records[1]["steps"][0]["screenshot"] = "../../etc/passwd"
    records.append(records[2])  # the same trajectory id twice
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(DatasetError, match=r"jsonl:1: steps\[1\]: expert action 'JUMP\(3\)'"):
        ExpertDataset.load(small)
    data = ExpertDataset.load(small, skip_bad=True)
    assert len(data) == 1 and len(data.skipped) == 3
    assert ":2: steps[0]: screenshot '../../etc/passwd' points outside" in data.skipped[1]
    assert ":4: trajectory id 't2' repeats" in data.skipped[2]
    path.write_text("\n")
    with pytest.raises(DatasetError, match="empty line"):
        ExpertDataset.load(small)


def test_not_a_dataset(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such dataset folder"):
        ExpertDataset.load(tmp_path / "nothing")
    tmp_path.joinpath("x").mkdir()
    with pytest.raises(DatasetError, match=r"manifest\.json: missing"):
        ExpertDataset.load(tmp_path / "x")


def test_eval_sop_skip_bad_counts_what_it_skipped(small: Path, tmp_path: Path) -> None:
    (small / "images" / "1" / "0.png").unlink()
    result = runner.invoke(app, ["eval", "--sop", "--dataset", str(small), "--no-progress"])
    assert (
        result.exit_code == 2 and "jsonl:2" in result.output and "does not exist" in result.output
    )
    out = tmp_path / "sop.json"
    result = runner.invoke(
        app,
        [
            "eval",
            "--sop",
            "--dataset",
            str(small),
            "--skip-bad",
            "--out",
            str(out),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "skipped 1 bad record(s)" in result.output
    summary = json.loads(out.read_text())["summary"]
    assert summary["skipped"] == 1 and summary["tasks"] == 2 and summary["score"] == 1.0


# -- AndroidControl converter ----------------------------------------------------------------------


@pytest.fixture
def androidcontrol(tmp_path: Path) -> Path:
    """The handwritten sample plus the screenshots it names (drawn here: small PNGs)."""
    folder = tmp_path / "ac"
    (folder / "shots").mkdir(parents=True)
    shutil.copy(DATA / "androidcontrol_sample.jsonl", folder / "episodes.jsonl")
    for k in range(5):
        shade = np.full((240, 108, 3), 40 * k, dtype=np.uint8)
        Image.fromarray(shade).save(folder / "shots" / f"101_{k}.png")
    return folder / "episodes.jsonl"


def test_converter_on_the_handwritten_sample(androidcontrol: Path, tmp_path: Path) -> None:
    out = tmp_path / "converted"
    report = convert_androidcontrol(androidcontrol, out)
    assert (report.converted, report.existing, report.skipped) == (2, 0, [])
    data = ExpertDataset.load(out)
    alarm, home = data
    assert alarm.trajectory_id == "101" and alarm.instruction.startswith("Set an alarm")
    assert [str(s.action) for s in alarm.steps] == [
        'OPEN_APP("Clock")',
        "CLICK_XY(540, 2210)",
        'INPUT("7:00")',
        "CLICK_XY(900, 1500)",
    ]
    assert [s.thought for s in alarm.steps][:2] == [
        "Open the Clock app",
        "Tap the add alarm button",
    ]
    tree = alarm.steps[1].tree
    assert (tree.width, tree.height) == (1080, 2400)
    fab = tree.find_one(resource_id="com.android.deskclock:id/fab")
    assert fab is not None and fab.role == "button" and fab.bounds == (480, 2150, 600, 2270)
    assert fab.description == "Add alarm" and fab.clickable
    assert tree.find_one(role="list").scrollable  # bounds given as a list
    assert alarm.steps[2].tree.elements[0].editable  # an EditText
    assert len(alarm.steps[0].tree) == 2  # the bare FrameLayout is dropped
    assert (
        alarm.steps[0].screenshot.read_bytes()
        == (androidcontrol.parent / "shots/101_0.png").read_bytes()
    )
    assert alarm.final_screenshot is not None and "7:00 AM" in alarm.final_screen
    assert [str(s.action) for s in home.steps] == ["SCROLL(down)", "GOBACK()", "HOME()"]
    assert home.steps[0].tree.elements == () and home.steps[0].thought is None
    assert data.screen_size == (1080, 2400)


def test_converted_data_replays(androidcontrol: Path, tmp_path: Path) -> None:
    out = tmp_path / "converted"
    convert_androidcontrol(androidcontrol, out)
    summary, _ = evaluate_sop(out, "oracle", matcher="strict", progress=False)
    assert (summary.sop.pg, summary.sop.tsr) == (1.0, 1.0)
    env = SemiOnlineReplayEnv(
        str(out), screenshot=True, screen_size=(108, 240), require_think=False
    )
    obs, _ = env.reset(options={"trajectory": "101"})
    assert obs["screenshot"].shape == (240, 108, 3) and obs["screenshot"].max() == 0
    env.step('OPEN_APP("clock")')
    # the agent taps the button by index; the expert tapped its pixels: the same element
    index = env.ui_tree.find_one(description="Add alarm").index
    obs, reward, _, _, info = env.step(f"CLICK({index})")
    assert reward == 1.0 and info["semi_online"]["match_reason"].startswith("inside the target box")
    assert obs["screenshot"].max() == 80  # the third screenshot, resized


def test_converter_errors_name_file_line_and_field(androidcontrol: Path, tmp_path: Path) -> None:
    good = androidcontrol.read_text().splitlines()[1]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        "\n".join(
            [
                good,
                '{"episode_id": 2, "actions": [{"action_type": "wait"}], "screenshot_widths": [1], "screenshot_heights": [1]}',
                '{"episode_id": 3, "goal": "x", "actions": [',
                '{"episode_id": 4, "goal": "x", "actions": [{"action_type": "fly"}], "screenshot_widths": [1], "screenshot_heights": [1]}',
                '{"episode_id": 5, "goal": "x", "actions": [{"action_type": "wait"}]}',
            ]
        )
        + "\n"
    )
    with pytest.raises(DatasetError, match=r"bad\.jsonl:2: goal"):
        convert_androidcontrol(bad, tmp_path / "out1")
    report = convert_androidcontrol(bad, tmp_path / "out2", skip_bad=True)
    assert report.converted == 1 and len(report.skipped) == 4
    assert ":3: corrupt JSON" in report.skipped[1]
    assert ":4: actions[0]: unknown action_type 'fly'" in report.skipped[2]
    assert ":5: " in report.skipped[3] and "screen size" in report.skipped[3]


def test_converter_resumes_and_the_cli_runs_it(androidcontrol: Path, tmp_path: Path) -> None:
    out = tmp_path / "converted"
    result = runner.invoke(app, ["convert", str(androidcontrol), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 episodes converted, 0 already there" in result.output
    before = (out / "trajectories.jsonl").read_bytes()
    result = runner.invoke(app, ["convert", str(androidcontrol), "--out", str(out)])
    assert "0 episodes converted, 2 already there" in result.output
    assert (out / "trajectories.jsonl").read_bytes() == before
