"""Commands that show runs: view (a static HTML report), serve (browse a folder of runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gui_gym.cli._common import app


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


@app.command()
def view(
    trajectories: Annotated[
        list[Path],
        typer.Argument(help="trajectory JSONL files; two or more are also compared side by side"),
    ],
    out: Annotated[Path, typer.Option(help="the HTML report to write")] = Path("report.html"),
    screenshots: Annotated[
        bool,
        typer.Option(
            "--screenshots/--no-screenshots", help="inline recorded screenshots (larger file)"
        ),
    ] = True,
) -> None:
    """Write a self-contained HTML report: episodes filterable by task, category and
    outcome, each step with its screen, action, output and reward components."""
    from gui_gym.view import ViewError, build_report, inline_image

    for path in trajectories:
        if not path.is_file():
            _fail(f"{path}: no such file (expected a .jsonl trajectory file)")
    if out.is_dir():
        _fail(f"--out {out} is a folder; give the HTML file to write, e.g. {out / 'report.html'}")
    try:
        summary = build_report(
            trajectories, out, image_source=inline_image if screenshots else None
        )
    except ViewError as err:
        _fail(str(err))
    except OSError as err:
        _fail(f"cannot write {out}: {err.strerror or err}")
    size = summary.bytes / 1e6
    typer.echo(
        f"{summary.out}: {summary.episodes} episodes, {summary.steps} steps from "
        f"{summary.runs} file(s) ({size:.1f} MB); open it in a browser"
    )


@app.command()
def serve(
    folder: Annotated[Path, typer.Argument(help="folder holding trajectory JSONL files")],
    host: Annotated[
        str, typer.Option(help="address to bind (127.0.0.1: this machine only)")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port (0 picks a free one)")] = 8000,
    quiet: Annotated[bool, typer.Option("--quiet", help="do not log each request")] = False,
) -> None:
    """Browse every run under FOLDER with the report pages (read-only; nothing outside
    FOLDER is served)."""
    from gui_gym.view.server import make_server

    if not folder.is_dir():
        _fail(f"{folder}: not a folder (give the folder holding your .jsonl runs)")
    if not 0 <= port <= 65535:
        _fail(f"--port {port} is out of range; use 0 to 65535")
    try:
        server = make_server(folder, host=host, port=port, quiet=quiet)
    except OSError as err:
        _fail(f"cannot listen on {host}:{port}: {err.strerror or err}")
    if host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(f"warning: serving {folder} to other machines on {host}", err=True)
    typer.echo(f"serving {folder.resolve()} at {server.url} (Ctrl+C to stop)", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
