"""Every CLI user mistake is one line on stderr and exit code 2, never a traceback.

The test walks the commands registered on ``gui_gym.cli.app``: every option of every command
(flags aside) must have at least one wrong value below, or be an int/float option (given a
value that does not parse and, with a range, one outside it automatically). A command added
later fails ``test_every_option_has_a_wrong_value`` until its base invocation and wrong values
are listed here.
"""

from __future__ import annotations

import os
import re
import typing
from pathlib import Path

import gymnasium as gym
import pytest
from typer.main import get_command
from typer.testing import CliRunner

import gui_gym  # noqa: F401
from gui_gym.agents import OracleAgent, run_episode
from gui_gym.cli import app
from gui_gym.cli._common import closest
from gui_gym.envs.androidworld.tasks import TASKS

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()

# A valid invocation per command; each case changes one argument of it to a wrong value.
# {tmp}, {traj}, {labels}, {store}, {dataset}, {file} are filled in by the `files` fixture.
BASE: dict[str, list[str]] = {
    "list": [],
    "play": ["GuiGym/WikiHow-v0"],
    "bench": ["--out", "{tmp}/bench.json", "--steps", "10", "--screenshot-steps", "2"],
    "eval": ["GuiGym/WikiHow-v0", "--no-progress", "--episodes", "1"],
    "record": ["GuiGym/WikiHow-v0", "--out", "{tmp}/rec", "--episodes", "1", "--no-progress"],
    "export-tasks": ["GuiGym/WikiHow-v0", "--out", "{tmp}/tasks.parquet", "--split", "test"],
    "convert": [str(ROOT / "tests/data/androidcontrol_sample.jsonl"), "--out", "{tmp}/conv"],
    "train-prm": ["--out", "{tmp}/prm", "--no-progress", "--max-tasks", "1"],
    "label": ["--trajectories", "{traj}", "--out", "{tmp}/l.jsonl", "--embedder", "hashing"],
    "train-progress": ["--labels", "{labels}", "--out", "{tmp}/tp", "--no-progress"],
    "milestones": ["{store}"],
    "models": ["--json"],
    "view": ["{traj}", "--out", "{tmp}/report.html"],
    "serve": ["{tmp}", "--port", "0", "--quiet"],
    "plot": [str(ROOT / "tests/data/learning_curves_sample.json"), "--out", "{tmp}/plots"],
    "serve-openenv": ["GuiGym/WikiHow-v0", "--port", "0", "--quiet"],
    "sft": ["--dataset", "{dataset}", "--model", "{model}", "--out", "{tmp}/sft", "--no-progress"],
    "train": [
        "--algo",
        "grpo",
        "--env",
        "GuiGym/WikiHow-v0",
        "--model",
        "{model}",
        "--out",
        "{tmp}/train",
        "--no-progress",
    ],
}

TRAIN_MILESTONES = ["train", *BASE["train"], "--reward", "outcome+milestone"]
"""The train base invocation with a milestone term (for --milestone-model/--milestone-url)."""

