"""GUI-Shepherd PRM training: supervised fine-tuning of a causal LM on the label token (Sec. 3,
Eq. 2; App. A.3), its evaluation, and the whole ``gui-gym train-prm`` pipeline.

:func:`train_prm` runs the SFT loop (progress bar, periodic checkpoints with the optimizer
state, exact resume), :func:`evaluate_prm` reports accuracy, AUC and F1 per step position,
:func:`evaluate_ranking` the per-state ranking a best-of-N verifier needs, and
:func:`run_training` collects data (:mod:`gui_gym.train.prm_data`), builds or loads the model
and trains it in one run folder.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gui_gym.core.files import atomic_write_text, recover_folder
from gui_gym.core.progress import progress_bar
from gui_gym.core.trajectory import check_replaceable_folder, errors_naming
from gui_gym.models.prm import TransformersPRM
from gui_gym.rewards.prm import (
    LabelledStep,
    RankingState,
    classification_metrics,
    ranking_metrics,
    source_counts,
)
from gui_gym.train.checkpoint import (
    load_optimizer_state,
    read_checkpoint,
    restore_torch_rng,
    torch_rng_tensors,
    write_checkpoint,
)
from gui_gym.train.prm_data import (
    build_prm_dataset,
    collect_prm_steps,
    collect_replay_steps,
    read_labelled_steps,
    write_labelled_steps,
)

__all__ = [
    "PRMTrainConfig",
    "evaluate_prm",
    "evaluate_ranking",
    "run_training",
    "train_prm",
]


@dataclass
class PRMTrainConfig:
    """Settings of :func:`train_prm`.

    Attributes:
        epochs: Passes over the training steps (the paper trains 2 epochs, App. A.3).
        batch_size: Steps per optimizer update (the paper's global batch of 32, App. A.3).
        lr: AdamW learning rate (constant, as in App. A.3).
        weight_decay: AdamW weight decay.
        rationale_weight: Weight of the next-token loss on rationale tokens (rationale PRMs).
            1.0 is the paper's: its CoT variant is plain SFT on rationale-then-label, the
            label and the rationale counted alike (Sec. 3); smaller values are ours.
        prompt_lm_weight: Weight of a next-token loss on the prompt tokens. 0 for a pretrained
            model; a tiny model trained from scratch needs it to learn to read the prompt at
            all (it stands in for the pretraining GUI-Shepherd's UI-TARS base brings).
        max_grad_norm: Gradient clipping (0 disables it).
        checkpoint_every: Save a resumable checkpoint every this many updates (0: only at the
            end of each epoch).
        eval_batch_size: Queries per forward pass when evaluating.
        keep_best: After each epoch, validate and keep the weights of the best epoch so far;
            the returned PRM is that epoch's (``"auc"`` or ``"accuracy"`` on the eval steps,
            or whatever ``train_prm(select=...)`` measures). None (the paper's: it trains 2
            epochs and uses the result) keeps the last epoch. Ours, as an option: a tiny
            model trained from scratch overfits within a few epochs, so the last epoch is
            often not the best one.
        lr_schedule: ``"constant"`` (the paper's, App. A.3) or ``"linear"`` (decays linearly
            to zero over all updates; a from-scratch model settles better with it).
        seed: Seeds the data order.
        dtype: ``"auto"``: the training forward passes under bf16 autocast (fp32 weights)
            where the device computes bf16 natively (CUDA, or a CPU with AMX-BF16 or
            AVX512-BF16; :mod:`gui_gym.models.llm.precision`); ``"float32"``: never;
            ``"bfloat16"``: always (slow where bf16 is emulated).
    """

    epochs: int = 2
    batch_size: int = 32  # GUI-Shepherd App. A.3: global batch size 32
    lr: float = 5e-4
    weight_decay: float = 0.0
    rationale_weight: float = 1.0  # GUI-Shepherd Sec. 3: SFT on the rationale and the label
    prompt_lm_weight: float = 0.0
    max_grad_norm: float = 1.0
    checkpoint_every: int = 200
    eval_batch_size: int = 32
    keep_best: str | None = None  # GUI-Shepherd App. A.3: the model after 2 epochs
    lr_schedule: str = "constant"
    seed: int = 0
    dtype: str = "auto"

    def __post_init__(self) -> None:
        from gui_gym.models.llm.precision import check_dtype

        check_dtype(self.dtype)
        if self.epochs < 1 or self.batch_size < 1 or self.eval_batch_size < 1:
            raise ValueError("epochs, batch_size and eval_batch_size must be >= 1")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr!r}")
        if self.checkpoint_every < 0:
            raise ValueError(f"checkpoint_every must be >= 0, got {self.checkpoint_every}")
        if self.lr_schedule not in ("constant", "linear"):
            raise ValueError(
                f"lr_schedule must be 'constant' or 'linear', got {self.lr_schedule!r}"
            )
        if self.keep_best not in ("auc", "accuracy", None):
            raise ValueError(f"keep_best must be 'auc', 'accuracy' or None, got {self.keep_best!r}")


def evaluate_prm(
    prm: Any, steps: Sequence[LabelledStep], threshold: float = 0.5, batch_size: int = 256
) -> dict[str, Any]:
    """Score ``steps`` with a text PRM and report accuracy, AUC and F1, overall and per step
    position (:func:`gui_gym.rewards.prm.classification_metrics`)."""
    if not steps:
        return {"n": 0}
    scores = np.concatenate(
        [
            prm.score([s.query for s in steps[i : i + batch_size]])
            for i in range(0, len(steps), batch_size)
        ]
    )
    return classification_metrics(
        [s.label for s in steps], scores, [s.query.step for s in steps], threshold
    )


def evaluate_ranking(
    prm: Any, states: Sequence[RankingState], batch_size: int = 256
) -> dict[str, Any]:
    """Score every candidate of every state with a text PRM and report
    :func:`gui_gym.rewards.prm.ranking_metrics` (per-state top-1 and pairwise ranking)."""
    if not states:
        return {"n_states": 0}
    flat = [q for state in states for q in state.queries]
    scores = np.concatenate(
        [prm.score(flat[i : i + batch_size]) for i in range(0, len(flat), batch_size)]
    )
    per_state = []
    start = 0
    for state in states:
        per_state.append(scores[start : start + len(state.queries)])
        start += len(state.queries)
    return ranking_metrics(states, per_state)


CHECKPOINT_ALGORITHM = "prm"
"""``trainer_state.json``'s ``algorithm`` in the PRM trainer's checkpoints."""


def _parameters(model: Any) -> dict[str, Any]:
    """A detached copy of ``model``'s parameters by name (tied weights once)."""
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def _copy_parameters(model: Any, tensors: dict[str, Any]) -> None:
    """Inverse of :func:`_parameters`."""
    import torch

    with torch.no_grad():
        for name, param in model.named_parameters():
            param.copy_(tensors[name].to(param.device, param.dtype))


def _save_checkpoint(
    prm: TransformersPRM,
    optimizer: Any,
    state: dict[str, Any],
    path: Path,
    best: dict[str, Any] | None = None,
) -> None:
    """Write ``path`` in the trainers' checkpoint format
    (:func:`~gui_gym.train.checkpoint.write_checkpoint`): the PRM's parameters as
    ``prm.<name>`` and, with ``keep_best``, the best epoch's as ``best.<name>``."""
    weights = {f"prm.{n}": p.detach().cpu().contiguous() for n, p in prm.model.named_parameters()}
    for name, tensor in (best or {}).items():
        weights[f"best.{name}"] = tensor.detach().cpu().contiguous()
    check_replaceable_folder(path, "trainer_state.json", "PRM training checkpoint")
    write_checkpoint(
        path,
        weights=weights,
        optimizer=optimizer,
        state={**state, "algorithm": CHECKPOINT_ALGORITHM},
        rng=torch_rng_tensors(),
    )


def _load_checkpoint(
    prm: TransformersPRM, optimizer: Any, path: Path
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Restore a :func:`_save_checkpoint` folder (or one of the previous PRM format) into
    ``prm`` and ``optimizer``, with torch's random streams.

    Returns:
        ``(state, best)``: the trainer state, and the best epoch's parameters or None.

    Raises:
        ValueError: for another trainer's checkpoint or one of another model.
    """
    state, weights, rng = read_checkpoint(path)
    if "algorithm" not in state and "cpu" in rng:
        weights, rng = _from_previous_format(prm.model, path, weights, rng)
    elif state.get("algorithm") != CHECKPOINT_ALGORITHM:
        raise ValueError(
            f"{path} is a {state.get('algorithm')!r} checkpoint, not a PRM one; train with "
            "--no-resume or another --out"
        )
    own = [n for n, _ in prm.model.named_parameters()]
    saved = sorted(k.removeprefix("prm.") for k in weights if k.startswith("prm."))
    if sorted(own) != saved:
        missing, unexpected = sorted(set(own) - set(saved)), sorted(set(saved) - set(own))
        raise ValueError(
            f"checkpoint {path} does not fit this model (missing {missing[:5]}, "
            f"unexpected {unexpected[:5]}); train with --no-resume or another --out"
        )
    _copy_parameters(prm.model, {n: weights[f"prm.{n}"] for n in own})
    best = None
    if any(k.startswith("best.") for k in weights):
        best = {n: weights[f"best.{n}"] for n in own}
    load_optimizer_state(optimizer, path)
    restore_torch_rng(rng)
    return state, best


def _from_previous_format(
    model: Any, path: Path, weights: dict[str, Any], rng: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(weights, rng)`` of a PRM checkpoint written before the trainers shared one format,
    as :func:`_load_checkpoint` reads them.

    Those had the same files (the optimizer's already in today's layout) but the model's
    whole state dict unprefixed in ``weights.safetensors`` (a tied weight under one of its
    names), the best epoch's in ``best.safetensors``, and torch's CPU stream as ``cpu``.
    """
    from safetensors.torch import load_file

    aliases: dict[int, list[str]] = {}
    for name, param in model.named_parameters(remove_duplicate=False):
        aliases.setdefault(id(param), []).append(name)
    out = {}
    for name, param in model.named_parameters():
        found = next((a for a in aliases[id(param)] if a in weights), None)
        if found is not None:
            out[f"prm.{name}"] = weights[found]
    best_file = path / "best.safetensors"
    if best_file.is_file():
        with errors_naming(best_file):
            best = load_file(str(best_file))
        out.update({f"best.{n}": best[n] for n, _ in model.named_parameters() if n in best})
    return out, {"torch_cpu": rng["cpu"]}


def train_prm(
    prm: TransformersPRM,
    train: Sequence[LabelledStep],
    eval_steps: Sequence[LabelledStep] = (),
    *,
    config: PRMTrainConfig | None = None,
    out_dir: str | Path | None = None,
    resume: bool = True,
    progress: bool = True,
    max_updates: int | None = None,
    on_epoch: Callable[[int, dict[str, Any]], None] | None = None,
    select: Callable[[TransformersPRM], float] | None = None,
) -> dict[str, Any]:
    """Supervised fine-tuning of ``prm`` on labelled steps (GUI-Shepherd Eq. 2).

    Each update: a batch of steps, cross-entropy over the two label tokens at the label
    position, plus ``rationale_weight`` times the next-token loss on the rationale when the
    PRM uses rationales; AdamW at a constant learning rate. After each epoch the eval steps
    are scored (accuracy, AUC, F1 per step position). With ``config.keep_best`` the weights
    of the epoch with the best validation figure are kept and restored at the end (the
    report's ``best_epoch``); ``select``, when given, is that figure (higher is better), e.g.
    per-state ranking accuracy on held-out states
    (:func:`evaluate_ranking`), which tracks best-of-N better than step accuracy does.

    With ``out_dir``: a checkpoint in the trainers' one format
    (:func:`gui_gym.train.checkpoint.write_checkpoint`: the parameters, and the best epoch's
    with ``keep_best``, the AdamW state, torch's random streams, the position in the data
    order) is written atomically to ``out_dir/checkpoint`` every ``checkpoint_every`` updates
    and at each epoch end, and with ``resume=True`` a rerun continues from it, reproducing the
    uninterrupted run. A checkpoint of the previous PRM format resumes too. The final PRM is saved to
    ``out_dir/model`` and the report to ``out_dir/metrics.json``.

    Args:
        prm: The PRM to train (its model is updated in place).
        train: Training steps.
        eval_steps: Held-out steps (other tasks).
        config: Hyperparameters.
        out_dir: Where checkpoints, the final model and metrics go (None: keep in memory).
        resume: Continue from ``out_dir/checkpoint`` when it exists.
        progress: Show a tqdm progress bar.
        max_updates: Stop after this many updates in total (for tests and interrupted runs;
            the checkpoint is written first).
        on_epoch: Called with ``(epoch, eval_metrics)`` after each epoch.
        select: Validation figure of the model after an epoch, higher is better (default:
            ``config.keep_best`` of the eval steps).

    Returns:
        ``{"updates", "epochs", "train_loss", "train_accuracy", "eval", "history",
        "best_epoch", "selection", "seconds"}``; ``eval`` is of the returned (best) model.

    Raises:
        ValueError: for an empty training set.
    """
    import torch

    from gui_gym.train.trainer import diverged

    config = config or PRMTrainConfig()
    if not train:
        raise ValueError("no training steps")
    train = list(train)
    out = Path(out_dir) if out_dir is not None else None
    checkpoint = out / "checkpoint" if out is not None else None
    model = prm.model
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.lr, weight_decay=config.weight_decay
    )
    per_epoch = math.ceil(len(train) / config.batch_size)
    state: dict[str, Any] = {"epoch": 0, "batch": 0, "updates": 0, "history": [], "seconds": 0.0}
    best: dict[str, Any] | None = None
    if checkpoint is not None:  # a run killed mid-swap left the last complete one beside it
        recover_folder(checkpoint)
    if checkpoint is not None and resume and (checkpoint / "trainer_state.json").exists():
        state, best = _load_checkpoint(prm, optimizer, checkpoint)
        if state.get("n_train") != len(train) or state.get("per_epoch") != per_epoch:
            raise ValueError(
                f"checkpoint {checkpoint} was made with {state.get('n_train')} training steps, "
                f"this run has {len(train)}; resume with the same data or pass resume=False"
            )
        from gui_gym.train.checkpoint import check_progress

        check_progress(
            checkpoint / "trainer_state.json",
            state,
            epoch=config.epochs,
            batch=per_epoch,
            updates=config.epochs * per_epoch,
        )
    keep_best = config.keep_best is not None and (select is not None or bool(eval_steps))
    selection = (
        None if not keep_best else ("select" if select is not None else f"eval_{config.keep_best}")
    )
    state["n_train"] = len(train)
    state["per_epoch"] = per_epoch
    total = config.epochs * per_epoch
    started = time.perf_counter() - float(state.get("seconds", 0.0))
    window_loss: list[float] = []
    window_correct: list[float] = []
    bar = progress_bar(total=total, initial=state["updates"], desc="train PRM", enabled=progress)

    def save() -> None:
        if checkpoint is not None:
            state["seconds"] = time.perf_counter() - started
            _save_checkpoint(prm, optimizer, state, checkpoint, best)

    from gui_gym.models.llm.precision import autocast, resolve_dtype

    device = str(next(model.parameters()).device)
    bf16 = resolve_dtype(config.dtype, device) == "bfloat16"
    stopped = False
    try:
        for epoch in range(state["epoch"], config.epochs):
            order = np.random.default_rng(config.seed * 7919 + epoch).permutation(len(train))
            model.train()
            for b in range(state["batch"], per_epoch):
                if max_updates is not None and state["updates"] >= max_updates:
                    stopped = True
                    break
                batch_steps = [
                    train[i] for i in order[b * config.batch_size : (b + 1) * config.batch_size]
                ]
                if config.lr_schedule == "linear":
                    # from the update count alone, so a resumed run gets the same rates
                    for group in optimizer.param_groups:
                        group["lr"] = config.lr * (1.0 - state["updates"] / total)
                batch = prm.training_batch(batch_steps, prompt_loss=config.prompt_lm_weight > 0)
                with autocast(device, bf16):  # fp32 weights, bf16 matrix products
                    loss, pair = prm.loss(batch, config.rationale_weight, config.prompt_lm_weight)
                value = float(loss.detach())
                where = f"epoch {epoch + 1} update {state['updates'] + 1}"
                if not math.isfinite(value):  # before the step: the weights stay good
                    raise diverged(where, ["the loss"], checkpoint)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                if config.max_grad_norm:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
                optimizer.step()
                with torch.no_grad():  # nothing non-finite is ever checkpointed
                    if any(not bool(torch.isfinite(p).all()) for p in model.parameters()):
                        raise diverged(where, ["the weights"], checkpoint)
                correct = (pair.argmax(-1) == batch["labels"]).float().mean().item()
                window_loss = [*window_loss, value][-50:]
                window_correct = [*window_correct, correct][-50:]
                state["updates"] += 1
                state["batch"] = b + 1
                bar.update(1)
                bar.set_postfix(
                    loss=f"{np.mean(window_loss):.3f}", acc=f"{np.mean(window_correct):.2f}"
                )
                if config.checkpoint_every and state["updates"] % config.checkpoint_every == 0:
                    save()
            if stopped:
                break
            model.eval()
            metrics = (
                evaluate_prm(prm, eval_steps, batch_size=config.eval_batch_size)
                if eval_steps
                else {}
            )
            row = {
                "epoch": epoch + 1,
                "updates": state["updates"],
                "train_loss": float(np.mean(window_loss)) if window_loss else None,
                "eval_accuracy": metrics.get("accuracy"),
                "eval_auc": metrics.get("auc"),
            }
            if keep_best:
                value = float(select(prm) if select is not None else metrics[config.keep_best])
                row["selection"] = value
                previous = state.get("best_value")
                if previous is None or (math.isfinite(value) and value > previous):
                    state["best_value"], state["best_epoch"] = value, epoch + 1
                    best = _parameters(model)
            state["history"].append(row)
            state["epoch"] = epoch + 1
            state["batch"] = 0
            save()
            if on_epoch is not None:
                on_epoch(epoch + 1, metrics)
        if stopped:
            save()
    finally:
        bar.close()
        model.eval()
    if best is not None and not stopped:
        _copy_parameters(model, best)
    final = (
        evaluate_prm(prm, eval_steps, batch_size=config.eval_batch_size)
        if eval_steps and not stopped
        else {}
    )
    report = {
        "updates": state["updates"],
        "epochs": state["epoch"],
        "finished": not stopped,
        "train_loss": float(np.mean(window_loss)) if window_loss else None,
        "train_accuracy": float(np.mean(window_correct)) if window_correct else None,
        "eval": final,
        "history": state["history"],
        "best_epoch": state.get("best_epoch") if best is not None else None,
        "selection": selection,
        "seconds": time.perf_counter() - started,
        "config": asdict(config),
    }
    if out is not None and not stopped:
        prm.save(out / "model")
        atomic_write_text(out / "metrics.json", json.dumps(_json_safe(report), indent=2) + "\n")
    return report


def _json_safe(value: Any) -> Any:
    """NaN (AUC of a one-class group) becomes null so the file is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def run_training(
    out: str | Path,
    *,
    env_ids: Sequence[str] = ("GuiGym/WikiHow-v0",),
    data: str | Path | None = None,
    replay_datasets: Sequence[str | Path] = (),
    max_tasks: int | None = None,
    random_rollouts: int = 2,
    noisy_rollouts: int = 0,
    noisy_p: float = 0.4,
    proposals_per_state: int = 3,
    pair_leftovers: bool = False,
    eval_fraction: float = 0.2,
    model: str | Path | None = None,
    positive_token: str = " True",
    negative_token: str = " False",
    rationale: bool = False,
    vocab_size: int = 1024,
    n_layer: int = 2,
    n_embd: int = 64,
    max_length: int = 768,
    device: str | None = None,
    config: PRMTrainConfig | None = None,
    resume: bool = True,
    progress: bool = True,
) -> dict[str, Any]:
    """The whole ``gui-gym train-prm`` pipeline in one run folder.

    1. Data: ``out/data/{train,eval}.jsonl`` are reused when they exist and ``resume`` is
       set; otherwise steps are read from ``data`` or collected from each env's train split
       (:func:`collect_prm_steps`) and from each recorded expert dataset in
       ``replay_datasets`` (:func:`collect_replay_steps`: GUI-Shepherd's single-step states
       with one-step rollouts), then deduplicated, split by task and balanced.
    2. Model: a local causal LM folder (``model``, safetensors), or a tiny GPT-2 with a BPE
       tokenizer trained on the prompts, saved once to ``out/init`` so a resumed run uses
       the same tokenizer.
    3. :func:`train_prm` with checkpoints in ``out/checkpoint``; the PRM goes to
       ``out/model`` and the report (with the data counts) to ``out/metrics.json``.

    Returns:
        The training report with a ``data`` entry.
    """
    from gui_gym.models.prm.vision_prm import has_processor

    config = config or PRMTrainConfig()
    out = Path(out)
    # a vision-language model: GUI-Shepherd's VLM PRM judges the screenshot, so the envs
    # make them and the data keeps them
    vision = model is not None and has_processor(model)
    if vision and rationale:
        raise ValueError("a vision-language PRM is trained on the label only: drop --rationale")
    if vision and data is not None:
        raise ValueError(
            "a vision-language PRM needs steps with screenshots: collect them from --env-id "
            "(the envs make screenshots), not --data"
        )
    train_file, eval_file = out / "data" / "train.jsonl", out / "data" / "eval.jsonl"
    if resume and train_file.exists() and eval_file.exists():
        train, held = read_labelled_steps(train_file), read_labelled_steps(eval_file)
        data_report: dict[str, Any] = {"reused": True}
    else:
        if data is not None:
            steps = read_labelled_steps(data)
        else:
            steps = []
            for env_id in env_ids:
                steps.extend(
                    collect_prm_steps(
                        env_id,
                        split="train",
                        max_tasks=max_tasks,
                        random_rollouts=random_rollouts,
                        noisy_rollouts=noisy_rollouts,
                        noisy_p=noisy_p,
                        proposals_per_state=proposals_per_state,
                        seed=config.seed,
                        progress=progress,
                        env_kwargs={"screenshot": True} if vision else None,
                    )
                )
            for folder in replay_datasets:
                steps.extend(
                    collect_replay_steps(
                        folder,
                        proposals_per_state=proposals_per_state,
                        max_trajectories=max_tasks,
                        seed=config.seed,
                        progress=progress,
                        screenshots=vision,
                    )
                )
        dataset = build_prm_dataset(
            steps, eval_fraction=eval_fraction, seed=config.seed, pair_leftovers=pair_leftovers
        )
        train, held = dataset.train, dataset.eval
        write_labelled_steps(train_file, train)
        write_labelled_steps(eval_file, held)
        data_report = dataset.report
    data_report.update(
        train=len(train),
        eval=len(held),
        train_sources=source_counts(train),
        eval_sources=source_counts(held),
    )
    settings = {
        "positive_token": positive_token,
        "negative_token": negative_token,
        "rationale": rationale,
        "max_length": max_length,
    }
    init = out / "init"
    if vision:
        prm = TransformersPRM.load(
            model, device=device, positive_token=positive_token, negative_token=negative_token
        )
    elif model is not None:
        prm = TransformersPRM.load(model, device=device, **settings)
    elif resume and init.exists():
        prm = TransformersPRM.load(init, device=device)
    else:
        template_prm_texts = _tokenizer_corpus(train, positive_token, negative_token, rationale)
        prm = TransformersPRM.tiny(
            template_prm_texts,
            vocab_size=vocab_size,
            n_layer=n_layer,
            n_embd=n_embd,
            n_head=max(1, n_embd // 32),
            n_positions=max_length,
            seed=config.seed,
            device=device,
            **settings,
        )
        prm.save(init)
    report = train_prm(
        prm, train, held, config=config, out_dir=out, resume=resume, progress=progress
    )
    report["data"] = data_report
    if report["finished"]:
        atomic_write_text(out / "metrics.json", json.dumps(_json_safe(report), indent=2) + "\n")
    return report


def _tokenizer_corpus(
    steps: Sequence[LabelledStep], positive: str, negative: str, rationale: bool, limit: int = 3000
) -> list[str]:
    """Texts a tiny tokenizer is trained on: rendered prompts (and rationales) of the first
    ``limit`` training steps."""
    from gui_gym.rewards.prm import PromptTemplate

    template = PromptTemplate()
    texts = []
    for s in steps[:limit]:
        texts.append(template.render(s.query, positive, negative, rationale))
        if rationale and s.rationale:
            texts.append(s.rationale + template.verdict_suffix())
    return texts
