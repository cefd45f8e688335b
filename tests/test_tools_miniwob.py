"""MiniWoB++'s experts (real Chromium) play through TRL's environment class by tool calls
alone: coordinate clicks, drags through points, keys, selects, ctrl+clicks, hovers.

One browser for every task (as one TRL rollout slot keeps its env), one seed per expert: the
experts' own success on these seeds is tests/test_miniwob.py's to check."""

from __future__ import annotations

import pytest

from gui_gym.integrations.tools import tool_call
from tests.conftest import require, require_browser

require("trl", "trl")
require("miniwob", "miniwob")

from gui_gym.integrations.trl import make_environment_factory  # noqa: E402
from tests.test_miniwob import EXPERTS_TESTED  # noqa: E402


@pytest.fixture(scope="module")
def slot():
    """One TRL environment instance over GuiGym/MiniWoB-v0 (one browser)."""
    require_browser()
    env = make_environment_factory("GuiGym/MiniWoB-v0")()
    yield env
    env._finalizer()  # what TRL dropping the instance does


@pytest.mark.slow
def test_miniwob_experts_play_through_the_tools(slot) -> None:
    used: set[str] = set()
    failed = []
    for name in EXPERTS_TESTED:
        slot.reset(task_id=name, seed=0)
        while slot._state == "running":
            tool, arguments = tool_call(slot._env.unwrapped.oracle_action())
            used.add(tool)
            result = slot.__getattribute__(tool)(**arguments)
            assert not str(result).startswith("Error"), (name, tool, arguments, result)
        if not slot._metric("success"):
            failed.append(name)
    assert not failed, failed
    # the forms only MiniWoB++ uses, each reached through its tool
    expected = {"click_at", "drag_at", "hover_at", "key", "select_option", "type_text", "scroll"}
    assert expected <= used, sorted(used)
    print("tools used:", sorted(used))