# (command, parameter name) -> wrong values. A value is a string (it replaces the parameter
# in the base invocation) or a full argument list (for options that need others, like --sop).
WRONG: dict[tuple[str, str], list[str | list[str]]] = {
    ("list", "env_id"): ["GuiGym/Nope-v0"],
    ("list", "tasks"): [["list", "--tasks"], ["list", "GuiGym/SemiOnlineReplay-v0", "--tasks"]],
    ("play", "env_id"): ["GuiGym/Wikihow-v0", "WikiHow"],
    ("play", "task"): ["nope"],
    ("play", "split"): ["tset"],
    ("bench", "out"): ["{tmp}"],
    ("bench", "ids"): ["GuiGym/MiniWoB-v0", "nope"],
    ("bench", "miniwob"): [["bench", "--miniwob", "--webshop"]],
    ("eval", "env_id"): ["GuiGym/Nope-v0", "GuiGym/MiniWoB-nope-v0"],
    ("eval", "agent"): ["orcale", "random:done=x", "webshop-greedy"],
    ("eval", "split"): ["validation"],
    ("eval", "category"): ["nope", "qa"],
    ("eval", "out"): ["{tmp}", "{file}/sub.json"],
    ("eval", "env_arg"): ["max_steps", "nope=1", "max_steps=-1", "task=nope", "split=3"],
    ("eval", "sop"): [["eval", "--sop"], ["eval", "GuiGym/WikiHow-v0", "--sop"]],
    ("eval", "dataset"): [["eval", "--sop", "--dataset", "{tmp}/none"]],
    ("eval", "matcher"): [
        ["eval", "--sop", "--dataset", "{dataset}", "--matcher", "lose"],
        ["eval", "--offline", "--dataset", "{dataset}", "--matcher", "exact"],
        ["eval", "GuiGym/WikiHow-v0", "--matcher", "strict"],
    ],
    ("eval", "offline"): [
        ["eval", "--offline"],
        ["eval", "GuiGym/WikiHow-v0", "--offline", "--dataset", "{dataset}"],
        ["eval", "--offline", "--sop", "--dataset", "{dataset}"],
        ["eval", "--offline", "--dataset", "{dataset}", "--agent", "llm", "--model", "{tmp}"],
    ],
    ("eval", "model"): [
        "{model}",  # a model with a built-in agent
        ["eval", "GuiGym/WikiHow-v0", "--agent", "llm", "--model", "smollm2-135m"],  # no name
        ["eval", "GuiGym/WikiHow-v0", "--agent", "llm", "--model", "{tmp}/none"],
        ["eval", "GuiGym/WikiHow-v0", "--agent", "llm", "--model", "{file}"],
    ],
    ("eval", "base_url"): [
        "http://localhost:8000/v1",  # with a built-in agent
        ["eval", "GuiGym/WikiHow-v0", "--agent", "openai", "--model", "m"],
        ["eval", "GuiGym/WikiHow-v0", "--agent", "openai", "--model", "m", "--base-url", "x"],
    ],
    ("eval", "prompt"): [
        "progrm",  # with a built-in agent
        ["eval", "GuiGym/WikiHow-v0", "--agent", "llm", "--model", "{model}", "--prompt", "x"],
    ],
    ("eval", "device"): [
        ["eval", "GuiGym/WikiHow-v0", "--agent", "llm", "--model", "{model}", "--device", "gpu"]
    ],
    ("eval", "workers"): ["threads"],
    ("eval", "coordinates"): [
        "relative_1000",  # with a built-in agent
        [
            "eval",
            "GuiGym/WikiHow-v0",
            "--agent",
            "llm",
            "--model",
            "{model}",
            "--coordinates",
            "px",
        ],
    ],
    ("train", "algo"): ["grpp", "dapoo"],
    ("train", "env"): ["GuiGym/Nope-v0"],
    ("train", "model"): ["{tmp}/none", "{file}"],
    ("train", "reward"): ["outcome+0.3*milestones", "0.3*"],
    ("train", "out"): ["{file}"],
    ("train", "config"): ["{tmp}/none.json", "{file}"],
    ("train", "set_"): ["lr", "nope=1"],
    ("train", "env_arg"): ["nope=1"],
    ("train", "task"): ["nope"],
    ("train", "prompt"): ["nope"],
    ("train", "prm_model"): ["{tmp}/none"],
    ("train", "progress_model"): ["{tmp}/none"],
    ("train", "orm_model"): ["{tmp}/none"],
    ("train", "judge_model"): [
        "{tmp}/none",  # no judge term in --reward
        ["train", *BASE["train"], "--reward", "judge", "--judge-model", "nope-model"],
    ],
    ("train", "judge_url"): ["http://localhost:1/v1", "localhost:1"],  # no judge, no model
    ("train", "milestone_model"): [
        "{tmp}/none",  # no milestone term in --reward
        [*TRAIN_MILESTONES, "--milestone-model", "nope-model"],
    ],
    ("train", "milestone_url"): [
        "http://localhost:1/v1",  # no milestone term, no model
        [*TRAIN_MILESTONES, "--milestone-url", "http://localhost:1/v1"],  # no served name
        [*TRAIN_MILESTONES, "--milestone-model", "qwen-7b", "--milestone-url", "localhost:1"],
    ],
    ("train", "coordinates"): ["pixels", "qwen2_5_vl"],  # unknown; without --screenshot
    ("train", "embedder"): ["minilmm"],
    ("train", "milestones"): ["statc"],
    ("train", "milestone_store"): ["{tmp}/none.json", "{file}"],
    ("sft", "dataset"): ["{tmp}/none", "{file}", "{tmp}"],
    ("sft", "model"): ["{tmp}/none", "{tmp}", "{file}"],
    ("sft", "out"): ["{file}"],
    ("sft", "prompt"): ["nope"],
    ("sft", "coordinates"): ["pixels", "relative_1000"],  # unknown; without --screenshot
    ("sft", "device"): ["gpu"],
    ("sft", "dtype"): ["float16", "bf16"],
    ("sft", "eval_fraction"): ["1"],
    ("sft", "lr"): ["0"],
    ("sft", "epochs"): ["0"],
    ("export-tasks", "env_id"): ["GuiGym/Nope-v0"],
    ("export-tasks", "out"): ["{file}", "{tmp}/tasks.jsonl", "{tmp}"],
    ("export-tasks", "format"): ["hf"],
    ("export-tasks", "split"): ["tset"],
    ("export-tasks", "task"): ["nope"],
    ("export-tasks", "prompt"): ["nope"],
    ("export-tasks", "env_arg"): ["nope=1", "split"],
    ("record", "env_id"): ["GuiGym/Nope-v0"],
    ("record", "out"): ["{file}"],
    ("record", "agent"): ["orcale"],
    ("record", "split"): ["tset"],
    ("record", "task"): ["nope"],
    ("record", "env_arg"): ["nope=1"],
    ("record", "describe_thoughts"): [],
    ("convert", "source"): ["{tmp}/none.jsonl", "{file}"],
    ("convert", "out"): ["{file}"],
    ("train-prm", "out"): ["{file}"],
    ("train-prm", "env_id"): ["GuiGym/Nope-v0", "GuiGym/SemiOnlineReplay-v0"],
    ("train-prm", "data"): ["{tmp}/none.jsonl"],
    ("train-prm", "replay_dataset"): ["{tmp}/none", "{tmp}"],
    ("train-prm", "model"): ["{tmp}/none", "{file}", "nope-model"],
    ("models", "convert"): ["nope-model", "{tmp}"],
    ("train-prm", "positive_token"): [" False", ""],
    ("train-prm", "negative_token"): [" True"],
    ("train-prm", "keep_best"): ["auk"],
    ("train-prm", "lr_schedule"): ["linar"],
    ("train-prm", "device"): ["gpu"],
    ("train-prm", "eval_fraction"): ["1"],
    ("train-prm", "lr"): ["0"],
    ("label", "trajectories"): ["{tmp}/none.jsonl", "{file}"],
    ("label", "out"): ["{tmp}"],
    ("label", "method"): ["magic"],
    ("label", "embedder"): ["minilmm"],
    ("label", "env_id"): ["GuiGym/Nope-v0"],
    ("train-progress", "labels"): ["{tmp}/none.jsonl", "{traj}"],
    ("train-progress", "out"): ["{file}"],
    ("train-progress", "kind"): ["prgrm"],
    ("train-progress", "eval_labels"): ["{tmp}/none.jsonl"],
    ("train-progress", "backbone"): ["{tmp}/none", "nope-model"],
    ("train-progress", "dtype"): ["fp16"],
    ("train-prm", "dtype"): ["fp16"],
    ("train-progress", "device"): ["gpu"],
    ("train-progress", "lr"): ["0"],
    ("milestones", "store"): ["{tmp}/none.json", "{file}"],
    ("milestones", "task"): ["task-c"],
    ("view", "trajectories"): ["{tmp}/none.jsonl", "{tmp}", "{file}"],
    ("view", "out"): ["{tmp}", "{file}/report.html"],
    ("serve", "folder"): ["{tmp}/none", "{file}"],
    ("serve", "host"): ["256.1.1.1", "0.0.0.0"],  # off loopback without --token
    ("serve", "token"): ["short"],
    ("serve", "port"): ["70000"],
    ("plot", "files"): ["{tmp}/none.json", "{tmp}", "{file}", "{traj}", "{store}"],
    ("plot", "out"): ["{file}"],
    ("serve-openenv", "env_id"): ["GuiGym/Nope-v0"],
    ("serve-openenv", "host"): ["256.1.1.1", "0.0.0.0"],  # off loopback without --token
    ("serve-openenv", "token"): ["short"],
    ("serve-openenv", "session_timeout"): ["0", "-1"],
    ("serve-openenv", "step_timeout"): ["0"],
    ("serve-openenv", "reward"): ["nope", "outcome+2*outcome", "orm"],
    ("serve-openenv", "env_arg"): ["nope=1", "max_steps=-1", "split"],
    ("serve-openenv", "prm_model"): ["{tmp}/none"],
    ("serve-openenv", "progress_model"): ["{file}"],
    ("serve-openenv", "orm_model"): ["{tmp}/none"],
    ("serve-openenv", "embedder"): ["sbert"],
    ("serve-openenv", "milestone_store"): ["{tmp}/none.json"],
}


