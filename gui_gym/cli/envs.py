"""Commands about the environments: list, play, bench."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gui_gym.cli._common import app


@app.command("list")
def list_envs() -> None:
    """List every registered id with its task counts per split and category."""
    import gymnasium as gym
    from rich.console import Console
    from rich.table import Table

    import gui_gym

    table = Table(title="gui-gym environments")
    for column in ("id", "tasks", "train", "test", "categories"):
        table.add_column(column)
    for env_id in gui_gym.ENV_IDS:
        try:
            env = gym.make(env_id)
        except Exception as err:  # an optional backend may be missing: say so, list the rest
            table.add_row(env_id, "-", "-", "-", f"unavailable: {err}")
            continue
        base = env.unwrapped
        suite = base.suite
        if hasattr(base, "param_split"):
            # Template suites (AndroidWorld): both splits run every template, with parameters
            # from disjoint seed streams.
            apps = ", ".join(suite.categories)
            notes = base.template_notes() if hasattr(base, "template_notes") else ""
            table.add_row(
                env_id,
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
            env_id,
            str(len(suite)),
            str(sum(counts.get("train", {}).values())),
            str(sum(counts.get("test", {}).values())),
            cats,
        )
        env.close()
    from gui_gym.envs.miniwob.catalog import MINIWOB_TASKS

    # Browser-backed ids: listed from the catalog, without starting Chromium.
    table.add_row(
        "GuiGym/MiniWoB-v0 (+ GuiGym/MiniWoB-<task>-v0)",
        f"{len(MINIWOB_TASKS)} tasks",
        "-",
        "-",
        "the miniwob package's pages in headless Chromium; split = miniwob's data mode",
    )
    # Replay ids need an expert dataset (gui-gym record / convert); listed, not made.
    table.add_row(
        "GuiGym/SemiOnlineReplay-v0",
        "per dataset",
        "-",
        "-",
        "UI-S1 semi-online replay of an expert dataset (dataset=DIR)",
    )
    Console().print(table)


@app.command()
def play(
    env_id: Annotated[str, typer.Argument(help="e.g. GuiGym/WikiHow-v0")] = "GuiGym/WikiHow-v0",
    task: Annotated[str | None, typer.Option(help="task id (default: sampled)")] = None,
    seed: Annotated[int, typer.Option(help="reset seed")] = 0,
    split: Annotated[str, typer.Option(help="train, test or all")] = "train",
    max_steps: Annotated[int, typer.Option(help="step budget")] = 20,
) -> None:
    """Play an episode in the terminal: type actions like CLICK(3) or INPUT(0, "pasta").

    Commands: ':hint' shows the oracle's next action, ':reset' restarts, ':q' quits.
    """
    import gymnasium as gym

    import gui_gym  # noqa: F401

    env = gym.make(env_id, task=task, split=split, max_steps=max_steps, render_mode="ansi")
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


@app.command()
def bench(
    out: Annotated[Path, typer.Option(help="JSON report path")] = Path(
        "benchmarks/results/bench_envs.json"
    ),
    steps: Annotated[int, typer.Option(help="text-only steps per id")] = 20_000,
    screenshot_steps: Annotated[int, typer.Option(help="screenshot steps per id")] = 2_000,
    ids: Annotated[list[str] | None, typer.Option("--id", help="ids to run (default: all)")] = None,
    miniwob: Annotated[
        bool, typer.Option("--miniwob", help="MiniWoB++ against raw miniwob instead (browser)")
    ] = False,
    episodes: Annotated[int, typer.Option(help="--miniwob: expert episodes per task")] = 20,
    webshop: Annotated[
        bool,
        typer.Option(
            "--webshop", help="WebShop: 100k catalog+index build, search p50, index memory"
        ),
    ] = False,
) -> None:
    """Measure steps/s and resets/s of every id beside CartPole-v1; write JSON. With
    ``--miniwob``: gui-gym's MiniWoB++ env against raw miniwob on the same tasks. With
    ``--webshop``: WebShop's build, search and env speed, and its baselines' scores."""
    if webshop:
        from gui_gym.bench import webshop as bench_webshop

        if out == Path("benchmarks/results/bench_envs.json"):
            out = Path("benchmarks/results/bench_webshop.json")
        report = bench_webshop.run(out, env_steps=steps)
        typer.echo(bench_webshop.format_report(report))
        typer.echo(f"written to {out}")
        return
    if miniwob:
        from gui_gym.bench import miniwob as bench_miniwob

        if out == Path("benchmarks/results/bench_envs.json"):
            out = Path("benchmarks/results/bench_miniwob.json")
        report = bench_miniwob.run(bench_miniwob.DEFAULT_TASKS, episodes, out=out)
        typer.echo(bench_miniwob.format_report(report))
        typer.echo(f"written to {out}")
        return
    from gui_gym.bench.envs import format_report, run

    report = run(ids, steps, screenshot_steps, out=out)
    typer.echo(format_report(report))
    typer.echo(f"written to {out}")
