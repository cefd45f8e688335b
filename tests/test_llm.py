"""models.llm: the LLM protocol and its three backends (scripted, local transformers,
OpenAI-compatible HTTP against a tiny chat-completions server started here)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from gui_gym.models.llm import (
    LLM,
    LLMError,
    OpenAICompatLLM,
    ScriptedLLM,
    TransformersLLM,
    prompt_text,
    to_messages,
)
from tests.conftest import require
from tests.tiny_llm import tiny_gpt2, tiny_tokenizer

# ------------------------------------------------------------------------------ scripted


def test_scripted_llm_answers_by_first_matching_rule() -> None:
    llm = ScriptedLLM(
        [(r"milestone", '["Open the app"]'), (r"judge", lambda text: "yes"), (r".", "other")]
    )
    assert isinstance(llm, LLM)
    out = llm.generate(["give the milestones", "you are a judge", "anything"], n=2)
    assert out == [['["Open the app"]'] * 2, ["yes", "yes"], ["other", "other"]]
    assert llm.calls == ["give the milestones", "you are a judge", "anything"]


def test_scripted_llm_without_a_rule_raises_unless_it_has_a_default() -> None:
    with pytest.raises(LLMError, match="no rule"):
        ScriptedLLM([(r"^x$", "y")]).generate(["z"])
    assert ScriptedLLM([(r"^x$", "y")], default="d").generate(["z"]) == [["d"]]


def test_scripted_llm_function_sees_conversations_as_text() -> None:
    llm = ScriptedLLM(lambda text: text.upper())
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert llm.generate([messages]) == [["SYSTEM: BE BRIEF\nUSER: HI"]]


def test_generate_arguments_are_checked() -> None:
    llm = ScriptedLLM(lambda text: text)
    with pytest.raises(ValueError, match="n must be"):
        llm.generate(["a"], n=0)
    with pytest.raises(ValueError, match="temperature"):
        llm.generate(["a"], temperature=-1.0)
    with pytest.raises(ValueError, match="max_new_tokens"):
        llm.generate(["a"], max_new_tokens=0)
    with pytest.raises(TypeError, match="list of prompts"):
        llm.generate("a")  # type: ignore[arg-type]


def test_messages_helpers() -> None:
    assert to_messages("hi", "sys") == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
    ]
    conversation = [{"role": "system", "content": "mine"}, {"role": "user", "content": "q"}]
    assert to_messages(conversation, "sys")[0]["content"] == "mine"
    assert prompt_text("plain") == "plain"
    with pytest.raises(ValueError, match="role"):
        to_messages([{"content": "no role"}])
    with pytest.raises(TypeError):
        to_messages(3)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- transformers


@pytest.fixture(scope="module")
def tiny_llm() -> TransformersLLM:
    require("transformers", "llm")
    tokenizer = tiny_tokenizer()
    return TransformersLLM(tiny_gpt2(len(tokenizer)), tokenizer, device="cpu", batch_size=4)


def test_transformers_llm_batched_greedy_equals_one_by_one(tiny_llm: TransformersLLM) -> None:
    prompts = ["click the search button", "open app", "type a note name in the input"]
    batched = tiny_llm.generate(prompts, max_new_tokens=6)
    single = [tiny_llm.generate([p], max_new_tokens=6)[0] for p in prompts]
    assert batched == single
    assert all(len(c) == 1 and isinstance(c[0], str) and c[0] for c in batched)


def test_transformers_llm_samples_n_completions_per_prompt(tiny_llm: TransformersLLM) -> None:
    import torch

    torch.manual_seed(0)
    out = tiny_llm.generate(
        ["open app", "go back", "share"], max_new_tokens=8, temperature=1.5, n=3
    )
    assert [len(c) for c in out] == [3, 3, 3]
    assert len({c for row in out for c in row}) > 1  # sampling, not copies
    greedy = tiny_llm.generate(["open app"], max_new_tokens=4, n=2)
    assert greedy[0][0] == greedy[0][1]


def test_transformers_llm_uses_the_chat_template_when_there_is_one() -> None:
    require("transformers", "llm")
    tokenizer = tiny_tokenizer(chat_template=True)
    llm = TransformersLLM(tiny_gpt2(len(tokenizer)), tokenizer, system_prompt="be brief")
    text = llm.format_prompt("open app")
    assert text == "<|system|> be brief <|user|> open app <|assistant|> "
    assert len(llm.generate(["open app"], max_new_tokens=3)[0]) == 1
    plain = TransformersLLM(tiny_gpt2(len(tokenizer)), tokenizer, use_chat_template=False)
    assert plain.format_prompt("open app") == "open app"
    with pytest.raises(ValueError, match="chat_template"):
        TransformersLLM(tiny_gpt2(40), tiny_tokenizer(), use_chat_template=True)
    with pytest.raises(ValueError, match="tokenizer"):
        TransformersLLM(tiny_gpt2(40))


def test_transformers_llm_loads_a_saved_folder(tmp_path, tiny_llm: TransformersLLM) -> None:
    tiny_llm.model.save_pretrained(tmp_path)  # safetensors
    tiny_llm.tokenizer.save_pretrained(tmp_path)
    loaded = TransformersLLM(tmp_path, device="cpu")
    prompts = ["click the link", "open the article"]
    assert loaded.generate(prompts, max_new_tokens=5) == tiny_llm.generate(
        prompts, max_new_tokens=5
    )


# ------------------------------------------------------------------------ OpenAI-compatible


class _ChatServer(ThreadingHTTPServer):
    """Speaks ``POST /v1/chat/completions``; ``script`` decides the status of each request."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ChatHandler)
        self.requests: list[dict[str, Any]] = []
        self.fail_first = 0  # answer 500 this many times first
        self.ignore_n = False  # answer one choice whatever n is
        self.raw_body: bytes | None = None  # answer 200 with this body instead
        self.trickle = False  # send the raw body one byte every 0.2 s
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _ChatHandler(BaseHTTPRequestHandler):
    server: _ChatServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length))
        with self.server.lock:
            self.server.requests.append(request)
            failing = self.server.fail_first > 0
            if failing:
                self.server.fail_first -= 1
        if self.path != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        if failing:
            self._send(500, {"error": {"message": "overloaded"}})
            return
        if self.server.raw_body is not None:
            body = self.server.raw_body
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                if self.server.trickle:
                    for i in range(len(body)):
                        self.wfile.write(body[i : i + 1])
                        self.wfile.flush()
                        time.sleep(0.2)
                else:
                    self.wfile.write(body)
            except OSError:  # the client gave up
                pass
            return
        if request["model"] != "tiny":
            self._send(404, {"error": {"message": f"model {request['model']} does not exist"}})
            return
        last = request["messages"][-1]["content"]
        count = 1 if self.server.ignore_n else request.get("n", 1)
        self._send(
            200,
            {
                "id": "cmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": "tiny",
                "choices": [
                    {
                        "index": i,
                        "message": {"role": "assistant", "content": f"echo {i}: {last}"},
                        "finish_reason": "stop",
                    }
                    for i in range(count)
                ],
            },
        )


