"""ProgRM's trainer: a :class:`~gui_gym.models.progress.ProgRM` (or the ORM baseline)
fitted with binary cross-entropy on progress labels (ProgRM Sec. 2.3, Eq. 5).

* :func:`progress_examples` and :func:`orm_examples` turn labelled episodes into
  :class:`ProgressExample` s; :func:`evaluate_mae` scores a model on them.
* :class:`ProgressTrainer` trains with a progress bar, checkpoints in the one format of
  gui-gym's trainers (:mod:`gui_gym.train.checkpoint`) and exact resume.
* :func:`fit_progress_model` is the one call the CLI and the benchmark use: build (or load),
  balance, train, save.

The model half (the query, the protocol, the rule-based and learned models) is
:mod:`gui_gym.models.progress`.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from gui_gym.core.files import atomic_write_text
from gui_gym.core.progress import progress_bar
from gui_gym.core.trajectory import Trajectory
from gui_gym.models.progress import (
    KINDS,
    ProgressModel,
    ProgressQuery,
    ProgRM,
    build_word_tokenizer,
    format_state,
    tiny_backbone_config,
    trajectory_queries,
)
from gui_gym.rewards.progress import TrajectoryLabels, balance_steps
from gui_gym.train.checkpoint import (
    load_optimizer_state,
    read_checkpoint,
    restore_torch_rng,
    torch_rng_tensors,
    write_checkpoint,
)

__all__ = [
    "ProgressExample",
    "ProgressTrainConfig",
    "ProgressTrainer",
    "TrainResult",
    "evaluate_mae",
    "fit_progress_model",
    "orm_examples",
    "progress_examples",
]


# ---------------------------------------------------------------------------------------------
# Examples


@dataclass(frozen=True)
class ProgressExample:
    """A training or evaluation example.

    Attributes:
        query: The state.
        target: The label in ``[0, 1]``.
        success: Whether the trajectory succeeded (for the 1:1 balance of Appendix C).
        key: Whether the state follows a key step.
        step: Step index the label belongs to (-1 for the reset state).
    """

    query: ProgressQuery
    target: float
    success: bool
    key: bool = False
    step: int = -1


def progress_examples(
    trajectories: Sequence[Trajectory],
    labels: Sequence[TrajectoryLabels],
    include_initial: bool = True,
) -> list[ProgressExample]:
    """ProgRM training data ``D^(p) = {(g_i, s_i, p*_i)}`` (Sec. 2.3) from labelled episodes.

    Args:
        trajectories: The episodes.
        labels: Their labels, in the same order (from ``label_lcs`` or ``label_env``).
        include_initial: Also add each reset state with label 0 (the value the wrapper
            subtracts first).

    Raises:
        ValueError: if the counts of trajectories and labels (or steps) disagree.
    """
    if len(trajectories) != len(labels):
        raise ValueError(f"{len(trajectories)} trajectories but {len(labels)} label sets")
    out: list[ProgressExample] = []
    for trajectory, labelled in zip(trajectories, labels):
        if len(labelled) != len(trajectory.steps):
            raise ValueError(
                f"task {trajectory.task_id!r}: {len(trajectory.steps)} steps but "
                f"{len(labelled)} labels"
            )
        queries = trajectory_queries(trajectory)
        if include_initial:
            out.append(ProgressExample(queries[0], 0.0, trajectory.success, False, -1))
        for t, label in enumerate(labelled.labels):
            out.append(
                ProgressExample(queries[t + 1], label.progress, trajectory.success, label.key, t)
            )
    return out


def orm_examples(trajectories: Sequence[Trajectory]) -> list[ProgressExample]:
    """ORM training data: each episode's final state labelled 1 on success, else 0 (ProgRM
    Sec. 3.1: "for ORM training, we use the overall success or failure label")."""
    out: list[ProgressExample] = []
    for trajectory in trajectories:
        final = trajectory_queries(trajectory)[-1]
        target = 1.0 if trajectory.success else 0.0
        out.append(ProgressExample(final, target, trajectory.success, True, len(trajectory) - 1))
    return out


def evaluate_mae(model: ProgressModel, examples: Sequence[ProgressExample]) -> float:
    """Mean absolute error of ``model`` on ``examples`` (NaN for none)."""
    if not examples:
        return float("nan")
    predicted = np.asarray(model.predict([e.query for e in examples]), dtype=np.float64)
    targets = np.array([e.target for e in examples], dtype=np.float64)
    return float(np.mean(np.abs(predicted - targets)))


# ---------------------------------------------------------------------------------------------
# Training


@dataclass
class ProgressTrainConfig:
    """Settings of :class:`ProgressTrainer` and :func:`fit_progress_model`.

    Attributes:
        epochs: Passes over the training examples.
        batch_size: Examples per optimiser step.
        lr: Learning rate (Adam, betas ``(0.9, 0.95)`` as in ProgRM Appendix D).
        betas: Adam betas.
        weight_decay: Decoupled weight decay (AdamW).
        max_grad_norm: Gradient clipping norm (0 disables).
        seed: Seeds the shuffling order (one permutation per epoch) and torch's RNG.
        checkpoint_every: Also checkpoint every this many steps (0: at epoch ends only).
        keep_checkpoints: Newest checkpoints kept on disk.
        dtype: ``"auto"``: the training forward passes under bf16 autocast (fp32 weights)
            where the device computes bf16 natively (CUDA, or a CPU with AMX-BF16 or
            AVX512-BF16; :mod:`gui_gym.models.llm.precision`); ``"float32"``: never;
            ``"bfloat16"``: always (slow where bf16 is emulated).
    """

    epochs: int = 3
    batch_size: int = 16
    lr: float = 3e-4
    betas: tuple[float, float] = (0.9, 0.95)
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    seed: int = 0
    checkpoint_every: int = 0
    keep_checkpoints: int = 2
    dtype: str = "auto"

    def __post_init__(self) -> None:
        from gui_gym.models.llm.precision import check_dtype

        check_dtype(self.dtype)
        for name in ("epochs", "batch_size", "checkpoint_every", "keep_checkpoints"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative int, got {value!r}")
        if self.batch_size < 1 or self.keep_checkpoints < 1:
            raise ValueError("batch_size and keep_checkpoints must be >= 1")
        if not (math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be a positive number, got {self.lr!r}")
        self.betas = (float(self.betas[0]), float(self.betas[1]))


@dataclass
class TrainResult:
    """What training did.

    Attributes:
        epochs: Per finished epoch: ``{"epoch", "train_loss", "eval_loss", "eval_mae"}``.
        global_step: Optimiser steps taken in total (resumed runs included).
        checkpoint: The last checkpoint folder written, if any.
    """

    epochs: list[dict[str, float]] = field(default_factory=list)
    global_step: int = 0
    checkpoint: Path | None = None


class ProgressTrainer:
    """Trains a :class:`ProgRM` with binary cross-entropy on progress labels (ProgRM Eq. 5).

    Checkpoints go to ``checkpoint_dir/step-<n>/`` in the one format of gui-gym's trainers
    (:func:`gui_gym.train.checkpoint.write_checkpoint`: the network's weights as
    ``progress.<parameter>``, the AdamW state, torch's random streams, and the position and
    history as ``trainer_state.json``), each written to a temporary folder and renamed into
    place; the file ``checkpoint_dir/latest`` names the newest. ``train(resume=True)``
    continues from it at the exact batch it stopped at (the shuffling order is a function of
    seed and epoch). A checkpoint holds no tokenizer or architecture: it resumes into a model
    built as the interrupted run's was (:func:`fit_progress_model` keeps that model in
    ``out/init``).

    Args:
        model: The model to train (in place).
        train_examples: Labelled states.
        config: Settings.
        eval_examples: Scored after each epoch (loss and MAE).
        checkpoint_dir: Where checkpoints go (None: no checkpoints, no resume).
        progress: Show a tqdm progress bar.

    Raises:
        ValueError: for no training examples or targets outside ``[0, 1]``.
    """

    def __init__(
        self,
        model: ProgRM,
        train_examples: Sequence[ProgressExample],
        config: ProgressTrainConfig | None = None,
        eval_examples: Sequence[ProgressExample] | None = None,
        checkpoint_dir: str | Path | None = None,
        progress: bool = True,
    ):
        import torch

        if not train_examples:
            raise ValueError("no training examples")
        for examples in (train_examples, eval_examples or ()):
            bad = [e.target for e in examples if not 0.0 <= e.target <= 1.0]
            if bad:
                raise ValueError(f"progress targets must lie in [0, 1], got {bad[0]!r}")
        self.model = model
        self.config = config or ProgressTrainConfig()
        self.train_examples = list(train_examples)
        self.eval_examples = list(eval_examples or [])
        self.checkpoint_dir = Path(checkpoint_dir) if checkpoint_dir is not None else None
        self.show_progress = progress
        torch.manual_seed(self.config.seed)
        self.optimizer = torch.optim.AdamW(
            model.network.parameters(),
            lr=self.config.lr,
            betas=self.config.betas,
            weight_decay=self.config.weight_decay,
        )
        self.epoch = 0
        self.batch_in_epoch = 0
        self.global_step = 0
        self.history: list[dict[str, float]] = []
        self._texts = [format_state(e.query) for e in self.train_examples]
        self._targets = np.array([e.target for e in self.train_examples], dtype=np.float32)

    def _order(self, epoch: int) -> np.ndarray:
        return np.random.default_rng([self.config.seed, epoch]).permutation(len(self._texts))

    def _batches(self, epoch: int) -> list[np.ndarray]:
        order = self._order(epoch)
        size = self.config.batch_size
        return [order[i : i + size] for i in range(0, len(order), size)]

    def train(self, resume: bool = False) -> TrainResult:
        """Run the remaining epochs (all of them, or from the latest checkpoint).

        Raises:
            FileNotFoundError: if ``resume`` is set and there is no checkpoint to resume.
        """
        import torch

        if resume:
            latest = self.latest_checkpoint()
            if latest is None:
                raise FileNotFoundError(f"no checkpoint to resume in {self.checkpoint_dir}")
            self.load_checkpoint(latest)
        from gui_gym.train.trainer import diverged

        network = self.model.network
        per_epoch = len(self._batches(0))
        total = per_epoch * self.config.epochs
        result = TrainResult(epochs=self.history, global_step=self.global_step)
        bar = progress_bar(
            total=total,
            initial=min(self.global_step, total),
            enabled=self.show_progress,
            desc=f"train {self.model.kind}",
            unit="step",
        )
        from gui_gym.models.llm.precision import autocast, resolve_dtype

        device = str(self.model.device)
        bf16 = resolve_dtype(self.config.dtype, device) == "bfloat16"
        try:
            while self.epoch < self.config.epochs:
                batches = self._batches(self.epoch)
                network.train()
                losses: list[float] = []
                while self.batch_in_epoch < len(batches):
                    rows = batches[self.batch_in_epoch]
                    inputs = self.model.encode([self._texts[i] for i in rows])
                    targets = torch.from_numpy(self._targets[rows]).to(self.model.device)
                    with autocast(device, bf16):  # fp32 weights, bf16 matrix products
                        logits = network(**inputs).float()
                    # Eq. 5: BCE between sigmoid(logit) and the label (computed on logits).
                    loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, targets)
                    where = f"epoch {self.epoch + 1} batch {self.batch_in_epoch + 1}"
                    if not bool(torch.isfinite(loss.detach())):  # the weights stay good
                        raise diverged(where, ["the loss"], self.checkpoint_dir)
                    self.optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    if self.config.max_grad_norm > 0:
                        torch.nn.utils.clip_grad_norm_(
                            network.parameters(), self.config.max_grad_norm
                        )
                    self.optimizer.step()
                    with torch.no_grad():  # nothing non-finite is ever checkpointed
                        if any(not bool(torch.isfinite(p).all()) for p in network.parameters()):
                            raise diverged(where, ["the weights"], self.checkpoint_dir)
                    losses.append(float(loss.detach()))
                    self.batch_in_epoch += 1
                    self.global_step += 1
                    bar.update(1)
                    bar.set_postfix(loss=f"{losses[-1]:.4f}", epoch=self.epoch + 1)
                    every = self.config.checkpoint_every
                    if every and self.global_step % every == 0:
                        result.checkpoint = self.save_checkpoint()
                record: dict[str, float] = {
                    "epoch": float(self.epoch + 1),
                    "train_loss": float(np.mean(losses)) if losses else float("nan"),
                }
                if self.eval_examples:
                    record.update(
                        {f"eval_{k}": v for k, v in self.evaluate(self.eval_examples).items()}
                    )
                self.history.append(record)
                self.epoch += 1
                self.batch_in_epoch = 0
                result.checkpoint = self.save_checkpoint() or result.checkpoint
        finally:
            bar.close()
        result.global_step = self.global_step
        return result

    def evaluate(self, examples: Sequence[ProgressExample]) -> dict[str, float]:
        """BCE loss and mean absolute error of the model's predictions on ``examples``."""
        if not examples:
            return {"loss": float("nan"), "mae": float("nan")}
        predicted = np.clip(self.model.predict([e.query for e in examples]), 1e-7, 1 - 1e-7)
        targets = np.array([e.target for e in examples], dtype=np.float64)
        loss = -np.mean(targets * np.log(predicted) + (1 - targets) * np.log(1 - predicted))
        return {"loss": float(loss), "mae": float(np.mean(np.abs(predicted - targets)))}

    # ----------------------------------------------------------------------- checkpoints

    def latest_checkpoint(self) -> Path | None:
        """The newest complete checkpoint, or None.

        Raises:
            ValueError: for a checkpoint of the previous progress-trainer format.
        """
        if self.checkpoint_dir is None:
            return None
        return latest_checkpoint(self.checkpoint_dir)

    def save_checkpoint(self) -> Path | None:
        """Write a checkpoint of the current state (None without a checkpoint folder)."""
        if self.checkpoint_dir is None:
            return None
        name = f"step-{self.global_step:08d}"
        folder = self.checkpoint_dir / name
        weights = {
            f"{WEIGHTS_PREFIX}.{n}": p.detach().cpu().contiguous()
            for n, p in self.model.network.named_parameters()
        }
        state = {
            "algorithm": CHECKPOINT_ALGORITHM,
            "epoch": self.epoch,
            "batch_in_epoch": self.batch_in_epoch,
            "global_step": self.global_step,
            "history": self.history,
            "config": asdict(self.config),
            "examples": len(self._texts),
        }
        write_checkpoint(
            folder, weights=weights, optimizer=self.optimizer, state=state, rng=torch_rng_tensors()
        )
        atomic_write_text(self.checkpoint_dir / "latest", name + "\n")
        self._prune()
        return folder

    def _prune(self) -> None:
        assert self.checkpoint_dir is not None
        folders = sorted(p for p in self.checkpoint_dir.glob("step-*") if p.is_dir())
        for old in folders[: -self.config.keep_checkpoints]:
            shutil.rmtree(old, ignore_errors=True)

    def load_checkpoint(self, folder: str | Path) -> None:
        """Restore weights, optimiser, RNG and position from a checkpoint folder.

        Raises:
            ValueError: for a checkpoint of another trainer, of the previous progress-trainer
                format, or of another network, or one made with a different number of
                examples or batch size (the resumed order would not match).
        """
        import torch

        folder = Path(folder)
        _refuse_previous_format(folder)
        state, weights, rng = read_checkpoint(folder)
        if state.get("algorithm") != CHECKPOINT_ALGORITHM:
            raise ValueError(
                f"{folder} is a {state.get('algorithm')!r} checkpoint, not a progress-model "
                "one: resume from the progress trainer's own checkpoints"
            )
        if state.get("examples") != len(self._texts):
            raise ValueError(
                f"{folder} was trained on {state.get('examples')} examples, not "
                f"{len(self._texts)}: resume with the same data"
            )
        if state["config"]["batch_size"] != self.config.batch_size:
            raise ValueError(
                f"{folder} used batch_size {state['config']['batch_size']}, not "
                f"{self.config.batch_size}: resume with the same settings"
            )
        params = dict(self.model.network.named_parameters())
        if sorted(f"{WEIGHTS_PREFIX}.{n}" for n in params) != sorted(weights):
            raise ValueError(
                f"{folder} does not fit this model (other parameters): resume with the model "
                "the checkpoint was trained from"
            )
        with torch.no_grad():
            for name, param in params.items():
                param.copy_(weights[f"{WEIGHTS_PREFIX}.{name}"].to(param.device, param.dtype))
        load_optimizer_state(self.optimizer, folder)
        restore_torch_rng(rng)
        from gui_gym.train.checkpoint import check_progress

        check_progress(
            folder / "trainer_state.json",
            state,
            epoch=self.config.epochs,
            batch_in_epoch=len(self._batches(0)),
        )
        self.epoch = int(state["epoch"])
        self.batch_in_epoch = int(state["batch_in_epoch"])
        self.global_step = int(state["global_step"])
        self.history = list(state["history"])


