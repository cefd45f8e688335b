"""Commands about the environments: list, play, bench."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gui_gym.cli._common import (
    MissingDependency,
    UsageError,
    app,
    check_env_id,
    check_split,
    open_env,
    output_file,
)


@app.command("list")
def list_envs(
    env_id: Annotated[
        str | None, typer.Argument(help="one id: its row, or its tasks with --tasks")
    ] = None,
    tasks: Annotated[
        bool, typer.Option("--tasks", help="list the id's task ids with category, split, flags")
    ] = False,
) -> None:
    """List every registered id with its task counts per split and category; ``list ID
    --tasks`` lists that id's tasks (id, category, split, milestones, flags)."""
    from rich.console import Console
    from rich.table import Table

    import gui_gym

    if tasks:
        if env_id is None:
            raise UsageError("--tasks needs an env id: gui-gym list GuiGym/WikiHow-v0 --tasks")
        _list_tasks(env_id)
        return
    if env_id is not None:
        check_env_id(env_id)
    table = Table(title="gui-gym environments")
    # An id is what the user copies into gym.make: it is never cut, however narrow the
    # terminal (the other columns wrap instead).
    table.add_column("id", no_wrap=True)
    for column in ("tasks", "train", "test", "categories"):
        table.add_column(column)
    for listed_id in [*gui_gym.ENV_IDS, *gui_gym.ALFWORLD_ENV_IDS]:
        if env_id is not None and listed_id != env_id:
            continue
        try:
            env = open_env(listed_id)
        except (UsageError, MissingDependency) as err:  # an optional backend may be missing
            table.add_row(listed_id, "-", "-", "-", f"unavailable: {err.format_message()}")
            continue
        base = env.unwrapped
        suite = base.suite
        if hasattr(base, "param_split"):
            # Template suites (AndroidWorld): both splits run every template, with parameters
            # from disjoint seed streams.
            apps = ", ".join(suite.categories)
            notes = base.template_notes() if hasattr(base, "template_notes") else ""
            table.add_row(
                listed_id,
                f"{len(suite)} templates",
                str(len(suite)),
                str(len(suite)),
                f"apps: {apps}{notes}",
            )
            env.close()
            continue
        counts = suite.counts()
        cats = ", ".join(
            f"{c} {sum(counts.get(s, {}).get(c, 0) for s in counts)}" for c in suite.categories
        )
        table.add_row(
            listed_id,
            str(len(suite)),
            str(sum(counts.get("train", {}).values())),
            str(sum(counts.get("test", {}).values())),
            cats,
        )
        env.close()
    from gui_gym.envs.miniwob.catalog import MINIWOB_TASKS

    # Browser-backed ids: listed from the catalog, without starting Chromium.
    if env_id is None or env_id in gui_gym.MINIWOB_ENV_IDS:
        table.add_row(
            "GuiGym/MiniWoB-v0 (+ GuiGym/MiniWoB-<task>-v0)",
            f"{len(MINIWOB_TASKS)} tasks",
            "-",
            "-",
            "the miniwob package's pages in headless Chromium; split = miniwob's data mode; "
            "category = the task's family (its name's first word)",
        )
    # Replay ids need an expert dataset (gui-gym record / convert); listed, not made.
    if env_id is None or env_id in gui_gym.REPLAY_ENV_IDS:
        table.add_row(
            "GuiGym/SemiOnlineReplay-v0",
            "per dataset",
            "-",
            "-",
            "UI-S1 semi-online replay of an expert dataset (dataset=DIR)",
        )
    # Off a TTY rich assumes 80 columns; a log can hold wider lines than a terminal.
    console = Console()
    Console(width=max(console.width, 100)).print(table)


