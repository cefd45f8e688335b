"""runs.rollout: the rollout engine (batched local model, async server path, GRPO and fork
groups, infra errors, dead env workers) and token-exact generation."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401
from gui_gym.agents import AgentStep, LLMAgent
from gui_gym.core.trajectory import Trajectory, read_trajectories, write_trajectories
from gui_gym.models.llm import OpenAICompatLLM, ScriptedLLM, TransformersLLM
from gui_gym.models.llm.stub_server import StubChatServer
from gui_gym.runs.evaluate import make_agent
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine
from gui_gym.runs.slots import fork_env
from tests.conftest import require
from tests.tiny_llm import tiny_gpt2, tiny_tokenizer

ENV = "GuiGym/WikiHow-v0"


def _tasks(n: int) -> list[str]:
    env = gym.make(ENV, split="train")
    pool = [t.task_id for t in env.unwrapped._pool][:n]
    env.close()
    return pool


def _oracle(env: gym.Env, seed: int) -> Any:
    return make_agent("oracle", env, seed)


# ------------------------------------------------------------------ token-exact generation


def _piece_tokenizer() -> Any:
    """A WordPiece tokenizer whose vocabulary has both ``click`` and ``##s`` and ``clicks``:
    sampled ids ``[click, ##s]`` decode to ``clicks``, which encodes back as one id."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["click", "clicks", "##s", "##ed", "open", "opens", "opened", "go", "goes", "<", ">"]
    words += ["action", "/", "(", ")", "1", "2", "3", "the", "a", "screen", "goal", ":"]
    specials = ["<pad>", "<eos>", "<unk>"]
    vocab = {w: i for i, w in enumerate(specials + words)}
    core = Tokenizer(models.WordPiece(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    core.decoder = decoders.WordPiece(prefix="##")
    return PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )


@pytest.fixture(scope="module")
def tiny_llm() -> TransformersLLM:
    require("transformers", "llm")
    tok = tiny_tokenizer()
    return TransformersLLM(tiny_gpt2(len(tok), n_positions=1024), tok, device="cpu", batch_size=8)


def test_generate_with_tokens_logprobs_are_the_models_for_the_sampled_ids(
    tiny_llm: TransformersLLM,
) -> None:
    import torch

    torch.manual_seed(0)
    prompts = ["click the search button", "open app", "go"]  # unequal: left padding
    rows = tiny_llm.generate_with_tokens(prompts, max_new_tokens=10, temperature=0.7, n=2)
    assert [len(r) for r in rows] == [2, 2, 2]
    for prompt, row in zip(prompts, rows, strict=True):
        expected_prompt = tiny_llm.tokenizer(prompt)["input_ids"]
        for g in row:
            assert g.prompt_ids == expected_prompt  # no padding ids kept
            assert len(g.completion_ids) == len(g.logprobs) > 0
            ids = torch.tensor([g.prompt_ids + g.completion_ids])
            with torch.no_grad():
                logits = tiny_llm.model(ids).logits[0].float() / 0.7
            scores = torch.log_softmax(logits, -1)
            p = len(g.prompt_ids)
            reference = [scores[p - 1 + k, t].item() for k, t in enumerate(g.completion_ids)]
            assert g.logprobs == pytest.approx(reference, abs=1e-4)
    greedy = tiny_llm.generate_with_tokens(prompts[:1], max_new_tokens=5, temperature=0.0, n=2)
    assert greedy[0][0].completion_ids == greedy[0][1].completion_ids
    assert all(lp <= 0.0 for lp in greedy[0][0].logprobs)


def test_engine_keeps_the_sampled_ids_where_decode_then_encode_would_change_them() -> None:
    require("transformers", "llm")
    import torch

    tok = _piece_tokenizer()
    # the spy below sits on model.generate: the Hugging Face path (tests/test_fast_generate.py
    # holds the static-cache path to the same ids)
    llm = TransformersLLM(tiny_gpt2(len(tok), n_positions=2048), tok, device="cpu", generation="hf")
    sampled: list[list[int]] = []
    generate = llm.model.generate

    def spy(**kwargs: Any) -> Any:  # what the model really sampled, row by row
        out = generate(**kwargs)
        width = kwargs["input_ids"].shape[1]
        sampled.extend(out[:, width:].tolist())
        return out

    llm.model.generate = spy  # type: ignore[method-assign]
    torch.manual_seed(3)
    agent = LLMAgent(llm, temperature=1.0, max_new_tokens=12, history=0)
    with RolloutEngine(
        ENV, agent, num_envs=3, env_kwargs={"split": "train", "max_steps": 2}
    ) as engine:
        trajectories = engine.run([EpisodeSpec(t, i) for i, t in enumerate(_tasks(3))])
    steps = [s for t in trajectories for s in t.steps]
    assert steps and all(s.completion_ids is not None for s in steps)
    end = tok.eos_token_id
    for s in steps:  # stored ids are a sampled row (cut after the end token, if any)
        assert any(row[: len(s.completion_ids)] == s.completion_ids for row in sampled)
        assert len(s.logprobs) == len(s.completion_ids)
        assert s.completion_ids[-1] == end or len(s.completion_ids) == 12
    drifted = [
        s
        for s in steps
        if tok(s.completion, add_special_tokens=False)["input_ids"] != s.completion_ids
    ]
    assert drifted, "expected a generation whose re-tokenization differs"


# ------------------------------------------------------------------------------- engine


def test_engine_runs_one_env_agents_and_keeps_spec_order() -> None:
    tasks = _tasks(5)
    with RolloutEngine(ENV, _oracle, num_envs=2, env_kwargs={"split": "train"}) as engine:
        finished: list[int] = []
        out = engine.run(
            [EpisodeSpec(t, 10 + i, episode=i) for i, t in enumerate(tasks)],
            on_episode=lambda pos, t: finished.append(pos),
        )
    assert [t.task_id for t in out] == tasks
    assert all(t.success and t.infra_error is None for t in out)
    assert sorted(finished) == list(range(5))
    assert [t.metadata["episode"] for t in out] == list(range(5))
    assert out[0].metadata["category"] and out[0].seed == 10
    assert engine.stats.episodes == 5 and engine.stats.infra_errors == 0


def test_batched_local_model_acts_for_every_waiting_env_in_one_call(
    tiny_llm: TransformersLLM,
) -> None:
    calls: list[int] = []
    original = tiny_llm.generate_with_tokens

    def counting(prompts: Any, **kwargs: Any) -> Any:
        calls.append(len(prompts))
        return original(prompts, **kwargs)

    tiny_llm.generate_with_tokens = counting  # type: ignore[method-assign]
    try:
        agent = LLMAgent(tiny_llm, max_new_tokens=4, history=2)
        with RolloutEngine(
            ENV, agent, num_envs=4, env_kwargs={"split": "train", "max_steps": 3}
        ) as engine:
            out = engine.run([EpisodeSpec(t, 0) for t in _tasks(4)])
    finally:
        del tiny_llm.generate_with_tokens
    assert calls == [4, 4, 4]  # 4 envs x 3 steps: one batched call per step
    assert all(len(t.steps) == 3 for t in out)
    step = out[0].steps[1]
    assert step.prompt[0]["role"] == "system" and step.prompt_ids and step.logprobs
    assert "1. " in step.prompt[1]["content"]  # the history of the first action


def test_trajectories_with_token_fields_round_trip_and_old_files_load(tmp_path) -> None:
    t = Trajectory("GuiGym/WikiHow-v0", "task", "do it", infra_error="env raised", group_id="g")
    from gui_gym.core.trajectory import Step

    t.steps.append(
        Step(
            0, "<screen>", "CLICK(1)", completion="x", completion_ids=[1, 2], logprobs=[-1.0, -2.0]
        )
    )
    write_trajectories(tmp_path / "t.jsonl", [t])
    [back] = read_trajectories(tmp_path / "t.jsonl")
    assert back == t
    old = {
        "env_id": "e",
        "task_id": "t",
        "instruction": "i",
        "steps": [{"index": 0, "screen": "", "action": "DONE()"}],
    }
    loaded = Trajectory.from_dict(old)
    assert loaded.infra_error is None and loaded.steps[0].completion_ids is None


def test_agent_step_pairs_ids_and_logprobs() -> None:
    with pytest.raises(ValueError, match="pair"):
        AgentStep("DONE()", completion_ids=[1, 2], logprobs=[-0.5])


# ------------------------------------------------------------------------------- groups


def test_grpo_groups_start_from_the_same_state() -> None:
    llm = ScriptedLLM(lambda text: "Thought: look\n<action>SCROLL(down)</action>")
    agent = LLMAgent(llm)
    with RolloutEngine(
        ENV, agent, num_envs=3, env_kwargs={"split": "train", "max_steps": 2}
    ) as engine:
        groups = engine.run_groups(_tasks(2), group_size=3, seed=5)
    assert len(groups) == 2
    for k, group in enumerate(groups):
        assert len(group.trajectories) == 3 and not group.infra
        assert {t.group_id for t in group.trajectories} == {group.group_id}
        assert {t.seed for t in group.trajectories} == {5 + k}
        assert len({t.steps[0].screen for t in group.trajectories}) == 1
        assert len(group.rewards) == 3


def test_fork_groups_act_from_one_identical_state() -> None:
    tasks = _tasks(1)
    counter = {"n": 0}

    def reply(text: str) -> str:  # different actions from the same prompt after the fork
        counter["n"] += 1
        return "<action>SCROLL(down)</action>" if counter["n"] % 2 else "<action>GOBACK()</action>"

    agent = LLMAgent(ScriptedLLM(reply))
    with RolloutEngine(
        ENV, agent, num_envs=1, env_kwargs={"split": "train", "max_steps": 4}
    ) as engine:
        [group] = engine.run_fork_groups(
            [EpisodeSpec(tasks[0], 0)], anchor_step=2, group_size=4, continue_to_end=False
        )
    assert group.skipped is None and len(group.trajectories) == 4
    members = group.trajectories
    assert all(m.anchor_step == 2 and len(m.steps) == 3 for m in members)
    prefix = [s.action for s in members[0].steps[:2]]
    assert all([s.action for s in m.steps[:2]] == prefix for m in members)
    assert len({m.steps[2].screen for m in members}) == 1  # the identical anchor state
    assert {m.steps[2].action for m in members} == {"SCROLL(down)", "GOBACK()"}
    assert len({m.final_screen for m in members}) == 2 or all(m.final_screen == "" for m in members)


def test_fork_group_of_an_episode_that_ends_before_the_anchor_is_skipped() -> None:
    agent = LLMAgent(ScriptedLLM(lambda text: "<action>DONE()</action>"))
    with RolloutEngine(ENV, agent, num_envs=1, env_kwargs={"split": "train"}) as engine:
        [group] = engine.run_fork_groups(
            [EpisodeSpec(_tasks(1)[0], 0)], anchor_step=3, group_size=2
        )
    assert group.skipped and "before step 3" in group.skipped
    assert len(group.trajectories) == 1 and group.trajectories[0].anchor_step is None


class _Remembering(gym.Wrapper):
    """Keeps per-episode state in a list, as reward wrappers do."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.actions: list[str] = []

    def step(self, action: Any) -> Any:
        self.actions.append(str(action))
        return self.env.step(action)


def test_fork_env_copies_the_base_env_and_wrapper_state() -> None:
    env = _Remembering(gym.make(ENV, split="train"))
    env.reset(seed=0)
    env.step("SCROLL(down)")
    clone = fork_env(env)
    *_, info = clone.step("SCROLL(down)")
    assert clone.unwrapped is not env.unwrapped and isinstance(clone, _Remembering)
    assert clone.actions == ["SCROLL(down)", "SCROLL(down)"] and env.actions == ["SCROLL(down)"]
    *_, original_info = env.step("GOBACK()")
    assert info["step"] == original_info["step"] == 2
    with pytest.raises(TypeError, match="fork"):
        fork_env(gym.make("CartPole-v1").unwrapped)


# ------------------------------------------------------------------------ infra errors


class _Exploding(gym.Wrapper):
    """Raises on the step ``at`` of episodes whose seed is in ``seeds`` (a flaky backend)."""

    def __init__(self, env: gym.Env, seeds: set[int], at: int = 1):
        super().__init__(env)
        self.seeds, self.at, self._seed, self._t = seeds, at, None, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        self._seed, self._t = seed, 0
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        self._t += 1
        if self._seed in self.seeds and self._t == self.at + 1:
            raise ConnectionError("emulator connection lost")
        return self.env.step(action)


def test_an_env_that_raises_marks_only_its_episode_infra_error() -> None:
    tasks = _tasks(4)
    engine = RolloutEngine(
        lambda: _Exploding(gym.make(ENV, split="train"), seeds={1}),
        _oracle,
        num_envs=2,
    )
    with engine:
        out = engine.run([EpisodeSpec(t, i) for i, t in enumerate(tasks)])
        groups = engine.run_groups(tasks[:1], group_size=1, seed=1)
    assert [t.infra_error is not None for t in out] == [False, True, False, False]
    assert "step failed: ConnectionError: emulator connection lost" in out[1].infra_error
    assert not out[1].success and all(t.success for i, t in enumerate(out) if i != 1)
    assert groups[0].trajectories == [] and len(groups[0].infra) == 1
    assert engine.stats.infra_errors == 2 and engine.stats.episodes == 5


def test_server_failures_end_in_infra_errors_never_a_crash() -> None:
    server = StubChatServer(latency=0.0, fail_every=5, garbage_every=7)
    with server.running() as url:
        llm = OpenAICompatLLM("stub", url, max_retries=0, backoff=0.0, max_concurrency=8)
        with RolloutEngine(
            ENV, LLMAgent(llm), num_envs=4, env_kwargs={"split": "train", "max_steps": 4}
        ) as engine:
            out = engine.run([EpisodeSpec(None, i) for i in range(8)])
    lost = [t for t in out if t.infra_error]
    assert lost and len(lost) < 8
    assert any("500" in t.infra_error or "failed 1 times" in t.infra_error for t in lost)
    assert any("not a chat completion" in t.infra_error for t in lost)
    assert engine.stats.infra_errors == len(lost)


def test_garbage_generations_are_invalid_actions_not_errors() -> None:
    agent = LLMAgent(ScriptedLLM(lambda text: "I am not sure what to do \x00 ((("))
    with RolloutEngine(
        ENV, agent, num_envs=1, env_kwargs={"split": "train", "max_steps": 2}
    ) as engine:
        [t] = engine.run([EpisodeSpec(None, 0)])
    assert t.infra_error is None and len(t.steps) == 2
    assert not any(s.action_valid for s in t.steps)


# ---------------------------------------------------------------------- server (async)


def test_async_server_path_keeps_one_request_in_flight_per_env() -> None:
    server = StubChatServer(latency=0.05)
    with server.running() as url:
        llm = OpenAICompatLLM("stub", url, max_concurrency=16, request_tokens=True)
        agent = LLMAgent(llm)
        assert agent.is_async
        with RolloutEngine(
            ENV, agent, num_envs=8, env_kwargs={"split": "train", "max_steps": 3}
        ) as engine:
            out = engine.run([EpisodeSpec(None, i) for i in range(8)])
    assert server.peak_in_flight == 8  # every env waiting on the server at once
    assert server.requests == 24 and all(len(t.steps) == 3 for t in out)
    step = out[0].steps[0]
    assert step.action == "SCROLL(down)"
    assert step.completion_ids == list(b"<action>SCROLL(down)</action>")
    assert step.logprobs == [-0.25] * len(step.completion_ids) and step.prompt_ids


# ---------------------------------------------------------------------- worker processes


def _oracle_dying_once(env: gym.Env) -> Any:
    """A one-env agent factory (module level: it travels to the worker process) that kills
    its own worker on the split's second task, once (a marker file remembers)."""
    marker = Path(os.environ["GUI_GYM_TEST_KILL_MARKER"])
    base = env.unwrapped
    if base.task.task_id == base._pool[1].task_id and not marker.exists():
        marker.write_text("killed\n")
        os.kill(os.getpid(), signal.SIGKILL)
    return make_agent("oracle", env, 0)


@pytest.mark.timeout(180)
def test_eval_reports_a_killed_env_worker_restarts_it_and_reruns_the_episode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from gui_gym.runs.evaluate import evaluate

    monkeypatch.setenv("GUI_GYM_TEST_KILL_MARKER", str(tmp_path / "killed"))
    tasks = _tasks(4)
    kwargs = {"episodes": 4, "env_kwargs": {"split": "train"}, "out": tmp_path / "r.json"}
    summary, rows = evaluate(
        ENV, _oracle_dying_once, workers="process", num_envs=2, progress=False, **kwargs
    )
    assert [r.infra_error is not None for r in rows] == [False, True, False, False]
    assert "env worker" in rows[1].infra_error and "died" in rows[1].infra_error
    assert summary.infra_errors == 1 and summary.episodes == 3 and summary.success_rate == 1.0
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert tasks[1] in messages and "restarted" in messages
    # the rerun resumes: only the lost episode runs again, and now it succeeds
    summary, rows = evaluate(
        ENV, _oracle_dying_once, workers="process", num_envs=1, progress=False, **kwargs
    )
    assert summary.infra_errors == 0 and summary.episodes == 4 and summary.success_rate == 1.0
    assert [r.task_id for r in rows] == tasks


def test_run_episode_keeps_an_llm_agents_tokens(tiny_llm: TransformersLLM) -> None:
    from gui_gym.agents import run_episode

    env = gym.make(ENV, split="train", max_steps=2)
    trajectory = run_episode(env, LLMAgent(tiny_llm, max_new_tokens=3), seed=0)
    assert all(
        s.completion_ids and len(s.logprobs) == len(s.completion_ids) for s in trajectory.steps
    )


# ------------------------------------------------------------------ the async HTTP client


def _raw_server(handler: Any) -> Any:
    """A one-off asyncio TCP server answering with ``handler(request_bytes) -> bytes``; it
    closes each connection after one answer (the client must reconnect)."""
    import asyncio

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(
            next(
                line.split(b":")[1]
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
        )
        await reader.readexactly(length)
        writer.write(handler(head))
        await writer.drain()
        writer.close()

    return serve


def test_async_client_reads_chunked_answers_and_reconnects() -> None:
    import asyncio
    import json

    body = json.dumps(
        {"choices": [{"index": 0, "message": {"content": "<action>DONE()</action>"}}]}
    )
    chunks = [body[:10], body[10:]]
    answer = (
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        + "".join(f"{len(c.encode()):x}\r\n{c}\r\n" for c in chunks)
        + "0\r\n\r\n"
    ).encode()

    async def main() -> list[Any]:
        server = await asyncio.start_server(_raw_server(lambda head: answer), "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        llm = OpenAICompatLLM("m", f"http://127.0.0.1:{port}/v1", max_retries=0)
        async with server:
            first = await llm.agenerate(["a"])
            second = await llm.agenerate(["b", "c"])  # the server closed the first connection
        return [first, second]

    first, second = asyncio.run(main())
    assert first == [["<action>DONE()</action>"]] and second == [["<action>DONE()</action>"]] * 2


def test_async_client_caps_the_body_and_reports_unreachable_servers() -> None:
    import asyncio
    import socket

    from gui_gym.models.llm import LLMError

    huge = b"HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n{"

    async def oversized() -> None:
        server = await asyncio.start_server(_raw_server(lambda head: huge), "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        llm = OpenAICompatLLM("m", f"http://127.0.0.1:{port}/v1", max_response_bytes=1000)
        async with server:
            await llm.agenerate(["a"])

    with pytest.raises(LLMError, match="over 1000 bytes"):
        asyncio.run(oversized())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = OpenAICompatLLM("m", f"http://127.0.0.1:{port}/v1", max_retries=1, backoff=0.0)
    with pytest.raises(LLMError, match=r"failed 2 times.*cannot connect"):
        asyncio.run(llm.agenerate(["a"]))
