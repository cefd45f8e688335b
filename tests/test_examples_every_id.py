"""Every example works on every simulated id it accepts, or refuses it at start with the reason;
the demo's scripts need only the core install."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import gui_gym
from tests.conftest import require

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def _run(script: str, *args: str, block: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Run an example; modules in ``block`` cannot be imported (as on a core install)."""
    code = (
        "import runpy, sys\n"
        f"for name in {list(block)!r}: sys.modules[name] = None\n"
        f"sys.argv = [{script!r}, *{list(args)!r}]\n"
        f"runpy.run_path({str(EXAMPLES / script)!r}, run_name='__main__')\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT
    )


def test_benchmark_agent_refuses_what_it_cannot_run() -> None:
    out = _run("benchmark_agent.py", "--env-id", "GuiGym/SemiOnlineReplay-v0")
    assert out.returncode == 2 and "replays an expert dataset" in out.stderr
    out = _run("benchmark_agent.py", "--env-id", "GuiGym/AndroidWorld-v0", "--category", "clok")
    assert out.returncode == 2 and "unknown category 'clok'" in out.stderr and "clock" in out.stderr
    assert "Traceback" not in out.stderr


HEAVY = ("torch", "transformers", "sentence_transformers", "ray", "selenium")


def test_benchmark_agent_runs_every_simulated_id_on_the_core_install() -> None:
    # one table for every id, as `make demo` prints it (which installs only the core); the
    # test split matters: AndroidWorld's template suite has no test entries of its own and
    # made the example divide by zero (issue 17)
    ids = list(gui_gym.ENV_IDS)
    out = _run(
        "benchmark_agent.py",
        "--env-id",
        *ids,
        "--split",
        "test",
        "--limit",
        "2",
        "--summary",
        block=HEAVY,
    )
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines() if line.startswith("GuiGym/")]
    assert len(rows) == 2 * len(ids) and all(row[2] == "all" and row[3] == "2" for row in rows)
    assert {row[0] for row in rows if row[1] == "oracle" and row[4] == "100.0%"} == set(ids)


def test_shaped_rewards_demo_on_the_core_install() -> None:
    out = _run("shaped_rewards.py", block=HEAVY)
    assert out.returncode == 0, out.stderr
    steps = [line.split() for line in out.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert steps and any(s[-2] == "yes" for s in steps)  # milestone hits, paid as shaped reward
    assert "deferred R_mil per step" in out.stdout


def _admire():
    require("torch", "llm")
    require("tyro", "examples")
    spec = importlib.util.spec_from_file_location("admire_grpo", EXAMPLES / "admire_grpo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["admire_grpo"] = module  # dataclasses look it up
    spec.loader.exec_module(module)
    return module


def test_admire_grpo_accepts_category_on_every_id_and_refuses_at_start(tmp_path: Path) -> None:
    example = _admire()
    try:
        for env_id, category in (
            ("GuiGym/AndroidWorld-v0", "clock"),  # was a TypeError (issue 17)
            ("GuiGym/AndroidWorld-v0", "auto"),
            ("GuiGym/WebShop-v0", None),
            ("GuiGym/WikiHow-v0", "auto"),
        ):
            assert example.refuse(example.Args(env_id=env_id, category=category)) is None
        assert example.category_of(example.Args()) == "Cross-Page"
        reason = example.refuse(example.Args(env_id="GuiGym/SemiOnlineReplay-v0"))
        assert reason is not None and "replays an expert dataset" in reason
        reason = example.refuse(example.Args(env_id="GuiGym/AndroidWorld-v0", category="Clok"))
        assert reason is not None and "unknown category 'Clok'" in reason
        # WebShop's expert needs at least 3 steps (search, open a result, buy): with 2 no task
        # gets milestones, and the run stops before loading a model instead of training on a
        # reward that is always 0
        args = example.Args(
            env_id="GuiGym/WebShop-v0",
            num_tasks=1,
            max_steps=2,
            embedder="hashing",
            store=str(tmp_path / "m.json"),
        )
        with pytest.raises(SystemExit, match="no task of GuiGym/WebShop-v0 has milestones"):
            example.main(args)
    finally:
        sys.modules.pop("admire_grpo", None)