def _commands() -> dict[str, object]:
    return dict(get_command(app).commands)  # type: ignore[attr-defined]


def _needs_value(param: object) -> bool:
    return not getattr(param, "is_flag", False) and param.name != "help"  # type: ignore[attr-defined]


def _auto_values(param: object) -> list[str]:
    """Wrong values derivable from the type: unparsable numbers, numbers out of range."""
    descriptor = getattr(param, "type_descriptor", None)
    annotation = getattr(descriptor, "annotation", None)
    kinds = set(typing.get_args(annotation)) | {annotation}
    if not kinds & {int, float}:
        return []
    values = ["abc"]
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    if low is not None:
        values.append(str(low - 1))
    if high is not None:
        values.append(str(high + 1))
    return values


def _cases() -> list[tuple[str, str, list[str]]]:
    """(command, parameter, argv) for every wrong value of every parameter."""
    cases = []
    for name, command in _commands().items():
        base = BASE.get(name)
        if base is None:
            continue  # test_every_option_has_a_wrong_value reports it
        for param in command.params:  # type: ignore[attr-defined]
            for value in [*WRONG.get((name, param.name), []), *_auto_values(param)]:
                if isinstance(value, list):
                    cases.append((name, param.name, value))
                    continue
                argv = [name, *base]
                if param.param_type_name == "argument":
                    positional = 0 if name != "list" or base else None
                    if positional is None:
                        argv.append(value)
                    else:
                        argv[1] = value
                else:
                    flag = param.opts[0]
                    if flag in argv:
                        argv[argv.index(flag) + 1] = value
                    else:
                        argv += [flag, value]
                cases.append((name, param.name, argv))
    return cases