CHECKPOINT_ALGORITHM = "progress_model"
"""``trainer_state.json``'s ``algorithm`` in the progress trainer's checkpoints."""
WEIGHTS_PREFIX = "progress"
"""Prefix of the network's parameters in a checkpoint's ``weights.safetensors``."""


def latest_checkpoint(checkpoint_dir: str | Path) -> Path | None:
    """The checkpoint ``checkpoint_dir/latest`` names, when it is complete; else None.

    Raises:
        ValueError: for a checkpoint of the previous progress-trainer format.
    """
    checkpoint_dir = Path(checkpoint_dir)
    pointer = checkpoint_dir / "latest"
    if not pointer.is_file():
        return None
    folder = checkpoint_dir / pointer.read_text(encoding="utf-8").strip()
    _refuse_previous_format(folder)
    return folder if (folder / "trainer_state.json").is_file() else None


def _refuse_previous_format(folder: Path) -> None:
    """Raise for a checkpoint the progress trainer wrote before it used the shared format.

    Those folders (``trainer.json``, ``trainer.safetensors`` and the model's files) carried
    the optimizer in a format of their own; its moments are not read back, but the model in
    them still loads, so the message says how to keep it.
    """
    if (folder / "trainer.json").is_file() and not (folder / "trainer_state.json").is_file():
        raise ValueError(
            f"{folder} is a progress-model training checkpoint in the previous format "
            "(trainer.json + trainer.safetensors), which this version no longer resumes. "
            f"The model in it still loads with ProgRM.load({str(folder)!r}); to train on, "
            "start the run again without resume (remove the checkpoints folder or choose "
            "another --out)"
        )


