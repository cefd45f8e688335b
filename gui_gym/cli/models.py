"""``gui-gym models``: the named local models every ``--model`` takes, their sizes and where
each is cached (:mod:`gui_gym.models.llm.local`)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from gui_gym.cli._common import UsageError, app, model_folder


def _folder_bytes(folder: object) -> int:
    from pathlib import Path

    return sum(p.stat().st_size for p in Path(str(folder)).rglob("*") if p.is_file())


@app.command("models")
def models_cmd(
    convert: Annotated[
        str | None,
        typer.Option(help="convert this model into the cache now (else on its first use)"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON instead of text")] = False,
) -> None:
    """List the named models ``--model`` takes (a name, else a folder or a .gguf file): each
    one's size, the wheel it comes from, and where it is cached (converted or not)."""
    from gui_gym.models.llm.local import (
        DEFAULT_MODEL,
        MODELS,
        ModelError,
        cached_folder,
        is_converted,
        model_gguf,
    )

    if convert is not None:
        if convert not in MODELS:
            raise UsageError(f"--convert {convert}: not a model name; names: {', '.join(MODELS)}")
        model_folder(convert, "--convert")
    rows = []
    for name, entry in MODELS.items():
        folder = cached_folder(name)
        try:
            source = str(model_gguf(entry))
        except ModelError:
            source = None
        converted = is_converted(folder, entry.sha256)
        rows.append(
            {
                "name": name,
                "default": name == DEFAULT_MODEL,
                "description": entry.description,
                "parameters": entry.parameters,
                "gguf_bytes": entry.size,
                "installed": source is not None,
                "gguf": source,
                "install": entry.install,
                "cache": str(folder),
                "converted": converted,
                "converted_bytes": _folder_bytes(folder) if converted else None,
            }
        )
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        mark = " (default for --agent llm)" if row["default"] else ""
        typer.echo(f"{row['name']}{mark}: {row['description']}")
        typer.echo(
            f"  {row['parameters'] / 1e6:.1f}M parameters; GGUF {row['gguf_bytes'] / 1e6:.0f} MB"
            + (f" at {row['gguf']}" if row["installed"] else f", not installed: {row['install']}")
        )
        if row["converted"]:
            size = row["converted_bytes"] / 1e6
            typer.echo(f"  converted: {row['cache']} ({size:.0f} MB)")
        else:
            typer.echo(f"  not converted yet (on first use, into {row['cache']})")
