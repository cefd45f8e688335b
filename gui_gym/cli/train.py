"""``gui-gym sft``: supervised fine-tuning on an expert dataset (the RL trainers join here)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gui_gym.cli._common import UsageError, app, check_device, choose, existing_dir, output_dir


@app.command("sft")
def sft_cmd(
    dataset: Annotated[Path, typer.Option(help="expert dataset folder (gui-gym record/convert)")],
    model: Annotated[Path, typer.Option(help="local Hugging Face causal-LM folder to start from")],
    out: Annotated[Path, typer.Option(help="output folder (checkpoints inside; reruns resume)")],
    prompt: Annotated[str, typer.Option(help="the agent's prompt format")] = "default",
    history: Annotated[int, typer.Option(help="history turns in each prompt")] = 8,
    epochs: Annotated[int, typer.Option(help="passes over the data")] = 3,
    lr: Annotated[float, typer.Option(help="AdamW learning rate")] = 1e-4,
    batch_size: Annotated[int, typer.Option(help="examples per forward pass")] = 4,
    grad_accum: Annotated[int, typer.Option(help="forward passes per optimizer step")] = 1,
    max_length: Annotated[
        int | None, typer.Option(help="drop longer examples (default: the model's context)")
    ] = None,
    lora: Annotated[
        bool, typer.Option("--lora", help="train a LoRA adapter (merged at the end)")
    ] = False,
    lora_r: Annotated[int, typer.Option(help="LoRA rank")] = 8,
    eval_fraction: Annotated[
        float, typer.Option(help="share of trajectories held out for step accuracy")
    ] = 0.1,
    checkpoint_every: Annotated[
        int, typer.Option(help="optimizer steps between checkpoints (0: each epoch)")
    ] = 0,
    seed: Annotated[int, typer.Option(help="seed of the split, shuffle and dropout")] = 0,
    device: Annotated[
        str | None, typer.Option(help="cpu or cuda (default: cuda if present)")
    ] = None,
    no_progress: Annotated[
        bool, typer.Option("--no-progress", help="hide the progress bar")
    ] = False,
) -> None:
    """Fine-tune a model on expert trajectories in the LLM agent's own prompt format (loss on
    the completion tokens only); the output folder works with ``gui-gym eval --agent llm``."""
    from gui_gym.agents.prompts import PROMPTS
    from gui_gym.envs.replay import DatasetError
    from gui_gym.train.sft import SFTConfig, train_sft

    choose(prompt, sorted(PROMPTS), "prompt")
    existing_dir(dataset, "--dataset")
    existing_dir(model, "--model")
    if not (model / "config.json").is_file():
        raise UsageError(f"--model {model}: not a Hugging Face model folder (no config.json)")
    output_dir(out, "--out")
    check_device(device)
    config = SFTConfig(
        epochs=epochs,
        lr=lr,
        batch_size=batch_size,
        grad_accum=grad_accum,
        max_length=max_length,
        prompt=prompt,
        history=history,
        eval_fraction=eval_fraction,
        seed=seed,
        lora=lora,
        lora_r=lora_r,
        checkpoint_every=checkpoint_every,
    )
    try:
        config.check()
        report = train_sft(dataset, model, out, config, device=device, progress=not no_progress)
    except (DatasetError, ValueError) as err:
        raise UsageError(str(err)) from None
    typer.echo(
        f"trained on {report.train_examples} steps ({report.dropped_too_long} too long, left "
        f"out) for {report.optimizer_steps} optimizer steps; final loss "
        f"{report.losses[-1]:.4f}"
    )
    if report.step_accuracy is not None:
        typer.echo(
            f"held-out step accuracy: {report.step_accuracy_before:.1%} before, "
            f"{report.step_accuracy:.1%} after ({report.eval_examples} steps)"
        )
    typer.echo(f"model written to {out}")
