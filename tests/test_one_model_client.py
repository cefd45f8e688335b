"""Issue 33, item 5: every model client goes through the one asyncio client
(:mod:`gui_gym.models.llm.chat_http`) with one whole-request deadline and one retry policy, and
a batch of envs waits for its slowest request once (the rollout engine steps the envs of a
batch concurrently in inline mode, with a step deadline that works off the main thread)."""

from __future__ import annotations

import asyncio
import functools
import os
import random
import sys
import threading
import time
from typing import Any

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.agents.base import AgentStep
from gui_gym.agents.llm import LLMAgent
from gui_gym.models.llm import ModelUnavailable, OpenAICompatLLM
from gui_gym.models.llm.stub_server import SlowServer as _SlowServer
from gui_gym.models.llm.stub_server import StubChatServer
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine, as_batch_agent
from tests.test_hardening_hangs import HANG_SEED, _hanging_env

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


@pytest.mark.timeout(60)
def test_one_openai_compat_llm_serves_blocking_calls_from_many_threads_at_once() -> None:
    # the judges of concurrently stepped envs may share one LLM: each blocking call has its
    # own loop and connections, and the calls are in flight together
    server = StubChatServer(latency=0.3)
    with server.running() as url:
        llm = OpenAICompatLLM("m", url, max_retries=0, timeout=20.0)
        answers: dict[int, list] = {}

        def call(k: int) -> None:
            answers[k] = llm.generate([f"prompt {k}"], max_new_tokens=4)

        threads = [threading.Thread(target=call, args=(k,)) for k in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        peak = server.peak_in_flight
    assert sorted(answers) == list(range(8))
    assert all(len(rows) == 1 and len(rows[0]) == 1 for rows in answers.values())
    assert peak == 8


def test_openai_compat_llm_refuses_a_url_that_is_not_http() -> None:
    with pytest.raises(ValueError, match="base_url must be http"):
        OpenAICompatLLM("m", "ftp://host/v1")


# ------------------------------------------ items 2 and 3: a batch of envs waits once


def _prm_env(url: str, timeout: float) -> gym.Env:
    from gui_gym.models.prm import OpenAICompatPRM
    from gui_gym.wrappers import PRMWrapper

    prm = OpenAICompatPRM("prm", base_url=url, timeout=timeout, max_retries=0)
    return PRMWrapper(gym.make("GuiGym/WikiHow-v0", split="test"), prm)


# 8 envs whose PRM server never answers, with a 4 s deadline: stepped one after another (the
# old inline mode) one round takes 8 x 4 = 32 s, past this test's timeout
@pytest.mark.timeout(22)
def test_a_batch_of_envs_waits_for_a_never_answering_server_once() -> None:
    server = _SlowServer("silent")
    with server.running() as url:
        with RolloutEngine(
            lambda: _prm_env(url, 4.0), as_batch_agent("oracle"), num_envs=8
        ) as engine:
            trajectories = engine.run([EpisodeSpec(None, seed) for seed in range(8)])
        peak = server.peak
    assert all("no answer within 4s" in (t.infra_error or "") for t in trajectories)
    assert engine.stats.infra_errors == 8
    assert peak == 8  # every env's request was in flight at once


class _Jittery(gym.Wrapper):
    """Sleeps a random 0-30 ms in each step (threads finish in a random order) and puts the
    reset seed in every info."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.rng = random.Random(os.urandom(8))
        self.seed = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self.seed = seed
        observation, info = self.env.reset(seed=seed, options=options)
        return observation, {**info, "probe_seed": seed}

    def step(self, action: Any):
        time.sleep(self.rng.random() * 0.03)
        observation, reward, terminated, truncated, info = self.env.step(action)
        return observation, reward, terminated, truncated, {**info, "probe_seed": self.seed}


class _Recording:
    """A batch agent that logs every batch it is asked for; episode ``seed`` says DONE()
    after ``seed % 4 + 1`` steps (so episodes end in different rounds)."""

    name = "recording"

    def __init__(self) -> None:
        self.batches: list[list[tuple[int, int]]] = []

    def act_batch(self, observations, infos, histories=None) -> list[AgentStep]:
        rows = [(int(i["probe_seed"]), len(h)) for i, h in zip(infos, histories, strict=True)]
        self.batches.append(rows)
        return [
            AgentStep(action="DONE()" if turns >= seed % 4 else "SCROLL(down)")
            for seed, turns in rows
        ]


def _jittery_run() -> tuple[list, list, list]:
    agent = _Recording()
    order: list[int] = []
    make = lambda: _Jittery(gym.make("GuiGym/WikiHow-v0", split="test"))  # noqa: E731
    with RolloutEngine(make, agent, num_envs=4) as engine:
        out = engine.run(
            [EpisodeSpec(None, seed) for seed in range(10)],
            on_episode=lambda position, _: order.append(position),
        )
    return agent.batches, order, [(t.seed, len(t.steps)) for t in out]


@pytest.mark.timeout(60)
def test_concurrent_inline_steps_keep_the_serial_order() -> None:
    # whichever env's thread finishes first, the batches the agent sees, the order episodes
    # finish in and the results are those of a serial loop, run after run
    first, second = _jittery_run(), _jittery_run()
    assert first == second
    batches, order, results = first
    assert results == [(seed, seed % 4 + 1) for seed in range(10)]
    assert batches[0] == [(0, 0), (1, 0), (2, 0), (3, 0)]  # one batch per round, env order


@pytest.mark.timeout(60)
def test_the_inline_step_timeout_works_off_the_main_thread() -> None:
    # on the old code the SIGALRM deadline only armed on the main thread: from a worker
    # thread the hung step held the run for ever
    make = functools.partial(_hanging_env, HANG_SEED)
    outcome: dict[str, Any] = {}

    def run() -> None:
        with RolloutEngine(make, as_batch_agent("oracle"), num_envs=2, step_timeout=2.0) as eng:
            outcome["trajectories"] = eng.run([EpisodeSpec(None, seed) for seed in range(3)])

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(45)
    assert not worker.is_alive(), "the hung step held the run past its step_timeout"
    trajectories = outcome["trajectories"]
    lost = [t for t in trajectories if t.infra_error]
    assert [t.seed for t in lost] == [HANG_SEED]
    assert "no answer within step_timeout=2 s (hung)" in lost[0].infra_error
    ran = [t for t in trajectories if not t.infra_error]
    assert len(ran) == 2 and all(t.success for t in ran)  # the rebuilt env works


class _Overlap(gym.Wrapper):
    """Counts its class's steps in progress at once; with a barrier, the first step of each
    env waits until every env is inside its first step."""

    active = 0
    peak = 0
    lock = threading.Lock()

    def __init__(self, env: gym.Env, barrier: threading.Barrier | None):
        super().__init__(env)
        self.barrier = barrier

    def step(self, action: Any):
        with _Overlap.lock:
            _Overlap.active += 1
            _Overlap.peak = max(_Overlap.peak, _Overlap.active)
        try:
            if self.barrier is not None:
                self.barrier.wait()  # raises BrokenBarrierError after its timeout
                self.barrier = None
            time.sleep(0.02)
            return self.env.step(action)
        finally:
            with _Overlap.lock:
                _Overlap.active -= 1


def _overlap_env(thread_safe: bool, barrier: threading.Barrier | None) -> gym.Env:
    env = gym.make("GuiGym/WikiHow-v0", split="test")
    env.unwrapped.thread_safe = thread_safe
    return _Overlap(env, barrier)


@pytest.mark.timeout(60)
def test_envs_step_together_unless_their_class_says_thread_safe_false() -> None:
    # four envs meet at a barrier inside their first step: only a concurrent round gets there
    barrier = threading.Barrier(4, timeout=20)
    _Overlap.peak = 0
    make = functools.partial(_overlap_env, True, barrier)
    with RolloutEngine(make, as_batch_agent("oracle"), num_envs=4) as engine:
        together = engine.run([EpisodeSpec(None, seed) for seed in range(4)])
    assert all(t.infra_error is None and t.success for t in together)
    assert _Overlap.peak == 4
    _Overlap.peak = 0
    make = functools.partial(_overlap_env, False, None)
    with RolloutEngine(make, as_batch_agent("oracle"), num_envs=4) as engine:
        serial = engine.run([EpisodeSpec(None, seed) for seed in range(4)])
    assert all(t.infra_error is None and t.success for t in serial)
    assert _Overlap.peak == 1  # one lock per thread-unsafe class: they took turns


class _Slow(gym.Wrapper):
    """Each step takes ``seconds`` first (a planner, a model call)."""

    def __init__(self, env: gym.Env, seconds: float) -> None:
        super().__init__(env)
        self.seconds = seconds

    def step(self, action: Any):
        time.sleep(self.seconds)
        return self.env.step(action)


def _slow_env(seconds: float) -> gym.Env:
    env = gym.make("GuiGym/WikiHow-v0", split="test")
    env.unwrapped.thread_safe = False  # these envs take turns
    return _Slow(env, seconds)


@pytest.mark.timeout(120)
def test_a_step_waiting_for_its_turn_is_not_charged_for_the_steps_before_it() -> None:
    # three envs that take turns, each step 0.6 s against a 1 s deadline: a round takes
    # 1.8 s, yet no step runs long (the deadline used to count from the round's start, so
    # the third env's step was called hung and its episode lost)
    make = functools.partial(_slow_env, 0.6)
    with RolloutEngine(make, as_batch_agent("oracle"), num_envs=3, step_timeout=1.0) as engine:
        out = engine.run([EpisodeSpec(None, seed) for seed in range(3)])
    assert [t.infra_error for t in out] == [None] * 3
    assert all(t.success for t in out)


@pytest.mark.timeout(60)
def test_a_hung_turn_holder_ends_the_steps_queued_behind_it() -> None:
    # the first step holds the turn past the deadline: it hangs, and the step waiting for
    # the turn is not left waiting (no step of the round starts or ends for a whole deadline)
    make = functools.partial(_slow_env, 4.0)
    with RolloutEngine(make, as_batch_agent("oracle"), num_envs=2, step_timeout=1.0) as engine:
        out = engine.run([EpisodeSpec(None, seed) for seed in range(2)])
    assert all(t.infra_error and "hung" in t.infra_error for t in out)


# ------------------------------------- connections belong to the event loop that opened them


@pytest.mark.timeout(120)
def test_an_engine_with_a_served_model_runs_again_on_a_new_loop() -> None:
    # each run is its own event loop; the model's connections of the first were closed
    # through a loop that had already ended ("Event loop is closed" on the second run)
    server = StubChatServer(latency=0.01)
    with server.running() as url:
        llm = OpenAICompatLLM("m", url, max_retries=0, timeout=20.0)
        engine = RolloutEngine(
            "GuiGym/WikiHow-v0",
            LLMAgent(llm),
            num_envs=2,
            env_kwargs={"split": "train", "max_steps": 2},
        )
        with engine:
            first = engine.run([EpisodeSpec(None, 0), EpisodeSpec(None, 1)])
            assert llm._async is None  # the run closed its loop's connections
            second = engine.run([EpisodeSpec(None, 2), EpisodeSpec(None, 3)])
    assert [t.infra_error for t in first + second] == [None] * 4
    assert all(t.steps for t in first + second)


@pytest.mark.timeout(60)
def test_a_served_model_called_on_two_loops_of_its_own_answers_on_both() -> None:
    # a caller that runs its own loops and never disconnects: the second loop leaves the
    # first's connections to the garbage collector instead of raising
    server = StubChatServer(latency=0.01)
    with server.running() as url:
        llm = OpenAICompatLLM("m", url, max_retries=0, timeout=20.0)
        rows = [asyncio.run(llm.agenerate_with_tokens(["a", "b"], max_new_tokens=4)) for _ in "12"]
        asyncio.run(llm.adisconnect())  # on a loop without connections: nothing to close
    assert [len(r) for r in rows] == [2, 2]
    assert all(len(row) == 1 for r in rows for row in r)
