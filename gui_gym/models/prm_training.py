"""GUI-Shepherd PRM data collection and supervised training.

GUI-Shepherd builds its PRM data from trajectory rollouts in emulators plus one-step rollouts
from varied states, labels each step correct or not, keeps the classes balanced, and
fine-tunes a causal LM on the label token (Sec. 3, Sec. 5, App. A). Here the labels come from
the env instead of annotators:

* **positives**: the task's expert action in a state (on the expert's own path and in states
  that random rollouts reach, for temporal diversity), and any action that reaches a new env
  milestone or completes the task;
* **negatives**: perturbations of an expert action (another element, wrong text, wrong
  direction, premature end; :func:`gui_gym.rewards.prm.perturb_action`), each checked on a
  fork so that a perturbation that happens to be right is dropped; and the steps of failed
  random rollouts that the expert disagrees with and that reached no milestone.

Rationales are written from the same facts ("the step due is ..."), for the rationale
variant. :func:`build_prm_dataset` deduplicates, balances and splits by task;
:func:`train_prm` runs the SFT loop (progress bar, periodic safetensors checkpoints with the
optimizer state, resume) and :func:`evaluate_prm` reports accuracy, AUC and F1 per step
position.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gui_gym.core.actions import Action, describe
from gui_gym.core.trajectory import atomic_write_text, read_jsonl, write_jsonl
from gui_gym.models.prm import RulePRM, TransformersPRM, write_folder_atomically
from gui_gym.rewards.prm import (
    DedupReport,
    LabelledStep,
    PRMQuery,
    action_type_of,
    balance_labels,
    classification_metrics,
    deduplicate_steps,
    perturb_action,
    source_counts,
    split_by_task,
)

__all__ = [
    "PRMDataset",
    "PRMTrainConfig",
    "build_prm_dataset",
    "collect_prm_steps",
    "collect_task_steps",
    "evaluate_prm",
    "read_labelled_steps",
    "run_training",
    "train_prm",
    "write_labelled_steps",
]

_POSITIVE_REASONS = ("expert", "milestone", "success")


# ---------------------------------------------------------------------------------------------
# Collection


def _rationale_due(expert: str) -> str:
    return f"The step due here is to {expert}."


_PERTURBATION_RATIONALE = {
    "other_element": "The action acts on the wrong element.",
    "wrong_text": "The text it uses is wrong.",
    "wrong_direction": "It scrolls the wrong way.",
    "premature_end": "It ends the task before the goal is reached.",
    "detour": "It wanders away from the task.",
}


def collect_task_steps(
    env: Any,
    task_id: str,
    *,
    seed: int,
    rng: np.random.Generator,
    random_rollouts: int = 2,
    random_max_steps: int | None = None,
    history_length: int = 4,
    perturbations_per_kind: int = 2,
    offpath_positive_steps: int = 3,
    env_id: str = "",
) -> list[LabelledStep]:
    """Labelled steps of one task: an expert rollout with perturbed negatives, and
    ``random_rollouts`` random rollouts (see the module docstring for the rules).

    Args:
        env: A gui-gym env (its ``unwrapped`` must have ``oracle_action``,
            ``candidate_actions`` and ``fork``); it is reset for each rollout.
        task_id: The task, passed as ``reset(options={"task": task_id})``.
        seed: Reset seed of the first rollout (later rollouts use ``seed + k``).
        rng: Source of perturbations and random actions.
        random_rollouts: Random-policy rollouts per task.
        random_max_steps: Cut random rollouts after this many steps (default: the env's
            own ``max_steps``).
        history_length: Earlier action descriptions kept in each query.
        perturbations_per_kind: Perturbed negatives of each kind per expert action
            (:func:`gui_gym.rewards.prm.perturb_action`).
        offpath_positive_steps: In random rollouts, label the expert's action (and its
            perturbations) at the states after the first this-many random steps only: near
            the expert's path, the expert's move varies; far from it, it is almost always
            ``GOBACK()``, which would flood the positives with one action.
        env_id: Recorded in each step.

    Returns:
        The steps, unbalanced and possibly with duplicates.
    """
    base = env.unwrapped
    for name in ("oracle_action", "candidate_actions", "fork"):
        if not hasattr(base, name):
            raise TypeError(f"{type(base).__name__} has no {name}(); PRM data needs a gui-gym env")
    rule = RulePRM()
    out: list[LabelledStep] = []

    def query(
        observation: dict[str, Any], action: Action, history: list[str], step: int
    ) -> PRMQuery:
        return PRMQuery(
            instruction=str(observation["instruction"]),
            screen=str(observation["screen"]),
            action=str(action),
            action_description=describe(action, base.ui_tree),
            history=tuple(history[-history_length:]) if history_length else (),
            step=step,
        )

    def add(q: PRMQuery, label: int, source: str, rationale: str) -> None:
        out.append(LabelledStep(q, label, task_id, source, rationale, env_id))

    def add_perturbations(
        observation: dict[str, Any],
        expert: Action,
        expert_q: PRMQuery,
        history: list[str],
        step: int,
    ) -> None:
        bad_ones = perturb_action(
            expert, base.ui_tree, rng, texts=texts, per_kind=perturbations_per_kind
        )
        for kind, bad in bad_ones:
            q = query(observation, bad, history, step)
            _, reason = rule.judge(q, base)
            if reason in _POSITIVE_REASONS:  # the perturbation happens to be right too
                continue
            due = _rationale_due(expert_q.action_description)
            add(q, 0, f"perturb:{kind}", f"{due} {_PERTURBATION_RATIONALE[kind]}")

    # Expert rollout: every expert action is a positive; its perturbations are negatives when
    # the rules confirm they are wrong.
    observation, info = base.reset(seed=seed, options={"task": task_id})
    texts = tuple(getattr(base.task, "vocabulary", ()) or ())
    history: list[str] = []
    step = 0
    done = False
    while not done:
        expert = base.oracle_action()
        expert_q = query(observation, expert, history, step)
        add(expert_q, 1, "oracle", f"{_rationale_due(expert_q.action_description)} This is it.")
        add_perturbations(observation, expert, expert_q, history, step)
        observation, _, terminated, truncated, info = base.step(expert)
        if info["action_valid"]:
            history.append(info["action_description"])
        step += 1
        done = terminated or truncated

    # Random rollouts: milestone-reaching and expert-agreeing steps are positives; in failed
    # rollouts the other accepted steps are negatives; in the first states off the expert's
    # path the expert's action is a positive as well, with its perturbations.
    for k in range(random_rollouts):
        observation, info = base.reset(seed=seed + 1 + k, options={"task": task_id})
        history = []
        pending: list[tuple[PRMQuery, str]] = []
        step = 0
        done = False
        while not done:
            expert = base.oracle_action()
            candidates = base.candidate_actions()
            action = candidates[int(rng.integers(len(candidates)))]
            expert_q = query(observation, expert, history, step)
            q = query(observation, action, history, step)
            if 0 < step <= offpath_positive_steps:
                add(
                    expert_q,
                    1,
                    "oracle",
                    f"{_rationale_due(expert_q.action_description)} This is it.",
                )
                add_perturbations(observation, expert, expert_q, history, step)
            before = set(base.milestones)
            observation, _, terminated, truncated, info = base.step(action)
            new = [m for m in info["milestones"] if m not in before]
            if str(action) == str(expert):
                add(q, 1, "oracle", f"{_rationale_due(expert_q.action_description)} This is it.")
            elif info["success"] or new:
                reached = ", ".join(new) if new else "the goal"
                add(q, 1, "milestone", f"It makes progress: it reaches {reached}.")
            elif info["action_valid"]:
                pending.append(
                    (q, f"{_rationale_due(expert_q.action_description)} This action does not help.")
                )
            if info["action_valid"]:
                history.append(info["action_description"])
            step += 1
            done = (
                terminated
                or truncated
                or (random_max_steps is not None and step >= random_max_steps)
            )
        if not info["success"]:
            for q, rationale in pending:
                add(q, 0, "random_failed", rationale)
    return out


def collect_prm_steps(
    env_id: str,
    *,
    split: str = "train",
    tasks: Sequence[str] | None = None,
    max_tasks: int | None = None,
    random_rollouts: int = 2,
    max_steps: int = 15,
    history_length: int = 4,
    perturbations_per_kind: int = 2,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    progress: bool = False,
) -> list[LabelledStep]:
    """Labelled steps for the tasks of one env and split (see :func:`collect_task_steps`).

    Args:
        env_id: A registered gui-gym id (``GuiGym/WikiHow-v0``).
        split: The env's split.
        tasks: Task ids to use (default: the split's tasks; for template suites such as
            AndroidWorld, every template with the split's parameter stream).
        max_tasks: Use only the first ``max_tasks`` tasks of a seeded shuffle.
        random_rollouts: Random rollouts per task.
        max_steps: Step budget of every rollout (GUI-Shepherd caps trajectories at 15).
        history_length: Earlier actions kept in each query.
        perturbations_per_kind: Perturbed negatives of each kind per expert action.
        seed: Seeds task order, resets and random actions.
        env_kwargs: More ``gym.make`` arguments.
        progress: Show a progress bar over tasks.
    """
    import gymnasium as gym
    from tqdm.auto import tqdm

    import gui_gym  # noqa: F401  (registers the ids)

    env = gym.make(env_id, split=split, max_steps=max_steps, **(env_kwargs or {}))
    try:
        base = env.unwrapped
        if tasks is None:
            pool = getattr(base, "_pool", None) or []
            tasks = [t.task_id for t in pool]
        tasks = list(tasks)
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(tasks))
        chosen = [tasks[i] for i in order[: max_tasks if max_tasks is not None else len(tasks)]]
        steps: list[LabelledStep] = []
        for k, task_id in enumerate(tqdm(chosen, desc=f"PRM data {env_id}", disable=not progress)):
            steps.extend(
                collect_task_steps(
                    env,
                    task_id,
                    seed=seed * 100_003 + k * 101,
                    rng=rng,
                    random_rollouts=random_rollouts,
                    history_length=history_length,
                    perturbations_per_kind=perturbations_per_kind,
                    env_id=env_id,
                )
            )
    finally:
        env.close()
    return steps


@dataclass
class PRMDataset:
    """A balanced, deduplicated PRM dataset split by task."""

    train: list[LabelledStep]
    eval: list[LabelledStep]
    report: dict[str, Any] = field(default_factory=dict)


def build_prm_dataset(
    steps: Sequence[LabelledStep],
    *,
    eval_fraction: float = 0.2,
    seed: int = 0,
    balance_by: str | None = "action_type",
) -> PRMDataset:
    """Deduplicate, split by task, then balance each side (GUI-Shepherd keeps a balanced
    positive:negative ratio, Sec. 5).

    Args:
        steps: Collected steps.
        eval_fraction: Share of tasks held out.
        seed: Seeds the split and the balancing.
        balance_by: ``"action_type"`` balances within each action type first (see
            :func:`gui_gym.rewards.prm.balance_labels`); None balances the totals only.

    Returns:
        The dataset; ``report`` gives counts before/after and per source.
    """
    kept, dedup = deduplicate_steps(steps)
    train, held = split_by_task(kept, eval_fraction, seed)
    if balance_by not in ("action_type", None):
        raise ValueError(f"balance_by must be 'action_type' or None, got {balance_by!r}")
    group = action_type_of if balance_by == "action_type" else None
    rng = np.random.default_rng(seed)
    train = balance_labels(train, rng, group)
    held = balance_labels(held, rng, group)
    report = {
        "collected": len(steps),
        "dedup": asdict(dedup) if isinstance(dedup, DedupReport) else dedup,
        "train": len(train),
        "eval": len(held),
        "train_tasks": len({(s.env_id, s.task_id) for s in train}),
        "eval_tasks": len({(s.env_id, s.task_id) for s in held}),
        "train_sources": source_counts(train),
        "eval_sources": source_counts(held),
    }
    return PRMDataset(train=train, eval=held, report=report)


def write_labelled_steps(path: str | Path, steps: Sequence[LabelledStep]) -> int:
    """Write steps as JSON Lines, atomically; returns the count."""
    return write_jsonl(path, (s.to_dict() for s in steps))


def read_labelled_steps(path: str | Path) -> list[LabelledStep]:
    """Read steps written by :func:`write_labelled_steps`.

    Raises:
        ValueError: naming the file and record of a malformed step.
    """
    out = []
    for i, record in enumerate(read_jsonl(path)):
        try:
            out.append(LabelledStep.from_dict(record))
        except (ValueError, TypeError) as err:
            raise ValueError(f"{path}: record {i + 1}: {err}") from None
    return out


# ---------------------------------------------------------------------------------------------
# Training


@dataclass
class PRMTrainConfig:
    """Settings of :func:`train_prm`.

    Attributes:
        epochs: Passes over the training steps (the paper trains 2 epochs, App. A.3).
        batch_size: Steps per optimizer update.
        lr: AdamW learning rate (constant, as in App. A.3).
        weight_decay: AdamW weight decay.
        rationale_weight: Weight of the next-token loss on rationale tokens (rationale PRMs).
        prompt_lm_weight: Weight of a next-token loss on the prompt tokens. 0 for a pretrained
            model; a tiny model trained from scratch needs it to learn to read the prompt at
            all (it stands in for the pretraining GUI-Shepherd's UI-TARS base brings).
        max_grad_norm: Gradient clipping (0 disables it).
        checkpoint_every: Save a resumable checkpoint every this many updates (0: only at the
            end of each epoch).
        eval_batch_size: Queries per forward pass when evaluating.
        seed: Seeds the data order.
    """

    epochs: int = 2
    batch_size: int = 16
    lr: float = 5e-4
    weight_decay: float = 0.0
    rationale_weight: float = 0.5
    prompt_lm_weight: float = 0.0
    max_grad_norm: float = 1.0
    checkpoint_every: int = 200
    eval_batch_size: int = 32
    seed: int = 0

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1 or self.eval_batch_size < 1:
            raise ValueError("epochs, batch_size and eval_batch_size must be >= 1")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr!r}")
        if self.checkpoint_every < 0:
            raise ValueError(f"checkpoint_every must be >= 0, got {self.checkpoint_every}")


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


def _save_optimizer(optimizer: Any, folder: Path) -> None:
    """AdamW state as safetensors (tensors) plus JSON (everything else): no pickle."""
    import torch
    from safetensors.torch import save_file

    state = optimizer.state_dict()
    tensors: dict[str, Any] = {}
    scalars: dict[str, Any] = {}
    for pid, values in state["state"].items():
        for key, value in values.items():
            if isinstance(value, torch.Tensor):
                tensors[f"{pid}.{key}"] = value.detach().cpu().contiguous()
            else:
                scalars[f"{pid}.{key}"] = value
    save_file(tensors, str(folder / "optimizer.safetensors"))
    (folder / "optimizer.json").write_text(
        json.dumps({"param_groups": state["param_groups"], "scalars": scalars})
    )


def _load_optimizer(optimizer: Any, folder: Path) -> None:
    from safetensors.torch import load_file

    tensors = load_file(str(folder / "optimizer.safetensors"))
    meta = json.loads((folder / "optimizer.json").read_text())
    per_param: dict[int, dict[str, Any]] = {}
    for name, value in [*tensors.items(), *meta["scalars"].items()]:
        pid, key = name.split(".", 1)
        per_param.setdefault(int(pid), {})[key] = value
    optimizer.load_state_dict({"state": per_param, "param_groups": meta["param_groups"]})


def _save_checkpoint(
    prm: TransformersPRM, optimizer: Any, state: dict[str, Any], path: Path
) -> None:
    import torch
    from safetensors.torch import save_file, save_model

    def write(folder: Path) -> None:
        save_model(prm.model, str(folder / "weights.safetensors"))
        _save_optimizer(optimizer, folder)
        save_file({"cpu": torch.get_rng_state()}, str(folder / "rng.safetensors"))
        (folder / "trainer_state.json").write_text(json.dumps(state, indent=2) + "\n")

    write_folder_atomically(path, write)


def _load_checkpoint(prm: TransformersPRM, optimizer: Any, path: Path) -> dict[str, Any]:
    import torch
    from safetensors.torch import load_file, load_model

    missing, unexpected = load_model(prm.model, str(path / "weights.safetensors"), strict=False)
    if unexpected or missing:
        raise ValueError(
            f"checkpoint {path} does not fit this model (missing {sorted(missing)[:5]}, "
            f"unexpected {sorted(unexpected)[:5]}); train with --no-resume or another --out"
        )
    _load_optimizer(optimizer, path)
    torch.set_rng_state(load_file(str(path / "rng.safetensors"))["cpu"])
    return json.loads((path / "trainer_state.json").read_text())


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
) -> dict[str, Any]:
    """Supervised fine-tuning of ``prm`` on labelled steps (GUI-Shepherd Eq. 2).

    Each update: a batch of steps, cross-entropy over the two label tokens at the label
    position, plus ``rationale_weight`` times the next-token loss on the rationale when the
    PRM uses rationales; AdamW at a constant learning rate. After each epoch the eval steps
    are scored (accuracy, AUC, F1 per step position).

    With ``out_dir``: a checkpoint (weights, AdamW state, RNG state, position in the data
    order; all safetensors/JSON) is written atomically to ``out_dir/checkpoint`` every
    ``checkpoint_every`` updates and at each epoch end, and with ``resume=True`` a rerun
    continues from it, reproducing the uninterrupted run. The final PRM is saved to
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

    Returns:
        ``{"updates", "epochs", "train_loss", "train_accuracy", "eval", "history",
        "seconds"}``.

    Raises:
        ValueError: for an empty training set.
    """
    import torch
    from tqdm.auto import tqdm

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
    if checkpoint is not None and resume and (checkpoint / "trainer_state.json").exists():
        state = _load_checkpoint(prm, optimizer, checkpoint)
        if state.get("n_train") != len(train) or state.get("per_epoch") != per_epoch:
            raise ValueError(
                f"checkpoint {checkpoint} was made with {state.get('n_train')} training steps, "
                f"this run has {len(train)}; resume with the same data or pass resume=False"
            )
    state["n_train"] = len(train)
    state["per_epoch"] = per_epoch
    total = config.epochs * per_epoch
    started = time.perf_counter() - float(state.get("seconds", 0.0))
    window_loss: list[float] = []
    window_correct: list[float] = []
    bar = tqdm(total=total, initial=state["updates"], desc="train PRM", disable=not progress)

    def save() -> None:
        if checkpoint is not None:
            state["seconds"] = time.perf_counter() - started
            _save_checkpoint(prm, optimizer, state, checkpoint)

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
                batch = prm.training_batch(batch_steps, prompt_loss=config.prompt_lm_weight > 0)
                loss, pair = prm.loss(batch, config.rationale_weight, config.prompt_lm_weight)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                if config.max_grad_norm:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
                optimizer.step()
                value = float(loss.detach())
                if not math.isfinite(value):
                    raise FloatingPointError(
                        f"training loss became {value} at update {state['updates']}"
                    )
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
            state["history"].append(
                {
                    "epoch": epoch + 1,
                    "updates": state["updates"],
                    "train_loss": float(np.mean(window_loss)) if window_loss else None,
                    "eval_accuracy": metrics.get("accuracy"),
                    "eval_auc": metrics.get("auc"),
                }
            )
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
    max_tasks: int | None = None,
    random_rollouts: int = 2,
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
       (:func:`collect_prm_steps`), then deduplicated, split by task and balanced.
    2. Model: a local causal LM folder (``model``, safetensors), or a tiny GPT-2 with a BPE
       tokenizer trained on the prompts, saved once to ``out/init`` so a resumed run uses
       the same tokenizer.
    3. :func:`train_prm` with checkpoints in ``out/checkpoint``; the PRM goes to
       ``out/model`` and the report (with the data counts) to ``out/metrics.json``.

    Returns:
        The training report with a ``data`` entry.
    """
    config = config or PRMTrainConfig()
    out = Path(out)
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
                        seed=config.seed,
                        progress=progress,
                    )
                )
        dataset = build_prm_dataset(steps, eval_fraction=eval_fraction, seed=config.seed)
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
    if model is not None:
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
