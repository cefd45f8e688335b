"""Issue 33, item 5: every model client goes through the one asyncio client
(:mod:`gui_gym.models.chat_http`) with one whole-request deadline and one retry policy, and
a batch of envs waits for its slowest request once (the rollout engine steps the envs of a
batch concurrently in inline mode, with a step deadline that works off the main thread)."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.models.llm import ModelUnavailable, OpenAICompatLLM
from gui_gym.models.stub_server import StubChatServer
from tests.test_hardening_models import _SlowServer

# ------------------------------------------------------------- item 1: OpenAICompatLLM


@pytest.mark.timeout(60)
def test_openai_compat_llm_needs_no_openai_package(monkeypatch: pytest.MonkeyPatch) -> None:
    # on the old code the constructor raised DependencyNotInstalled, and its blocking path
    # ran the openai package's client in a daemon thread per request
    monkeypatch.setitem(sys.modules, "openai", None)  # `import openai` now fails
    server = StubChatServer(latency=0.2)
    with server.running() as url:
        llm = OpenAICompatLLM("m", url, max_retries=0, timeout=10.0)
        out = llm.generate(["a", "b", "c", "d"], max_new_tokens=4)
        peak = server.peak_in_flight
    assert len(out) == 4 and all(len(row) == 1 and isinstance(row[0], str) for row in out)
    assert peak == 4  # the prompts of one call are in flight together


@pytest.mark.timeout(30)
@pytest.mark.parametrize("mode", ["trickle", "silent"])
def test_the_blocking_llm_path_has_the_one_deadline_off_the_main_thread(mode: str) -> None:
    # four prompts against a server that trickles a byte every 0.3 s (or never answers):
    # the call ends at one deadline (1 s), not four, from a worker thread as from the main
    server = _SlowServer(mode, every=0.3)
    with server.running() as url:
        llm = OpenAICompatLLM("m", url, max_retries=0, timeout=1.0)
        caught: list[BaseException] = []

        def call() -> None:
            try:
                llm.generate(["a", "b", "c", "d"])
            except BaseException as err:
                caught.append(err)

        worker = threading.Thread(target=call)
        worker.start()
        worker.join(20)
        peak = server.peak
    assert not worker.is_alive()
    assert len(caught) == 1 and isinstance(caught[0], ModelUnavailable)
    assert "whole-request deadline" in str(caught[0])
    assert peak == 4  # all four in flight together: the call waits for one deadline


def test_openai_compat_llm_refuses_a_url_that_is_not_http() -> None:
    with pytest.raises(ValueError, match="base_url must be http"):
        OpenAICompatLLM("m", "ftp://host/v1")