@pytest.fixture
def chat_server() -> Iterator[_ChatServer]:
    server = _ChatServer()
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_openai_compat_llm_sends_chat_requests(chat_server: _ChatServer) -> None:
    llm = OpenAICompatLLM("tiny", chat_server.url, system_prompt="be brief", backoff=0.0)
    assert isinstance(llm, LLM)
    out = llm.generate(["first", "second"], max_new_tokens=7, temperature=0.5, n=2)
    assert out == [["echo 0: first", "echo 1: first"], ["echo 0: second", "echo 1: second"]]
    request = chat_server.requests[0]
    assert request["messages"][0] == {"role": "system", "content": "be brief"}
    assert request["max_tokens"] == 7 and request["temperature"] == 0.5 and request["n"] == 2


def test_openai_compat_llm_retries_transient_errors(chat_server: _ChatServer) -> None:
    chat_server.fail_first = 2
    llm = OpenAICompatLLM("tiny", chat_server.url, max_retries=3, backoff=0.001)
    assert llm.generate(["hi"]) == [["echo 0: hi"]]
    assert len(chat_server.requests) == 3


def test_openai_compat_llm_gives_up_after_the_retries(chat_server: _ChatServer) -> None:
    chat_server.fail_first = 10
    llm = OpenAICompatLLM("tiny", chat_server.url, max_retries=2, backoff=0.001)
    with pytest.raises(LLMError, match="failed 3 times"):
        llm.generate(["hi"])
    assert len(chat_server.requests) == 3


