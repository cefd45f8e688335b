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
loopback bind, ``localhost``) is a 421, so a DNS-rebinding page cannot read the runs; each
connection gets :data:`CONNECTION_TIMEOUT` seconds per read or write (a half-sent request
is dropped); at most :data:`MAX_WORKERS` requests are served at once while the listen
backlog (:data:`LISTEN_BACKLOG`) holds the rest; IPv6 addresses (``--host ::1``) work.
"""

from __future__ import annotations

import html
import http.server
import ipaddress
import os
import shutil
import socket
import sys
import threading
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePosixPath

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
"""Requests served at once; the others wait in the listen backlog."""

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

    def __init__(self, address: tuple[str, int], root: Path, quiet: bool = False):
        self.root = root.resolve()
        self.quiet = quiet
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self._slots = threading.BoundedSemaphore(MAX_WORKERS)
        self._pool = ThreadPoolExecutor(MAX_WORKERS, thread_name_prefix="gui-gym-serve")
        super().__init__(address, _Handler)
        self.allowed_hosts = self._allowed_hosts(address[0])

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
        self._slots.acquire()  # all workers busy: accept no more; the backlog holds them
        try:
            self._pool.submit(self._work, request, client_address)
        except RuntimeError:  # the pool is shut down: the server is closing
            self._slots.release()
            self.shutdown_request(request)

    def _work(self, request: socket.socket, client_address: object) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            self._slots.release()

    def handle_error(self, request: object, client_address: object) -> None:
        if not self.quiet:
            super().handle_error(request, client_address)

    def server_close(self) -> None:
        super().server_close()
        self._pool.shutdown(wait=False, cancel_futures=True)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: ViewServer
    server_version = "gui-gym-serve"
    sys_version = ""
    timeout = CONNECTION_TIMEOUT  # per read/write on the socket: half-sent requests end

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
        if allowed is not None and (self.headers.get("Host") or "").strip().lower() not in allowed:
            body = b"unknown Host header: use the address the server was started on\n"
            self._send(421, "text/plain; charset=utf-8", body, head)
            return
        url = urllib.parse.urlsplit(self.path)
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
    root: str | Path, host: str = "127.0.0.1", port: int = 8000, quiet: bool = False
) -> ViewServer:
    """A :class:`ViewServer` for ``root`` (call ``serve_forever``; port 0 picks a free one;
    ``quiet`` stops the per-request log on stderr).

    Raises:
        NotADirectoryError: when ``root`` is not a folder.
        OSError: when the address cannot be bound (port in use).
    """
    folder = Path(root)
    if not folder.is_dir():
        raise NotADirectoryError(f"{folder}: not a folder")
    return ViewServer((host, port), folder, quiet=quiet)
