"""Commands that write expert datasets: record, convert."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gui_gym.cli._common import (
    NoProgressOption,
    UsageError,
    app,
    check_agent,
    check_split,
    open_env,
    output_dir,
    parse_kwargs,
    unknown,
)


@app.command()
def record(
    env_id: Annotated[str, typer.Argument(help="e.g. GuiGym/WikiHow-v0")],
    out: Annotated[Path, typer.Option(help="dataset folder (a rerun resumes it)")],
    agent: Annotated[str, typer.Option(help="oracle (the expert), random, ...")] = "oracle",
    episodes: Annotated[int, typer.Option(help="episodes the dataset should hold", min=1)] = 10,
    split: Annotated[str, typer.Option(help="train, test or all")] = "train",
    task: Annotated[
        list[str] | None, typer.Option("--task", help="task ids to cycle through (repeatable)")
    ] = None,
    seed: Annotated[int, typer.Option(help="base seed: episode i uses seed + i")] = 0,
    screenshots: Annotated[
        bool, typer.Option("--screenshots", help="save each step's screenshot as a PNG")
    ] = False,
    describe_thoughts: Annotated[
        bool,
        typer.Option(
            "--describe-thoughts", help="store a templated thought from each action's description"
        ),
    ] = False,
    env_arg: Annotated[
        list[str] | None, typer.Option("--env-arg", help="extra gym.make key=value")
    ] = None,
    no_progress: NoProgressOption = False,
) -> None:
    """Record expert trajectories (UI trees, screens, actions, optional screenshots and
    thoughts) as an expert dataset for ``GuiGym/SemiOnlineReplay-v0`` and ``eval --sop``."""
    from gui_gym.envs.replay import DatasetError
    from gui_gym.runs.record import record_dataset

    resuming = out.exists()
    output_dir(out)
    env_kwargs = {"split": check_split(split), **parse_kwargs(env_arg)}
    probe = open_env(env_id, **env_kwargs)  # every argument checked before the first episode
    check_agent(agent, probe, seed)
    known = probe.unwrapped.task_ids
    for task_id in task or []:
        if task_id not in known:
            raise unknown("task", task_id, known, see=f"gui-gym list {env_id} --tasks")
    probe.close()
    try:
        report = record_dataset(
            env_id,
            agent,
            episodes=episodes,
            out=out,
            seed=seed,
            env_kwargs=env_kwargs,
            tasks=task,
            screenshots=screenshots,
            thoughts="describe" if describe_thoughts else "agent",
            progress=not no_progress,
        )
    except DatasetError as err:  # a folder of another kind, or one recorded with other args
        raise UsageError(str(err)) from None
    except NotImplementedError as err:  # an expert asked for a task that has none
        # a new folder is removed (the app's rule for failed runs); an existing one keeps
        # what it held, and the episodes this run added, for the same command to resume
        kept = f" (episodes recorded so far are kept in {out}; a rerun resumes)"
        raise UsageError(f"{err}{kept if resuming else ''}") from None
    typer.echo(
        f"{report.out}: {report.episodes} episodes ({report.recorded} recorded now, "
        f"{report.successes} successful)"
    )


@app.command()
def convert(
    source: Annotated[Path, typer.Argument(help="AndroidControl-style .json/.jsonl or a folder")],
    out: Annotated[Path, typer.Option(help="dataset folder to write (a rerun resumes it)")],
    skip_bad: Annotated[
        bool, typer.Option("--skip-bad", help="skip malformed episodes, count them")
    ] = False,
) -> None:
    """Convert AndroidControl-style episode JSON into an expert dataset (schema in
    docs/semi_online.md)."""
    from gui_gym.envs.replay import DatasetError
    from gui_gym.envs.replay.androidcontrol import convert_androidcontrol

    if not source.exists():
        raise UsageError(f"no such file or folder: {source}")
    output_dir(out)
    try:
        report = convert_androidcontrol(source, out, skip_bad=skip_bad)
    except DatasetError as err:  # a folder of another kind, or one recorded with other args
        raise UsageError(str(err)) from None
    typer.echo(
        f"{report.out}: {report.converted} episodes converted, {report.existing} already there"
    )
    for reason in report.skipped:
        typer.echo(f"skipped: {reason}")
    if report.skipped:
        typer.echo(f"skipped {len(report.skipped)} bad episode(s) (--skip-bad)")
