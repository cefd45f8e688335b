"""benchmarks/rollout_throughput.py --quick end to end: the served path runs its engine more
than once per env count (a warm-up, then measured runs), each on its own event loop, which
an OpenAICompatLLM's connections once broke ("Event loop is closed")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(300)
def test_the_quick_run_measures_every_row_without_losing_an_episode(tmp_path: Path) -> None:
    out = tmp_path / "throughput.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "benchmarks/rollout_throughput.py", "--quick", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert [row["envs"] for row in result["server"]] == [1, 8]
    for row in result["server"]:
        assert row["infra_errors"] == 0 and row["steps"] > 0
        assert 0 < row["fraction_of_ideal"] <= 1.05
    assert result["local"] and all(row["generated_tokens"] > 0 for row in result["local"])
