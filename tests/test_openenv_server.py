"""``gui-gym serve-openenv``: OpenEnv's own server and client over WebSocket on 127.0.0.1.

The servers run as the command a user starts (a subprocess on a free port); every client is
OpenEnv's ``GenericEnvClient``. Episodes are driven by gui-gym's expert on a local copy of
the same env (same task, same seed), so the remote screens must equal the local ones step
for step and every episode must end in success.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401
from gui_gym.agents import OracleAgent
from tests.conftest import require

require("openenv", "openenv")
from openenv import GenericEnvClient  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ENV_ID = "GuiGym/WikiHow-v0"
pytestmark = pytest.mark.timeout(400)


class _Starting:
    """``gui-gym serve-openenv ENV_ID --port 0 ARGS`` as a user starts it."""

    def __init__(self, *args: str):
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gui_gym.cli", "serve-openenv", ENV_ID, "--port", "0", *args],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env=env,
        )

    def url(self) -> str:
        """Waits for the server's first line (it is up, or it failed) and reads its URL."""
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        match = re.search(r"at (http://127\.0\.0\.1:\d+)", line)
        if match is None:
            self.process.kill()
            raise AssertionError(f"the server did not start: {line}{self.process.stderr.read()}")
        return match.group(1)


def _stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """``gui-gym serve-openenv`` with 16 slots."""
    starting = _Starting("--max-sessions", "16", "--session-timeout", "120", "--quiet")
    try:
        yield starting.url()
    finally:
        _stop(starting.process)


SESSION_TIMEOUT_S = 4.0


@contextlib.contextmanager
def serve_in_thread(**kwargs: Any) -> Iterator[tuple[str, int]]:
    """The library's OpenEnv server for ``ENV_ID`` (``make_server(**kwargs)``, as the command
    runs it) on a free loopback port, from a thread of this process (no second OpenEnv
    import): ``(host, port)`` until the block ends."""
    from gui_gym.integrations.openenv import ServedEnv, bind_socket, make_server

    sock = bind_socket("127.0.0.1", 0)
    server = make_server(ServedEnv(ENV_ID), **kwargs)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield "127.0.0.1", sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@pytest.fixture(scope="module")
def tiny_server() -> Iterator[str]:
    """One slot and a 4-second session timeout."""
    with serve_in_thread(max_sessions=1, session_timeout=SESSION_TIMEOUT_S) as (host, port):
        yield f"http://{host}:{port}"


LOADED_MACHINE_S = 150.0
"""How long a client waits for an answer (OpenEnv's default is 60 s). A session's first reset
starts its worker; on the shared 2-core machine with many jobs running that has taken over a
minute for 16 at once. A bound on a hang, not a speed check (benchmarks/bench_openenv.py)."""


def _client(url: str) -> GenericEnvClient:
    return GenericEnvClient(base_url=url, message_timeout_s=LOADED_MACHINE_S)


def _action(agent: OracleAgent, observation: dict, info: dict) -> str:
    action = agent.act(observation, info)
    return action.to_string() if hasattr(action, "to_string") else str(action)


async def _oracle_episode(client: GenericEnvClient, task_id: str, seed: int) -> dict[str, Any]:
    """An expert episode over ``client``; remote screens checked against a local twin."""
    local = gym.make(ENV_ID)
    observation, info = local.reset(seed=seed, options={"task": task_id})
    agent = OracleAgent(local)
    agent.reset(observation, info)
    result = await client.reset(seed=seed, task_id=task_id)
    assert result.observation["screen"] == observation["screen"]
    assert result.observation["instruction"] == observation["instruction"]
    assert result.observation["task_id"] == task_id
    rewards = []
    while not result.done:
        action = _action(agent, observation, info)
        observation, reward, terminated, truncated, info = local.step(action)
        result = await client.step({"action": action})
        assert result.observation["screen"] == observation["screen"]
        assert result.reward == pytest.approx(reward)
        assert result.done == (terminated or truncated)
        rewards.append(result.reward)
    local.close()
    return {
        "success": result.observation["success"],
        "reward": result.reward,
        "steps": result.observation["step"],
        "components": result.observation["reward_components"],
        "state": await client.state(),
    }


