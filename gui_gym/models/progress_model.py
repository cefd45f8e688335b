"""Progress models: ``Prog([g, s_t])`` in ``[0, 1]`` (ProgRM Sec. 2.3), and how to train one.

* :class:`ProgressQuery` is what a model scores: the task goal ``g``, the actions taken so far
  and the current screen, i.e. ProgRM's state ``s_t = [a_1, ..., a_{t-1}, o_t]`` (Eq. 6).
* :class:`ProgressModel` is the protocol wrappers call: ``predict(queries) -> values``.
* :class:`MilestoneProgress` is rule-based: the fraction of the env's milestones reached. No
  torch, no GPU; the reference for ProgRM-Env's ground truth.
* :class:`ProgRM` is the learned model: a transformers backbone, an MLP head and a sigmoid,
  trained with binary cross-entropy on progress labels (Eq. 5). Trained on final-step
  success only it is the ORM baseline.
* :class:`ProgressTrainer` trains either, with a progress bar, safetensors checkpoints,
  exact resume and evaluation MAE.

torch, transformers, tokenizers and safetensors are imported inside the functions that need
them (``pip install 'gui-gym[llm]'``).
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from gui_gym.core.files import write_folder_atomically
from gui_gym.core.progress import progress_bar
from gui_gym.core.task import TaskSuite
from gui_gym.core.trajectory import (
    Trajectory,
    atomic_write_text,
    check_replaceable_folder,
    errors_naming,
)
from gui_gym.core.untrusted_text import load_json
from gui_gym.rewards.progress import TrajectoryLabels, balance_steps

if TYPE_CHECKING:
    import torch

__all__ = [
    "MilestoneProgress",
    "ProgRM",
    "ProgressExample",
    "ProgressModel",
    "ProgressQuery",
    "ProgressTrainer",
    "TrainConfig",
    "TrainResult",
    "build_word_tokenizer",
    "evaluate_mae",
    "fit_progress_model",
    "format_state",
    "orm_examples",
    "progress_examples",
    "tiny_backbone_config",
    "trajectory_queries",
]

CHECKPOINT_FORMAT = "gui-gym/progress-model"
CHECKPOINT_VERSION = 1


class ProgressQuery(NamedTuple):
    """One state to score: ProgRM's ``[g, s_t]`` with ``s_t = [a_1, ..., a_{t-1}, o_t]``.

    A ``NamedTuple`` so that building one per env step costs next to nothing.

    Attributes:
        instruction: The task goal ``g``.
        actions: Actions taken so far, oldest first (natural-language descriptions).
        screen: The current screen ``o_t`` (rendered text).
        task_id: The task, for models keyed by task (milestone totals).
        milestones: Env milestones reached so far (``info["milestones"]``).
        milestone_total: The task's number of milestones, when the caller knows it.
    """

    instruction: str
    actions: Sequence[str]
    screen: str
    task_id: str = ""
    milestones: Sequence[str] = ()
    milestone_total: int | None = None


@runtime_checkable
class ProgressModel(Protocol):
    """Anything that scores states: one progress value in ``[0, 1]`` per query."""

    def predict(self, queries: Sequence[ProgressQuery]) -> Sequence[float]: ...


def format_state(query: ProgressQuery) -> str:
    """The text a learned progress model reads: goal, action history, current screen.

    Laid out like ProgRM's prompt (Appendix G, Table 7): instructions, history actions,
    current screen; the screen comes last so truncation cuts the end of the screen first.
    """
    history = "\n".join(f"{i}. {a}" for i, a in enumerate(query.actions, 1)) or "(none)"
    return (
        f"Instructions:\n{query.instruction}\n"
        f"History actions:\n{history}\n"
        f"Current screen:\n{query.screen}"
    )


def _action_text(step: Any) -> str:
    return step.action_description or step.action


def trajectory_queries(trajectory: Trajectory) -> list[ProgressQuery]:
    """The states ``s_0 .. s_T`` of a recorded episode as queries.

    ``s_0`` is the reset screen with no actions; ``s_t`` (t >= 1) is the screen after step
    ``t - 1`` with its actions so far, which is where that step's progress label belongs.
    """
    steps = trajectory.steps
    if not steps:
        return [
            ProgressQuery(trajectory.instruction, (), trajectory.final_screen, trajectory.task_id)
        ]
    actions = [_action_text(s) for s in steps]
    queries = [ProgressQuery(trajectory.instruction, (), steps[0].screen, trajectory.task_id)]
    for t, step in enumerate(steps):
        screen = steps[t + 1].screen if t + 1 < len(steps) else trajectory.final_screen
        queries.append(
            ProgressQuery(
                trajectory.instruction,
                tuple(actions[: t + 1]),
                screen,
                trajectory.task_id,
                tuple(step.milestones),
            )
        )
    return queries


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
# Rule-based


class MilestoneProgress:
    """Progress as the fraction of the task's env milestones reached.

    ``Prog = |milestones reached| / K`` with ``K`` the task's milestone count: the even
    progress over milestones that ProgRM takes as ground truth (Sec. 3.3). Needs no model.

    Args:
        totals: ``K`` per task id. A query's own ``milestone_total`` (which the single-env
            wrapper fills from the env's task) takes precedence.

    Raises:
        ValueError: if a total is below 1.
    """

    def __init__(self, totals: Mapping[str, int] | None = None):
        self.totals = dict(totals or {})
        for task_id, total in self.totals.items():
            if int(total) < 1:
                raise ValueError(f"task {task_id!r}: milestone total must be >= 1, got {total!r}")

    @classmethod
    def from_suite(cls, suite: TaskSuite) -> MilestoneProgress:
        """Totals from every task of a suite (``env.unwrapped.suite``)."""
        return cls({task.task_id: len(task.milestones) for task in suite if task.milestones})

    @classmethod
    def from_env_id(cls, env_id: str, **kwargs: Any) -> MilestoneProgress:
        """Totals from the suite of a registered id (made once with ``gym.make``)."""
        import gymnasium as gym

        # the ids are registered already: importing this module ran gui_gym/__init__.py
        env = gym.make(env_id, **kwargs)
        try:
            return cls.from_suite(env.unwrapped.suite)
        finally:
            env.close()

    def predict(self, queries: Sequence[ProgressQuery]) -> list[float]:
        """``min(1, |milestones| / K)`` per query.

        Raises:
            ValueError: for a task whose total is unknown.
        """
        score = self.milestone_progress
        return [score(len(q.milestones), q.milestone_total, q.task_id) for q in queries]

    def milestone_progress(self, reached: int, total: int | None, task_id: str) -> float:
        """Progress from a milestone count alone: ``min(1, reached / K)``.

        ``ProgressRewardWrapper`` calls this directly when a model has it, so the rule-based
        reward costs a division per step rather than a query (see the speed benchmark).

        Args:
            reached: Milestones reached so far.
            total: The task's milestone count if the caller knows it, else None.
            task_id: The task, to look the total up.

        Raises:
            ValueError: for a task whose total is unknown.
        """
        if total or (total := self.totals.get(task_id)):
            return 1.0 if reached >= total else reached / total
        raise ValueError(
            f"MilestoneProgress does not know how many milestones task {task_id!r} has; "
            f"build it with MilestoneProgress.from_suite(...) or from_env_id(...), or pass totals"
        )


# ---------------------------------------------------------------------------------------------
# Learned: backbone + MLP + sigmoid


def _require(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as err:
        import gymnasium as gym

        raise gym.error.DependencyNotInstalled(
            f"the learned progress model needs {module} ({err}); pip install 'gui-gym[llm]'"
        ) from err


SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[EOS]")


def build_word_tokenizer(
    texts: Iterable[str], vocab_size: int = 4000, min_frequency: int = 1
) -> Any:
    """A small word-level tokenizer trained on ``texts`` (lower-cased words and punctuation),
    wrapped as a ``transformers.PreTrainedTokenizerFast``. Every encoding ends with ``[EOS]``,
    which last-token pooling reads.

    Args:
        texts: Training texts (e.g. ``format_state`` of the training queries).
        vocab_size: Largest vocabulary, special tokens included.
        min_frequency: Fewest occurrences for a word to get its own id.

    Raises:
        ValueError: if ``vocab_size`` is too small for the special tokens.
    """
    if vocab_size <= len(SPECIAL_TOKENS):
        raise ValueError(f"vocab_size must exceed {len(SPECIAL_TOKENS)}, got {vocab_size}")
    tokenizers = _require("tokenizers")
    transformers = _require("transformers")
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    tokenizer.normalizer = tokenizers.normalizers.Lowercase()
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    trainer = tokenizers.trainers.WordLevelTrainer(
        vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=list(SPECIAL_TOKENS)
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    tokenizer.post_processor = tokenizers.processors.TemplateProcessing(
        single="$A [EOS]", special_tokens=[("[EOS]", tokenizer.token_to_id("[EOS]"))]
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]"
    )


def tiny_backbone_config(
    vocab_size: int,
    kind: str = "gpt2",
    hidden: int = 64,
    layers: int = 2,
    heads: int = 2,
    max_positions: int = 512,
) -> Any:
    """A small transformers config to train from scratch on CPU (tests, benchmarks).

    Args:
        vocab_size: The tokenizer's vocabulary size.
        kind: ``"gpt2"`` (decoder, as the paper's LLM backbone) or ``"bert"`` (encoder).
        hidden: Hidden size.
        layers: Transformer layers.
        heads: Attention heads.
        max_positions: Longest input.

    Raises:
        ValueError: for an unknown ``kind``.
    """
    transformers = _require("transformers")
    if kind == "gpt2":
        return transformers.GPT2Config(
            vocab_size=vocab_size,
            n_embd=hidden,
            n_layer=layers,
            n_head=heads,
            n_positions=max_positions,
            bos_token_id=None,
            eos_token_id=None,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
        )
    if kind == "bert":
        return transformers.BertConfig(
            vocab_size=vocab_size,
            hidden_size=hidden,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            intermediate_size=4 * hidden,
            max_position_embeddings=max_positions,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        )
    raise ValueError(f"kind must be 'gpt2' or 'bert', got {kind!r}")


_NETWORK_CLASS: Any = None


def _network_class() -> Any:
    """The torch module (defined on first use so that importing this file needs no torch)."""
    global _NETWORK_CLASS
    if _NETWORK_CLASS is not None:
        return _NETWORK_CLASS
    torch = _require("torch")

    class ProgressNetwork(torch.nn.Module):
        """Backbone, pooled hidden state, MLP, one logit; ``sigmoid(logit)`` is Prog."""

        def __init__(self, backbone: Any, mlp_hidden: int, pooling: str):
            super().__init__()
            self.backbone = backbone
            self.pooling = pooling
            width = int(backbone.config.hidden_size)
            self.head = torch.nn.Sequential(
                torch.nn.Linear(width, mlp_hidden),
                torch.nn.GELU(),
                torch.nn.Linear(mlp_hidden, 1),
            )

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.backbone(
                input_ids=input_ids, attention_mask=attention_mask
            ).last_hidden_state
            if self.pooling == "mean":
                weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)
            else:  # last real token (inputs are right-padded)
                last = attention_mask.sum(1).clamp(min=1) - 1
                pooled = hidden[torch.arange(hidden.shape[0], device=hidden.device), last]
            return self.head(pooled).squeeze(-1)

    _NETWORK_CLASS = ProgressNetwork
    return ProgressNetwork


_KINDS = ("progrm", "orm")
_POOLINGS = ("last", "mean")


class ProgRM:
    """The learned progress model: ``Prog([g, s]) = sigmoid(MLP(LLM([g, s])))`` (ProgRM Eq. 5).

    Use :meth:`from_config` for a backbone built from a config (trained from scratch),
    :meth:`from_pretrained_backbone` for local pretrained weights, :meth:`load` for a saved
    model. ``kind="orm"`` marks the same model trained as an outcome reward model.

    Args:
        backbone: A transformers base model (``AutoModel``) returning ``last_hidden_state``.
        tokenizer: Its tokenizer (a pad token is set from EOS when missing).
        kind: ``"progrm"`` or ``"orm"`` (recorded in checkpoints).
        mlp_hidden: Width of the MLP head (default: the backbone's hidden size).
        pooling: ``"last"`` (last real token, as LLM reward heads do) or ``"mean"``.
        max_length: Tokens kept per state (the end of the screen is cut first).
        device: Torch device (default: CUDA when available, else CPU).

    Raises:
        ValueError: on an unknown kind or pooling, or a bad ``max_length``.
    """

    def __init__(
        self,
        backbone: Any,
        tokenizer: Any,
        *,
        kind: str = "progrm",
        mlp_hidden: int | None = None,
        pooling: str = "last",
        max_length: int = 384,
        device: str | None = None,
    ):
        torch = _require("torch")
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
        if pooling not in _POOLINGS:
            raise ValueError(f"pooling must be one of {_POOLINGS}, got {pooling!r}")
        if not isinstance(max_length, int) or max_length < 2:
            raise ValueError(f"max_length must be an int >= 2, got {max_length!r}")
        if tokenizer.pad_token is None:
            if tokenizer.eos_token is None:
                raise ValueError("the tokenizer has neither a pad nor an eos token")
            tokenizer.pad_token = tokenizer.eos_token
        tokenizer.padding_side = "right"
        self.kind = kind
        self.pooling = pooling
        self.max_length = max_length
        self.mlp_hidden = int(mlp_hidden or backbone.config.hidden_size)
        self.tokenizer = tokenizer
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.network = _network_class()(backbone, self.mlp_hidden, pooling).to(self.device)

    # ------------------------------------------------------------------------ construction

    @classmethod
    def from_config(cls, config: Any, tokenizer: Any, **kwargs: Any) -> ProgRM:
        """A model whose backbone is built (randomly initialised) from a transformers config."""
        transformers = _require("transformers")
        return cls(transformers.AutoModel.from_config(config), tokenizer, **kwargs)

    @classmethod
    def from_pretrained_backbone(cls, path: str | Path, **kwargs: Any) -> ProgRM:
        """A model on pretrained weights from a local folder (no download is attempted).

        Raises:
            OSError: if the folder holds no model or tokenizer.
        """
        transformers = _require("transformers")
        backbone = transformers.AutoModel.from_pretrained(str(path), local_files_only=True)
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        return cls(backbone, tokenizer, **kwargs)

    # -------------------------------------------------------------------------- inference

    def encode(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        """Tokenize, truncate to ``max_length`` and right-pad ``texts`` as tensors."""
        batch = self.tokenizer(
            list(texts),
            truncation=True,
            max_length=self.max_length,
            padding=True,
            return_tensors="pt",
        )
        return {
            "input_ids": batch["input_ids"].to(self.device),
            "attention_mask": batch["attention_mask"].to(self.device),
        }

    def predict(self, queries: Sequence[ProgressQuery], batch_size: int = 32) -> np.ndarray:
        """Progress in ``[0, 1]`` for each query (no gradients, eval mode)."""
        torch = _require("torch")
        if not queries:
            return np.zeros(0, dtype=np.float64)
        texts = [format_state(q) for q in queries]
        out = np.empty(len(texts), dtype=np.float64)
        was_training = self.network.training
        self.network.eval()
        try:
            with torch.no_grad():
                for start in range(0, len(texts), batch_size):
                    batch = self.encode(texts[start : start + batch_size])
                    logits = self.network(**batch)
                    out[start : start + len(logits)] = torch.sigmoid(logits).double().cpu().numpy()
        finally:
            self.network.train(was_training)
        return out

    # --------------------------------------------------------------------- save and load

    def _meta(self) -> dict[str, Any]:
        config = self.network.backbone.config
        return {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "kind": self.kind,
            "pooling": self.pooling,
            "max_length": self.max_length,
            "mlp_hidden": self.mlp_hidden,
            "backbone_config": config.to_dict(),
        }

    def _write(self, folder: Path) -> None:
        """Write the model's files into an existing (temporary) folder."""
        safetensors_torch = _require("safetensors.torch")
        safetensors_torch.save_model(self.network, str(folder / "model.safetensors"))
        self.tokenizer.save_pretrained(str(folder / "tokenizer"))
        (folder / "progress_model.json").write_text(
            json.dumps(self._meta(), indent=2, sort_keys=True), encoding="utf-8"
        )

    def save(self, path: str | Path) -> Path:
        """Save to the folder ``path`` (weights as safetensors, tokenizer, JSON metadata).

        The files are written to a temporary sibling folder that is then renamed into place;
        an existing folder at ``path`` is replaced only once the new one is complete.

        Raises:
            FileExistsError: when ``path`` is a non-empty folder that is not a progress-model
                checkpoint (its files would be deleted).
        """
        path = Path(path)
        check_replaceable_folder(path, "progress_model.json", "progress-model checkpoint")
        write_folder_atomically(path, self._write)
        return path

    @classmethod
    def load(cls, path: str | Path, device: str | None = None) -> ProgRM:
        """Load a model saved by :meth:`save` (or a trainer checkpoint).

        Raises:
            FileNotFoundError: if ``path`` holds no saved model.
            ValueError: if its metadata is not a progress-model checkpoint.
        """
        transformers = _require("transformers")
        safetensors_torch = _require("safetensors.torch")
        path = Path(path)
        meta_path = path / "progress_model.json"
        if not meta_path.is_file():
            raise FileNotFoundError(f"{path} holds no progress model (no progress_model.json)")
        with errors_naming(meta_path):
            meta = load_json(meta_path.read_bytes())
        if not isinstance(meta, dict) or meta.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(f"{meta_path}: not a {CHECKPOINT_FORMAT} checkpoint")
        if meta.get("version") != CHECKPOINT_VERSION:
            raise ValueError(f"{meta_path}: unsupported version {meta.get('version')!r}")
        backbone_config = dict(meta["backbone_config"])
        model_type = backbone_config.pop("model_type")
        config = transformers.AutoConfig.for_model(model_type, **backbone_config)
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            str(path / "tokenizer"), local_files_only=True
        )
        model = cls.from_config(
            config,
            tokenizer,
            kind=meta["kind"],
            mlp_hidden=meta["mlp_hidden"],
            pooling=meta["pooling"],
            max_length=meta["max_length"],
            device=device,
        )
        with errors_naming(path / "model.safetensors"):
            safetensors_torch.load_model(
                model.network,
                str(path / "model.safetensors"),
                strict=True,
                device=str(model.device),
            )
        return model


# ---------------------------------------------------------------------------------------------
# Training


@dataclass
class TrainConfig:
    """Training settings.

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

    def __post_init__(self) -> None:
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

    Checkpoints go to ``checkpoint_dir/step-<n>/`` (the model as :meth:`ProgRM.save` writes
    it, plus ``trainer.safetensors`` with the optimiser state and torch RNG, and
    ``trainer.json``), each written to a temporary folder and renamed into place; the file
    ``checkpoint_dir/latest`` names the newest. ``train(resume=True)`` continues from it at
    the exact batch it stopped at (the shuffling order is a function of seed and epoch).

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
        config: TrainConfig | None = None,
        eval_examples: Sequence[ProgressExample] | None = None,
        checkpoint_dir: str | Path | None = None,
        progress: bool = True,
    ):
        torch = _require("torch")
        if not train_examples:
            raise ValueError("no training examples")
        for examples in (train_examples, eval_examples or ()):
            bad = [e.target for e in examples if not 0.0 <= e.target <= 1.0]
            if bad:
                raise ValueError(f"progress targets must lie in [0, 1], got {bad[0]!r}")
        self.model = model
        self.config = config or TrainConfig()
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
        torch = _require("torch")
        if resume:
            latest = self.latest_checkpoint()
            if latest is None:
                raise FileNotFoundError(f"no checkpoint to resume in {self.checkpoint_dir}")
            self.load_checkpoint(latest)
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
        try:
            while self.epoch < self.config.epochs:
                batches = self._batches(self.epoch)
                network.train()
                losses: list[float] = []
                while self.batch_in_epoch < len(batches):
                    rows = batches[self.batch_in_epoch]
                    inputs = self.model.encode([self._texts[i] for i in rows])
                    targets = torch.from_numpy(self._targets[rows]).to(self.model.device)
                    logits = network(**inputs)
                    # Eq. 5: BCE between sigmoid(logit) and the label (computed on logits).
                    loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, targets)
                    self.optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    if self.config.max_grad_norm > 0:
                        torch.nn.utils.clip_grad_norm_(
                            network.parameters(), self.config.max_grad_norm
                        )
                    self.optimizer.step()
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
        """The newest complete checkpoint, or None."""
        if self.checkpoint_dir is None:
            return None
        pointer = self.checkpoint_dir / "latest"
        if not pointer.is_file():
            return None
        folder = self.checkpoint_dir / pointer.read_text(encoding="utf-8").strip()
        return folder if (folder / "trainer.json").is_file() else None

    def save_checkpoint(self) -> Path | None:
        """Write a checkpoint of the current state (None without a checkpoint folder)."""
        if self.checkpoint_dir is None:
            return None
        safetensors_torch = _require("safetensors.torch")
        torch = _require("torch")
        name = f"step-{self.global_step:08d}"
        folder = self.checkpoint_dir / name

        def write(tmp: Path) -> None:
            self.model._write(tmp)
            tensors, groups = _optimizer_tensors(self.optimizer)
            tensors["rng.torch"] = torch.get_rng_state()
            safetensors_torch.save_file(tensors, str(tmp / "trainer.safetensors"))
            state = {
                "epoch": self.epoch,
                "batch_in_epoch": self.batch_in_epoch,
                "global_step": self.global_step,
                "history": self.history,
                "config": asdict(self.config),
                "param_groups": groups,
                "examples": len(self._texts),
            }
            (tmp / "trainer.json").write_text(json.dumps(state, indent=2), encoding="utf-8")

        write_folder_atomically(folder, write)
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
            ValueError: if the checkpoint was made with a different number of examples or
                batch size (the resumed order would not match).
        """
        safetensors_torch = _require("safetensors.torch")
        torch = _require("torch")
        folder = Path(folder)
        with errors_naming(folder / "trainer.json"):
            state = load_json((folder / "trainer.json").read_bytes())
            if not isinstance(state, dict):
                raise ValueError("not a JSON object")
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
        with errors_naming(folder / "model.safetensors"):
            safetensors_torch.load_model(
                self.model.network,
                str(folder / "model.safetensors"),
                strict=True,
                device=str(self.model.device),
            )
        with errors_naming(folder / "trainer.safetensors"):
            tensors = safetensors_torch.load_file(str(folder / "trainer.safetensors"))
        torch.set_rng_state(tensors.pop("rng.torch"))
        _load_optimizer(self.optimizer, tensors, state["param_groups"], self.model.device)
        self.epoch = int(state["epoch"])
        self.batch_in_epoch = int(state["batch_in_epoch"])
        self.global_step = int(state["global_step"])
        self.history = list(state["history"])


def _optimizer_tensors(optimizer: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An optimiser's state as flat tensors (for safetensors) plus JSON-safe param groups."""
    torch = _require("torch")
    state = optimizer.state_dict()
    tensors: dict[str, Any] = {}
    for index, values in state["state"].items():
        for name, value in values.items():
            tensor = value if isinstance(value, torch.Tensor) else torch.tensor(value)
            tensors[f"state.{index}.{name}"] = tensor.detach().cpu().contiguous()
    groups = []
    for group in state["param_groups"]:
        clean = {}
        for key, value in group.items():
            clean[key] = list(value) if isinstance(value, tuple) else value
        groups.append(clean)
    return tensors, groups


def _load_optimizer(
    optimizer: Any, tensors: Mapping[str, Any], groups: list[dict[str, Any]], device: Any
) -> None:
    per_param: dict[int, dict[str, Any]] = {}
    for key, tensor in tensors.items():
        _, index, name = key.split(".", 2)
        per_param.setdefault(int(index), {})[name] = tensor
    restored_groups = []
    for group in groups:
        restored = dict(group)
        if "betas" in restored:
            restored["betas"] = tuple(restored["betas"])
        restored_groups.append(restored)
    optimizer.load_state_dict({"state": per_param, "param_groups": restored_groups})
    for values in optimizer.state.values():
        for name, value in values.items():
            if hasattr(value, "to") and name != "step":
                values[name] = value.to(device)


def fit_progress_model(
    trajectories: Sequence[Trajectory],
    labels: Sequence[TrajectoryLabels] | None = None,
    *,
    kind: str = "progrm",
    backbone: str | Path = "tiny",
    config: TrainConfig | None = None,
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
        out: Folder for ``checkpoints/`` and the final ``model/`` (None: nothing saved).
        balance: Balance success and failure steps 1:1 (``progrm`` only).
        max_length: Tokens per state.
        vocab_size: Vocabulary of the tiny tokenizer.
        hidden: Hidden size of the tiny backbone.
        layers: Layers of the tiny backbone.
        heads: Attention heads of the tiny backbone.
        pooling: ``"last"`` or ``"mean"``.
        resume: Continue from ``out/checkpoints`` (the model, optimiser and position).
        progress: Show progress bars.
        device: Torch device.

    Returns:
        The trained model and what training did.

    Raises:
        ValueError: for an unknown kind or ``progrm`` without labels.
    """
    torch = _require("torch")
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    config = config or TrainConfig()
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
    latest = None
    if resume and checkpoints is not None:
        pointer = checkpoints / "latest"
        if pointer.is_file():
            latest = checkpoints / pointer.read_text(encoding="utf-8").strip()
    if latest is not None:
        model = ProgRM.load(latest, device=device)
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
