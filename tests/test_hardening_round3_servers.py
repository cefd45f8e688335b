"""Issue 46 (hardening round 3), the OpenEnv server ``gui-gym serve-openenv``: only the
documented routes (no ``/mcp``), Host/Origin checks, an optional token (required off
loopback), bounded bodies and request heads, and messages that get an error reply instead
of ending the session. Served from a thread of this process on 127.0.0.1."""

from __future__ import annotations

import http.client
import json
import logging
import socket
import time
from collections.abc import Iterator

import pytest

from tests.conftest import require

require("openenv", "openenv")
from websockets.exceptions import InvalidStatus  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

from gui_gym.integrations.openenv import ServedEnv  # noqa: E402
from tests.test_openenv_server import serve_in_thread  # noqa: E402

ENV_ID = "GuiGym/WikiHow-v0"
TOKEN = "s3cret-token-0123456789"
pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, int]]:
    with serve_in_thread(max_sessions=2, session_timeout=60, header_timeout=1.5) as address:
        yield address


@pytest.fixture(scope="module")
def guarded() -> Iterator[tuple[str, int]]:
    with serve_in_thread(max_sessions=2, session_timeout=60, token=TOKEN) as address:
        yield address


def _http(
    address: tuple[str, int], method: str, path: str, body: bytes | None = None, **headers: str
) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(*address, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _ws(address: tuple[str, int], query: str = "", **headers: str):
    return connect(
        f"ws://{address[0]}:{address[1]}/ws{query}",
        additional_headers=headers,
        open_timeout=30,
        max_size=2**25,
    )


def test_only_the_documented_routes_are_served(served) -> None:
    create = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
    ).encode()
    for _ in range(4):  # the old server leaked one slot per call, for good
        status, _ = _http(served, "POST", "/mcp", create, **{"Content-Type": "text/plain"})
        assert status == 404
    for path in ("/docs", "/redoc", "/openapi.json", "/list_environments"):
        assert _http(served, "GET", path)[0] == 404, path
    assert _http(served, "GET", "/health")[0] == 200
    assert _http(served, "GET", "/GuiGym-WikiHow-v0/splits")[0] == 200
    with pytest.raises(InvalidStatus):
        connect(f"ws://{served[0]}:{served[1]}/mcp", open_timeout=30).close()
    with _ws(served) as ws:  # every slot is still free
        ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
        assert json.loads(ws.recv(timeout=60))["type"] == "observation"


def test_a_foreign_host_or_origin_is_refused(served) -> None:
    port = served[1]
    assert _http(served, "GET", "/health", Host=f"attacker.example:{port}")[0] == 421
    with pytest.raises(InvalidStatus):
        _ws(served, Host=f"attacker.example:{port}", Origin="http://attacker.example").close()
    with pytest.raises(InvalidStatus):
        _ws(served, Origin="http://attacker.example").close()
    with pytest.raises(InvalidStatus):
        _ws(served, Origin="null").close()
    assert _http(served, "GET", "/health", Origin="http://attacker.example")[0] == 403
    assert _http(served, "GET", "/health", Host=f"localhost:{port}")[0] == 200
    with _ws(served, Origin=f"http://127.0.0.1:{port}") as ws:  # its own page
        ws.send(json.dumps({"type": "state"}))
        assert json.loads(ws.recv(timeout=30))["type"] == "state"


def test_session_ids_cannot_be_attached(served) -> None:
    with pytest.raises(InvalidStatus):
        _ws(served, query="?session_id=anything").close()


def test_the_token_is_required_when_set(guarded) -> None:
    assert _http(guarded, "GET", "/health")[0] == 401
    assert _http(guarded, "GET", "/health", Authorization="Bearer wrong")[0] == 401
    assert _http(guarded, "GET", "/health", Authorization=f"Bearer {TOKEN}")[0] == 200
    with pytest.raises(InvalidStatus):
        _ws(guarded).close()
    with pytest.raises(InvalidStatus):
        _ws(guarded, query="?token=wrong").close()
    for ws in (
        _ws(guarded, query=f"?token={TOKEN}"),
        _ws(guarded, Authorization=f"Bearer {TOKEN}"),
    ):
        with ws:
            ws.send(json.dumps({"type": "state"}))
            assert json.loads(ws.recv(timeout=30))["type"] == "state"


def test_openenv_clients_send_the_token_as_documented(guarded) -> None:
    import asyncio

    from openenv import GenericEnvClient

    async def reset() -> str:
        client = GenericEnvClient(
            base_url=f"http://{guarded[0]}:{guarded[1]}",
            headers={"Authorization": f"Bearer {TOKEN}"},
            message_timeout_s=120,
        )
        try:
            result = await client.reset(seed=0)
            return result.observation["task_id"]
        finally:
            await client.close()

    assert asyncio.run(reset())