def test_sixteen_concurrent_sessions_each_finish_an_oracle_episode(server: str) -> None:
    tasks = gym.make(ENV_ID).unwrapped.task_ids[:16]

    async def run() -> tuple[list[dict[str, Any]], str]:
        clients = [_client(server) for _ in tasks]
        try:
            results = await asyncio.gather(
                *(_oracle_episode(c, t, seed) for seed, (c, t) in enumerate(zip(clients, tasks)))
            )
            # every slot is taken: a 17th client is refused, clearly
            extra = _client(server)
            with pytest.raises(RuntimeError, match="CAPACITY_REACHED") as refused:
                await extra.reset(seed=0)
            await extra.close()
        finally:
            await asyncio.gather(*(c.close() for c in clients))
        return results, str(refused.value)

    results, refused = asyncio.run(run())
    assert [r["success"] for r in results] == [True] * 16
    assert [r["reward"] for r in results] == [1.0] * 16
    assert all(r["components"] == {"outcome": 1.0} for r in results)
    # one worker process per session
    assert len({r["state"]["worker_pid"] for r in results}) == 16
    assert "16" in refused


def _wait_until_exited(pid: int, timeout: float = 10.0) -> None:
    """Until ``pid`` is a zombie or gone (its parent, the server, has not reaped it yet)."""
    deadline = time.monotonic() + timeout
    stat = Path(f"/proc/{pid}/stat")
    while time.monotonic() < deadline:
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                return
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} still running {timeout} s after SIGKILL")


def test_a_killed_worker_fails_its_session_only(server: str) -> None:
    task_a, task_b = gym.make(ENV_ID).unwrapped.task_ids[20:22]

    async def run() -> None:
        async with _client(server) as a, _client(server) as b:
            await a.reset(seed=1, task_id=task_a)
            await b.reset(seed=2, task_id=task_b)
            pid = (await a.state())["worker_pid"]
            os.kill(pid, signal.SIGKILL)
            _wait_until_exited(pid)  # dead before the step arrives (the server's first look)
            with pytest.raises(RuntimeError, match=r"env worker .* died.*call reset\(\)"):
                await a.step({"action": "SCROLL(down)"})
            with pytest.raises(RuntimeError, match=r"no episode is running.*reset\(\)"):
                await a.step({"action": "SCROLL(down)"})
            # the other session goes on, and so does the killed one after a reset
            assert (await _oracle_episode(b, task_b, 2))["success"] is True
            episode = await _oracle_episode(a, task_a, 1)
            assert episode["success"] is True
            assert episode["state"]["worker_pid"] != pid

    asyncio.run(run())


def test_the_typed_client_gives_typed_results(server: str) -> None:
    from gui_gym.integrations.openenv import GuiGymEnvClient, GuiObservation, GuiState

    task = gym.make(ENV_ID).unwrapped.task_ids[30]
    with GuiGymEnvClient(base_url=server, message_timeout_s=LOADED_MACHINE_S).sync() as env:
        first = env.reset(seed=3, task_id=task)
        assert isinstance(first.observation, GuiObservation) and first.observation.task_id == task
        result = env.step("CLICK(999)")
        assert result.observation.action_valid is False
        assert "999" in (result.observation.action_error or "")
        assert result.observation.step == 1 and result.reward == 0.0 and not result.done
        state = env.state()
        assert isinstance(state, GuiState) and state.step_count == 1 and state.seed == 3


