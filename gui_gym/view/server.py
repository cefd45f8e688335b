"""``gui-gym serve DIR``: browse every run under a folder with the report pages.

A standard-library HTTP server, bound to 127.0.0.1 unless told otherwise, that only reads.
It answers GET and HEAD (anything else: 405) on three routes:

* ``/``: the trajectory files (``*.jsonl``) under DIR, each linked to its report, with
  check boxes to compare several;
* ``/view?run=REL[&run=REL...]``: the report of those files, rendered on request (so a run
  still being written shows its latest episodes), screenshots linked rather than inlined;
* ``/file/REL``: a screenshot (an image type of :data:`~gui_gym.view.runs.IMAGE_TYPES`).

Every path a request names goes through :func:`confine`: it is decoded once, refused when
absolute, when it holds ``..``, a backslash or a NUL, and refused when the real path it
resolves to (links followed) is not inside DIR. Refusals are 404s that say nothing of the
file system, and no error reply names an absolute server path.

Bounded by construction (issue 33): files are streamed in 64 KiB chunks (HEAD reads
nothing); a report names at most :data:`MAX_RUNS_PER_VIEW` distinct runs (a repeated or
excess ``run=`` is a 400); a ``Host`` header other than the bound address (or, on a
loopback bind, ``localhost``) is a 421, so a DNS-rebinding page cannot read the runs; IPv6
addresses (``--host ::1``) work.

Slow clients cannot starve the others (issue 46): one thread reads every connection's
request head without blocking (a selector), so a connection holds a worker only once its
whole head has arrived; a head must be complete within :data:`HEADER_TIMEOUT` seconds of the
connection opening and hold at most :data:`MAX_HEAD_BYTES` (431 otherwise), and at most
:data:`MAX_PENDING` connections wait for their heads at once. At most :data:`MAX_WORKERS`
requests are answered at once, each write within :data:`CONNECTION_TIMEOUT` seconds and the
whole answer within :data:`RESPONSE_DEADLINE`. A foreign ``Origin`` is a 403, and with a
token (``--token``, required off loopback; :mod:`gui_gym.integrations.server_guard`) every
request carries it as ``Authorization: Bearer``, ``?token=`` (which sets a cookie, so the
pages' links work) or that cookie; without it, a 401.
"""

from __future__ import annotations

import contextlib
import html
import http.server
import io
import ipaddress
import os
import selectors
import shutil
import socket
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath

from gui_gym.integrations.server_guard import (
    TOKEN_COOKIE,
    check_bind,
    origin_allowed,
    request_token,
    token_matches,
)
from gui_gym.view.page import content_security_policy, render_report, run_names
from gui_gym.view.runs import IMAGE_TYPES, ViewError, load_run

__all__ = ["ConfinementError", "ViewServer", "confine", "list_runs", "make_server"]

# The index page is plain HTML: no script, no style, a form that only asks this server.
_INDEX_POLICY = "default-src 'none'; img-src data:; base-uri 'none'; form-action 'self'"

MAX_LISTED_RUNS = 5000
"""The index lists at most this many trajectory files."""

MAX_RUNS_PER_VIEW = 16
"""Most distinct ``run=`` files one report compares."""

CONNECTION_TIMEOUT = 10.0
"""Seconds a connection may stay silent while sending its request or reading the answer."""

MAX_WORKERS = 16
"""Requests answered at once (each with its whole head read); the others wait their turn."""

HEADER_TIMEOUT = 10.0
"""Seconds from a connection's opening to its complete request head."""

MAX_HEAD_BYTES = 64 * 1024
"""Bytes a request head (request line and headers) may hold."""

MAX_PENDING = 1024
"""Connections whose heads are being read at once; more are closed on arrival."""

RESPONSE_DEADLINE = 120.0
"""Seconds one answer may take to send (a client reading slowly is cut off)."""

LISTEN_BACKLOG = 512
"""Connections the kernel holds while every worker is busy (200 concurrent requests fit)."""

_CHUNK = 1 << 16


class ConfinementError(ValueError):
    """A requested path that is not a file inside the served folder."""


