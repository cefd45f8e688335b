"""The ASGI side of ``gui-gym serve-openenv``'s guard (issue 46): an outermost middleware
(:class:`RequestGuard`) and a uvicorn protocol with a header deadline
(:func:`deadline_protocol`). The rules themselves (Host, Origin, token) are in
:mod:`gui_gym.integrations.server_guard`.

:class:`RequestGuard`, in order, for every HTTP request and WebSocket upgrade:

1. ``Host`` not naming this server: 421 (a WebSocket: refused, HTTP 403);
2. a foreign ``Origin``: 403;
3. a missing or wrong token (when the server has one): 401;
4. an HTTP body over ``max_body`` bytes (by ``Content-Length``, or counted while it
   arrives): 413; a body not complete within ``body_timeout`` seconds: 408. The app sees
   the whole body at once (the task API's bodies are a few bytes).

On an accepted WebSocket it turns what would end the session into an error reply
(OpenEnv's ``{"type": "error", "data": {"message", "code"}}``) and keeps the session: a
binary frame, a message that is valid JSON but not an object, a message holding a lone
surrogate (``"\\ud800"``, which no reply could encode). Error replies are cut to
:data:`MAX_ECHO_CHARS` per string (pydantic echoes a refused 15 MB action in full). A client
that disconnects while the app answers costs one log line, never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import Callable
from typing import Any

from gui_gym.integrations.server_guard import (
    host_allowed,
    origin_allowed,
    request_token,
    token_matches,
)

__all__ = [
    "BODY_TIMEOUT",
    "HEADER_TIMEOUT",
    "MAX_ECHO_CHARS",
    "MAX_HTTP_BODY",
    "RequestGuard",
    "deadline_protocol",
]

MAX_HTTP_BODY = 1 << 20
"""Bytes an HTTP request body may hold (the WebSocket's own cap is 16 MiB a message)."""

HEADER_TIMEOUT = 10.0
"""Seconds from a connection's start (or its last answer) to a complete request head."""

BODY_TIMEOUT = 30.0
"""Seconds an HTTP request body may take to arrive."""

MAX_ECHO_CHARS = 1000
"""Characters of any one string an error reply keeps."""

_LOG = logging.getLogger("uvicorn.error")  # uvicorn's level: --quiet hides warnings
_SURROGATE_ESCAPE = re.compile(r"\\[uU][dD][89a-fA-F]")


def _headers(scope: dict) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in scope.get("headers", ()):
        name = key.decode("latin-1").lower()
        if name not in out:  # the first of repeated headers
            out[name] = value.decode("latin-1")
    return out


def _error(message: str, code: str) -> dict:
    text = json.dumps({"type": "error", "data": {"message": message, "code": code}})
    return {"type": "websocket.send", "text": text}


def _refusal(raw: str) -> str | None:
    """Why a WebSocket text message cannot go to the app (None: it can)."""
    body = raw.lstrip()
    if not body.startswith("{"):
        try:
            json.loads(raw)
        except ValueError:
            return None  # not JSON at all: OpenEnv answers INVALID_JSON itself
        return 'a message must be a JSON object such as {"type": "step", "data": {...}}'
    if _SURROGATE_ESCAPE.search(raw):
        try:
            json.dumps(json.loads(raw), ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return "the message holds a lone surrogate (\\ud800-\\udfff), which is not text"
        except ValueError:
            return None
    return None


def _shorten(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_ECHO_CHARS:
        return f"{value[:MAX_ECHO_CHARS]}... ({len(value)} characters)"
    if isinstance(value, list):
        return [_shorten(v) for v in value]
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    return value


class RequestGuard:
    """ASGI middleware: the checks above, outermost.

    Args:
        app: The ASGI app.
        bind_host: The address the server is bound to (decides the Host rule).
        token: The token every request must carry (None: none needed).
        max_body: Bytes an HTTP body may hold.
        body_timeout: Seconds an HTTP body may take.
    """

    def __init__(
        self,
        app: Any,
        bind_host: str = "127.0.0.1",
        token: str | None = None,
        max_body: int = MAX_HTTP_BODY,
        body_timeout: float = BODY_TIMEOUT,
    ):
        self.app = app
        self.bind_host = bind_host
        self.token = token or None
        self.max_body = max_body
        self.body_timeout = body_timeout

    def _refused(self, scope: dict) -> tuple[int, str] | None:
        headers = _headers(scope)
        host = headers.get("host")
        if not host_allowed(host, self.bind_host):
            return 421, "unknown Host header: use the address the server was started on"
        if not origin_allowed(headers.get("origin"), host):
            return 403, "cross-origin request refused: Origin is not this server"
        query = scope.get("query_string", b"").decode("latin-1")
        if self.token is not None:
            given, _ = request_token(headers, query)
            if not token_matches(given, self.token):
                return 401, "this server needs its token: Authorization: Bearer TOKEN"
        if scope["type"] == "websocket" and "session_id=" in query:
            # OpenEnv attaches a WebSocket to an HTTP MCP session by id; there is no MCP here,
            # and no client may attach to another client's session
            return 403, "session_id is not accepted: each WebSocket opens its own session"
        return None

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refused = self._refused(scope)
        if scope["type"] == "websocket":
            if refused is not None:
                await receive()  # websocket.connect
                await send({"type": "websocket.close", "code": 1008, "reason": refused[1]})
                return
            await self._websocket(scope, receive, send)
            return
        if refused is not None:
            await _plain(send, *refused)
            return
        await self._http(scope, receive, send)

    async def _http(self, scope: dict, receive: Callable, send: Callable) -> None:
        length = _headers(scope).get("content-length")
        if length is not None and (not length.strip().isdigit() or int(length) > self.max_body):
            await _plain(send, 413, f"request body over {self.max_body} bytes")
            return
        body = bytearray()
        try:
            async with asyncio.timeout(self.body_timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return
                    body += message.get("body", b"")
                    if len(body) > self.max_body:
                        await _plain(send, 413, f"request body over {self.max_body} bytes")
                        return
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            await _plain(send, 408, f"request body not sent within {self.body_timeout:g} s")
            return
        sent = False

        async def replay() -> dict:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _websocket(self, scope: dict, receive: Callable, send: Callable) -> None:
        gone = False

        async def checked_receive() -> dict:
            nonlocal gone
            while True:
                message = await receive()
                if message["type"] == "websocket.disconnect":
                    gone = True
                    return message
                if message["type"] != "websocket.receive":
                    return message
                text = message.get("text")
                if text is None:
                    await send(_error("send text frames holding JSON", "INVALID_JSON"))
                    continue
                why = _refusal(text)
                if why is None:
                    return message
                await send(_error(why, "VALIDATION_ERROR"))

        async def checked_send(message: dict) -> None:
            nonlocal gone
            if gone:
                return  # the client left: nothing to tell it
            text = message.get("text") if message["type"] == "websocket.send" else None
            if text is not None and len(text) > 4 * MAX_ECHO_CHARS and '"error"' in text[:32]:
                with contextlib.suppress(ValueError):
                    message = {**message, "text": json.dumps(_shorten(json.loads(text)))}
            try:
                await send(message)
            except Exception as err:  # the socket closed under the send: one line, once
                gone = True
                _LOG.warning(
                    "client %s left before its answer was sent (%s); session closed",
                    _client(scope),
                    type(err).__name__,
                )

        try:
            await self.app(scope, checked_receive, checked_send)
        except Exception as err:
            if not gone:
                raise
            _LOG.warning("client %s disconnected (%s)", _client(scope), type(err).__name__)


def _client(scope: dict) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "?"


async def _plain(send: Callable, status: int, text: str) -> None:
    body = f"{text}\n".encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


_PROTOCOLS: dict[float, type] = {}


def deadline_protocol(header_timeout: float = HEADER_TIMEOUT) -> type:
    """uvicorn's h11 protocol with a deadline on each request head: a connection that has
    not sent a complete head ``header_timeout`` seconds after it opened (or after its last
    answer) is closed, so silent and header-trickling connections cannot pile up
    (uvicorn's own ``timeout_keep_alive`` stops as soon as one byte arrives)."""
    cached = _PROTOCOLS.get(header_timeout)
    if cached is not None:
        return cached
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeadDeadlineProtocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def _arm(self) -> None:
            self._disarm()
            self._head_timer = self.loop.call_later(header_timeout, self._expire)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _expire(self) -> None:
            self._head_timer = None
            if not self.transport.is_closing():
                self.transport.close()

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            if self.cycle is not before:  # a request head arrived
                self._disarm()

        def handle_websocket_upgrade(self, event: Any) -> None:
            self._disarm()
            super().handle_websocket_upgrade(event)

        def on_response_complete(self) -> None:
            if not self.transport.is_closing():
                self._arm()  # before super(): a pipelined next head disarms it again
            super().on_response_complete()

    _PROTOCOLS[header_timeout] = HeadDeadlineProtocol
    return HeadDeadlineProtocol
