"""A small asyncio HTTP/1.1 client for JSON POSTs to a chat-completions server.

Why not the ``openai`` package's ``AsyncOpenAI``: its per-request cost on the client side
(httpx's pool bookkeeping, anyio, pydantic models) measured here about 6-9 ms of CPU per
request, which caps one Python process near 150 requests/s: 256 envs against a vLLM server
would then wait on their own client, not on the server. This client writes the request
bytes and parses the answer straight from an ``asyncio`` stream, with one keep-alive
connection per request in flight, so the rollout engine stays near one server round-trip
per step (see ``benchmarks/rollout_throughput.py``). It speaks exactly what
:class:`~gui_gym.models.llm.OpenAICompatLLM` needs: ``POST`` with a JSON body and a bearer
key, answers with ``Content-Length`` or chunked bodies, ``http`` and ``https`` (no
proxies).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import threading
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "RETRY_STATUSES",
    "AsyncJSONClient",
    "ResponseTooLarge",
    "TransportError",
    "post_all",
    "post_retrying",
    "run_blocking",
]


class TransportError(ConnectionError):
    """The request did not get an answer (connection refused or dropped, timeout)."""


class ResponseTooLarge(ValueError):
    """The answer's body is over the caller's limit (the message is the limit)."""


class AsyncJSONClient:
    """POSTs JSON to one server over reused keep-alive connections (one event loop).

    Args:
        base_url: The API root, e.g. ``http://localhost:8000/v1``.
        api_key: Sent as ``Authorization: Bearer <key>``.
        timeout: Seconds for one whole request (connect, send, answer).

    Raises:
        ValueError: for a URL that is not ``http://`` or ``https://`` with a host.
    """

    def __init__(self, base_url: str, api_key: str, timeout: float):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be http(s)://host[:port][/path], got {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.ssl: ssl.SSLContext | None = (
            ssl.create_default_context() if parts.scheme == "https" else None
        )
        self.prefix = parts.path.rstrip("/")
        self.timeout = float(timeout)
        netloc = self.host if parts.port is None else f"{self.host}:{self.port}"
        self._static = (
            f"Host: {netloc}\r\nAuthorization: Bearer {api_key}\r\n"
            "Content-Type: application/json\r\nAccept: application/json\r\n"
            "Connection: keep-alive\r\n"
        )
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self._closing: list[asyncio.StreamWriter] = []  # closed, for aclose to wait on

    async def post(
        self, path: str, payload: dict[str, Any], max_bytes: int = 1 << 24
    ) -> tuple[int, bytes]:
        """POST ``payload`` to ``prefix + path``; returns the status and the raw body.

        The whole exchange has one deadline (``timeout``): a server that trickles its body
        is a timeout, not a hang.

        Raises:
            TransportError: when no answer came (refused, dropped, timed out).
            ResponseTooLarge: when the body is over ``max_bytes``.
        """
        body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
        head = (
            f"POST {self.prefix}{path} HTTP/1.1\r\n{self._static}Content-Length: {len(body)}\r\n\r\n"
        ).encode("latin-1")
        try:
            async with asyncio.timeout(self.timeout):  # cheaper than wait_for: no extra task
                return await self._exchange(head + body, max_bytes)
        except TimeoutError as err:
            raise TransportError(
                f"no answer within {self.timeout:g}s (the whole-request deadline)"
            ) from err

    async def _exchange(self, request: bytes, limit: int) -> tuple[int, bytes]:
        # a reused connection may have been closed by the server meanwhile: then one retry
        # on a fresh connection (the request never reached the server's handler)
        while self._idle:
            reader, writer = self._idle.pop()
            try:
                return await self._roundtrip(reader, writer, request, limit)
            except (ConnectionError, asyncio.IncompleteReadError, OSError):
                self._drop(writer)
            except BaseException:  # the deadline (cancelled) or a bad answer: never reused
                self._drop(writer)
                raise
        try:
            reader, writer = await asyncio.open_connection(self.host, self.port, ssl=self.ssl)
        except OSError as err:
            raise TransportError(f"cannot connect to {self.host}:{self.port}: {err}") from err
        try:
            return await self._roundtrip(reader, writer, request, limit)
        except (ConnectionError, asyncio.IncompleteReadError, OSError) as err:
            self._drop(writer)
            raise TransportError(f"connection to {self.host}:{self.port} dropped: {err}") from err
        except BaseException:
            self._drop(writer)
            raise

    def _drop(self, writer: asyncio.StreamWriter) -> None:
        writer.close()
        self._closing.append(writer)

    async def _roundtrip(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        request: bytes,
        limit: int,
    ) -> tuple[int, bytes]:
        writer.write(request)
        await writer.drain()
        status_line = await reader.readline()
        if not status_line:
            raise ConnectionResetError("the server closed the connection")
        try:
            status = int(status_line.split(b" ", 2)[1])
        except (IndexError, ValueError):
            raise ConnectionError(f"not an HTTP answer: {status_line[:80]!r}") from None
        headers: dict[str, str] = {}
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            key, _, value = line.decode("latin-1").partition(":")
            headers[key.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            total = 0
            while True:
                size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
                total += size
                if total > limit:
                    self._drop(writer)
                    raise ResponseTooLarge(str(limit))
                if size == 0:
                    await reader.readline()
                    break
                chunks.append(await reader.readexactly(size))
                await reader.readexactly(2)
            body = b"".join(chunks)
            reusable = True
        elif "content-length" in headers:
            length = int(headers["content-length"])
            if length > limit:
                self._drop(writer)
                raise ResponseTooLarge(str(limit))
            body = await reader.readexactly(length)
            reusable = True
        else:  # the body runs to the end of the connection
            body = await reader.read(limit + 1)
            if len(body) > limit:
                self._drop(writer)
                raise ResponseTooLarge(str(limit))
            reusable = False
        if reusable and headers.get("connection", "").lower() != "close":
            self._idle.append((reader, writer))
        else:
            self._drop(writer)
        return status, body

    def close(self) -> None:
        """Close the idle connections."""
        while self._idle:
            _, writer = self._idle.pop()
            self._drop(writer)

    def abandon(self) -> None:
        """Forget every connection without closing it: for connections of an event loop that
        has already closed, which can no longer close them (a closed loop refuses the
        callbacks ``close()`` schedules). Their sockets close when the transports are
        collected."""
        self._idle.clear()
        self._closing.clear()

    async def aclose(self) -> None:
        """Close every connection and wait (briefly) until they are closed, so that a loop
        about to end leaves no open transport behind."""
        self.close()
        closing, self._closing = self._closing, []
        for writer in closing:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)


RETRY_STATUSES = frozenset({408, 409, 429})
"""HTTP statuses retried like a dropped connection (and every 5xx)."""


def is_retryable(status: int) -> bool:
    """Whether an HTTP status is transient (408, 409, 429 and every 5xx)."""
    return status in RETRY_STATUSES or status >= 500


async def post_retrying(
    client: AsyncJSONClient,
    path: str,
    payload: dict[str, Any],
    *,
    max_retries: int,
    backoff: float,
    max_backoff: float,
    max_bytes: int,
    gate: asyncio.Semaphore | None = None,
    on_retry: Any = None,
) -> tuple[int, bytes] | TransportError:
    """The one retry policy of every model client: POST ``payload``; a transport failure
    or a transient status (:func:`is_retryable`) is retried ``max_retries`` times after
    ``min(backoff * 2**attempt, max_backoff)`` seconds. Each attempt has the client's
    whole-request deadline. ``on_retry(reason, attempt, wait)`` is called before each wait
    (logging).

    Returns:
        ``(status, body)`` of the first non-transient answer or of the last attempt, or the
        last attempt's :class:`TransportError` when none got an answer.

    Raises:
        ResponseTooLarge: when a body is over ``max_bytes`` (not retried).
    """
    outcome: tuple[int, bytes] | TransportError = TransportError("not sent")
    for attempt in range(max_retries + 1):
        try:
            if gate is None:
                outcome = await client.post(path, payload, max_bytes)
            else:
                async with gate:
                    outcome = await client.post(path, payload, max_bytes)
        except TransportError as err:
            outcome = err
            reason = str(err)
        else:
            if not is_retryable(outcome[0]):
                return outcome
            reason = f"HTTP {outcome[0]}"
        if attempt < max_retries:
            wait = min(backoff * 2**attempt, max_backoff)
            if on_retry is not None:
                on_retry(reason, attempt, wait)
            await asyncio.sleep(wait)
    return outcome


def run_blocking(make_coroutine: Any) -> Any:
    """Run ``make_coroutine()`` to its end and return its value, from any thread: on a
    fresh event loop, or, when this thread already runs one (the rollout engine's loop), on
    a fresh loop in a helper thread that this one waits for. The blocking model clients'
    one way into the asyncio client."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coroutine())
    result: dict[str, Any] = {}

    def in_thread() -> None:
        try:
            result["value"] = asyncio.run(make_coroutine())
        except BaseException as err:  # handed to the caller's thread
            result["error"] = err

    worker = threading.Thread(target=in_thread, name="gui-gym-model-requests", daemon=True)
    worker.start()
    worker.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


def post_all(
    base_url: str,
    api_key: str,
    path: str,
    payloads: list[dict[str, Any]],
    *,
    timeout: float,
    max_retries: int = 0,
    backoff: float = 0.5,
    max_backoff: float = 16.0,
    concurrency: int = 8,
    max_bytes: int = 1 << 24,
) -> list[tuple[int, bytes] | TransportError]:
    """POST every payload to ``path``, all in flight together (at most ``concurrency``), each
    attempt under one whole-request deadline of ``timeout`` seconds: the blocking entry to
    :class:`AsyncJSONClient` for the model clients that are called from ``env.step`` (the
    PRM, judges, progress models). A batch therefore waits for its slowest request once,
    never once per payload in turn, and a server that trickles bytes cannot hold the caller
    past ``(max_retries + 1) * timeout`` plus the backoffs.

    Transport failures and HTTP 408/409/429/5xx are retried ``max_retries`` times with
    exponential backoff (:func:`post_retrying`). Called from inside a running event loop,
    the requests run on a fresh loop in a helper thread (:func:`run_blocking`).

    Returns:
        Per payload, in order: ``(status, body)`` of the last attempt, or the
        :class:`TransportError` of the last attempt when none got an answer.

    Raises:
        ResponseTooLarge: when a body is over ``max_bytes``.
    """

    async def run() -> list[tuple[int, bytes] | TransportError]:
        client = AsyncJSONClient(base_url, api_key, timeout)
        gate = asyncio.Semaphore(max(1, int(concurrency)))
        try:
            return list(
                await asyncio.gather(
                    *(
                        post_retrying(
                            client,
                            path,
                            p,
                            max_retries=max_retries,
                            backoff=backoff,
                            max_backoff=max_backoff,
                            max_bytes=max_bytes,
                            gate=gate,
                        )
                        for p in payloads
                    )
                )
            )
        finally:
            await client.aclose()

    return run_blocking(run)
