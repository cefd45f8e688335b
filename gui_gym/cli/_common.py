"""The Typer app every command module registers on, and the helpers they share."""

from __future__ import annotations

import json
from typing import Any

import typer

app = typer.Typer(
    help="GUI-agent benchmarks as Gymnasium environments.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def parse_kwargs(pairs: list[str] | None) -> dict[str, Any]:
    """``key=value`` pairs; values are read as JSON when they parse, else kept as strings."""
    out: dict[str, Any] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise typer.BadParameter(f"expected key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out