def confine(root: Path, relative: str) -> Path:
    """The real path of ``relative`` (already percent-decoded) inside ``root``.

    Raises:
        ConfinementError: when ``relative`` is empty, absolute, climbs (``..``), holds a
            backslash or NUL, or resolves (through links) outside ``root``.
    """
    if not relative or "\x00" in relative or "\\" in relative:
        raise ConfinementError(f"refused path {relative!r}")
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts or relative.startswith("~"):
        raise ConfinementError(f"refused path {relative!r}")
    base = root.resolve()
    resolved = (base / pure).resolve()
    if not resolved.is_relative_to(base) or resolved == base:
        raise ConfinementError(f"{relative!r} is outside the served folder")
    return resolved


def list_runs(root: Path) -> list[str]:
    """Trajectory files under ``root`` (paths relative to it, ``/``-separated, sorted);
    hidden folders and files are skipped, and so are links that lead outside ``root`` and
    names that are not UTF-8."""
    base = root.resolve()
    found: list[str] = []
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith(".") or not name.endswith(".jsonl"):
                continue
            path = Path(folder) / name
            if not path.resolve().is_relative_to(base):
                continue
            relative = path.relative_to(base).as_posix()
            try:
                relative.encode("utf-8")
            except UnicodeEncodeError:  # a name that is not UTF-8 cannot be put in a URL
                continue
            found.append(relative)
            if len(found) >= MAX_LISTED_RUNS:
                return found
    return found


def _index_page(root: Path, runs: list[str]) -> str:
    rows = "\n".join(
        f'<li><label><input type="checkbox" name="run" value="{html.escape(rel, quote=True)}"> '
        f'</label><a href="/view?run={urllib.parse.quote(rel, safe="")}">{html.escape(rel)}</a></li>'
        for rel in runs
    )
    body = (
        f"<ul>{rows}</ul><p><button type=submit>Compare the checked runs</button></p>"
        if runs
        else "<p>No trajectory files (*.jsonl) here.</p>"
    )
    title = html.escape(str(root))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<link rel="icon" href="data:,"><title>gui-gym runs</title></head><body>'
        f"<h1>gui-gym runs in {title}</h1>"
        f'<form method="get" action="/view">{body}</form></body></html>\n'
    )


class _BadRequest(ValueError):
    """A request this server refuses with 400 (the message says why)."""


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


class ViewServer(http.server.HTTPServer):
    """The HTTP server of ``gui-gym serve``: its ``root`` is the folder it may read.

    Requests run on a pool of :data:`MAX_WORKERS` threads; while all are busy the accept
    loop waits and new connections queue in the listen backlog."""

    request_queue_size = LISTEN_BACKLOG

    def __init__(
        self,
        address: tuple[str, int],
        root: Path,
        quiet: bool = False,
        token: str | None = None,
        header_timeout: float = HEADER_TIMEOUT,
    ):
        check_bind(address[0], token)
        self.root = root.resolve()
        self.quiet = quiet
        self.token = token or None
        self.header_timeout = header_timeout
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self._pool = ThreadPoolExecutor(MAX_WORKERS, thread_name_prefix="gui-gym-serve")
        self._queued = threading.BoundedSemaphore(MAX_PENDING)
        super().__init__(address, _Handler)
        self.allowed_hosts = self._allowed_hosts(address[0])
        self._heads = _HeadReader(self)

    def _allowed_hosts(self, bound: str) -> set[str] | None:
        """``Host`` header values accepted (lower case, with the port); None accepts any
        (a wildcard bind: the user chose to serve every interface)."""
        port = self.server_address[1]
        if bound in ("", "0.0.0.0", "::"):
            return None
        names = {bound}
        if _is_loopback(bound):
            names |= {"localhost", "127.0.0.1", "::1"}
        out = set()
        for name in names:
            shown = (f"[{name}]" if ":" in name else name).lower()
            out.add(f"{shown}:{port}")
            if port == 80:  # browsers leave the default port out
                out.add(shown)
        return out

    def process_request(self, request: socket.socket, client_address: object) -> None:
        self._heads.add(request, client_address)  # its head is read without a worker

    def dispatch(self, request: socket.socket, client_address: object, head: bytes) -> None:
        """Answer a connection whose whole request head has arrived, on a worker (a 503 when
        :data:`MAX_PENDING` answers are waiting already)."""
        if not self._queued.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.settimeout(CONNECTION_TIMEOUT)
                request.sendall(
                    b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\n"
                    b"Connection: close\r\n\r\n"
                )
            self.shutdown_request(request)
            return
        try:
            self._pool.submit(self._work, request, client_address, head)
        except RuntimeError:  # the pool is shut down: the server is closing
            self._queued.release()
            self.shutdown_request(request)

    def _work(self, request: socket.socket, client_address: object, head: bytes) -> None:
        try:
            _Handler(request, client_address, self, head)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            self._queued.release()

    def handle_error(self, request: object, client_address: object) -> None:
        if not self.quiet:
            super().handle_error(request, client_address)

    def server_close(self) -> None:
        super().server_close()
        self._heads.close()
        self._pool.shutdown(wait=False, cancel_futures=True)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"


