"""``gui-gym export-tasks``: a split's tasks as an engine's dataset file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gui_gym.cli._common import (
    UsageError,
    app,
    check_split,
    choose,
    open_env,
    output_file,
    parse_kwargs,
)

_SUFFIXES = {"verl": ".parquet", "jsonl": ".jsonl"}


@app.command("export-tasks")
def export_tasks(
    env_id: Annotated[str, typer.Argument(help="e.g. GuiGym/WikiHow-v0")],
    out: Annotated[Path, typer.Option(help="the file to write (.parquet for verl, .jsonl)")],
    format: Annotated[
        str, typer.Option("--format", help="verl (parquet of verl's RL dataset columns) or jsonl")
    ] = "verl",
    split: Annotated[str, typer.Option(help="train, test or all")] = "train",
    seeds: Annotated[
        int,
        typer.Option(
            help="rows per task: seeds seed .. seed+N-1 (at most 10,000: a row is one reset)",
            min=1,
            max=10_000,
        ),
    ] = 1,
    seed: Annotated[int, typer.Option(help="first seed", min=0)] = 0,
    task: Annotated[
        list[str] | None, typer.Option("--task", help="task ids to export (repeatable)")
    ] = None,
    prompt: Annotated[str, typer.Option(help="prompt format of the first-step messages")] = (
        "default"
    ),
    env_arg: Annotated[
        list[str] | None, typer.Option("--env-arg", help="extra gym.make key=value")
    ] = None,
) -> None:
    """Write one row per (task, seed) of a split for an engine: ``--format verl`` is the
    parquet verl's RL trainer reads (``data.train_files``), rows naming the ``gui_gym`` agent
    loop with the task id and seed in ``extra_info``."""
    from gymnasium.error import DependencyNotInstalled

    from gui_gym.agents.prompts import PROMPTS
    from gui_gym.cli._common import MissingDependency
    from gui_gym.integrations.tasks import FORMATS, task_rows, write_rows

    choose(format, FORMATS, "format")
    suffix = _SUFFIXES[format]
    if out.suffix != suffix:
        raise UsageError(f"--out {out}: a {format} export is a {suffix} file")
    choose(prompt, sorted(PROMPTS), "prompt")
    output_file(out)
    env = open_env(env_id, **{"split": check_split(split), **parse_kwargs(env_arg)})
    known = env.unwrapped.task_ids
    for task_id in task or []:
        if task_id not in known:
            from gui_gym.cli._common import unknown

            raise unknown(f"task of {env_id}'s {split} split", task_id, known)
    try:
        rows = task_rows(
            env,
            env_id,
            split=split,
            seeds=list(range(seed, seed + seeds)),
            tasks=task,
            prompt=prompt,
        )
        write_rows(rows, out, format)
    except DependencyNotInstalled as err:
        raise MissingDependency(str(err)) from None
    finally:
        env.close()
    typer.echo(f"wrote {len(rows)} rows ({len(rows) // seeds} tasks x {seeds} seeds) to {out}")
