"""Commands that show runs: view (a static HTML report), serve (browse a folder of runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gui_gym.cli._common import UsageError, app, existing_dir, output_file


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
    prompts: Annotated[
        bool, typer.Option("--prompts", help="also show each step's prompt (LLM agents)")
    ] = False,
) -> None:
    """Write a self-contained HTML report: episodes filterable by task, category and
    outcome, each step with its screen, action, output and reward components."""
    from gui_gym.view import ViewError, build_report, inline_image

    for path in trajectories:
        if path.is_dir():
            raise UsageError(
                f"{path} is a folder; give its .jsonl files, or browse it with gui-gym serve"
            )
        if not path.is_file():
            raise UsageError(f"{path}: no such file (expected a .jsonl trajectory file)")
    output_file(out)
    try:
        summary = build_report(
            trajectories,
            out,
            image_source=inline_image if screenshots else None,
            prompts=prompts,
        )
    except ViewError as err:
        raise UsageError(str(err)) from None
    except OSError as err:
        raise UsageError(f"cannot write {out}: {err.strerror or err}") from None
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
    port: Annotated[int, typer.Option(help="port (0 picks a free one)", min=0, max=65535)] = 8000,
    quiet: Annotated[bool, typer.Option("--quiet", help="do not log each request")] = False,
    token: Annotated[
        str | None,
        typer.Option(
            help="secret every request must carry (open the server once with ?token=TOKEN; "
            "programs send Authorization: Bearer TOKEN); required with a --host other than "
            "loopback; also read from GUI_GYM_TOKEN",
            envvar="GUI_GYM_TOKEN",
        ),
    ] = None,
) -> None:
    """Browse every run under FOLDER with the report pages (read-only; nothing outside
    FOLDER is served)."""
    from gui_gym.integrations.server_guard import check_bind
    from gui_gym.view.server import make_server

    try:
        check_bind(host, token)
    except ValueError as err:
        raise UsageError(str(err)) from None
    existing_dir(folder, "FOLDER")
    try:
        server = make_server(folder, host=host, port=port, quiet=quiet, token=token)
    except OSError as err:
        raise UsageError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    opened = server.url + ("?token=TOKEN" if token else "")
    typer.echo(f"serving {folder.resolve()} at {opened} (Ctrl+C to stop)", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