def test_every_option_has_a_wrong_value() -> None:
    missing = []
    for name, command in _commands().items():
        if name not in BASE:
            missing.append(f"{name} (no base invocation in BASE)")
            continue
        for param in command.params:  # type: ignore[attr-defined]
            if not _needs_value(param) or (name, param.name) in WRONG or _auto_values(param):
                continue
            missing.append(f"{name} {param.name}")
    assert not missing, f"give these a wrong value in tests/test_cli_errors.py: {missing}"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from gui_gym.core.trajectory import write_trajectories
    from gui_gym.rewards.milestone_store import MilestoneStore
    from gui_gym.rewards.progress import label_env, write_labeled_trajectories
    from gui_gym.runs.record import record_dataset

    root = tmp_path_factory.mktemp("cli_errors")
    env = gym.make("GuiGym/WikiHow-v0", max_steps=6)
    task = env.unwrapped.task_ids[0]
    trajectories = [run_episode(env, OracleAgent(env), seed=0, options={"task": task})]
    traj = root / "episodes.jsonl"
    write_trajectories(traj, trajectories)
    labels = root / "labels.jsonl"
    write_labeled_trajectories(labels, trajectories, label_env(trajectories, None))
    store = root / "store.json"
    MilestoneStore(store).commit("task-a", ["open the app"])
    dataset = root / "dataset"
    record_dataset("GuiGym/WikiHow-v0", "oracle", episodes=1, out=dataset, progress=False)
    plain = root / "plain.txt"
    plain.write_text("not a folder\n")
    model = root / "model"
    from tests.tiny_llm import tiny_gpt2, tiny_tokenizer

    tokenizer = tiny_tokenizer()
    tiny_gpt2(len(tokenizer)).save_pretrained(model)
    tokenizer.save_pretrained(model)
    return {
        "model": str(model),
        "traj": str(traj),
        "labels": str(labels),
        "store": str(store),
        "dataset": str(dataset),
        "file": str(plain),
    }


CASES = _cases()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("command", "param", "argv"), CASES, ids=[f"{c}-{p}-{i}" for i, (c, p, _) in enumerate(CASES)]
)
def test_a_wrong_value_is_one_line_and_exit_2(
    command: str, param: str, argv: list[str], files: dict[str, str], tmp_path: Path
) -> None:
    filled = [a.format(tmp=tmp_path, **files) for a in argv]
    result = runner.invoke(app, filled, input="")
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, f"{filled}: exit {result.exit_code}\n{result.output}"
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), f"{filled}: {result.exception!r}"
    assert len(lines) == 1, f"{filled}: not one line:\n{result.output}"
    assert re.match(rf"(\S+ {re.escape(command)}: )?error: ", lines[0]), lines[0]
    assert "Traceback" not in result.output


