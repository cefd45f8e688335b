"""SOP (UI-S1 Appendix C) through evaluate_sop and `gui-gym eval --sop`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gui_gym.cli import app
from gui_gym.core.actions import Action, ActionType
from gui_gym.core.trajectory import read_jsonl
from gui_gym.envs.replay import SAMPLE_DATASET
from gui_gym.runs.sop import evaluate_sop
from tests.replay_data import make_dataset

runner = CliRunner()


class SlipAgent:
    """The expert, except at the (trajectory, step) pairs in ``slips``, where it goes back."""

    name = "slip"

    def __init__(self, env: Any, slips: set[tuple[str, int]]):
        self.env = env.unwrapped
        self.slips = slips

    def reset(self, observation: dict, info: dict) -> None:
        pass

    def act(self, observation: dict, info: dict) -> Action:
        key = (self.env.trajectory.trajectory_id, self.env.expert_step)
        if key in self.slips:
            return Action(ActionType.GOBACK)
        return self.env.oracle_action()


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return make_dataset(
        tmp_path / "d",
        [
            ["CLICK(0)", "SCROLL(down)", "CLICK(0)"],  # t0: 3 steps
            ["CLICK(0)", "CLICK(0)"],  # t1: 2 steps
            ["SCROLL(down)", "CLICK(0)", "CLICK(0)", "SCROLL(down)"],  # t2: 4 steps
        ],
    )


def slips(env: Any) -> SlipAgent:
    # t0 slips at its last step, t1 never, t2 at its first and third steps
    return SlipAgent(env, {("t0", 2), ("t2", 0), ("t2", 2)})


def test_sop_numbers_on_a_tiny_dataset(tiny: Path) -> None:
    summary, rows = evaluate_sop(tiny, slips, progress=False)
    assert [(r.matched_prefix, r.expert_steps) for r in rows] == [(2, 3), (2, 2), (0, 4)]
    assert summary.sop.pg == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert summary.sop.tsr == pytest.approx(1 / 3)
    assert summary.sop.score == pytest.approx(((2 / 3 + 1) / 3 + 1 / 3) / 2)
    # every mismatch patched: 2 + 2 + 2 of 9 steps matched
    assert summary.step_accuracy == pytest.approx(6 / 9)
    assert [r.judged_steps for r in rows] == [3, 2, 4]
    assert summary.per_category["even"]["tasks"] == 2 and summary.per_category["odd"]["tsr"] == 1.0


def test_without_step_accuracy_episodes_stop_at_the_first_mismatch(tiny: Path) -> None:
    summary, rows = evaluate_sop(tiny, slips, step_accuracy=False, progress=False)
    assert summary.step_accuracy is None
    assert [r.judged_steps for r in rows] == [3, 2, 1]
    assert summary.sop.pg == pytest.approx((2 / 3 + 1 + 0) / 3)


def test_oracle_scores_one_and_random_near_zero_on_the_sample() -> None:
    oracle, _ = evaluate_sop(SAMPLE_DATASET, "oracle", progress=False)
    assert (oracle.sop.pg, oracle.sop.tsr, oracle.sop.score, oracle.step_accuracy) == (1, 1, 1, 1)
    random, _ = evaluate_sop(SAMPLE_DATASET, "random", progress=False)
    assert random.sop.score < 0.1 and random.sop.tsr == 0.0


def test_sop_eval_resumes_and_refuses_to_mix(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "sop.json"
    evaluate_sop(tiny, "random", out=out, limit=2, progress=False)
    log = Path(f"{out}.episodes.jsonl")
    with log.open("a") as f:
        f.write('{"index": 2, "traj')  # killed mid-write
    with pytest.warns(UserWarning, match="torn"):
        summary, rows = evaluate_sop(tiny, "random", out=out, progress=False)
    assert [r["index"] for r in list(read_jsonl(log))[1:]] == [0, 1, 2]
    _, fresh = evaluate_sop(tiny, "random", progress=False)
    assert fresh == rows
    assert json.loads(out.read_text())["summary"]["tasks"] == 3
    with pytest.raises(ValueError, match="different settings"):
        evaluate_sop(tiny, "oracle", out=out, progress=False)


def test_cli_eval_sop() -> None:
    result = runner.invoke(
        app,
        ["eval", "--sop", "--dataset", str(SAMPLE_DATASET), "--agent", "oracle", "--no-progress"],
    )
    assert result.exit_code == 0, result.output
    assert (
        "100.0%" in result.output
        and "step accuracy (every mismatch patched): 100.0%" in result.output
    )
    result = runner.invoke(app, ["eval", "--sop", "--no-progress"])
    assert result.exit_code != 0 and "--sop needs --dataset" in result.output
    result = runner.invoke(app, ["eval", "--no-progress"])
    assert result.exit_code != 0 and "give an env id" in result.output


# -- offline step metrics (AndroidControl's TM / EM, high and low level) ------------------------


class TypeSlipAgent(SlipAgent):
    """Like :class:`SlipAgent`, but a scroll slip scrolls the wrong way: the right action type,
    the wrong action (type match without exact match)."""

    def act(self, observation: dict, info: dict) -> Action:
        key = (self.env.trajectory.trajectory_id, self.env.expert_step)
        expert = self.env.oracle_action()
        if key in self.slips and expert.type is ActionType.SCROLL:
            return Action(ActionType.SCROLL, direction="up")
        return super().act(observation, info)


def test_offline_type_and_exact_match_on_a_tiny_dataset(tiny: Path, tmp_path: Path) -> None:
    from gui_gym.runs.sop import evaluate_offline

    # slips: t0 step 2 (expert CLICK, agent GOBACK), t2 step 0 (expert SCROLL(down), agent
    # SCROLL(up): same type), t2 step 2 (expert CLICK, agent GOBACK). 9 steps, each judged
    # once on the expert's state: EM 6/9, TM 7/9.
    def agent(env: Any) -> TypeSlipAgent:
        return TypeSlipAgent(env, {("t0", 2), ("t2", 0), ("t2", 2)})

    out = tmp_path / "offline.json"
    levels = evaluate_offline(tiny, agent, progress=False, out=out)
    assert set(levels) == {"high", "low"}
    for result in levels.values():
        assert result.steps == 9
        assert result.exact_match == pytest.approx(6 / 9)
        assert result.type_match == pytest.approx(7 / 9)
    saved = json.loads(out.read_text())
    assert saved["levels"]["low"]["type_match"] == pytest.approx(7 / 9)
    with pytest.raises(ValueError, match="levels must be among"):
        evaluate_offline(tiny, agent, levels=("medium",), progress=False)


def test_the_low_level_shows_each_steps_instruction(tmp_path: Path) -> None:
    from gui_gym.envs.replay import SemiOnlineReplayEnv
    from gui_gym.envs.replay.androidcontrol import convert_androidcontrol
    from tests.test_expert_dataset import DATA

    folder = tmp_path / "ac"
    folder.mkdir()
    episode = json.loads((DATA / "androidcontrol_sample.jsonl").read_text().splitlines()[0])
    for key in ("screenshots", "screenshot_widths", "screenshot_heights"):
        episode.pop(key, None)
    (folder / "episodes.jsonl").write_text(json.dumps(episode) + "\n")
    convert_androidcontrol(folder / "episodes.jsonl", tmp_path / "data", skip_bad=True)
    low = SemiOnlineReplayEnv(str(tmp_path / "data"), instruction_level="low")
    obs, _ = low.reset(seed=0)
    assert obs["instruction"] == f"{episode['goal']}\nCurrent step: Open the Clock app"
    obs, *_ = low.step(str(low.oracle_action()))
    assert obs["instruction"].endswith("Current step: Tap the add alarm button")
    high = SemiOnlineReplayEnv(str(tmp_path / "data"))
    assert high.reset(seed=0)[0]["instruction"] == episode["goal"]
    with pytest.raises(ValueError, match="instruction_level must be"):
        SemiOnlineReplayEnv(str(tmp_path / "data"), instruction_level="mid")


def test_cli_eval_offline() -> None:
    result = runner.invoke(
        app,
        ["eval", "--offline", "--dataset", str(SAMPLE_DATASET), "--agent", "oracle",
         "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if " all " in line]
    assert len(lines) == 2 and all(line.count("100.0%") == 2 for line in lines)
    assert "high" in result.output and "low" in result.output
    result = runner.invoke(app, ["eval", "--offline", "--sop", "--no-progress"])
    assert result.exit_code == 2 and "give one of them" in result.output