def _list_tasks(env_id: str) -> None:
    """One line per task of ``env_id``: id, category, split, milestones and flags."""
    import random

    import gui_gym

    if env_id in gui_gym.REPLAY_ENV_IDS:
        raise UsageError(
            f"{env_id} replays a dataset: its tasks are the dataset's episodes "
            "(gui-gym eval --sop --dataset DIR lists them per category)"
        )
    env = open_env(check_env_id(env_id))
    base = env.unwrapped
    rows = []
    for task in base.suite:
        milestones = len(task.milestones)
        split = task.split
        flags: list[str] = []
        if hasattr(base, "param_split"):
            # AndroidWorld: one template serves both splits (disjoint parameter streams); the
            # milestones come with an instance of the template.
            template = base.templates[task.task_id]
            milestones = len(template.create(random.Random(0)).milestones)
            split = "train+test"
            for flag, attr in (
                ("solved-at-start", "solved_at_start"),
                ("vision", "needs_vision"),
                ("memory", "needs_memory"),
            ):
                if getattr(template, attr, False):
                    flags.append(flag)
        if env_id in gui_gym.MINIWOB_ENV_IDS:
            from gui_gym.envs.miniwob.catalog import NONDETERMINISTIC_TASKS

            split = "train+test"  # miniwob's data mode, not a task partition
            if task.task_id in NONDETERMINISTIC_TASKS:
                flags.append("nondeterministic")
        rows.append((task.task_id, task.category or "-", split, str(milestones), " ".join(flags)))
    env.close()
    width = max(len(r[0]) for r in rows)
    cat_width = max(len(r[1]) for r in rows)
    typer.echo(f"{'task':<{width}}  {'category':<{cat_width}}  {'split':<10}  milestones  flags")
    for task_id, category, split, milestones, flags in rows:
        typer.echo(
            f"{task_id:<{width}}  {category:<{cat_width}}  {split:<10}  {milestones:>10}  {flags}".rstrip()
        )
    typer.echo(f"{len(rows)} tasks in {env_id}")


@app.command()
def play(
    env_id: Annotated[str, typer.Argument(help="e.g. GuiGym/WikiHow-v0")] = "GuiGym/WikiHow-v0",
    task: Annotated[str | None, typer.Option(help="task id (default: sampled)")] = None,
    seed: Annotated[int, typer.Option(help="reset seed")] = 0,
    split: Annotated[str, typer.Option(help="train, test or all")] = "train",
    max_steps: Annotated[int, typer.Option(help="step budget", min=1)] = 20,
) -> None:
    """Play an episode in the terminal: type actions like CLICK(3) or INPUT(0, "pasta").

    Commands: ':hint' shows the oracle's next action, ':reset' restarts, ':q' quits.
    """
    _line_editing()
    env = open_env(
        env_id, task=task, split=check_split(split), max_steps=max_steps, render_mode="ansi"
    )
    env.reset(seed=seed)
    typer.echo(env.render())
    while True:
        try:
            line = input("action> ").strip()
        except (EOFError, KeyboardInterrupt):
            typer.echo("")
            break
        if line in (":q", ":quit", "quit", "exit"):
            break
        if line == ":hint":
            try:
                typer.echo(f"oracle: {env.unwrapped.oracle_action()}")
            except NotImplementedError as err:
                typer.echo(str(err))
            continue
        if line == ":reset":
            env.reset()
            typer.echo(env.render())
            continue
        if not line:
            continue
        _, reward, terminated, truncated, info = env.step(line)
        if not info["action_valid"]:
            typer.echo(f"invalid action: {info['action_error']}")
        else:
            typer.echo(f"-> {info['action_description']}")
        typer.echo(env.render())
        if terminated or truncated:
            outcome = "success" if info["success"] else "failure"
            typer.echo(f"episode over ({outcome}, reward {reward:g}, {info['step']} steps)")
            break
    env.close()


def _line_editing() -> None:
    """Arrow keys, line editing and history for ``input()`` where readline exists."""
    import contextlib

    with contextlib.suppress(ImportError):  # Windows has no readline; input() still works
        import readline  # noqa: F401  (importing it is what turns editing on)


