"""``gui-gym eval``: agents over a split, or UI-S1 SOP on an expert dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from gui_gym.cli._common import (
    NoProgressOption,
    UsageError,
    app,
    check_agent,
    check_device,
    check_split,
    choose,
    existing_dir,
    model_folder,
    open_env,
    output_file,
    parse_kwargs,
)


@app.command("eval")
def eval_cmd(
    env_id: Annotated[
        str | None, typer.Argument(help="e.g. GuiGym/WikiHow-v0 (not with --sop)")
    ] = None,
    agent: Annotated[
        str,
        typer.Option(
            help="oracle, random, random:done=P (declares DONE with probability P), "
            "webshop-greedy, llm (a local model: --model NAME|DIR|FILE.gguf) or openai (a "
            "server: --base-url URL --model NAME)"
        ),
    ] = "oracle",
    model: Annotated[
        str | None,
        typer.Option(
            help="--agent llm: a model name (gui-gym models; default smollm2-135m-instruct), "
            "a Hugging Face folder or a .gguf file; --agent openai: served model name"
        ),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="--agent openai: API root, e.g. http://localhost:8000/v1")
    ] = None,
    prompt: Annotated[str, typer.Option(help="LLM agents: prompt format")] = "default",
    coordinates: Annotated[
        str,
        typer.Option(
            help="LLM agents: where the model's _XY coordinates live (screen, qwen2_5_vl, "
            "relative_1000)"
        ),
    ] = "screen",
    screenshot: Annotated[
        bool, typer.Option("--screenshot", help="LLM agents: show the screenshot (VLMs)")
    ] = False,
    temperature: Annotated[float, typer.Option(help="LLM agents: sampling temperature")] = 0.0,
    max_new_tokens: Annotated[int, typer.Option(help="LLM agents: longest generation")] = 128,
    device: Annotated[str | None, typer.Option(help="--agent llm: cpu or cuda")] = None,
    num_envs: Annotated[int, typer.Option(help="episodes in flight at once")] = 1,
    workers: Annotated[
        str, typer.Option(help="inline, or process (each env in its own worker process)")
    ] = "inline",
    step_timeout: Annotated[
        float,
        typer.Option(
            help="seconds an env step may take before it counts as hung: its worker is "
            "killed and restarted, its episode infra_error (0: no limit)",
        ),
    ] = 60.0,
    episodes: Annotated[
        int | None, typer.Option(help="episodes (default: every task once)", min=1)
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
    no_progress: NoProgressOption = False,
    sop: Annotated[
        bool,
        typer.Option("--sop", help="UI-S1 Semi-Online Performance on an expert --dataset"),
    ] = False,
    offline: Annotated[
        bool,
        typer.Option(
            "--offline",
            help="AndroidControl-style type and exact match per step on an expert --dataset, "
            "with the high-level goal and with each step's low-level instruction",
        ),
    ] = False,
    dataset: Annotated[
        Path | None, typer.Option(help="--sop: expert dataset folder (gui-gym record/convert)")
    ] = None,
    matcher: Annotated[
        str | None,
        typer.Option(
            help="--sop/--offline: action matcher, loose or strict (default: loose, strict)"
        ),
    ] = None,
    skip_bad: Annotated[
        bool, typer.Option("--skip-bad", help="--sop: skip corrupt records, count them")
    ] = False,
    no_step_accuracy: Annotated[
        bool,
        typer.Option(
            "--no-step-accuracy", help="--sop: stop at the first mismatch (no step accuracy)"
        ),
    ] = False,
) -> None:
    """Evaluate an agent over a split and print a summary table; with ``--sop``, its
    Semi-Online Performance (PG, TSR, Score) on an expert dataset; with ``--offline``, its
    step type and exact match there (high- and low-level instructions)."""
    from rich.console import Console
    from rich.table import Table

    import gui_gym  # noqa: F401
    from gui_gym.runs.evaluate import evaluate, make_llm_agent

    output_file(out)
    if out is not None:  # the episode logs beside the summary (see gui_gym.runs.evaluate, sop)
        for suffix in (".episodes.jsonl", ".high.episodes.jsonl", ".low.episodes.jsonl"):
            output_file(out.with_name(out.name + suffix))
    if sop and offline:
        raise UsageError("--sop and --offline are two evaluations: give one of them")
    if sop or offline:
        mode = "--sop" if sop else "--offline"
        if env_id is not None:
            raise UsageError(f"{mode} replays --dataset DIR: give no env id")
        if agent in ("llm", "openai"):
            raise UsageError(
                f"{mode} runs the built-in agents (oracle, random, random:done=P); evaluate "
                "an LLM agent on an env id, or from Python with gui_gym.runs.sop"
            )
        run: dict[str, Any] = {
            "seed": seed,
            "out": out,
            "skip_bad": skip_bad,
            "progress": not no_progress,
        }
        if sop:
            _eval_sop(dataset, agent, matcher or "loose", run, not no_step_accuracy)
        else:
            _eval_offline(dataset, agent, matcher or "strict", run)
        return
    if env_id is None:
        raise UsageError("give an env id, or --sop/--offline --dataset DIR")
    if matcher is not None:
        raise UsageError("--matcher applies to --sop and --offline only")

    kwargs = {
        "split": check_split(split),
        **({"category": category} if category else {}),
        **({"screenshot": True} if screenshot else {}),
        **parse_kwargs(env_arg),
    }
    choose(workers, ("inline", "process"), "--workers")
    if not 0 <= step_timeout < float("inf"):
        raise UsageError(
            f"--step-timeout must be a number of seconds >= 0 (0: no limit), got {step_timeout}"
        )
    if num_envs < 1:
        raise UsageError(f"--num-envs must be a positive int, got {num_envs}")
    policy: Any = agent
    if agent not in ("llm", "openai"):
        given = [
            name
            for name, value in (
                ("--model", model),
                ("--base-url", base_url),
                ("--prompt", prompt != "default"),
                ("--coordinates", coordinates != "screen"),
                ("--device", device),
            )
            if value
        ]
        if given:
            raise UsageError(
                f"{', '.join(given)} only apply to --agent llm or --agent openai, "
                f"not --agent {agent}"
            )
    else:
        check_device(device)
        if agent == "llm":
            from gui_gym.models.llm.local import DEFAULT_MODEL

            model = str(model_folder(model or DEFAULT_MODEL, "--model"))
        elif not model:
            raise UsageError(f"--agent {agent} needs --model")
        try:
            policy = make_llm_agent(
                agent,
                str(model),
                base_url=base_url,
                prompt=prompt,
                screenshot=screenshot,
                coordinates=coordinates,
                temperature=temperature,
                max_new_tokens=max_new_tokens,
                device=device,
            )
        except (ValueError, OSError) as err:  # not a model folder, an unknown prompt
            raise UsageError(str(err)) from None
        open_env(env_id, **kwargs).close()
    if agent not in ("llm", "openai"):
        # Every argument is checked before the first episode: a mistake is one line, not a
        # traceback after minutes of evaluation.
        probe = open_env(env_id, **kwargs)
        check_agent(agent, probe, seed)
        probe.close()
    try:
        summary, _ = evaluate(
            env_id,
            policy,
            episodes=episodes,
            seed=seed,
            out=out,
            env_kwargs=kwargs,
            progress=not no_progress,
            num_envs=num_envs,
            workers=workers,
            step_timeout=step_timeout or None,
        )
    except ValueError as err:  # a results file of another run
        raise UsageError(str(err)) from None
    table = Table(title=f"{agent} on {env_id} ({split})")
    # Rwd: Mobile-Env's cumulative milestone reward per episode (ProgRM Table 1), where the
    # env reports one
    with_rwd = summary.rwd is not None
    columns = ("category", "episodes", "success", *(("Rwd",) if with_rwd else ()), "steps")
    for column in (*columns, "reward", "invalid"):
        table.add_column(column, justify="right")
    rows = [*summary.per_category.items(), ("all", summary.to_dict())]
    for name, stats in rows:
        rwd = () if not with_rwd else (f"{stats['rwd']:.2f}" if stats["rwd"] is not None else "-",)
        table.add_row(
            name,
            str(int(stats["episodes"])),
            f"{stats['success_rate']:.1%}",
            *rwd,
            f"{stats['mean_steps']:.1f}",
            f"{stats['mean_reward']:.3f}",
            f"{stats['invalid_action_rate']:.1%}",
        )
    Console().print(table)
    if summary.infra_errors:
        typer.echo(
            f"{summary.infra_errors} episode(s) lost to infrastructure (left out of the rates; "
            "rerun with the same --out to run them again)"
        )
    if out is not None:
        typer.echo(f"results written to {out}")


def _replay(
    evaluate: Any, mode: str, dataset: Path | None, agent: str, matcher: str, **kwargs: Any
) -> Any:
    """``evaluate(dataset, agent, matcher=matcher, **kwargs)`` for ``mode`` (``--sop`` or
    ``--offline``) once ``--dataset`` and ``--matcher`` are checked; a bad dataset, agent,
    matcher or --out is a :class:`UsageError`."""
    from gui_gym.envs.replay import DatasetError

    if dataset is None:
        raise UsageError(f"{mode} needs --dataset DIR")
    existing_dir(dataset, "--dataset")
    choose(matcher, ("loose", "strict"), "--matcher")
    try:
        return evaluate(dataset, agent, matcher=matcher, **kwargs)
    except (DatasetError, ValueError) as err:  # a bad dataset, agent, matcher or --out
        raise UsageError(str(err)) from None


def _eval_sop(
    dataset: Path | None, agent: str, matcher: str, run: dict[str, Any], step_accuracy: bool
) -> None:
    """``eval --sop``: SOP of ``agent`` replayed over ``dataset`` (``run``: seed, out,
    skip_bad, progress), printed as a table."""
    from rich.console import Console
    from rich.table import Table

    from gui_gym.runs.sop import evaluate_sop

    summary, _ = _replay(
        evaluate_sop, "--sop", dataset, agent, matcher, step_accuracy=step_accuracy, **run
    )
    table = Table(title=f"SOP of {agent} on {dataset} (matcher {matcher})")
    for column in ("category", "tasks", "PG", "TSR", "Score"):
        table.add_column(column, justify="right")
    rows = [*summary.per_category.items(), ("all", summary.sop.to_dict())]
    for name, stats in rows:
        table.add_row(
            name,
            str(int(stats["tasks"])),
            f"{stats['pg']:.1%}",
            f"{stats['tsr']:.1%}",
            f"{stats['score']:.1%}",
        )
    Console().print(table)
    if summary.step_accuracy is not None:
        typer.echo(f"step accuracy (every mismatch patched): {summary.step_accuracy:.1%}")
    if summary.skipped:
        typer.echo(f"skipped {summary.skipped} bad record(s) (--skip-bad)")
    if summary.failed:
        typer.echo(f"left out {summary.failed} recorded episode(s) whose expert failed")
    if run["out"] is not None:
        typer.echo(f"results written to {run['out']}")


def _eval_offline(dataset: Path | None, agent: str, matcher: str, run: dict[str, Any]) -> None:
    """``eval --offline``: step metrics of ``agent`` on ``dataset`` (``run``: seed, out,
    skip_bad, progress), printed as a table."""
    from rich.console import Console
    from rich.table import Table

    from gui_gym.runs.sop import evaluate_offline

    levels = _replay(evaluate_offline, "--offline", dataset, agent, matcher, **run)
    table = Table(title=f"offline step metrics of {agent} on {dataset} (matcher {matcher})")
    for column in ("instruction", "category", "steps", "type match", "exact match"):
        table.add_column(column, justify="right")
    for level, result in levels.items():
        rows = [*result.per_category.items()]
        rows.append(
            ("all", {"steps": result.steps, "type_match": result.type_match,
                     "exact_match": result.exact_match})
        )  # fmt: skip
        for name, stats in rows:
            table.add_row(
                level,
                name,
                str(int(stats["steps"])),
                f"{stats['type_match']:.1%}",
                f"{stats['exact_match']:.1%}",
            )
    Console().print(table)
    if run["out"] is not None:
        typer.echo(f"results written to {run['out']}")