def test_a_non_loopback_host_needs_a_token() -> None:
    from gui_gym.integrations.openenv import make_app

    with pytest.raises(ValueError, match="--token"):
        make_app(ServedEnv(ENV_ID), host="0.0.0.0")
    with pytest.raises(ValueError, match="16 characters"):
        make_app(ServedEnv(ENV_ID), token="short")


def test_http_bodies_are_capped(served) -> None:
    path = "/GuiGym-WikiHow-v0/tasks"
    # a declared 2 MiB body is refused from its Content-Length, before any of it is read (a
    # client still sending it may see the connection closed under it: a broken pipe)
    with socket.create_connection(served, timeout=30) as raw:
        raw.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {(2 << 20) + 2}\r\n\r\n".encode()
        )
        assert raw.recv(64).startswith(b"HTTP/1.1 413")
    # chunked (no Content-Length): counted as it arrives
    with socket.create_connection(served, timeout=30) as raw:
        raw.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n".encode()
        )
        chunk = b" " * 65536
        try:
            for _ in range(40):
                raw.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            pass  # the server answered and closed
        assert raw.recv(64).startswith(b"HTTP/1.1 413")
    small = json.dumps({"split": "test"}).encode()
    assert _http(served, "POST", path, small, **{"Content-Type": "application/json"})[0] == 200


def test_silent_and_trickling_connections_are_closed(served) -> None:
    silent = [socket.create_connection(served, timeout=30) for _ in range(20)]
    trickling = socket.create_connection(served, timeout=30)
    trickling.sendall(b"GET /health HTTP/1.1\r\n")
    for _ in range(4):  # one header byte at a time, past the 1.5 s head deadline
        time.sleep(0.5)
        try:
            trickling.sendall(b"X")
        except OSError:
            break
    for connection in [*silent, trickling]:
        assert connection.recv(64) == b""  # closed by the server (the old one never did)
        connection.close()
    assert _http(served, "GET", "/health")[0] == 200


def test_bad_messages_get_an_error_reply_and_the_session_goes_on(served) -> None:
    with _ws(served) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
        assert json.loads(ws.recv(timeout=60))["type"] == "observation"
        for bad in ("[1, 2]", '"step"', "3", "null"):
            ws.send(bad)
            reply = json.loads(ws.recv(timeout=30))
            assert reply["type"] == "error" and "JSON object" in reply["data"]["message"]
        ws.send('{"type": "step", "data": {"action": "INPUT(0, \\"\\ud800\\")"}}')
        reply = json.loads(ws.recv(timeout=30))
        assert reply["type"] == "error" and "surrogate" in reply["data"]["message"]
        ws.send(b"\x00binary")
        assert json.loads(ws.recv(timeout=30))["type"] == "error"
        long_action = json.dumps({"type": "step", "data": {"action": "A" * 3_000_000}})
        ws.send(long_action)
        reply = ws.recv(timeout=60)
        assert json.loads(reply)["type"] == "error" and len(reply) < 20_000  # old: 3 MB echo
        ws.send(json.dumps({"type": "step", "data": {"action": "SCROLL(down)"}}))
        reply = json.loads(ws.recv(timeout=60))
        assert reply["type"] == "observation", reply


def test_a_failed_first_reset_does_not_break_the_session(served) -> None:
    with _ws(served) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"seed": -1}}))
        assert json.loads(ws.recv(timeout=60))["type"] == "error"
        ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
        assert json.loads(ws.recv(timeout=60))["type"] == "observation"
        for _ in range(2):  # the old worker's env failed every step from here on
            ws.send(json.dumps({"type": "step", "data": {"action": "SCROLL(down)"}}))
            reply = json.loads(ws.recv(timeout=60))
            assert reply["type"] == "observation", reply


def test_a_vanished_client_costs_one_log_line_not_a_traceback(served) -> None:
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    uvicorn_log = logging.getLogger("uvicorn")
    uvicorn_log.addHandler(handler)
    try:
        for _ in range(2):
            with _ws(served) as ws:
                ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
                ws.socket.shutdown(socket.SHUT_RDWR)  # gone before the answer
        time.sleep(3)  # the resets finish and find no one to answer
    finally:
        uvicorn_log.removeHandler(handler)
    assert not [r for r in records if r.exc_info], "a traceback was logged"
    assert len([r for r in records if r.levelno >= logging.WARNING]) <= 2
