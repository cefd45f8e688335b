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
file system.
"""

from __future__ import annotations

import html
import http.server
import os
import sys
import urllib.parse
from pathlib import Path, PurePosixPath

from gui_gym.view.page import content_security_policy, render_report, run_names
from gui_gym.view.runs import IMAGE_TYPES, ViewError, load_run

__all__ = ["ConfinementError", "ViewServer", "confine", "list_runs", "make_server"]

# The index page is plain HTML: no script, no style, a form that only asks this server.
_INDEX_POLICY = "default-src 'none'; img-src data:; base-uri 'none'; form-action 'self'"

MAX_LISTED_RUNS = 5000
"""The index lists at most this many trajectory files."""


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


class ViewServer(http.server.ThreadingHTTPServer):
    """The HTTP server of ``gui-gym serve``: its ``root`` is the folder it may read."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], root: Path, quiet: bool = False):
        self.root = root.resolve()
        self.quiet = quiet
        super().__init__(address, _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: ViewServer
    server_version = "gui-gym-serve"
    sys_version = ""

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
        url = urllib.parse.urlsplit(self.path)
        root = self.server.root
        try:
            if url.path == "/":
                body = _index_page(root, list_runs(root)).encode("utf-8")
                self._send(200, "text/html; charset=utf-8", body, head, csp=_INDEX_POLICY)
            elif url.path == "/view":
                rels = urllib.parse.parse_qs(url.query).get("run", [])
                if not rels:
                    raise ConfinementError("no run named")
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
                self._send(200, mime, path.read_bytes(), head)
            else:
                self._not_found(head)
        except (ConfinementError, FileNotFoundError, IsADirectoryError):
            self._not_found(head)
        except ViewError as err:
            message = f"cannot show this run: {err}"
            self._send(422, "text/plain; charset=utf-8", message.encode("utf-8", "replace"), head)

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