@app.command()
def bench(
    out: Annotated[Path, typer.Option(help="JSON report path")] = Path(
        "benchmarks/results/bench_envs.json"
    ),
    steps: Annotated[int, typer.Option(help="text-only steps per id", min=1)] = 20_000,
    screenshot_steps: Annotated[int, typer.Option(help="screenshot steps per id", min=1)] = 2_000,
    ids: Annotated[list[str] | None, typer.Option("--id", help="ids to run (default: all)")] = None,
    miniwob: Annotated[
        bool, typer.Option("--miniwob", help="MiniWoB++ against raw miniwob instead (browser)")
    ] = False,
    episodes: Annotated[int, typer.Option(help="--miniwob: expert episodes per task", min=1)] = 20,
    webshop: Annotated[
        bool,
        typer.Option(
            "--webshop", help="WebShop: 100k catalog+index build, search p50, index memory"
        ),
    ] = False,
    alfworld: Annotated[
        bool,
        typer.Option("--alfworld", help="ALFWorld against raw alfworld on the same games"),
    ] = False,
    games: Annotated[
        int, typer.Option(help="--alfworld: games (one per task type first)", min=1)
    ] = 6,
    generation: Annotated[
        bool,
        typer.Option(
            "--generation",
            help="TransformersLLM tokens/s: generate() vs the static-cache loop, batch 1/8/64",
        ),
    ] = False,
) -> None:
    """Measure steps/s and resets/s of every id beside CartPole-v1; write JSON. With
    ``--miniwob``: gui-gym's MiniWoB++ env against raw miniwob on the same tasks. With
    ``--webshop``: WebShop's build, search and env speed, and its baselines' scores. With
    ``--alfworld``: GuiGym/ALFWorld-v0 against raw alfworld on the same games and commands.
    With ``--generation``: tokens/s of TransformersLLM's generation paths on a small model on
    CPU (``benchmarks/bench_generation.py`` has the GPU options)."""
    import gui_gym

    if miniwob + webshop + alfworld + generation > 1:
        raise UsageError(
            "--miniwob, --webshop, --alfworld and --generation are separate benchmarks: give one"
        )
    for env_id in ids or []:
        check_env_id(env_id, allowed=list(gui_gym.ENV_IDS))
    output_file(out)
    if generation:
        from gui_gym.cli.bench import generation as bench_generation

        if out == Path("benchmarks/results/bench_envs.json"):
            out = Path("benchmarks/results/bench_generation.json")
        report = bench_generation.run(out)
        typer.echo(bench_generation.format_report(report))
        typer.echo(f"written to {out}")
        return
    if webshop:
        from gui_gym.cli.bench import webshop as bench_webshop

        if out == Path("benchmarks/results/bench_envs.json"):
            out = Path("benchmarks/results/bench_webshop.json")
        report = bench_webshop.run(out, env_steps=steps)
        typer.echo(bench_webshop.format_report(report))
        typer.echo(f"written to {out}")
        return
    if alfworld:
        from gui_gym.cli.bench import alfworld as bench_alfworld

        if out == Path("benchmarks/results/bench_envs.json"):
            out = Path("benchmarks/results/bench_alfworld.json")
        report = bench_alfworld.run(out, games=games, steps=min(steps, 200))
        typer.echo(bench_alfworld.format_report(report))
        typer.echo(f"written to {out}")
        return
    if miniwob:
        from gui_gym.cli.bench import miniwob as bench_miniwob

        if out == Path("benchmarks/results/bench_envs.json"):
            out = Path("benchmarks/results/bench_miniwob.json")
        report = bench_miniwob.run(bench_miniwob.DEFAULT_TASKS, episodes, out=out)
        typer.echo(bench_miniwob.format_report(report))
        typer.echo(f"written to {out}")
        return
    from gui_gym.cli.bench.envs import format_report, run

    report = run(ids, steps, screenshot_steps, out=out)
    typer.echo(format_report(report))
    typer.echo(f"written to {out}")