def test_the_task_api_lists_the_served_tasks_and_reset_takes_an_index(server: str) -> None:
    import json
    import urllib.request

    tasks = gym.make(ENV_ID).unwrapped.task_ids
    name = ENV_ID.replace("/", "-")

    def call(route: str, body: dict | None = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{server}/{name}/{route}", data=data, headers={"content-type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    assert call("splits") == (200, [{"name": "train", "type": "train"}])
    assert call("num_tasks", {"split": "train"}) == (200, {"num_tasks": len(tasks)})
    assert call("task", {"split": "train", "index": 7}) == (
        200,
        {"task": {"id": tasks[7], "index": 7}},
    )
    assert call("task", {"split": "train", "index": len(tasks)})[0] == 400
    assert call("num_tasks", {"split": "test"}) == (200, {"num_tasks": 0})

    async def run() -> str:
        async with _client(server) as env:
            result = await env.reset(seed=0, split="train", index=7)
            return result.observation["task_id"]

    assert asyncio.run(run()) == tasks[7]


# A client in its own process: connects, starts an episode, says so, then sits silent. It
# speaks OpenEnv's wire protocol with the plain `websockets` client (OpenEnv's own client
# imports in seconds; the server cannot tell them apart).
_CLIENT = textwrap.dedent(
    """
    import json, sys, time
    from websockets.sync.client import connect

    ws = connect(sys.argv[1].replace("http://", "ws://") + "/ws")
    ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
    assert json.loads(ws.recv())["type"] == "observation"
    print("ready", flush=True)
    time.sleep(3600)
    """
)


def _silent_client(url: str) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", _CLIENT, url], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


async def _wait_for_slot(url: str, deadline_s: float) -> float:
    """Seconds until a new session can start an episode (a bound on the wait, not a
    speed check: failing it means the slot was never given back)."""
    start = time.monotonic()
    while True:
        client = _client(url)
        try:
            result = await client.reset(seed=0)
            assert result.observation["task_id"]
            return time.monotonic() - start
        except RuntimeError as err:
            assert "CAPACITY_REACHED" in str(err), err
        finally:
            await client.close()
        if time.monotonic() - start > deadline_s:
            raise AssertionError(f"the slot was not reclaimed within {deadline_s} s")
        await asyncio.sleep(0.2)


def test_a_vanished_client_loses_its_slot_after_the_session_timeout(tiny_server: str) -> None:
    # SIGSTOP: the socket stays open and the client says nothing, not even a close (a host
    # that dropped off the network looks the same to the server)
    client = _silent_client(tiny_server)
    try:
        client.send_signal(signal.SIGSTOP)
        stopped = time.monotonic()

        async def run() -> None:
            refused = _client(tiny_server)
            with pytest.raises(RuntimeError, match="CAPACITY_REACHED"):
                await refused.reset(seed=0)
            await refused.close()
            # the session timeout frees it; uvicorn's own keepalive would take 40 s
            await _wait_for_slot(tiny_server, deadline_s=SESSION_TIMEOUT_S + 15.0)

        asyncio.run(run())
        # not before the client had been silent for (about) the timeout: the silent client's
        # last message came just before it stopped
        assert time.monotonic() - stopped > SESSION_TIMEOUT_S / 2
    finally:
        client.kill()
        client.wait()


def test_a_killed_client_gives_its_slot_back_at_once(tiny_server: str) -> None:
    client = _silent_client(tiny_server)
    client.kill()  # the kernel closes its socket
    client.wait()
    asyncio.run(_wait_for_slot(tiny_server, deadline_s=SESSION_TIMEOUT_S + 15.0))


def test_a_step_past_the_step_timeout_stops_its_worker_and_the_session_goes_on() -> None:
    from gui_gym.integrations.openenv import GuiAction, GuiGymEnvironment, ServedEnv
    from tests.openenv_helpers import make_hanging_env

    class Hanging(ServedEnv):
        def factory(self):
            return functools.partial(
                make_hanging_env, self.env_id, dict(self.env_kwargs), self.stack, 60.0
            )

    session = GuiGymEnvironment(Hanging(ENV_ID, step_timeout=3.0))
    try:
        first = session.reset(seed=0)
        pid = session.state.worker_pid
        with pytest.raises(RuntimeError, match=r"step took longer than the step timeout \(3 s\)"):
            session.step(GuiAction(action="WAIT()"))
        again = session.reset(seed=0)
        assert again.screen == first.screen and session.state.worker_pid != pid
        assert session.step(GuiAction(action="SCROLL(down)")).step == 1
    finally:
        session.close()


def test_screenshots_and_deferred_milestone_credit_travel(tmp_path: Path) -> None:
    import base64
    import io

    import numpy as np
    from PIL import Image

    from gui_gym.integrations.openenv import GuiAction, GuiGymEnvironment, ServedEnv

    served = ServedEnv(
        ENV_ID,
        env_kwargs={"screenshot": True},
        reward="outcome+milestone",
        reward_options={"embedder": "hashing", "milestone_store": str(tmp_path / "m.json")},
    )
    session = GuiGymEnvironment(served)
    local = gym.make(ENV_ID, screenshot=True)
    try:
        first = session.reset(seed=4)
        observation, info = local.reset(seed=4, options={"task": first.task_id})
        header, data = (first.screenshot or "").split(",", 1)
        assert header == "data:image/png;base64"
        pixels = np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))
        assert np.array_equal(pixels, observation["screenshot"])  # PNG: lossless
        agent = OracleAgent(local)
        agent.reset(observation, info)
        result, steps = first, 0
        while not result.done:
            action = _action(agent, observation, info)
            observation, _, _, _, info = local.step(action)
            result = session.step(GuiAction(action=action))
            steps += 1
        assert result.success is True
        credit = result.metadata["milestone"]
        assert len(credit["episode_total_rewards"]) == steps  # ADMIRE's deferred credit
        assert result.reward_components == {"outcome": 1.0, "milestone": 0.0}
    finally:
        session.close()
        local.close()