def test_errors_name_the_closest_match_and_what_is_allowed() -> None:
    result = runner.invoke(app, ["play", "GuiGym/Wikihow-v0"])
    assert "did you mean 'GuiGym/WikiHow-v0'?" in result.output
    assert "allowed: GuiGym/WikiHow-v0, GuiGym/AndroidWorld-v0" in result.output
    result = runner.invoke(app, ["eval", "GuiGym/WikiHow-v0", "--agent", "orcale"])
    assert "did you mean 'oracle'?" in result.output
    result = runner.invoke(app, ["eval", "GuiGym/AndroidWorld-v0", "--category", "clok"])
    assert "unknown category 'clok'" in result.output and "clock" in result.output
    result = runner.invoke(app, ["play", "--task", "pack_for_a_camping_trip-category_nam"])
    assert "did you mean 'pack_for_a_camping_trip-category_name'" in result.output
    assert closest("Clock", ["clock", "contacts"]) == "clock"
    assert closest("zzzz", ["clock", "contacts"]) is None


def test_list_tasks_shows_category_split_and_milestones() -> None:
    result = runner.invoke(app, ["list", "GuiGym/AndroidWorld-v0", "--tasks"])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split()[1:] for line in result.output.splitlines()[1:-1]}
    templates = len(TASKS)
    assert len(rows) == templates
    assert result.output.rstrip().endswith(f"{templates} tasks in GuiGym/AndroidWorld-v0")
    assert rows["ClockStopWatchRunning"][:2] == ["clock", "train+test"]
    result = runner.invoke(app, ["list", "GuiGym/WikiHow-v0", "--tasks"])
    rows = {line.split()[0]: line.split()[1:] for line in result.output.splitlines()[1:-1]}
    assert rows["pack_for_a_camping_trip-category_name"][:2] in (["QA", "train"], ["QA", "test"])
    result = runner.invoke(app, ["list", "GuiGym/MiniWoB-v0", "--tasks"])
    rows = {line.split()[0]: line.split()[1:] for line in result.output.splitlines()[1:-1]}
    assert rows["book-flight"] == ["book", "train+test", "0", "nondeterministic"]
    assert rows["flight.Alaska"][:2] == ["flight", "train+test"]


def test_progress_bars_are_off_when_stderr_is_not_a_terminal() -> None:
    # A fresh process, as a user's: tqdm reads TQDM_* variables when it is first imported,
    # which in this test process other tests have already done.
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TQDM_DISABLE"}
    env["PYTHONPATH"] = str(ROOT)
    argv = ["eval", "GuiGym/WikiHow-v0", "--agent", "random", "--episodes", "2"]
    result = subprocess.run(
        [sys.executable, "-m", "gui_gym.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "ep/s" not in result.stderr and "random on GuiGym/WikiHow-v0" in result.stdout


def test_help_shows_long_option_names_whole() -> None:
    # rich falls back to 80 columns off a terminal, where the option column was cut
    result = runner.invoke(app, ["train-prm", "--help"])
    assert result.exit_code == 0
    assert "--proposals-per-state" in result.output and "--replay-dataset" in result.output
    for name in _commands():
        assert "…" not in runner.invoke(app, [name, "--help"]).output, name


def test_play_has_line_editing() -> None:
    import subprocess
    import sys

    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('readline loaded:', 'readline' in sys.modules))\n"
        "sys.argv = ['gui-gym', 'play', 'GuiGym/WikiHow-v0']\n"
        "from gui_gym.cli import main\n"
        "main()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], input=":q\n", capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "readline loaded: True" in out.stdout  # arrow keys, editing, history for input()


def test_record_with_an_expert_a_task_lacks_is_one_line(monkeypatch, tmp_path: Path) -> None:
    # `gui-gym record GuiGym/MiniWoB-v0 --agent oracle` reaches a task with no expert
    import gui_gym.runs.record

    def no_expert(*args, **kwargs):
        raise NotImplementedError("no oracle for MiniWoB task 'bisect-angle'")

    monkeypatch.setattr(gui_gym.runs.record, "record_dataset", no_expert)
    argv = ["record", "GuiGym/WikiHow-v0", "--out", str(tmp_path / "rec"), "--no-progress"]
    result = runner.invoke(app, argv)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert "no oracle for MiniWoB task 'bisect-angle'" in lines[0]
    # what a failed run leaves (nothing here, or a dataset to resume): test_cli_failed_runs.py
