"""Issue 33, item 12: transformers' own bars ("Writing model shards", "Loading weights")
follow gui-gym's progress rule in library calls: hidden when stderr is not a terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import require


def test_saving_and_loading_a_policy_draws_no_transformers_bar_off_a_terminal(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    require("transformers", "llm")
    from gui_gym.models.llm import TransformersLLM
    from gui_gym.train.runner import build_tiny_policy

    monkeypatch.delenv("GUI_GYM_PROGRESS", raising=False)
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    folder = build_tiny_policy(tmp_path / "tiny", ["click the ok button"] * 4, n_embd=16)
    TransformersLLM(str(folder))
    err = capfd.readouterr().err
    assert "Writing model shards" not in err and "Loading weights" not in err
    # and the switch is restored: a user's own transformers calls keep their bars
    from transformers.utils import logging as transformers_logging

    assert transformers_logging.is_progress_bar_enabled()