def test_openai_compat_llm_does_not_retry_a_rejected_request(chat_server: _ChatServer) -> None:
    llm = OpenAICompatLLM("no-such-model", chat_server.url, max_retries=3, backoff=0.001)
    with pytest.raises(LLMError, match=r"rejected.*no-such-model"):
        llm.generate(["hi"])
    assert len(chat_server.requests) == 1


def test_openai_compat_llm_tops_up_when_the_server_ignores_n(chat_server: _ChatServer) -> None:
    chat_server.ignore_n = True
    llm = OpenAICompatLLM("tiny", chat_server.url)
    assert llm.generate(["hi"], n=3) == [["echo 0: hi"] * 3]
    assert len(chat_server.requests) == 3


def test_openai_compat_llm_unreachable_server_is_a_clear_error() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = OpenAICompatLLM("tiny", f"http://127.0.0.1:{port}/v1", max_retries=1, backoff=0.001)
    with pytest.raises(LLMError, match=rf"127\.0\.0\.1:{port}.*failed 2 times"):
        llm.generate(["hi"])
    with pytest.raises(ValueError, match="max_retries"):
        OpenAICompatLLM("tiny", "http://x/v1", max_retries=-1)


_BAD_BODIES = {
    "garbage": b"{not json",
    "html page": b"<html><body>502 Bad Gateway</body></html>",
    "empty": b"",
    "a list": b"[1, 2]",
    "choices not a list": b'{"choices": {"0": "x"}}',
    "choice not an object": b'{"choices": ["hello"]}',
    "message missing": b'{"choices": [{"index": 0}]}',
    "dict content": b'{"choices": [{"index": 0, "message": {"content": {"text": "x"}}}]}',
    "string index": b'{"choices": [{"index": "0", "message": {"content": "x"}}]}',
    "deep nesting": b"[" * 100_000,
    "no choices": b'{"choices": []}',
}


@pytest.mark.parametrize("name", sorted(_BAD_BODIES))
def test_openai_compat_llm_bad_bodies_are_llm_errors(chat_server: _ChatServer, name: str) -> None:
    chat_server.raw_body = _BAD_BODIES[name]
    llm = OpenAICompatLLM("tiny", chat_server.url, max_retries=0)
    with pytest.raises(LLMError, match=r"127\.0\.0\.1"):
        llm.generate(["hi"])


def test_openai_compat_llm_caps_the_body_size(chat_server: _ChatServer) -> None:
    content = "x" * 200_000
    chat_server.raw_body = json.dumps(
        {"choices": [{"index": 0, "message": {"content": content}}]}
    ).encode()
    llm = OpenAICompatLLM("tiny", chat_server.url, max_retries=0, max_response_bytes=50_000)
    with pytest.raises(LLMError, match="over 50000 bytes"):
        llm.generate(["hi"], max_new_tokens=8)
    roomy = OpenAICompatLLM("tiny", chat_server.url, max_retries=0, max_response_bytes=300_000)
    assert roomy.generate(["hi"]) == [[content]]


@pytest.mark.timeout(30)
def test_openai_compat_llm_enforces_a_whole_request_deadline(chat_server: _ChatServer) -> None:
    # a server that trickles its body (one byte every 0.2 s) never trips httpx's per-read
    # timeout; the whole-request deadline ends the attempt, and it is retried as a timeout
    chat_server.raw_body = b'{"choices": [{"index": 0, "message": {"content": "slow"}}]}'
    chat_server.trickle = True
    llm = OpenAICompatLLM("tiny", chat_server.url, timeout=0.6, max_retries=1, backoff=0.0)
    with pytest.raises(LLMError, match=r"failed 2 times.*deadline"):
        llm.generate(["hi"])
    assert len(chat_server.requests) == 2


def test_openai_compat_llm_replaces_lone_surrogates(chat_server: _ChatServer) -> None:
    chat_server.raw_body = b'{"choices": [{"index": 0, "message": {"content": "a\\ud83d"}}]}'
    llm = OpenAICompatLLM("tiny", chat_server.url, max_retries=0)
    assert llm.generate(["hi"]) == [["a\ufffd"]]
