"""A stub OpenAI-compatible chat-completions server with a fixed latency and injectable faults.

For throughput benchmarks and tests of the server path of the rollout engine: it answers
``POST /v1/chat/completions`` after ``latency`` seconds (requests wait concurrently, as on a
real batching server) with a fixed reply, and can answer some requests with HTTP 500 or
with a body that is not a chat completion. ``GET /stats`` reports how many requests it got
and the most it held at once. One asyncio loop, HTTP/1.1 keep-alive, no dependencies.

Run it in its own process (what ``benchmarks/rollout_throughput.py`` does)::

    python -m gui_gym.models.llm.stub_server --latency 0.05 --port 8000 \\
        --reply '<action>SCROLL(down)</action>'

or in a thread of a test: ``with StubChatServer(latency=0.01).running() as url: ...``.

With ``"return_token_ids": true`` in a request (what ``OpenAICompatLLM(request_tokens=True)``
sends, as vLLM accepts) the answer carries ``prompt_token_ids``, per-choice ``token_ids``
and ``logprobs`` as vLLM lays them out; the ids are the UTF-8 bytes of the texts and every
log-prob is ``-0.25``: stand-ins with the right shape, not a model's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import sys
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["SlowServer", "StubChatServer", "main"]

_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 500: "Internal Server Error"}


class StubChatServer:
    """The server (see the module docstring).

    Args:
        latency: Seconds each request waits before its answer.
        reply: The completion text of every choice.
        model: The model name it accepts (others get 404); None accepts any.
        fail_every: Answer every k-th request (1-based count) with HTTP 500; 0 never.
        garbage_every: Answer every k-th request with a 200 whose body is not a chat
            completion; 0 never.
        host, port: Where to listen (port 0 picks a free one).
    """

    def __init__(
        self,
        latency: float = 0.05,
        reply: str = "<action>SCROLL(down)</action>",
        *,
        model: str | None = None,
        fail_every: int = 0,
        garbage_every: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        if latency < 0:
            raise ValueError(f"latency must be >= 0, got {latency}")
        self.latency = float(latency)
        self.reply = reply
        self.model = model
        self.fail_every = int(fail_every)
        self.garbage_every = int(garbage_every)
        self.host = host
        self.port = port
        self.requests = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        self.last_request: dict[str, Any] | None = None
        self._server: asyncio.base_events.Server | None = None
        self._handlers: set[asyncio.Task] = set()

    @property
    def url(self) -> str:
        """The API root for ``OpenAICompatLLM(base_url=...)``."""
        return f"http://{self.host}:{self.port}/v1"

    # ------------------------------------------------------------------------------- HTTP

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        key, value = line.split(":", 1)
                        headers[key.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                status, payload = await self._answer(method, path, body)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                writer.write(
                    f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                    "Connection: keep-alive\r\n\r\n".encode("latin-1")
                    + data
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            self._handlers.discard(task)  # type: ignore[arg-type]

    async def _answer(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        if method == "GET" and path.rstrip("/").endswith("/stats"):
            return 200, {
                "requests": self.requests,
                "in_flight": self.in_flight,
                "peak_in_flight": self.peak_in_flight,
            }
        if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {method} {path}"}}
        self.requests += 1
        number = self.requests
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
            try:
                request = json.loads(body)
            except json.JSONDecodeError:
                return 400, {"error": {"message": "body is not JSON"}}
            self.last_request = request
            if self.fail_every and number % self.fail_every == 0:
                return 500, {"error": {"message": "stub server: injected failure"}}
            if self.garbage_every and number % self.garbage_every == 0:
                return 200, b"<html>not a chat completion</html>"
            if self.model is not None and request.get("model") != self.model:
                return 404, {"error": {"message": f"model {request.get('model')} does not exist"}}
            return 200, self._completion(request)
        finally:
            self.in_flight -= 1

    def _completion(self, request: dict[str, Any]) -> dict[str, Any]:
        n = int(request.get("n") or 1)
        tokens = bool(request.get("return_token_ids"))
        choices = []
        for i in range(n):
            choice: dict[str, Any] = {
                "index": i,
                "message": {"role": "assistant", "content": self.reply},
                "finish_reason": "stop",
            }
            if tokens:
                ids = list(self.reply.encode("utf-8"))
                choice["token_ids"] = ids
                choice["logprobs"] = {
                    "content": [
                        {"token": chr(b), "logprob": -0.25, "bytes": [b], "top_logprobs": []}
                        for b in ids
                    ]
                }
            choices.append(choice)
        out: dict[str, Any] = {
            "id": f"stub-{self.requests}",
            "object": "chat.completion",
            "created": 0,
            "model": request.get("model", "stub"),
            "choices": choices,
        }
        if tokens:
            text = json.dumps(request.get("messages", []))
            out["prompt_token_ids"] = list(text.encode("utf-8"))[:4096]
        return out

    # ---------------------------------------------------------------------------- running

    async def serve(self, ready: threading.Event | None = None) -> None:
        """Serve until cancelled (sets ``port`` when it was 0)."""
        self._server = await asyncio.start_server(self._handle, self.host, self.port, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]
        if ready is not None:
            ready.set()
        try:
            async with self._server:
                await self._server.serve_forever()
        finally:  # stop the open connections too, so nothing is left pending
            for task in list(self._handlers):
                task.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)

    @contextlib.contextmanager
    def running(self) -> Iterator[str]:
        """Serve from a background thread; yields the URL and stops on exit."""
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        task_holder: dict[str, asyncio.Task] = {}

        def run() -> None:
            asyncio.set_event_loop(loop)
            task_holder["task"] = loop.create_task(self.serve(ready))
            with contextlib.suppress(asyncio.CancelledError):
                loop.run_until_complete(task_holder["task"])

        thread = threading.Thread(target=run, name="stub-chat-server", daemon=True)
        thread.start()
        if not ready.wait(10.0):
            raise RuntimeError("the stub server did not start within 10 s")
        try:
            yield self.url
        finally:
            loop.call_soon_threadsafe(task_holder["task"].cancel)
            thread.join(timeout=10.0)
            loop.close()


class SlowServer:
    """A raw TCP server for deadline tests and benchmarks: ``mode="trickle"`` answers with a
    ``Content-Length`` of 100,000 and then one byte every ``every`` seconds, for ever (a
    per-read timeout never fires); ``mode="silent"`` accepts and never answers. ``peak`` is
    the most connections it held at once."""

    def __init__(self, mode: str, every: float = 2.0):
        if mode not in ("trickle", "silent"):
            raise ValueError(f"mode must be 'trickle' or 'silent', got {mode!r}")
        self.mode = mode
        self.every = every
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(256)
        self.port = self.sock.getsockname()[1]
        self.open = 0
        self.peak = 0
        self.stop = threading.Event()
        self.lock = threading.Lock()

    def _serve(self, conn: socket.socket) -> None:
        with self.lock:
            self.open += 1
            self.peak = max(self.peak, self.open)
        try:
            conn.recv(65536)
            if self.mode == "trickle":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
            while not self.stop.wait(self.every):
                if self.mode == "trickle":
                    conn.sendall(b" ")
        except OSError:
            pass
        finally:
            with self.lock:
                self.open -= 1
            conn.close()

    def _accept(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    @contextlib.contextmanager
    def running(self) -> Iterator[str]:
        """Serve in a daemon thread; yields the API root ``http://127.0.0.1:PORT/v1``."""
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{self.port}/v1"
        finally:
            self.stop.set()
            thread.join(5)
            self.sock.close()


def main(argv: list[str] | None = None) -> None:
    """``python -m gui_gym.models.llm.stub_server``: serve until killed; prints the URL first."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per request")
    parser.add_argument("--reply", default="<action>SCROLL(down)</action>")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--fail-every", type=int, default=0)
    parser.add_argument("--garbage-every", type=int, default=0)
    args = parser.parse_args(argv)
    server = StubChatServer(
        args.latency,
        args.reply,
        fail_every=args.fail_every,
        garbage_every=args.garbage_every,
        host=args.host,
        port=args.port,
    )
    ready = threading.Event()

    async def run() -> None:
        task = asyncio.ensure_future(server.serve(ready))
        while not ready.is_set():
            await asyncio.sleep(0.01)
        print(server.url, flush=True)
        await task

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())
    sys.exit(0)


if __name__ == "__main__":
    main()