class _HeadReader:
    """One thread reading every new connection's request head without blocking: a client
    sending its head slowly (or never) costs a socket, not a worker. A complete head goes to
    :meth:`ViewServer.dispatch`; a head over :data:`MAX_HEAD_BYTES` gets a 431, one not
    complete within the server's ``header_timeout`` is closed."""

    def __init__(self, server: ViewServer):
        self.server = server
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._new: list[tuple[socket.socket, object]] = []
        self._lock = threading.Lock()
        self._closed = False
        self._pending = 0
        self._thread = threading.Thread(target=self._run, name="gui-gym-serve-heads", daemon=True)
        self._thread.start()

    def add(self, request: socket.socket, client_address: object) -> None:
        """Start reading ``request``'s head (closed at once when too many are pending)."""
        with self._lock:
            if self._closed or self._pending >= MAX_PENDING:
                self.server.shutdown_request(request)
                return
            self._pending += 1
            self._new.append((request, client_address))
        self._wake_w.send(b"\0")

    def close(self) -> None:
        """Stop the thread and close the connections still sending their heads."""
        with self._lock:
            self._closed = True
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")
        self._thread.join(timeout=5)

    def _run(self) -> None:
        states: dict[socket.socket, tuple[object, float, bytearray]] = {}
        while True:
            with self._lock:
                new, self._new = self._new, []
                closed = self._closed
            if closed:
                for request in [*states, *(r for r, _ in new)]:
                    self.server.shutdown_request(request)
                self._selector.close()
                self._wake_r.close()
                self._wake_w.close()
                return
            now = time.monotonic()
            for request, address in new:
                request.setblocking(False)
                states[request] = (address, now + self.server.header_timeout, bytearray())
                self._selector.register(request, selectors.EVENT_READ, True)
            timeout = min((deadline for _, deadline, _ in states.values()), default=now + 1)
            for key, _ in self._selector.select(max(0.0, timeout - now)):
                if key.data is None:
                    with contextlib.suppress(OSError):
                        self._wake_r.recv(4096)
                    continue
                self._read(key.fileobj, states)  # type: ignore[arg-type]
            now = time.monotonic()
            for request in [r for r, (_, deadline, _) in states.items() if deadline <= now]:
                self._drop(request, states)

    def _read(self, request: socket.socket, states: dict) -> None:
        address, _, head = states[request]
        try:
            data = request.recv(16384)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # the client left before finishing its head
            self._drop(request, states)
            return
        head += data
        end = head.find(b"\r\n\r\n")
        if end < 0 and len(head) <= MAX_HEAD_BYTES:
            return
        self._forget(request, states)
        if end < 0 or end > MAX_HEAD_BYTES:
            try:
                request.setblocking(True)
                request.settimeout(CONNECTION_TIMEOUT)
                request.sendall(
                    b"HTTP/1.0 431 Request Header Fields Too Large\r\nContent-Length: 0\r\n"
                    b"Connection: close\r\n\r\n"
                )
            except OSError:
                pass
            self.server.shutdown_request(request)
            return
        request.setblocking(True)
        self.server.dispatch(request, address, bytes(head[: end + 4]))

    def _forget(self, request: socket.socket, states: dict) -> None:
        states.pop(request, None)
        self._selector.unregister(request)
        with self._lock:
            self._pending -= 1

    def _drop(self, request: socket.socket, states: dict) -> None:
        self._forget(request, states)
        self.server.shutdown_request(request)