def fit_progress_model(
    trajectories: Sequence[Trajectory],
    labels: Sequence[TrajectoryLabels] | None = None,
    *,
    kind: str = "progrm",
    backbone: str | Path = "tiny",
    config: ProgressTrainConfig | None = None,
    eval_trajectories: Sequence[Trajectory] | None = None,
    eval_labels: Sequence[TrajectoryLabels] | None = None,
    out: str | Path | None = None,
    balance: bool = True,
    max_length: int = 384,
    vocab_size: int = 4000,
    hidden: int = 64,
    layers: int = 2,
    heads: int = 2,
    pooling: str = "last",
    resume: bool = False,
    progress: bool = True,
    device: str | None = None,
) -> tuple[ProgRM, TrainResult]:
    """Build, train and save a progress model or ORM from labelled trajectories.

    ``kind="progrm"`` trains on every step's progress label (plus each reset state at 0),
    with the success/failure steps balanced 1:1 (ProgRM Appendix C) when ``balance`` is set.
    ``kind="orm"`` trains on each trajectory's final state and outcome (the ORM baseline).

    Args:
        trajectories: Training episodes.
        labels: Their progress labels (needed for ``progrm``, ignored for ``orm``).
        kind: ``"progrm"`` or ``"orm"``.
        backbone: ``"tiny"`` (a small GPT-2 trained from scratch with a word-level
            tokenizer built on the training texts) or a local folder with a pretrained model.
        config: Training settings.
        eval_trajectories: Scored after each epoch (with ``eval_labels`` for ``progrm``).
        eval_labels: Labels of ``eval_trajectories``.
        out: Folder for ``init/`` (the model as built, before training: the architecture
            and tokenizer a resumed run starts from), ``checkpoints/`` and the final
            ``model/`` (None: nothing saved).
        balance: Balance success and failure steps 1:1 (``progrm`` only).
        max_length: Tokens per state.
        vocab_size: Vocabulary of the tiny tokenizer.
        hidden: Hidden size of the tiny backbone.
        layers: Layers of the tiny backbone.
        heads: Attention heads of the tiny backbone.
        pooling: ``"last"`` or ``"mean"``.
        resume: Continue from ``out/checkpoints`` (the weights, optimiser and position) in
            the model of ``out/init``; ``backbone`` and the model settings are then not used.
        progress: Show progress bars.
        device: Torch device.

    Returns:
        The trained model and what training did.

    Raises:
        ValueError: for an unknown kind, ``progrm`` without labels, or a checkpoint to resume
            that does not fit (another trainer's, the previous format, other data).
    """
    import torch

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    config = config or ProgressTrainConfig()
    if kind == "progrm":
        if labels is None:
            raise ValueError("kind='progrm' needs progress labels (run label_lcs or label_env)")
        examples = progress_examples(trajectories, labels)
        if balance:
            keep = balance_steps([e.success for e in examples], np.random.default_rng(config.seed))
            examples = [examples[i] for i in keep]
        evaluation = (
            progress_examples(eval_trajectories, eval_labels)
            if eval_trajectories is not None and eval_labels is not None
            else None
        )
    else:
        examples = orm_examples(trajectories)
        evaluation = orm_examples(eval_trajectories) if eval_trajectories is not None else None
    checkpoints = Path(out) / "checkpoints" if out is not None else None
    init = Path(out) / "init" if out is not None else None
    latest = latest_checkpoint(checkpoints) if resume and checkpoints is not None else None
    if latest is not None and init is not None:
        # the tokenizer and architecture of the interrupted run; its weights come next
        model = ProgRM.load(init, device=device)
    elif str(backbone) == "tiny":
        tokenizer = build_word_tokenizer((format_state(e.query) for e in examples), vocab_size)
        torch.manual_seed(config.seed)
        backbone_config = tiny_backbone_config(
            len(tokenizer), hidden=hidden, layers=layers, heads=heads, max_positions=max_length
        )
        model = ProgRM.from_config(
            backbone_config,
            tokenizer,
            kind=kind,
            pooling=pooling,
            max_length=max_length,
            device=device,
        )
    else:
        torch.manual_seed(config.seed)
        model = ProgRM.from_pretrained_backbone(
            backbone, kind=kind, pooling=pooling, max_length=max_length, device=device
        )
    if latest is None and init is not None:
        model.save(init)
    trainer = ProgressTrainer(
        model,
        examples,
        config,
        eval_examples=evaluation,
        checkpoint_dir=checkpoints,
        progress=progress,
    )
    result = trainer.train(resume=latest is not None)
    if out is not None:
        model.save(Path(out) / "model")
    return model, result
