"""``gui-gym train``: RL for LLM agents (GRPO, REINFORCE++, PPO, UI-S1 semi-online, offline
GRPO) from an env id, a reward expression and a model folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gui_gym.cli._common import app, parse_kwargs


@app.command("train")
def train_cmd(
    algo: Annotated[str, typer.Option(help="grpo, reinforce_pp, ppo, semi_online or offline_grpo")],
    env: Annotated[str, typer.Option(help="env id, e.g. GuiGym/WikiHow-v0")],
    model: Annotated[Path, typer.Option(help="policy folder (Hugging Face, safetensors)")],
    reward: Annotated[
        str,
        typer.Option(help="outcome, progress, milestone, prm, judge; e.g. outcome+0.3*milestone"),
    ] = "outcome",
    out: Annotated[Path, typer.Option(help="run folder (checkpoint, model, metrics.jsonl)")] = Path(
        "runs/train"
    ),
    lora: Annotated[bool, typer.Option("--lora", help="train LoRA adapters (peft)")] = False,
    config: Annotated[
        Path | None, typer.Option(help="JSON or TOML file of settings (see --set)")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="a setting name=value (TrainConfig or the algorithm's config); repeatable",
        ),
    ] = None,
    env_arg: Annotated[
        list[str] | None, typer.Option("--env-arg", help="gym.make key=value (split, dataset)")
    ] = None,
    task: Annotated[
        list[str] | None, typer.Option("--task", help="train on this task id; repeatable")
    ] = None,
    prompt: Annotated[str, typer.Option(help="agent prompt (default, progrm, admire, ...)")] = (
        "default"
    ),
    prm_model: Annotated[
        Path | None, typer.Option(help="gui-gym train-prm folder (prm reward, PPO critic)")
    ] = None,
    progress_model: Annotated[
        Path | None, typer.Option(help="ProgRM folder (default: env milestones)")
    ] = None,
    embedder: Annotated[str, typer.Option(help="milestone matching: minilm or hashing")] = (
        "minilm"
    ),
    no_resume: Annotated[
        bool, typer.Option("--no-resume", help="ignore a checkpoint in --out")
    ] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="hide the bar")] = False,
) -> None:
    """Train an LLM agent with RL; a rerun with the same --out resumes from its checkpoint.

    Settings (every hyperparameter, named as the paper names it, with its default cited in
    the docs) come from --config and --set, --set winning.
    """
    from gui_gym.train.runner import load_settings, make_trainer

    try:
        settings = load_settings(config) if config is not None else {}
        settings.update(parse_kwargs(set_))
        settings["out"] = str(out)
        if no_progress:
            settings["progress"] = False
        trainer = make_trainer(
            algo,
            env,
            model=model,
            reward=reward,
            lora=lora,
            settings=settings,
            env_kwargs=parse_kwargs(env_arg),
            tasks=task,
            prompt=prompt,
            prm_model=prm_model,
            progress_model=progress_model,
            embedder=embedder,
            resume=not no_resume,
        )
    except (ValueError, FileNotFoundError, TypeError, KeyError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        typer.echo(f"error: {message}", err=True)
        raise typer.Exit(2) from None
    start = trainer.iteration
    metrics = trainer.train()
    last = metrics[-1] if metrics else (trainer.history[-1] if trainer.history else {})
    typer.echo(
        f"{algo}: iterations {start}..{trainer.iteration}, last success rate "
        f"{last.get('success_rate')}, model in {out / 'model'}"
    )