class _DeadlineWriter(io.RawIOBase):
    """The handler's output: each write within :data:`CONNECTION_TIMEOUT`, all of them
    within :data:`RESPONSE_DEADLINE` of the first."""

    def __init__(self, connection: socket.socket):
        self.connection = connection
        self.deadline = time.monotonic() + RESPONSE_DEADLINE

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # type: ignore[override]
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"answer not sent within {RESPONSE_DEADLINE:g} s")
        self.connection.settimeout(min(CONNECTION_TIMEOUT, left))
        self.connection.sendall(data)
        return len(data)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: ViewServer
    server_version = "gui-gym-serve"
    sys_version = ""
    timeout = CONNECTION_TIMEOUT  # per read/write on the socket

    def __init__(
        self, request: socket.socket, client_address: object, server: ViewServer, head: bytes
    ):
        self._head = head
        self._set_cookie: str | None = None
        super().__init__(request, client_address, server)

    def setup(self) -> None:
        super().setup()
        self.rfile = io.BytesIO(self._head)  # the whole head, already read; GET/HEAD only
        self.wfile = _DeadlineWriter(self.connection)

    def end_headers(self) -> None:
        if self._set_cookie is not None:
            self.send_header("Set-Cookie", self._set_cookie)
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        if not self.server.quiet:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def do_GET(self) -> None:
        self._answer(head=False)

    def _refuse_method(self) -> None:
        self.send_response(405)
        self.send_header("Allow", "GET, HEAD")
        self.send_header("Content-Length", "0")
        self.end_headers()

    # read-only: every writing method is refused
    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse_method  # noqa: N815

    def _answer(self, head: bool) -> None:
        allowed = self.server.allowed_hosts
        host = (self.headers.get("Host") or "").strip().lower()
        if allowed is not None and host not in allowed:
            body = b"unknown Host header: use the address the server was started on\n"
            self._send(421, "text/plain; charset=utf-8", body, head)
            return
        if not origin_allowed(self.headers.get("Origin"), host):
            body = b"cross-origin request refused: Origin is not this server\n"
            self._send(403, "text/plain; charset=utf-8", body, head)
            return
        url = urllib.parse.urlsplit(self.path)
        if self.server.token is not None:
            lower = {k.lower(): v for k, v in self.headers.items()}
            given, where = request_token(lower, url.query, self.headers.get_all("Cookie") or [])
            if not token_matches(given, self.server.token):
                body = b"this server needs its token: open it with ?token=TOKEN\n"
                self._send(401, "text/plain; charset=utf-8", body, head)
                return
            if where == "query":
                # the pages' own links carry no token: a cookie does; and the address is sent
                # again without it, so it stays out of the history and of Referer headers
                quoted = urllib.parse.quote(self.server.token, safe="")
                self._set_cookie = f"{TOKEN_COOKIE}={quoted}; HttpOnly; SameSite=Strict; Path=/"
                rest = [
                    (k, v)
                    for k, v in urllib.parse.parse_qsl(url.query, max_num_fields=64)
                    if k != "token"
                ]
                query = urllib.parse.urlencode(rest)
                self.send_response(303)
                self.send_header("Location", url.path + (f"?{query}" if query else ""))
                self.send_header("Content-Length", "0")
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                return
        root = self.server.root
        try:
            if url.path == "/":
                body = _index_page(root, list_runs(root)).encode("utf-8")
                self._send(200, "text/html; charset=utf-8", body, head, csp=_INDEX_POLICY)
            elif url.path == "/view":
                rels = _runs_named(url.query)
                paths = [confine(root, rel) for rel in rels]
                if not all(path.is_file() for path in paths):
                    raise ConfinementError("not a file")
                runs = [
                    load_run(path, name=name, image_source=self._image_url)
                    for path, name in zip(paths, run_names([Path(r) for r in rels]))
                ]
                body = render_report(runs, img_self=True).encode("utf-8")
                self._send(
                    200, "text/html; charset=utf-8", body, head, csp=content_security_policy(True)
                )
            elif url.path.startswith("/file/"):
                path = confine(root, urllib.parse.unquote(url.path[len("/file/") :]))
                mime = IMAGE_TYPES.get(path.suffix.lower())
                if mime is None or not path.is_file():
                    raise ConfinementError("not an image")
                self._send_file(path, mime, head)
            else:
                self._not_found(head)
        except (ConfinementError, FileNotFoundError, IsADirectoryError):
            self._not_found(head)
        except _BadRequest as err:
            self._send(400, "text/plain; charset=utf-8", f"{err}\n".encode(), head)
        except ViewError as err:
            message = f"cannot show this run: {self._without_paths(str(err))}"
            self._send(422, "text/plain; charset=utf-8", message.encode("utf-8", "replace"), head)

    def _without_paths(self, text: str) -> str:
        """``text`` with the served folder's absolute path taken out (names stay relative)."""
        root = str(self.server.root)
        return text.replace(root + os.sep, "").replace(root, ".")

    def _send_file(self, path: Path, mime: str, head: bool) -> None:
        """Stream ``path`` (HEAD: its size only, nothing read)."""
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            self.send_response(200)
            self.send_header("Content-Type", mime)
            self.send_header("Content-Length", str(size))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if not head:
                shutil.copyfileobj(handle, self.wfile, _CHUNK)

    def _image_url(self, path: Path) -> str | None:
        relative = path.relative_to(self.server.root).as_posix()
        return "/file/" + urllib.parse.quote(relative)

    def _not_found(self, head: bool) -> None:
        self._send(404, "text/plain; charset=utf-8", b"not found\n", head)

    def _send(
        self, status: int, mime: str, body: bytes, head: bool, csp: str | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", mime)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-store")
        if csp is not None:
            self.send_header("Content-Security-Policy", csp)
        self.end_headers()
        if not head:
            self.wfile.write(body)


