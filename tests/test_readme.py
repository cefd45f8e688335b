"""The README works as written: its Python blocks run, and its command-line block runs as a
chain (record -> convert -> SOP -> label -> train-progress ...) on small inputs.

Every ``gui-gym`` line of the README is either run here (with its sizes cut by ``SMALL``) or
listed in ``NOT_RUN`` with the test that covers it; a new line fails
``test_every_readme_command_is_run_or_covered`` until it is one or the other.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gui_gym.cli import app
from gui_gym.core.trajectory import read_trajectories
from tests.doc_commands import ROOT, cli_lines, code_blocks, small

README = (ROOT / "README.md").read_text(encoding="utf-8")
runner = CliRunner()

# Lines not run here, with what covers them (interactive, servers, minutes of work).
NOT_RUN = {
    "play": "interactive; tests/test_cli_and_tools.py::test_play_reads_actions_from_stdin",
    "bench": "minutes; `make bench`, tests/test_cli_and_tools.py::test_bench_writes_json",
    "train-prm": "minutes; tests/test_prm_models.py trains tiny PRMs through the CLI",
    "serve": "a server; tests/test_view.py",
    "plot": "needs benchmark results; tests/test_cli_errors.py and the plot tests",
}
# Lines that name the user's own model folder or server (--model): covered with tiny models by
# tests/test_sft.py (sft, eval --agent llm), tests/test_rollout.py (eval --agent openai against
# a stub server) and tests/test_train_cli.py (train).
NEEDS_A_MODEL = "--model"


def test_every_readme_command_is_run_or_covered() -> None:
    commands = {argv[0] for argv in cli_lines(README)}
    registered = set(__import__("typer").main.get_command(app).commands)
    assert commands <= registered, f"README names unknown commands: {commands - registered}"
    assert {"record", "convert", "label", "train-progress", "list", "eval"} <= commands


def _run_python_blocks(cwd: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for k, block in enumerate(code_blocks(README, "python")):
        script = cwd / f"readme_block_{k}.py"
        script.write_text(block, encoding="utf-8")
        result = subprocess.run(
            [sys.executable, str(script)], cwd=cwd, env=env, capture_output=True, text=True
        )
        assert result.returncode == 0, f"README python block {k}:\n{block}\n{result.stderr}"


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_readme_python_blocks_and_cli_chain_run(tmp_path: Path, monkeypatch) -> None:
    from gui_gym.rewards.milestone_store import MilestoneStore

    _run_python_blocks(tmp_path)
    (episode,) = read_trajectories(tmp_path / "episodes.jsonl")  # the snippet's episode
    assert episode.success
    monkeypatch.chdir(tmp_path)
    # what `python examples/admire_grpo.py` leaves behind (tests/test_admire_example.py runs it)
    MilestoneStore("runs/admire/milestones.json").commit("task-a", ["open the app"])
    ran = []
    for argv in cli_lines(README):
        if argv[0] in NOT_RUN or NEEDS_A_MODEL in argv:
            continue
        small_argv = small(argv)
        result = runner.invoke(app, small_argv)
        assert result.exit_code == 0, f"gui-gym {shlex.join(small_argv)}\n{result.output}"
        ran.append(argv[0])
    assert {"record", "convert", "label", "train-progress"} <= set(ran)
    assert (tmp_path / "runs/progrm/model").is_dir()
    assert (tmp_path / "report.html").is_file()
