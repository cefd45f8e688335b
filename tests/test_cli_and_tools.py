"""The gui-gym command, the evaluation runner, examples, benchmark output and import cost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gui_gym
from gui_gym.cli import app
from gui_gym.core.trajectory import read_jsonl
from gui_gym.runs.evaluate import evaluate

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def test_list_shows_ids_and_counts() -> None:
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 0, result.output
    assert "GuiGym/WikiHow-v0" in result.output
    assert "Cross-Page" in result.output
    assert "GuiGym/MiniWoB-v0" in result.output and "128 tasks" in result.output


def test_list_never_cuts_an_id_on_a_narrow_terminal() -> None:
    # off a TTY rich falls back to 80 columns; ids are what users copy into gym.make
    result = subprocess.run(
        [sys.executable, "-m", "gui_gym.cli", "list"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "60", "TERMINAL_WIDTH": "60"},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    for env_id in gui_gym.ENV_IDS:
        assert env_id in result.stdout, env_id


def test_eval_writes_results_and_summary_table(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    result = runner.invoke(
        app,
        [
            "eval",
            "GuiGym/WikiHow-v0",
            "--agent",
            "oracle",
            "--episodes",
            "12",
            "--out",
            str(out),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "success" in result.output and "100.0%" in result.output
    data = json.loads(out.read_text())
    assert data["summary"]["episodes"] == 12 and data["summary"]["success_rate"] == 1.0
    assert set(data["summary"]["per_category"]) <= {"Cross-Page", "In-Page", "QA"}
    assert len(data["episodes"]) == 12


def test_eval_resumes_after_a_crash(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    kwargs = {"split": "test"}
    evaluate("GuiGym/WikiHow-v0", "random", episodes=5, out=out, env_kwargs=kwargs, progress=False)
    log = Path(f"{out}.episodes.jsonl")
    with log.open("a") as f:
        f.write('{"episode": 5, "task_')  # killed mid-write
    with pytest.warns(UserWarning, match="torn"):
        summary, rows = evaluate(
            "GuiGym/WikiHow-v0", "random", episodes=8, out=out, env_kwargs=kwargs, progress=False
        )
    assert [r.episode for r in rows] == list(range(8))
    records = list(read_jsonl(log))
    assert [r["episode"] for r in records[1:]] == list(range(8))  # nothing run twice, nothing lost
    # the resumed run equals a fresh one
    _, fresh = evaluate(
        "GuiGym/WikiHow-v0", "random", episodes=8, env_kwargs=kwargs, progress=False
    )
    assert [r.__dict__ for r in fresh] == [r.__dict__ for r in rows]


def test_a_bad_eval_log_line_is_an_error_naming_its_line(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    evaluate("GuiGym/WikiHow-v0", "random", episodes=2, out=out, progress=False)
    log = Path(f"{out}.episodes.jsonl")
    lines = log.read_text().splitlines()
    lines[2] = json.dumps({"episode": 1, "task_id": "x"})  # a row missing its fields
    log.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"results.json.episodes.jsonl:3"):
        evaluate("GuiGym/WikiHow-v0", "random", episodes=2, out=out, progress=False)


def test_eval_reports_rwd_where_the_env_pays_milestone_events() -> None:
    # ProgRM Table 1 reports Rwd, Mobile-Env's cumulative milestone reward, beside SR
    summary, rows = evaluate(
        "GuiGym/WikiHow-v0", "oracle", episodes=4, env_kwargs={"split": "test"}, progress=False
    )
    suite = __import__("gymnasium").make("GuiGym/WikiHow-v0").unwrapped.suite
    # every event of a solved task is paid once
    events = [sum(m.reward for m in suite[r.task_id].milestones) for r in rows]
    assert [r.milestone_reward for r in rows] == events
    assert summary.rwd == sum(events) / 4 and summary.to_dict()["rwd"] == summary.rwd
    other, _ = evaluate("GuiGym/AndroidWorld-v0", "oracle", episodes=1, progress=False)
    assert other.rwd is None


def test_eval_refuses_to_mix_runs(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    evaluate("GuiGym/WikiHow-v0", "oracle", episodes=2, out=out, progress=False)
    with pytest.raises(ValueError, match="different settings"):
        evaluate("GuiGym/WikiHow-v0", "random", episodes=2, out=out, progress=False)


def test_eval_unknown_agent() -> None:
    with pytest.raises(ValueError, match="unknown agent 'smart'"):
        evaluate("GuiGym/WikiHow-v0", "smart", episodes=1, progress=False)


def test_random_agent_that_declares_done() -> None:
    import gymnasium as gym

    from gui_gym.runs.evaluate import make_agent

    env = gym.make("GuiGym/AndroidWorld-v0", task="SystemWifiTurnOnVerify")
    agent = make_agent("random:done=1", env, seed=0)
    obs, info = env.reset(seed=0)
    assert str(agent.act(obs, info)) == "DONE()"
    assert make_agent("random", env).done_prob == 0.0
    for bad in ("random:done=x", "random:fast=1", "random:done=2", "oracle:done=1"):
        with pytest.raises(ValueError):
            make_agent(bad, env)
    summary, _ = evaluate(
        "GuiGym/AndroidWorld-v0",
        "random:done=1",
        episodes=3,
        progress=False,
        env_kwargs={"task": "SystemWifiTurnOnVerify"},
    )
    assert summary.success_rate == 1.0  # ended at once, with the goal already true


def test_play_reads_actions_from_stdin() -> None:
    result = runner.invoke(
        app,
        ["play", "GuiGym/WikiHow-v0", "--seed", "0"],
        input='CLICK(999)\n:hint\nINPUT(0, "x")\n:q\n',
    )
    assert result.exit_code == 0, result.output
    assert "invalid action: no element 999" in result.output
    assert "oracle: INPUT(0," in result.output
    assert '-> type "x" into "Search wikiHow" input' in result.output


def test_bench_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = runner.invoke(
        app, ["bench", "--out", str(out), "--steps", "300", "--screenshot-steps", "30"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["cartpole"]["steps_per_s"] > 0
    rows = {(r["id"], r["screenshot"]) for r in report["results"]}
    assert rows == {(env_id, shot) for env_id in gui_gym.ENV_IDS for shot in (False, True)}
    assert all(r["ratio_to_cartpole"] > 0 for r in report["results"])
    assert 0 < report["import_gui_gym_s"] < 10
    # `make bench` ends with the summary: every headline figure, the machine and its load
    from gui_gym.cli.bench.summary import write_summary

    (tmp_path / "learning.json").write_text('{"benchmark": "learning", "summary": {"sr": 0.5}}')
    summary = json.loads(write_summary(tmp_path).read_text())
    assert (
        summary["machine"]["cpus"] >= 1 and len(summary["machine"]["load_average_1_5_15_min"]) == 3
    )
    envs = summary["benchmarks"]["bench"]["headline"]
    row = next(r for r in report["results"] if r["id"] == "GuiGym/WikiHow-v0" and r["screenshot"])
    assert envs["ids"]["GuiGym/WikiHow-v0"]["screenshot"]["steps_per_s"] == row["steps_per_s"]
    assert envs["cartpole_steps_per_s"] == report["cartpole"]["steps_per_s"]
    assert summary["benchmarks"]["learning"]["headline"] == {"sr": 0.5}
    (tmp_path / "broken.json").write_text('{"benchmark": "webshop"}')
    with pytest.raises(ValueError, match=r"broken.json: no 'build' in this 'webshop' report"):
        write_summary(tmp_path)


def test_import_does_not_pull_heavy_libraries() -> None:
    code = (
        "import sys, gui_gym, gymnasium as gym;"
        "heavy = [m for m in ('torch', 'transformers', 'selenium', 'ray', 'sentence_transformers', 'pydantic')"
        " if m in sys.modules];"
        "print(','.join(heavy)); print('GuiGym/WikiHow-v0' in gym.registry)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["True"], f"import gui_gym imported: {out[0]}"


def test_wrappers_and_agents_are_subpackages() -> None:
    import gui_gym.agents
    import gui_gym.wrappers

    assert gui_gym.agents.__name__ == "gui_gym.agents"
    assert Path(gui_gym.wrappers.__file__).parent.parent == Path(gui_gym.__file__).parent


@pytest.mark.parametrize(
    ("script", "args", "expect"),
    [
        ("quickstart.py", ["--agent", "oracle"], "success: reward 1"),
        ("benchmark_agent.py", ["--agents", "random", "oracle", "--limit", "15"], "oracle     all"),
    ],
)
def test_examples_run(script: str, args: list[str], expect: str) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert expect in out.stdout