def _runs_named(query: str) -> list[str]:
    """The distinct ``run=`` values of a query, in order.

    Raises:
        ConfinementError: when none is named.
        _BadRequest: for a repeated run, or more than :data:`MAX_RUNS_PER_VIEW`.
    """
    try:
        fields = urllib.parse.parse_qs(query, max_num_fields=MAX_RUNS_PER_VIEW + 8)
    except ValueError:
        raise _BadRequest(
            f"too many query fields: compare at most {MAX_RUNS_PER_VIEW} runs"
        ) from None
    rels = fields.get("run", [])
    if not rels:
        raise ConfinementError("no run named")
    if len(rels) > MAX_RUNS_PER_VIEW:
        raise _BadRequest(f"{len(rels)} runs named: compare at most {MAX_RUNS_PER_VIEW}")
    if len(set(rels)) != len(rels):
        raise _BadRequest("a run is named more than once: name each run once")
    return rels


def make_server(
    root: str | Path,
    host: str = "127.0.0.1",
    port: int = 8000,
    quiet: bool = False,
    token: str | None = None,
    header_timeout: float = HEADER_TIMEOUT,
) -> ViewServer:
    """A :class:`ViewServer` for ``root`` (call ``serve_forever``; port 0 picks a free one;
    ``quiet`` stops the per-request log on stderr; ``token``, required when ``host`` is not
    loopback, is what every request must carry; ``header_timeout`` the seconds a connection
    has to send its request head).

    Raises:
        NotADirectoryError: when ``root`` is not a folder.
        ValueError: for a non-loopback ``host`` without a token, or a short token.
        OSError: when the address cannot be bound (port in use).
    """
    folder = Path(root)
    if not folder.is_dir():
        raise NotADirectoryError(f"{folder}: not a folder")
    check_bind(host, token)
    return ViewServer((host, port), folder, quiet=quiet, token=token, header_timeout=header_timeout)
