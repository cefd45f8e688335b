"""The ``gui-gym`` command: list, play, eval and bench.

Heavy imports happen inside each command, so ``gui-gym --help`` is instant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

app = typer.Typer(
    help="GUI-agent benchmarks as Gymnasium environments.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _parse_kwargs(pairs: list[str] | None) -> dict[str, Any]:
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
            table.add_row(
                env_id, f"{len(suite)} templates", str(len(suite)), str(len(suite)), f"apps: {apps}"
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


@app.command("eval")
def eval_cmd(
    env_id: Annotated[str, typer.Argument(help="e.g. GuiGym/WikiHow-v0")],
    agent: Annotated[
        str,
        typer.Option(help="oracle, random, or random:done=P (declares DONE with probability P)"),
    ] = "oracle",
    episodes: Annotated[
        int | None, typer.Option(help="episodes (default: every task once)")
    ] = None,
    split: Annotated[str, typer.Option(help="train, test or all")] = "test",
    category: Annotated[str | None, typer.Option(help="restrict to one category")] = None,
    seed: Annotated[int, typer.Option(help="base seed")] = 0,
    out: Annotated[
        Path | None, typer.Option(help="summary JSON (episodes stream beside it; reruns resume)")
    ] = None,
    env_arg: Annotated[
        list[str] | None, typer.Option("--env-arg", help="extra gym.make key=value")
    ] = None,
    no_progress: Annotated[
        bool, typer.Option("--no-progress", help="hide the progress bar")
    ] = False,
) -> None:
    """Evaluate a built-in agent over a split and print a summary table."""
    from rich.console import Console
    from rich.table import Table

    import gui_gym  # noqa: F401
    from gui_gym.evaluation import evaluate

    kwargs = {
        "split": split,
        **({"category": category} if category else {}),
        **_parse_kwargs(env_arg),
    }
    summary, _ = evaluate(
        env_id,
        agent,
        episodes=episodes,
        seed=seed,
        out=out,
        env_kwargs=kwargs,
        progress=not no_progress,
    )
    table = Table(title=f"{agent} on {env_id} ({split})")
    for column in ("category", "episodes", "success", "steps", "reward", "invalid"):
        table.add_column(column, justify="right")
    rows = [*summary.per_category.items(), ("all", summary.to_dict())]
    for name, stats in rows:
        table.add_row(
            name,
            str(int(stats["episodes"])),
            f"{stats['success_rate']:.1%}",
            f"{stats['mean_steps']:.1f}",
            f"{stats['mean_reward']:.3f}",
            f"{stats['invalid_action_rate']:.1%}",
        )
    Console().print(table)
    if out is not None:
        typer.echo(f"results written to {out}")


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


def main() -> None:
    app()


if __name__ == "__main__":
    main()
