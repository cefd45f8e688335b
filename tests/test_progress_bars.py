"""Progress bars follow one rule (gui_gym/core/progress.py), from the CLI and from library
calls alike: shown on a terminal, hidden in logs, GUI_GYM_PROGRESS / TQDM_DISABLE decide."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gui_gym.core.progress import PROGRESS_ENV, progress_enabled
from tests.conftest import require

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv(PROGRESS_ENV, raising=False)
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    return monkeypatch


class _Stderr:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        return None


@pytest.mark.parametrize(
    ("tty", "progress_env", "tqdm_disable", "requested", "shown"),
    [
        (True, None, None, True, True),  # a terminal
        (False, None, None, True, False),  # a log file
        (True, None, None, False, False),  # the caller's own switch wins
        (False, "1", None, True, True),  # forced on in a log
        (True, "0", None, True, False),  # forced off on a terminal
        (False, "1", "1", True, True),  # GUI_GYM_PROGRESS before TQDM_DISABLE
        (True, None, "1", True, False),  # tqdm's switch
        (False, None, "", True, True),  # TQDM_DISABLE="" keeps bars (tqdm's meaning)
        (False, "1", None, False, False),
    ],
)
def test_one_rule_decides(clean_env, tty, progress_env, tqdm_disable, requested, shown) -> None:
    clean_env.setattr(sys, "stderr", _Stderr(tty))
    if progress_env is not None:
        clean_env.setenv(PROGRESS_ENV, progress_env)
    if tqdm_disable is not None:
        clean_env.setenv("TQDM_DISABLE", tqdm_disable)
    assert progress_enabled(requested) is shown


def test_a_bad_switch_names_what_is_allowed(clean_env) -> None:
    clean_env.setenv(PROGRESS_ENV, "maybe")
    with pytest.raises(ValueError, match=r"GUI_GYM_PROGRESS='maybe': use 1 .* or 0"):
        progress_enabled()


def test_no_progress_bar_is_made_outside_the_rule() -> None:
    # every bar in gui_gym goes through core.progress (tqdm) or asks it (train/trainer's rich bar)
    offenders = []
    for path in (ROOT / "gui_gym").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT).as_posix()
        if re.search(r"^\s*(from tqdm|import tqdm)", text, flags=re.M) and name != (
            "gui_gym/core/progress.py"
        ):
            offenders.append(name)
        if "rich.progress" in text and "progress_enabled" not in text:
            offenders.append(name)
    assert offenders == []


_LIBRARY_CALL = """
from gui_gym.runs.evaluate import evaluate
from gui_gym.runs.record import record_dataset
evaluate("GuiGym/WikiHow-v0", "random", episodes=2)
record_dataset("GuiGym/WikiHow-v0", episodes=2, out="data")
print("done")
"""


@pytest.mark.parametrize(
    ("variables", "bars"),
    [({}, False), ({PROGRESS_ENV: "1"}, True), ({"TQDM_DISABLE": ""}, True)],
)
def test_library_calls_are_quiet_in_a_log(tmp_path: Path, variables, bars) -> None:
    # A fresh process whose stderr is a pipe (a log): evaluate() and record_dataset() called
    # from Python, not from the CLI, draw no bar unless asked to.
    env = {k: v for k, v in os.environ.items() if k not in ("TQDM_DISABLE", PROGRESS_ENV)}
    env.update(variables, PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "-c", _LIBRARY_CALL],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("done")
    drawn = (
        "random on GuiGym/WikiHow-v0" in result.stderr,
        "record GuiGym/WikiHow-v0" in result.stderr,
    )
    assert drawn == (bars, bars), result.stderr


def test_model_loads_quiet_the_hugging_face_bars_in_a_log(clean_env) -> None:
    # transformers draws "Loading weights" itself: inside a gui-gym model load it follows the
    # rule, and its switch is given back after
    require("transformers", "llm")
    from transformers.utils import logging as transformers_logging

    from gui_gym.core.progress import library_bars_follow_the_rule

    clean_env.setattr(sys, "stderr", _Stderr(False))
    assert transformers_logging.is_progress_bar_enabled()
    with library_bars_follow_the_rule():
        assert not transformers_logging.is_progress_bar_enabled()
    assert transformers_logging.is_progress_bar_enabled()
    clean_env.setenv(PROGRESS_ENV, "1")
    with library_bars_follow_the_rule():
        assert transformers_logging.is_progress_bar_enabled()
