"""gui-gym in verl's agent loop (issue 30 item 2), and the task export verl reads.

verl 0.9.1 cannot share the main environment (it pins transformers < 5.11 and tensordict
<= 0.10; torchrl 0.14 needs tensordict 0.14), so its checks run in verl's own environment,
``.venv-verl`` (``scripts/setup.sh`` builds it), through ``tests/verl_checks.py``: one
subprocess runs three episodes through verl's own dataset, worker and Continuous Token
builder with a real tiny Qwen2 generating, and these tests assert on what it reports. In CI a
missing ``.venv-verl`` fails them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gui_gym.cli import app
from tests.conftest import require, unavailable

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def _verl_python() -> Path | None:
    given = os.environ.get("GUI_GYM_VERL_PYTHON")
    candidates = [Path(given)] if given else []
    candidates += [ROOT / ".venv-verl/bin/python", Path(sys.prefix + "-verl") / "bin/python"]
    return next((c for c in candidates if c.is_file()), None)


@pytest.fixture(scope="module")
def verl_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    python = _verl_python()
    if python is None:
        message = (
            "verl's environment .venv-verl is missing (scripts/setup.sh builds it; "
            "or set GUI_GYM_VERL_PYTHON)"
        )
        unavailable(message)
    out = tmp_path_factory.mktemp("verl")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_DATASETS_OFFLINE": "1"}
    env.update({"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "RAY_DEDUP_LOGS": "0"})
    done = subprocess.run(
        [str(python), "-m", "tests.verl_checks", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _runs(mask: list[int]) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of 1s in a response mask."""
    runs, start = [], None
    for i, m in enumerate([*mask, 0]):
        if m and start is None:
            start = i
        elif not m and start is not None:
            runs.append((start, i))
            start = None
    return runs


@pytest.mark.timeout(660)
def test_completion_ids_are_the_generated_ids_across_three_turns(verl_run: dict) -> None:
    run = verl_run["free"]
    calls = run["calls"]
    assert len(calls) == 3  # the env's max_steps=3 ended the episode after the third turn
    assert run["num_turns"] == 1 + 3 + 2  # the prompt, 3 completions, 2 next screens
    response, mask = run["response_ids"], run["response_mask"]
    runs = _runs(mask)
    # the mask covers exactly the model's tokens: one run per turn, each the generated ids
    assert [response[a:b] for a, b in runs] == [c["token_ids"] for c in calls]
    assert sum(mask) == sum(len(c["token_ids"]) for c in calls)
    # what the server saw at each turn is the sequence so far, token for token
    sequence = run["prompt_ids"] + response
    assert calls[0]["prompt_ids"] == run["prompt_ids"]
    for k in (1, 2):
        assert calls[k]["prompt_ids"] == sequence[: len(calls[k]["prompt_ids"])]
        assert len(calls[k]["prompt_ids"]) == len(run["prompt_ids"]) + runs[k][0]
    # log-probs of the sampled tokens reach verl where the mask is 1, zeros elsewhere
    logprobs = run["rollout_log_probs"]
    sampled = [lp for a, b in runs for lp in logprobs[a:b]]
    assert sampled == pytest.approx([lp for c in calls for lp in c["log_probs"]], abs=1e-6)
    assert all(lp == 0.0 for lp, m in zip(logprobs, mask) if not m)


@pytest.mark.timeout(660)
def test_turn_boundary_newline_is_inserted_and_masked(verl_run: dict) -> None:
    """ChatML writes ``<|im_end|>\\n`` after a turn; generation stops at ``<|im_end|>``:
    verl's Qwen builder inserts the newline, and it is not the model's token."""
    run = verl_run["expert"]  # each turn ends with <|im_end|> (the free run's hit 12 tokens)
    response, mask = run["response_ids"], run["response_mask"]
    runs = _runs(mask)
    assert len(runs) == len(run["calls"]) >= 3
    for _a, b in runs[:-1]:
        assert response[b - 1] == run["eos_id"]
        assert response[b] == run["newline_id"] and mask[b] == 0
    assert [response[a:b] for a, b in runs] == [c["token_ids"] for c in run["calls"]]


@pytest.mark.timeout(660)
def test_reward_score_is_the_reward_stacks_episode_return(verl_run: dict) -> None:
    for name in ("free", "expert"):
        run = verl_run[name]
        scores = run["rm_scores"]
        # verl puts the score on the last response token
        assert scores[-1] == pytest.approx(run["reference_return"], abs=1e-6)
        assert all(s == 0.0 for s in scores[:-1])
        assert run["turn_scores"] == pytest.approx(run["gui_gym"]["step_rewards"])
    expert = verl_run["expert"]["gui_gym"]
    assert expert["success"] is True
    assert verl_run["expert"]["reference_return"] > 1.0  # the outcome and progress both paid
    assert sum(c["progress"] for c in expert["components"]) > 0
    assert verl_run["expert"]["success_column"] == [1.0]
    assert "success" in verl_run["expert"]["reward_extra_keys"]
    free = verl_run["free"]
    assert len(free["gui_gym"]["components"]) == 3
    assert all("format" in c for c in free["gui_gym"]["components"])