def test_bad_reset_arguments_are_clear_errors() -> None:
    from gui_gym.integrations.openenv import GuiAction, GuiGymEnvironment, ServedEnv

    session = GuiGymEnvironment(ServedEnv(ENV_ID))
    try:
        with pytest.raises(ValueError, match=r"unknown reset argument.*allowed: seed"):
            session.reset(seed=0, options={"task": "x"})
        with pytest.raises(ValueError, match="split needs an index"):
            session.reset(seed=0, split="train")
        with pytest.raises(ValueError, match="not both"):
            session.reset(task_id="x", split="train", index=0)
        with pytest.raises(IndexError, match="no split 'test': this server serves 'train'"):
            session.reset(split="test", index=0)
        with pytest.raises(RuntimeError, match="no episode is running"):
            session.step(GuiAction(action="CLICK(1)"))
        with pytest.raises(RuntimeError, match=r"the env raised.*nope"):
            session.reset(seed=0, task_id="nope")
    finally:
        session.close()
    with pytest.raises(ValueError, match="unknown reward 'nope'"):
        ServedEnv(ENV_ID, reward="outcome+nope")


def test_cli_mistakes_are_one_line() -> None:
    import socket

    from typer.testing import CliRunner

    from gui_gym.cli import app

    runner = CliRunner()
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        cases = {
            f"cannot listen on 127.0.0.1:{port}: Address already in use": [
                ENV_ID,
                "--port",
                str(port),
            ],
            "unknown env id 'GuiGym/WikiHo-v0'; did you mean 'GuiGym/WikiHow-v0'?": [
                "GuiGym/WikiHo-v0"
            ],
            "--session-timeout must be > 0 seconds, got 0": [ENV_ID, "--session-timeout", "0"],
            "Invalid value for '--max-sessions'": [ENV_ID, "--max-sessions", "0"],
            "--reward outcome+nope: unknown reward 'nope'": [ENV_ID, "--reward", "outcome+nope"],
        }
        for expected, argv in cases.items():
            result = runner.invoke(app, ["serve-openenv", *argv])
            lines = [line for line in result.output.splitlines() if line.strip()]
            assert result.exit_code == 2 and len(lines) == 1, result.output
            assert expected in lines[0], lines[0]
    finally:
        taken.close()


def test_the_throughput_benchmark_runs_on_tiny_sizes() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "bench_openenv", ROOT / "benchmarks/bench_openenv.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    results = bench.run([2], steps=5)
    (row,) = results["rows"]
    assert row["sessions"] == 2 and row["steps_per_s"] > 0 and row["open_s"] > 0
    assert results["local_steps_per_s"] > 0 and results["machine"]["cpus"] >= 1
