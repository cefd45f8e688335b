"""Issue 46 (hardening round 3), the run viewer ``gui-gym serve``: slow clients cannot
starve the others (heads are read without a worker, under a deadline), a foreign Origin is
refused, and an optional token (required off loopback) guards every request."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gui_gym.core.trajectory import write_jsonl
from gui_gym.view.server import MAX_WORKERS, make_server

TOKEN = "view-token-0123456789abc"
pytestmark = pytest.mark.timeout(120)


def _serve(root: Path, **kwargs) -> Iterator[tuple[str, int]]:
    write_jsonl(root / "run.jsonl", [{"env_id": "e", "task_id": "t", "steps": []}])
    server = make_server(root, port=0, quiet=True, **kwargs)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[:2]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, int]]:
    yield from _serve(tmp_path, header_timeout=30.0)


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[tuple[str, int]]:
    yield from _serve(tmp_path, token=TOKEN)


def _get(address, path: str = "/", timeout: float = 30, **headers: str):
    connection = http.client.HTTPConnection(*address, timeout=timeout)
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        return response.status, response.read(), response
    finally:
        connection.close()


def test_trickling_clients_do_not_starve_the_others(served) -> None:
    trickling = []
    for _ in range(2 * MAX_WORKERS):  # every worker of the old server, twice over
        connection = socket.create_connection(served, timeout=30)
        connection.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1")
        trickling.append(connection)
    try:
        time.sleep(0.5)
        for _ in range(3):  # a starvation check, not a speed one: the old server hung 48 s
            status, body, _ = _get(served, timeout=10)
            assert status == 200 and b"run.jsonl" in body
    finally:
        for connection in trickling:
            connection.close()


def test_a_head_past_its_deadline_or_size_is_dropped(tmp_path: Path) -> None:
    for address in _serve(tmp_path, header_timeout=1.0):
        with socket.create_connection(address, timeout=30) as slow:
            slow.sendall(b"GET / HTTP/1.1\r\n")
            for _ in range(6):  # one byte every 0.4 s: each read is quick, the head is not
                time.sleep(0.4)
                try:
                    slow.sendall(b"X")
                except OSError:
                    break
            assert slow.recv(64) == b""
        with socket.create_connection(address, timeout=30) as big:
            big.sendall(b"GET / HTTP/1.1\r\n" + b"X-Pad: " + b"a" * 70_000 + b"\r\n\r\n")
            assert big.recv(64).startswith(b"HTTP/1.0 431")


def test_a_foreign_origin_is_refused(served) -> None:
    assert _get(served, Origin="http://attacker.example")[0] == 403
    port = served[1]
    assert _get(served, Origin=f"http://127.0.0.1:{port}")[0] == 200


def test_the_token_guards_every_request(guarded) -> None:
    assert _get(guarded)[0] == 401
    assert _get(guarded, "/view?run=run.jsonl")[0] == 401
    assert _get(guarded, "/?token=wrong")[0] == 401
    status, _, response = _get(guarded, f"/view?run=run.jsonl&token={TOKEN}")
    assert status == 303 and response.getheader("Location") == "/view?run=run.jsonl"
    cookie = response.getheader("Set-Cookie") or ""
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert _get(guarded, "/view?run=run.jsonl", Cookie=cookie.split(";")[0])[0] == 200
    assert _get(guarded, "/", Authorization=f"Bearer {TOKEN}")[0] == 200


def test_a_non_loopback_host_needs_a_token(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--token"):
        make_server(tmp_path, host="0.0.0.0", port=0)