@pytest.mark.timeout(660)
def test_a_response_budget_cuts_the_episode_without_an_outcome(verl_run: dict) -> None:
    run = verl_run["budget"]
    assert len(run["calls"]) == 1
    assert run["gui_gym"]["ended"] is False
    assert len(run["response_ids"]) <= 20
    assert run["response_ids"] == run["calls"][0]["token_ids"][:20]
    assert run["rm_scores"][-1] == pytest.approx(run["reference_return"], abs=1e-6)


@pytest.mark.timeout(660)
def test_a_vlm_sees_each_screenshot_and_keeps_its_tokens(verl_run: dict) -> None:
    """A tiny LLaVA with ``screenshot: true``: verl's VL builder expands each screenshot
    into its placeholders, the server gets every image so far, the trainer's pixel inputs
    hold them all, and the completion ids are still exactly the generated ones."""
    run = verl_run["vlm"]
    calls = run["calls"]
    assert [c["images"] for c in calls] == [1, 2]  # the env's max_steps=2
    assert [c["image_tokens"] for c in calls] == [16, 32]  # 16 placeholders a 32x32 image
    runs = _runs(run["response_mask"])
    assert [run["response_ids"][a:b] for a, b in runs] == [c["token_ids"] for c in calls]
    assert (
        calls[1]["prompt_ids"]
        == (run["prompt_ids"] + run["response_ids"])[: len(calls[1]["prompt_ids"])]
    )
    assert run["pixel_values_shape"][0] == 2
    assert run["rm_scores"][-1] == pytest.approx(run["reference_return"], abs=1e-6)


# ------------------------------------------------------------------ the export (main venv)


def test_a_row_cannot_choose_the_files_the_loop_reads_or_writes(verl_run: dict) -> None:
    # issue 46: a dataset row's extra_info set prm_model / milestone_store paths before
    checks = verl_run["row_settings"]
    assert checks["refused"] and all("agent-loop config" in m for m in checks["refused"].values())
    assert checks["allowed_reward"] == "outcome+progress"


def test_export_tasks_writes_verl_rows(tmp_path: Path) -> None:
    pq = require("pyarrow.parquet", "parquet")
    out = tmp_path / "tasks.parquet"
    result = runner.invoke(
        app,
        ["export-tasks", "GuiGym/WikiHow-v0", "--split", "test", "--seeds", "2", "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    rows = pq.read_table(out).to_pylist()
    import gymnasium as gym

    tasks = gym.make("GuiGym/WikiHow-v0", split="test").unwrapped.task_ids
    assert len(rows) == 2 * len(tasks)
    assert [r["extra_info"]["index"] for r in rows] == list(range(len(rows)))
    assert {(r["extra_info"]["task_id"], r["extra_info"]["seed"]) for r in rows} == {
        (t, s) for t in tasks for s in (0, 1)
    }
    first = rows[0]
    assert first["agent_name"] == "gui_gym" and first["data_source"] == "GuiGym/WikiHow-v0"
    assert [m["role"] for m in first["prompt"]] == ["system", "user"]
    observation, _ = gym.make("GuiGym/WikiHow-v0", task=tasks[0]).reset(seed=0)
    assert observation["screen"] in first["prompt"][1]["content"]


def test_export_tasks_jsonl_and_chosen_tasks(tmp_path: Path) -> None:
    import gymnasium as gym

    task = gym.make("GuiGym/WikiHow-v0", split="train").unwrapped.task_ids[3]
    out = tmp_path / "tasks.jsonl"
    result = runner.invoke(
        app,
        [
            "export-tasks",
            "GuiGym/WikiHow-v0",
            "--format",
            "jsonl",
            "--task",
            task,
            "--seed",
            "7",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert (row["task_id"], row["seed"], row["split"]) == (task, 7, "train")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--out", "{tmp}/t.jsonl"], "a verl export is a .parquet file"),
        (["--format", "hf", "--out", "{tmp}/t.parquet"], "unknown format 'hf'"),
        (["--task", "nope", "--out", "{tmp}/t.parquet"], "unknown task"),
        (["--split", "tset", "--out", "{tmp}/t.parquet"], "unknown split 'tset'"),
        (["--prompt", "nope", "--out", "{tmp}/t.parquet"], "unknown prompt 'nope'"),
    ],
)
def test_export_tasks_mistakes_are_one_line(tmp_path: Path, argv: list[str], says: str) -> None:
    argv = [a.format(tmp=tmp_path) for a in argv]
    result = runner.invoke(app, ["export-tasks", "GuiGym/WikiHow-v0", *argv])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert says in lines[0]
    assert not list(tmp_path.iterdir())  # nothing written


def test_the_verl_module_without_verl_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from gymnasium.error import DependencyNotInstalled

    monkeypatch.setitem(sys.modules, "verl", None)
    monkeypatch.delitem(sys.modules, "gui_gym.integrations.verl", raising=False)
    with pytest.raises(DependencyNotInstalled, match=r"pip install 'gui-gym\[verl\]'"):
        import gui_gym.integrations.verl  # noqa: F401
