"""Commands that build or inspect reward models: train-prm, label, train-progress, milestones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from gui_gym.cli._common import (
    NoProgressOption,
    UsageError,
    app,
    check_device,
    check_env_id,
    choose,
    existing_dir,
    existing_file,
    model_folder,
    output_dir,
    output_file,
    unknown,
)


@app.command("train-prm")
def train_prm_cmd(
    out: Annotated[Path, typer.Option(help="run folder: data/, checkpoint/, model/, metrics.json")],
    env_id: Annotated[
        list[str] | None, typer.Option("--env-id", help="envs to collect steps from (repeat)")
    ] = None,
    data: Annotated[
        Path | None, typer.Option(help="labelled steps (JSONL) instead of collecting them")
    ] = None,
    replay_dataset: Annotated[
        list[Path] | None,
        typer.Option(
            "--replay-dataset",
            help="also collect single-step states from an expert dataset (gui-gym convert or "
            "record output; repeat)",
        ),
    ] = None,
    max_tasks: Annotated[
        int | None, typer.Option(help="tasks per env (default: all)", min=1)
    ] = None,
    random_rollouts: Annotated[int, typer.Option(help="random rollouts per task", min=0)] = 2,
    noisy_rollouts: Annotated[
        int,
        typer.Option(
            help="noisy-expert rollouts per task: their states get the proposable actions as "
            "negatives (the data a best-of-N verifier needs)",
            min=0,
        ),
    ] = 0,
    noisy_p: Annotated[
        float, typer.Option(help="expert probability of the noisy rollouts", min=0, max=1)
    ] = 0.4,
    proposals_per_state: Annotated[
        int, typer.Option(help="wrong proposable actions labelled per noisy-rollout state", min=0)
    ] = 3,
    pair_leftovers: Annotated[
        bool,
        typer.Option(
            "--pair-leftovers",
            help="after balancing each action type, pair the leftovers across types",
        ),
    ] = False,
    eval_fraction: Annotated[
        float, typer.Option(help="share of tasks held out", min=0, max=1)
    ] = 0.2,
    model: Annotated[
        str | None,
        typer.Option(
            help="a model name (gui-gym models), a causal LM folder (safetensors) or a .gguf "
            "file; default: tiny GPT-2"
        ),
    ] = None,
    positive_token: Annotated[str, typer.Option(help="positive label token")] = " True",
    negative_token: Annotated[str, typer.Option(help="negative label token")] = " False",
    rationale: Annotated[
        bool, typer.Option("--rationale", help="train the rationale-then-label variant")
    ] = False,
    vocab_size: Annotated[
        int, typer.Option(help="tiny model: BPE vocabulary size", min=300)
    ] = 1024,
    n_layer: Annotated[int, typer.Option(help="tiny model: layers", min=1)] = 2,
    n_embd: Annotated[int, typer.Option(help="tiny model: width", min=8)] = 64,
    max_length: Annotated[
        int | None,
        typer.Option(help="tokens per example (default: 384 tiny model, 2048 --model)", min=16),
    ] = None,
    epochs: Annotated[int, typer.Option(help="passes over the data", min=1)] = 2,
    batch_size: Annotated[int, typer.Option(help="steps per update (the paper's 32)", min=1)] = 32,
    keep_best: Annotated[
        str,
        typer.Option(
            help="none (the paper's: the last epoch), or keep the epoch with the best "
            "held-out auc or accuracy (ours)"
        ),
    ] = "none",
    lr_schedule: Annotated[
        str, typer.Option(help="constant (the paper's) or linear (decay to 0 over the run)")
    ] = "constant",
    lr: Annotated[
        float | None,
        typer.Option(
            help="AdamW learning rate (default: 2e-3 tiny model, 1e-5 --model)",
            min=0,
        ),
    ] = None,
    prompt_lm_weight: Annotated[
        float | None,
        typer.Option(
            help="next-token loss on the prompt (default: 0.5 for the tiny model, else 0)", min=0
        ),
    ] = None,
    device: Annotated[str | None, typer.Option(help="cpu, cuda, ... (default: cpu)")] = None,
    seed: Annotated[int, typer.Option(help="seed of data, split and init")] = 0,
    dtype: Annotated[
        str,
        typer.Option(
            help="auto (bf16 autocast where the device has native bf16), float32, bfloat16"
        ),
    ] = "auto",
    resume: Annotated[bool, typer.Option(help="continue from out/checkpoint")] = True,
    no_progress: NoProgressOption = False,
) -> None:
    """Train a GUI-Shepherd process reward model on labelled steps (SFT on the label token).

    Steps are collected from the envs' train splits (expert actions and milestone-reaching
    actions positive; perturbations and failed random steps negative), deduplicated, split by
    task and balanced; reruns reuse out/data and resume from out/checkpoint.
    """
    from rich.console import Console
    from rich.table import Table

    import gui_gym

    output_dir(out)
    for listed in env_id or []:
        check_env_id(listed, allowed=list(gui_gym.ENV_IDS))
    if data is not None:
        existing_file(data, "--data")
    unshot: list[Path] = []  # datasets with a step without a recorded screenshot
    for folder in replay_dataset or []:
        from gui_gym.envs.replay import DatasetError, ExpertDataset

        try:
            loaded = ExpertDataset.load(existing_dir(folder, "--replay-dataset"))
        except DatasetError as err:
            raise UsageError(f"--replay-dataset: {err}") from None
        if any(s.screenshot is None for t in loaded.trajectories for s in t.steps):
            unshot.append(folder)
    if model is not None:
        model = model_folder(model, "--model")  # type: ignore[assignment]
        from gui_gym.models.prm.vision_prm import has_processor

        if has_processor(model):  # GUI-Shepherd's VLM PRM: steps with screenshots
            for given, what in ((rationale, "--rationale"), (data is not None, "--data")):
                if given:
                    raise UsageError(
                        f"{what} is not for a vision-language --model: its steps come from "
                        "--env-id or --replay-dataset with screenshots, and it learns the "
                        "label alone"
                    )
            if unshot:
                raise UsageError(
                    f"--replay-dataset {unshot[0]} has steps without screenshots; a "
                    "vision-language --model needs one recorded with --screenshots"
                )
    choose(keep_best, ("auc", "accuracy", "none"), "--keep-best")
    choose(lr_schedule, ("constant", "linear"), "--lr-schedule")
    check_device(device)
    from gui_gym.models.llm.precision import DTYPES

    choose(dtype, DTYPES, "--dtype")
    if not eval_fraction < 1:
        raise UsageError(
            f"--eval-fraction must be below 1 (some tasks must train), got {eval_fraction}"
        )
    if lr is not None and not lr > 0:
        raise UsageError(f"--lr must be positive, got {lr}")
    if not positive_token or not negative_token or positive_token == negative_token:
        raise UsageError("--positive-token and --negative-token must be two different tokens")
    from gui_gym.train.prm import PRMTrainConfig, run_training
    from gui_gym.train.trainer import TrainingDiverged

    try:
        report = run_training(
            out,
            env_ids=env_id
            if env_id is not None
            else ([] if replay_dataset else ["GuiGym/WikiHow-v0"]),
            data=data,
            replay_datasets=replay_dataset or [],
            max_tasks=max_tasks,
            random_rollouts=random_rollouts,
            noisy_rollouts=noisy_rollouts,
            noisy_p=noisy_p,
            proposals_per_state=proposals_per_state,
            pair_leftovers=pair_leftovers,
            eval_fraction=eval_fraction,
            model=model,
            positive_token=positive_token,
            negative_token=negative_token,
            rationale=rationale,
            vocab_size=vocab_size,
            n_layer=n_layer,
            n_embd=n_embd,
            max_length=max_length or (384 if model is None else 2048),
            device=device,
            config=PRMTrainConfig(
                epochs=epochs,
                batch_size=batch_size,
                keep_best=None if keep_best == "none" else keep_best,
                lr_schedule=lr_schedule,
                lr=lr or (2e-3 if model is None else 1e-5),
                seed=seed,
                dtype=dtype,
                # a model trained from scratch must also learn to read (docs/prm.md)
                prompt_lm_weight=(0.5 if model is None else 0.0)
                if prompt_lm_weight is None
                else prompt_lm_weight,
            ),
            resume=resume,
            progress=not no_progress,
        )
    except TrainingDiverged as err:  # one line; the run folder and its checkpoint stay
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    table = Table(title=f"PRM eval ({report['data']['eval']} held-out steps)")
    for column in ("step", "n", "accuracy", "AUC", "F1"):
        table.add_column(column, justify="right")
    ev = report["eval"]
    rows = [*ev.get("by_position", {}).items(), ("all", ev)] if ev.get("n") else []
    for name, stats in rows:
        table.add_row(
            name,
            str(stats["n"]),
            f"{stats['accuracy']:.3f}",
            "-" if stats["auc"] != stats["auc"] else f"{stats['auc']:.3f}",
            f"{stats['f1']:.3f}",
        )
    Console().print(table)
    typer.echo(f"model written to {out / 'model'}; metrics in {out / 'metrics.json'}")


@app.command("label")
def label_cmd(
    trajectories: Annotated[Path, typer.Option(help="trajectories (JSONL, e.g. from eval/record)")],
    out: Annotated[Path, typer.Option(help="labelled trajectories (JSONL), written atomically")],
    method: Annotated[
        str, typer.Option(help="lcs (ProgRM Soft-LCS recipes) or env (env milestones)")
    ] = "lcs",
    theta: Annotated[
        float, typer.Option(help="lcs: grouping threshold theta_L (Eq. 3)", min=0, max=1)
    ] = 0.6,
    epsilon: Annotated[
        float, typer.Option(help="lcs: weight of two DO_NOTHING (Eq. 9)", min=0, max=1)
    ] = 0.4,
    embedder: Annotated[
        str, typer.Option(help="lcs: text similarity, minilm (SBERT) or hashing (no model)")
    ] = "minilm",
    env_id: Annotated[
        str | None,
        typer.Option(help="env: id whose suite gives milestone totals (default: the file's)"),
    ] = None,
    no_progress: NoProgressOption = False,
) -> None:
    """Label every step of recorded trajectories with ProgRM progress (Sec. 2.2).

    ``lcs`` groups each task's successful trajectories, extracts recipes and labels key steps
    kappa/|L|; ``env`` uses the steps at which env milestones were reached. Each output line
    is the trajectory plus a "progress" record (labels, key steps, a reason per label).
    """
    import time
    import warnings

    from gui_gym.core.progress import progress_bar
    from gui_gym.core.trajectory import read_trajectories
    from gui_gym.rewards.progress import label_env, label_lcs, write_labeled_trajectories

    choose(method, ("lcs", "env"), "--method")
    choose(embedder, ("minilm", "hashing"), "--embedder")
    existing_file(trajectories, "--trajectories")
    output_file(out)
    if env_id is not None:
        check_env_id(env_id)
    try:
        data = list(read_trajectories(trajectories))
    except ValueError as err:  # not a trajectories file: the reader names the line
        raise UsageError(str(err)) from None
    if not data:
        raise UsageError(f"{trajectories} holds no trajectories")
    start = time.perf_counter()
    if method == "lcs":
        from gui_gym.models.embeddings import default_embedder
        from gui_gym.rewards.lcs import StepSimilarity

        similarity = StepSimilarity(default_embedder(embedder), epsilon=epsilon)
        labels = label_lcs(
            data,
            similarity,
            theta=theta,
            progress=lambda it: progress_bar(
                list(it), enabled=not no_progress, desc="label", unit="task"
            ),
        )
    else:
        from gui_gym.models.progress import MilestoneProgress

        totals = None
        source = env_id or data[0].env_id
        try:
            totals = MilestoneProgress.from_env_id(source).totals
        except Exception as err:  # an unregistered id: fall back to observed counts, loudly
            if env_id is not None:
                raise UsageError(f"cannot read milestone totals of {env_id}: {err}") from None
            warnings.warn(
                f"no milestone totals from {source!r} ({err}); using the most milestones "
                f"reached per task",
                stacklevel=1,
            )
        labels = label_env(data, totals)
    seconds = time.perf_counter() - start
    write_labeled_trajectories(out, data, labels)
    steps = sum(len(t.steps) for t in data)
    keys = sum(len(lab.key_steps) for lab in labels)
    tasks = len({t.task_id for t in data})
    typer.echo(
        f"labelled {len(data)} trajectories ({steps} steps, {tasks} tasks) by {method} in "
        f"{seconds:.2f} s; {keys} key steps; written to {out}"
    )


@app.command("train-progress")
def train_progress_cmd(
    labels: Annotated[Path, typer.Option(help="labelled trajectories from `gui-gym label`")],
    out: Annotated[Path, typer.Option(help="run folder: checkpoints/, model/, metrics.json")],
    kind: Annotated[
        str, typer.Option(help="progrm (progress labels) or orm (final-step success only)")
    ] = "progrm",
    eval_labels: Annotated[
        Path | None, typer.Option("--eval", help="labelled trajectories scored each epoch")
    ] = None,
    backbone: Annotated[
        str,
        typer.Option(
            help="tiny (GPT-2 from scratch), or a pretrained model: a name (gui-gym models), "
            "a folder or a .gguf file"
        ),
    ] = "tiny",
    epochs: Annotated[int, typer.Option(help="passes over the data", min=1)] = 3,
    batch_size: Annotated[int, typer.Option(help="examples per update", min=1)] = 16,
    lr: Annotated[float, typer.Option(help="AdamW learning rate (betas 0.9, 0.95)")] = 3e-4,
    max_length: Annotated[int, typer.Option(help="tokens per state", min=16)] = 384,
    vocab_size: Annotated[int, typer.Option(help="tiny: word vocabulary size", min=16)] = 4000,
    hidden: Annotated[int, typer.Option(help="tiny: width", min=8)] = 64,
    layers: Annotated[int, typer.Option(help="tiny: layers", min=1)] = 2,
    balance: Annotated[bool, typer.Option(help="progrm: balance success/failure steps 1:1")] = True,
    checkpoint_every: Annotated[
        int, typer.Option(help="also checkpoint every N steps (0: per epoch only)", min=0)
    ] = 0,
    seed: Annotated[int, typer.Option(help="seed of init, order and balancing")] = 0,
    dtype: Annotated[
        str,
        typer.Option(
            help="auto (bf16 autocast where the device has native bf16), float32, bfloat16"
        ),
    ] = "auto",
    device: Annotated[str | None, typer.Option(help="cpu, cuda, ... (default: auto)")] = None,
    resume: Annotated[bool, typer.Option(help="continue from out/checkpoints")] = False,
    no_progress: NoProgressOption = False,
) -> None:
    """Train a ProgRM progress model (backbone + MLP + sigmoid, BCE; Sec. 2.3) or the ORM
    baseline; checkpoints are safetensors, and --resume continues an interrupted run."""
    from gui_gym.core.trajectory import atomic_write_text
    from gui_gym.rewards.progress import read_labeled_trajectories
    from gui_gym.train.progress_model import ProgressTrainConfig, fit_progress_model

    choose(kind, ("progrm", "orm"), "--kind")
    existing_file(labels, "--labels")
    if eval_labels is not None:
        existing_file(eval_labels, "--eval")
    if backbone != "tiny":
        backbone = str(model_folder(backbone, "--backbone"))
    output_dir(out)
    check_device(device)
    from gui_gym.models.llm.precision import DTYPES

    choose(dtype, DTYPES, "--dtype")
    if not lr > 0:
        raise UsageError(f"--lr must be positive, got {lr}")
    need = kind == "progrm"
    try:
        train_t, train_l = read_labeled_trajectories(labels, require_labels=need)
        eval_t, eval_l = (
            read_labeled_trajectories(eval_labels, require_labels=need)
            if eval_labels is not None
            else (None, None)
        )
        config = ProgressTrainConfig(
            epochs=epochs,
            batch_size=batch_size,
            lr=lr,
            seed=seed,
            checkpoint_every=checkpoint_every,
            dtype=dtype,
        )
    except ValueError as err:
        raise UsageError(str(err)) from None
    from gui_gym.train.trainer import TrainingDiverged

    try:
        model, result = fit_progress_model(
            train_t,
            train_l if need else None,  # type: ignore[arg-type]
            kind=kind,
            backbone=backbone,
            config=config,
            eval_trajectories=eval_t,
            eval_labels=eval_l if need else None,  # type: ignore[arg-type]
            out=out,
            balance=balance,
            max_length=max_length,
            vocab_size=vocab_size,
            hidden=hidden,
            layers=layers,
            resume=resume,
            progress=not no_progress,
            device=device,
        )
    except TrainingDiverged as err:  # one line; the run folder and its checkpoint stay
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    metrics = {"kind": kind, "global_step": result.global_step, "epochs": result.epochs}
    atomic_write_text(out / "metrics.json", json.dumps(metrics, indent=2) + "\n")
    for record in result.epochs:
        line = f"epoch {int(record['epoch'])}: train loss {record['train_loss']:.4f}"
        if "eval_mae" in record:
            line += f", eval loss {record['eval_loss']:.4f}, eval MAE {record['eval_mae']:.4f}"
        typer.echo(line)
    typer.echo(f"model written to {out / 'model'}; metrics in {out / 'metrics.json'}")


@app.command("milestones")
def milestones_cmd(
    store: Annotated[Path, typer.Argument(help="a milestone store (JSON) from MilestoneWrapper")],
    task: Annotated[str | None, typer.Option(help="one task key (default: every task)")] = None,
    history: Annotated[
        bool, typer.Option("--history", help="every version, oldest first, not just the current")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON instead of text")] = False,
) -> None:
    """Show the milestones ADMIRE learned: the current version of each task's milestones in a
    ``MilestoneWrapper`` store, or their whole refinement history."""
    from gui_gym.rewards.milestone_store import MilestoneStore

    existing_file(store, "STORE")
    try:
        milestones = MilestoneStore(store)
        keys = milestones.task_ids()
    except ValueError as err:  # not a store, or a broken one: say so, never rewrite it
        raise UsageError(str(err)) from None
    if task is not None:
        if task not in keys:
            raise unknown(f"task in {store}:", task, keys)
        keys = [task]
    report = {}
    for key in keys:
        versions = milestones.history(key)
        shown = versions if history else versions[-1:]
        report[key] = {
            "instruction": milestones.instruction(key),
            "versions": [v.to_dict() for v in shown],
        }
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    for key, entry in report.items():
        typer.echo(f"{key}" + (f"  ({entry['instruction']})" if entry["instruction"] else ""))
        for v in entry["versions"]:
            made = f"{v['kind']} by {v['generator']}" if v["generator"] else v["kind"]
            typer.echo(f"  v{v['version']} {made} {v['created']}".rstrip())
            for i, m in enumerate(v["milestones"], 1):
                typer.echo(f"    {i}. {m}")
    typer.echo(f"{len(report)} task(s) in {store}")
