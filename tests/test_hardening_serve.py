"""Issue 33, item 10: ``gui-gym serve`` stays bounded. Files are streamed (HEAD reads
nothing), repeated or excess ``run=`` parameters are refused, a foreign ``Host`` header is
refused (DNS rebinding), half-sent requests time out, 200 concurrent requests are all
answered, ``--host ::1`` works, and error replies name no absolute server path."""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gui_gym.core.trajectory import write_jsonl
from gui_gym.view import server as server_module
from gui_gym.view.server import make_server


def _record(task_id: str = "t") -> dict:
    return {"env_id": "GuiGym/WikiHow-v0", "task_id": task_id, "instruction": "i", "steps": []}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, int, Path]]:
    root = tmp_path / "runs"
    root.mkdir()
    write_jsonl(root / "run.jsonl", [_record()])
    for i in range(20):
        write_jsonl(root / f"r{i}.jsonl", [_record(f"t{i}")])
    (root / "bad.jsonl").write_text("this is not JSON\n")
    (root / "shot.png").write_bytes(b"\x89PNG" + bytes(range(256)) * 12_000)
    server = make_server(root, port=0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield host, port, root
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def _get(
    served, path: str, method: str = "GET", host: str | None = None
) -> tuple[int, bytes, dict[str, str]]:
    address, port, _ = served
    connection = http.client.HTTPConnection(address, port, timeout=30)
    try:
        headers = {} if host is None else {"Host": host}
        connection.request(method, path, headers=headers)
        response = connection.getresponse()
        return response.status, response.read(), dict(response.getheaders())
    finally:
        connection.close()


@pytest.mark.timeout(60)
def test_files_are_streamed_and_head_reads_nothing(served, monkeypatch) -> None:
    def whole_file(self: Path) -> bytes:  # the old server read each file whole
        raise AssertionError(f"read_bytes({self.name}) reads a whole file into memory")

    monkeypatch.setattr(Path, "read_bytes", whole_file)
    expected = (served[2] / "shot.png").stat().st_size
    status, body, headers = _get(served, "/file/shot.png", method="HEAD")
    assert status == 200 and body == b"" and headers["Content-Length"] == str(expected)
    status, body, headers = _get(served, "/file/shot.png")
    assert status == 200 and len(body) == expected and body.startswith(b"\x89PNG")


@pytest.mark.timeout(60)
def test_repeated_or_excess_run_parameters_are_refused(served) -> None:
    status, body, _ = _get(served, "/view?" + "&".join(["run=run.jsonl"] * 1000))
    assert status == 400 and b"too many" in body
    status, body, _ = _get(served, "/view?run=run.jsonl&run=run.jsonl")
    assert status == 400 and b"name each run once" in body
    many = "&".join(f"run=r{i}.jsonl" for i in range(17))
    status, body, _ = _get(served, "/view?" + many)
    assert status == 400 and b"at most 16" in body
    status, _, _ = _get(served, "/view?" + "&".join(f"run=r{i}.jsonl" for i in range(3)))
    assert status == 200


@pytest.mark.timeout(60)
def test_a_foreign_host_header_is_refused(served) -> None:
    port = served[1]
    status, body, _ = _get(served, "/", host=f"attacker.example:{port}")
    assert status == 421 and b"run" not in body
    status, _, _ = _get(served, "/file/shot.png", host="attacker.example")
    assert status == 421
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"LOCALHOST:{port}"):
        assert _get(served, "/", host=host)[0] == 200


@pytest.mark.timeout(60)
def test_a_half_sent_request_is_dropped_after_the_connection_timeout(served) -> None:
    assert server_module.CONNECTION_TIMEOUT <= 10  # the wait below
    address, port, _ = served
    with socket.create_connection((address, port), timeout=30) as half:
        half.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1")  # and never the rest
        assert half.recv(1024) == b""  # the server closed it (the old one waited for ever)
    assert _get(served, "/")[0] == 200


@pytest.mark.timeout(180)
def test_two_hundred_concurrent_requests_are_all_answered(served) -> None:
    statuses: list[int | str] = []
    lock = threading.Lock()
    start = threading.Barrier(200)

    def one() -> None:
        start.wait()
        try:
            status = _get(served, "/view?run=run.jsonl")[0]
        except OSError as err:
            status = type(err).__name__
        with lock:
            statuses.append(status)

    threads = [threading.Thread(target=one) for _ in range(200)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [200] * 200


def test_error_replies_name_no_absolute_path(served) -> None:
    status, body, _ = _get(served, "/view?run=bad.jsonl")
    assert status == 422 and str(served[2]).encode() not in body
    assert b"bad.jsonl" in body


@pytest.mark.timeout(60)
def test_an_ipv6_loopback_host_works(tmp_path: Path) -> None:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError as err:  # the kernel has IPv6 switched off
        pytest.skip(f"cannot bind ::1 on this machine: {err}")
    write_jsonl(tmp_path / "run.jsonl", [_record()])
    server = make_server(tmp_path, host="::1", port=0, quiet=True)  # old: AF_INET, refused
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        assert server.url.startswith("http://[::1]:")
        port = server.server_address[1]
        assert _get(("::1", port, tmp_path), "/")[0] == 200
        assert _get(("::1", port, tmp_path), "/", host="evil.example")[0] == 421
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
