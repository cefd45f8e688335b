"""The shared core of the RL trainers: everything an algorithm does not own.

An algorithm module (``grpo.py``, ``reinforce_pp.py``, ``ppo.py``, ``semi_online.py``,
``offline_grpo.py``) holds only what makes it that algorithm: how it collects its groups,
its advantages and its loss. This module holds the rest, once:

* :class:`TrainConfig`: the hyperparameters every algorithm shares, each default cited;
* :class:`Policy`: the policy (a Hugging Face causal LM from a folder), optional LoRA through
  peft, the reference model for KL (the adapter switched off under LoRA, else a frozen copy),
  bf16 on CUDA;
* :func:`score_completions`: log-probabilities of the *given* completion token ids (the ids
  the policy sampled; decoded text is never re-tokenized);
* :func:`clipped_surrogate`, :func:`kl_estimate` (k1, k2, k3), :func:`aggregate_tokens`
  (token-mean or turn-mean) and :func:`policy_loss` built from them;
* :class:`Trainer`: the loop (collect, advantages, PPO-style epochs of mini-batches with
  gradient accumulation, LR schedule, clipping), seeding, safetensors checkpoints with exact
  resume (weights, optimizer, scheduler, every RNG; JSON beside, never pickle), JSONL
  metrics and a rich progress bar; data-parallel over the processes ``accelerate launch``
  starts (:mod:`gui_gym.train.data_parallel`).

The unit of training is a :class:`TurnSample`: one step's prompt ids, completion ids and a
per-token advantage, cut from a :class:`~gui_gym.core.trajectory.Trajectory` whose steps carry
the rollout engine's token fields.
"""

from __future__ import annotations

import copy
import json
import math
import random
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from gui_gym.core.files import write_folder_atomically
from gui_gym.core.progress import progress_enabled
from gui_gym.core.trajectory import (
    Trajectory,
    atomic_write_text,
    read_jsonl,
    write_jsonl,
)
from gui_gym.train.checkpoint import (
    load_optimizer_state,
    read_checkpoint,
    restore_torch_rng,
    torch_rng_tensors,
    write_checkpoint,
)
from gui_gym.train.data_parallel import DataParallel

__all__ = [
    "KL_ESTIMATORS",
    "LOSS_AGGREGATIONS",
    "Algorithm",
    "LossInputs",
    "Policy",
    "TrainConfig",
    "Trainer",
    "TurnSample",
    "aggregate_tokens",
    "clipped_surrogate",
    "iteration_rng",
    "kl_estimate",
    "policy_loss",
    "read_checkpoint",
    "resolve_device",
    "restore_torch_rng",
    "score_completions",
    "seed_everything",
    "torch_rng_tensors",
    "turns_from_trajectory",
    "write_checkpoint",
]

KL_ESTIMATORS = ("k1", "k2", "k3")
"""Schulman's estimators of ``KL(pi || pi_ref)`` from samples of ``pi``."""
LOSS_AGGREGATIONS = ("token_mean", "turn_mean")
"""How per-token losses become one number (see :func:`aggregate_tokens`)."""
LR_SCHEDULES = ("constant", "linear", "cosine")
STEP_INFO_KEYS = ("semi_online", "milestone", "prm", "judge", "progress")
"""Wrapper components the rollout engine keeps in ``Step.info`` for the algorithms."""


def _torch() -> Any:
    try:
        import torch
    except ImportError as err:  # pragma: no cover - the llm extra is installed in CI
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(
            "training needs torch and transformers; pip install 'gui-gym[llm]'"
        ) from err
    return torch


# ------------------------------------------------------------------------------ configuration


@dataclass
class TrainConfig:
    """Hyperparameters every algorithm shares. An algorithm's own live in its module.

    Attributes:
        model: Folder of the policy (a Hugging Face causal LM with safetensors weights).
        out: Run folder: ``checkpoint/`` (latest, for resume), ``model/`` (final weights),
            ``metrics.jsonl``, ``config.json``.
        iterations: Collect-then-update rounds.
        seed: Seeds torch, numpy, Python and the per-iteration task and env seeds.
        lora: Train LoRA adapters (peft) instead of every weight.
        lora_r, lora_alpha, lora_dropout: LoRA rank, scale and dropout.
        lora_target_modules: peft's ``target_modules`` (``"all-linear"`` by default).
        learning_rate: Constant 1e-6 in ADMIRE (App. A.1.2) and UI-S1 (Table 9).
        lr_schedule: ``constant`` (ADMIRE, UI-S1, GUI-Shepherd), ``linear`` or ``cosine``
            decay over ``iterations`` after ``warmup_iterations``.
        warmup_iterations: Linear warm-up of the learning rate.
        weight_decay: AdamW weight decay; 0.01 in GUI-Shepherd App. C.
        max_grad_norm: Gradient-norm clip (verl's default 1.0).
        update_epochs: Passes over each batch; 2 in ADMIRE App. A.1.2.
        mini_batch_turns: Turns per optimizer step; 128 in ADMIRE App. A.1.2.
        micro_batch_turns: Turns per forward/backward (gradient accumulation inside a
            mini-batch; the loss is exactly that of the whole mini-batch).
        clip_eps: PPO clip ratio; 0.2 in ADMIRE App. A.1.2.
        clip_eps_high: Upper clip bound when set (DAPO's clip-higher uses 0.28); None means
            ``clip_eps`` on both sides.
        kl_coef: Weight of the KL loss to the reference model; 0 in ADMIRE (App. A.1.2) and
            GUI-Shepherd's PPO (App. B.2).
        kl_estimator: ``k1``, ``k2`` or ``k3`` (see :func:`kl_estimate`).
        loss_agg: ``token_mean`` (UI-S1 Eq. 13: 1/K over all tokens) or ``turn_mean`` (ADMIRE
            Eq. 12: the mean over steps of each step's token-mean).
        temperature: Sampling temperature; scoring uses the same ``logits / temperature``.
        max_new_tokens: Generation budget per step; 512 in ADMIRE App. A.1.2.
        num_envs: Envs the rollout engine steps at once (one batched generation per round).
        generation_batch_size: Prompts per ``generate`` call of the local policy.
        save_every: Iterations between checkpoints (and one at the end).
        device: ``auto`` (CUDA when present), ``cpu`` or ``cuda[:i]``.
        dtype: ``auto``: on CUDA, a LoRA run keeps the frozen base in bf16 (peft keeps the
            adapters in fp32) and a full fine-tune keeps fp32 master weights with bf16 autocast
            for the forward passes (bf16 weights cannot take 1e-6 updates); fp32 on CPU.
            ``bfloat16``: bf16 weights everywhere (less memory, lossy updates).
            ``float32``: no bf16 at all.
        progress: Show a rich progress bar.
    """

    model: str = ""
    out: str = "runs/train"
    iterations: int = 100
    seed: int = 0
    lora: bool = False
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.0
    lora_target_modules: str = "all-linear"
    learning_rate: float = 1e-6
    lr_schedule: str = "constant"
    warmup_iterations: int = 0
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    update_epochs: int = 2
    mini_batch_turns: int = 128
    micro_batch_turns: int = 8
    clip_eps: float = 0.2
    clip_eps_high: float | None = None
    kl_coef: float = 0.0
    kl_estimator: str = "k3"
    loss_agg: str = "turn_mean"
    temperature: float = 1.0
    max_new_tokens: int = 512
    num_envs: int = 16
    generation_batch_size: int = 16
    save_every: int = 10
    device: str = "auto"
    dtype: str = "auto"
    progress: bool = True

    def __post_init__(self) -> None:
        positive = ("iterations", "update_epochs", "mini_batch_turns", "micro_batch_turns")
        for name in (
            *positive,
            "max_new_tokens",
            "save_every",
            "lora_r",
            "num_envs",
            "generation_batch_size",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate!r}")
        if not 0 < self.clip_eps < 1:
            raise ValueError(f"clip_eps must be in (0, 1), got {self.clip_eps!r}")
        if self.clip_eps_high is not None and not self.clip_eps_high > 0:
            raise ValueError(f"clip_eps_high must be > 0 or None, got {self.clip_eps_high!r}")
        if self.kl_coef < 0:
            raise ValueError(f"kl_coef must be >= 0, got {self.kl_coef!r}")
        if self.kl_estimator not in KL_ESTIMATORS:
            raise ValueError(
                f"kl_estimator must be one of {', '.join(KL_ESTIMATORS)}, got {self.kl_estimator!r}"
            )
        if self.loss_agg not in LOSS_AGGREGATIONS:
            raise ValueError(
                f"loss_agg must be one of {', '.join(LOSS_AGGREGATIONS)}, got {self.loss_agg!r}"
            )
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(
                f"lr_schedule must be one of {', '.join(LR_SCHEDULES)}, got {self.lr_schedule!r}"
            )
        if not self.temperature > 0:
            raise ValueError(f"temperature must be > 0 for RL sampling, got {self.temperature!r}")
        if self.dtype not in ("auto", "float32", "bfloat16"):
            raise ValueError(f"dtype must be auto, float32 or bfloat16, got {self.dtype!r}")

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def for_algorithm(cls, defaults: dict[str, Any], **settings: Any) -> TrainConfig:
        """A config with an algorithm module's ``TRAIN_DEFAULTS`` under the given settings."""
        return cls(**{**defaults, **settings})


def resolve_device(device: str) -> str:
    """``auto`` becomes ``cuda`` when a GPU is visible, else ``cpu``.

    Raises:
        ValueError: for ``cuda`` on a machine without one.
    """
    torch = _torch()
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for, but torch sees no CUDA device")
    if not (device == "cpu" or device.startswith("cuda")):
        raise ValueError(f"device must be auto, cpu or cuda[:i], got {device!r}")
    return device


def seed_everything(seed: int) -> None:
    """Seed Python, numpy and torch (CPU and every CUDA device)."""
    torch = _torch()
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def iteration_rng(seed: int, iteration: int) -> np.random.Generator:
    """The generator of an iteration's task order and env seeds: a function of the run seed
    and the iteration only, so a resumed run draws what the uninterrupted one did."""
    return np.random.default_rng([seed, iteration])


# ---------------------------------------------------------------------------------- the policy


class Policy:
    """A causal LM being trained, its tokenizer and its reference for KL.

    Args:
        model: A ``transformers`` causal LM (or a peft model around one).
        tokenizer: Its tokenizer (needs a pad or eos token).
        device: Where the model lives.
        reference: A frozen reference model; None means "the model with its LoRA adapter
            switched off" when ``model`` is a peft model, else no reference.
    """

    def __init__(self, model: Any, tokenizer: Any, *, device: str, reference: Any = None):
        self.model = model
        self.tokenizer = tokenizer
        self.device = device
        self.reference = reference
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else None
        if pad is None:
            pad = tokenizer.eos_token_id
        if pad is None:
            raise ValueError("the tokenizer has neither a pad nor an eos token to pad with")
        self.pad_id = int(pad)
        # RL on LLMs runs without dropout (as verl and OpenRLHF do): the sampling policy
        # and the scored policy must be the same function
        self.model.eval()

    @property
    def is_lora(self) -> bool:
        return hasattr(self.model, "disable_adapter")

    @classmethod
    def load(
        cls, config: TrainConfig, *, need_reference: bool, device: str | None = None
    ) -> Policy:
        """Load ``config.model`` (safetensors only), wrap it in LoRA when asked, and make the
        reference model when ``need_reference``; on ``device`` when given (a data-parallel
        process's own GPU), else ``config.device``.

        Raises:
            FileNotFoundError: when the folder or its safetensors weights are missing.
        """
        torch = _torch()
        import transformers

        path = Path(config.model)
        if not path.is_dir():
            raise FileNotFoundError(f"no model folder at {path}")
        if not any(path.glob("*.safetensors")):
            raise FileNotFoundError(
                f"{path} has no .safetensors weights (pickled checkpoints are not loaded)"
            )
        device = device or resolve_device(config.device)
        dtype = _dtype(config.dtype, device, config.lora)
        tokenizer = transformers.AutoTokenizer.from_pretrained(path)
        model = transformers.AutoModelForCausalLM.from_pretrained(
            path, use_safetensors=True, dtype=dtype
        ).to(device)
        reference = None
        if config.lora:
            model = apply_lora(model, config)
        elif need_reference:
            reference = copy.deepcopy(model).eval()
            for p in reference.parameters():
                p.requires_grad_(False)
        del torch
        return cls(model, tokenizer, device=device, reference=reference)

    def trainable_named_parameters(self) -> list[tuple[str, Any]]:
        return [(n, p) for n, p in self.model.named_parameters() if p.requires_grad]

    def reference_context(self) -> Any:
        """A context in which :attr:`model` computes the reference policy (LoRA off), or
        None when a separate reference model exists or there is none."""
        if self.reference is None and self.is_lora:
            return self.model.disable_adapter()
        return None

    def save_pretrained(self, folder: Path) -> None:
        """Write the policy as a plain Hugging Face folder (LoRA merged in), safetensors."""
        model = self.model
        if self.is_lora:
            model = copy.deepcopy(model).merge_and_unload()
        model.save_pretrained(folder, safe_serialization=True)
        self.tokenizer.save_pretrained(folder)


def _dtype(name: str, device: str, lora: bool = False) -> Any:
    """The dtype the weights load in (see ``TrainConfig.dtype``)."""
    torch = _torch()
    if name == "auto":
        return torch.bfloat16 if device.startswith("cuda") and lora else torch.float32
    return {"float32": torch.float32, "bfloat16": torch.bfloat16}[name]


def autocast_context(config: TrainConfig, device: str) -> Any:
    """bf16 autocast for forward passes of an fp32 model on CUDA (``dtype="auto"``);
    a no-op context elsewhere."""
    import contextlib

    torch = _torch()
    if config.dtype == "auto" and device.startswith("cuda") and not config.lora:
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def apply_lora(model: Any, config: TrainConfig) -> Any:
    """Wrap ``model`` in peft LoRA adapters (only the adapters train)."""
    import peft

    target: str | list[str] = config.lora_target_modules
    if target != "all-linear":
        target = [t.strip() for t in target.split(",") if t.strip()]
    lora = peft.LoraConfig(
        r=config.lora_r,
        lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout,
        target_modules=target,
        task_type="CAUSAL_LM",
    )
    return peft.get_peft_model(model, lora)


# --------------------------------------------------------------------------------- samples


@dataclass
class TurnSample:
    """One step of one episode, as the loss sees it.

    Attributes:
        prompt_ids: Token ids the policy was conditioned on.
        completion_ids: Token ids it sampled (scored exactly as they are).
        advantages: One advantage per completion token (a step-level advantage is repeated
            over its tokens).
        sampled_logprobs: The behaviour policy's log-probs from the rollout (diagnostics).
        old_logprobs: ``pi_old`` per token, filled at the start of the update.
        ref_logprobs: ``pi_ref`` per token, when a KL term needs them.
        returns: The critic's regression target (PPO), when there is one.
        old_value: The critic's value of the step before the update (PPO's value clipping).
        prompt: The prompt (text or messages), for models that read it differently (a critic
            with its own tokenizer).
        episode: Index of the episode in the batch; ``step`` its step index.
    """

    prompt_ids: list[int]
    completion_ids: list[int]
    advantages: list[float]
    sampled_logprobs: list[float] | None = None
    old_logprobs: list[float] | None = None
    ref_logprobs: list[float] | None = None
    returns: float | None = None
    old_value: float | None = None
    prompt: Any = None
    episode: int = 0
    step: int = 0

    def __post_init__(self) -> None:
        if not self.completion_ids:
            raise ValueError(f"episode {self.episode} step {self.step} has no completion tokens")
        if len(self.advantages) != len(self.completion_ids):
            raise ValueError(
                f"episode {self.episode} step {self.step}: {len(self.advantages)} advantages for "
                f"{len(self.completion_ids)} completion tokens"
            )


def turns_from_trajectory(
    trajectory: Trajectory,
    step_advantages: Sequence[float] | Sequence[Sequence[float]],
    *,
    episode: int = 0,
    steps: Sequence[int] | None = None,
) -> list[TurnSample]:
    """Cut a trajectory into :class:`TurnSample` s.

    Args:
        trajectory: An episode whose steps carry ``prompt_ids`` and ``completion_ids``.
        step_advantages: One advantage per step (repeated over the step's tokens) or one list
            per step with an advantage per token.
        episode: Episode index recorded on the samples.
        steps: Which step indices to keep (default all; an anchor group keeps only the
            steps after its fork).

    Raises:
        ValueError: when a step lacks token ids (the backend did not give them: train with a
            local model or a server that returns token ids) or the advantages do not fit.
    """
    chosen = list(range(len(trajectory.steps))) if steps is None else list(steps)
    if len(step_advantages) != len(chosen):
        raise ValueError(
            f"{len(step_advantages)} advantages for {len(chosen)} steps of task "
            f"{trajectory.task_id!r}"
        )
    out: list[TurnSample] = []
    for index, advantage in zip(chosen, step_advantages):
        step = trajectory.steps[index]
        prompt_ids = getattr(step, "prompt_ids", None)
        completion_ids = getattr(step, "completion_ids", None)
        if not prompt_ids or not completion_ids:
            raise ValueError(
                f"step {index} of task {trajectory.task_id!r} has no token ids; RL needs the "
                "sampled ids (a TransformersLLM policy, or a server that returns token ids)"
            )
        per_token = (
            [float(a) for a in advantage]
            if isinstance(advantage, Sequence)
            else [float(advantage)] * len(completion_ids)
        )
        out.append(
            TurnSample(
                prompt_ids=list(prompt_ids),
                completion_ids=list(completion_ids),
                advantages=per_token,
                sampled_logprobs=getattr(step, "logprobs", None),
                prompt=getattr(step, "prompt", None),
                episode=episode,
                step=index,
            )
        )
    return out


# ------------------------------------------------------------------------------- scoring


def score_completions(
    model: Any,
    turns: Sequence[TurnSample],
    *,
    pad_id: int,
    temperature: float = 1.0,
    device: str | None = None,
) -> list[Any]:
    """Log-probabilities of each turn's completion ids under ``model``: one 1-D float32
    tensor per turn, differentiable when grad is enabled.

    Prompt and completion ids are concatenated as given (never decoded and re-encoded),
    right-padded, and read at the completion positions with ``log_softmax(logits / T)``, the
    distribution the sampler drew from.
    """
    torch = _torch()
    device = device or str(next(model.parameters()).device)
    lengths = [len(t.prompt_ids) + len(t.completion_ids) for t in turns]
    width = max(lengths)
    ids = torch.full((len(turns), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(turns), width), dtype=torch.long)
    for i, turn in enumerate(turns):
        row = turn.prompt_ids + turn.completion_ids
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    ids, mask = ids.to(device), mask.to(device)
    logits = model(input_ids=ids, attention_mask=mask).logits
    out = []
    for i, turn in enumerate(turns):
        start = len(turn.prompt_ids) - 1  # position p predicts token p + 1
        rows = logits[i, start : start + len(turn.completion_ids)].float() / temperature
        target = ids[i, start + 1 : start + 1 + len(turn.completion_ids)]
        out.append(torch.log_softmax(rows, dim=-1).gather(-1, target[:, None]).squeeze(-1))
    return out


# ------------------------------------------------------------------------------- losses


def kl_estimate(logp: Any, ref_logp: Any, estimator: str = "k3") -> Any:
    """Per-token estimate of ``KL(pi || pi_ref)`` from tokens sampled from ``pi``.

    With ``r = log pi - log pi_ref``: ``k1 = r`` (unbiased, can be negative), ``k2 = r^2 / 2``
    and ``k3 = exp(-r) - 1 + r`` (unbiased and never negative; GRPO's choice, Shao et al.).

    Raises:
        ValueError: for an unknown estimator.
    """
    torch = _torch()
    log_ratio = logp - ref_logp
    if estimator == "k1":
        return log_ratio
    if estimator == "k2":
        return 0.5 * log_ratio**2
    if estimator == "k3":
        return torch.exp(-log_ratio) - 1.0 + log_ratio
    raise ValueError(f"kl estimator must be one of {', '.join(KL_ESTIMATORS)}, got {estimator!r}")


def clipped_surrogate(
    logp: Any, old_logp: Any, advantages: Any, clip_low: float, clip_high: float
) -> tuple[Any, Any]:
    """PPO's clipped surrogate, per token, as a loss to minimise.

    ``-min(rho A, clip(rho, 1 - clip_low, 1 + clip_high) A)`` with ``rho = pi / pi_old``
    (ADMIRE Eq. 12, UI-S1 Eq. 13, GUI-Shepherd Eq. 5). ``clip_high > clip_low`` is DAPO's
    clip-higher.

    Returns:
        ``(loss, clipped)``: the per-token loss and a float mask of tokens where the clipped
        term was the one taken.
    """
    torch = _torch()
    ratio = torch.exp(logp - old_logp)
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high)
    loss = torch.maximum(unclipped, clipped)
    return loss, (clipped > unclipped).float()


def aggregate_tokens(
    per_token: Sequence[Any], mode: str, *, total_tokens: int, total_turns: int
) -> Any:
    """Sum per-token losses of some turns into their share of a mini-batch's loss.

    ``token_mean``: every token of the mini-batch weighs alike (``sum / total_tokens``; UI-S1
    Eq. 13's 1/K, DAPO's token-level loss). ``turn_mean``: each turn's token-mean, averaged
    over the mini-batch's turns (``/ total_turns``; ADMIRE Eq. 12 averages over steps). The
    denominators are the whole mini-batch's, so micro-batches accumulate to exactly the
    mini-batch loss.

    Raises:
        ValueError: for an unknown mode.
    """
    torch = _torch()
    if mode == "token_mean":
        return torch.stack([t.sum() for t in per_token]).sum() / total_tokens
    if mode == "turn_mean":
        return torch.stack([t.mean() for t in per_token]).sum() / total_turns
    raise ValueError(f"loss_agg must be one of {', '.join(LOSS_AGGREGATIONS)}, got {mode!r}")


@dataclass
class LossInputs:
    """What an algorithm's loss receives for one micro-batch.

    Attributes:
        turns: The micro-batch's samples.
        logp: Current log-probs per turn (differentiable).
        old_logp, ref_logp, advantages: Tensors per turn (``ref_logp`` None without KL).
        total_tokens, total_turns: Size of the whole mini-batch (for aggregation).
        config: The run's :class:`TrainConfig`.
    """

    turns: Sequence[TurnSample]
    logp: list[Any]
    old_logp: list[Any]
    ref_logp: list[Any] | None
    advantages: list[Any]
    total_tokens: int
    total_turns: int
    config: TrainConfig


def policy_loss(inputs: LossInputs, *, kl_in_loss: bool = True) -> tuple[Any, dict[str, float]]:
    """The clipped surrogate plus ``kl_coef`` times the KL estimate, aggregated as
    ``config.loss_agg`` says. Returns the loss and its parts (floats, for metrics)."""
    config = inputs.config
    high = config.clip_eps_high if config.clip_eps_high is not None else config.clip_eps
    parts = [
        clipped_surrogate(lp, old, adv, config.clip_eps, high)
        for lp, old, adv in zip(inputs.logp, inputs.old_logp, inputs.advantages)
    ]
    sizes = {"total_tokens": inputs.total_tokens, "total_turns": inputs.total_turns}
    surrogate = aggregate_tokens([p[0] for p in parts], config.loss_agg, **sizes)
    clip_fraction = aggregate_tokens([p[1] for p in parts], config.loss_agg, **sizes)
    loss = surrogate
    stats = {"pg_loss": float(surrogate.detach()), "clip_fraction": float(clip_fraction)}
    if inputs.ref_logp is not None:
        kl = aggregate_tokens(
            [
                kl_estimate(lp, ref, config.kl_estimator)
                for lp, ref in zip(inputs.logp, inputs.ref_logp)
            ],
            config.loss_agg,
            **sizes,
        )
        stats["kl"] = float(kl.detach())
        if kl_in_loss and config.kl_coef > 0:
            loss = loss + config.kl_coef * kl
    return loss, stats


# ---------------------------------------------------------------------------- the algorithm


class Algorithm:
    """What an algorithm module supplies. Subclasses set :attr:`name` and override
    :meth:`collect` and :meth:`advantages` (and :meth:`loss` when theirs is not the plain
    clipped surrogate).

    Attributes:
        needs_reference: Whether reference log-probs are computed for the batch (KL in the
            loss or in the reward).
    """

    name: ClassVar[str] = ""

    @property
    def needs_reference(self) -> bool:
        return False

    def setup(self, trainer: Trainer) -> None:
        """Build what the algorithm owns (envs, critic) once the policy is loaded."""

    def collect(self, trainer: Trainer, iteration: int) -> list[list[Trajectory]]:
        """Roll out this iteration's groups of episodes."""
        raise NotImplementedError

    def advantages(
        self, trainer: Trainer, groups: list[list[Trajectory]], iteration: int
    ) -> list[TurnSample]:
        """Turn the groups into samples with per-token advantages."""
        raise NotImplementedError

    def loss(self, trainer: Trainer, inputs: LossInputs) -> tuple[Any, dict[str, float]]:
        return policy_loss(inputs)

    def modules(self) -> dict[str, Any]:
        """Extra trainable torch modules (a critic), saved in checkpoints under their name."""
        return {}

    def param_groups(self) -> list[dict[str, Any]]:
        """Extra optimizer parameter groups (a critic with its own learning rate)."""
        return []

    def state_dict(self) -> dict[str, Any]:
        """JSON-safe state to checkpoint (counters, running statistics)."""
        return {}

    def metrics(self) -> dict[str, Any]:
        """Numbers for each iteration's metrics record; :meth:`state_dict` by default (an
        algorithm whose state is bulky, such as ARPO's replay buffer, returns less)."""
        return self.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""


# ------------------------------------------------------------------------------ the loop


def _chunks(items: Sequence[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


class Trainer:
    """The RL loop every algorithm shares.

    Each iteration: ``algorithm.collect`` (episodes, through the rollout engine), reference
    log-probs when needed, ``algorithm.advantages``, then ``update_epochs`` passes of shuffled
    mini-batches (``mini_batch_turns`` turns each, accumulated over micro-batches of
    ``micro_batch_turns``) of ``algorithm.loss``; the LR schedule steps once per iteration.
    Metrics go to ``out/metrics.jsonl``; a checkpoint to ``out/checkpoint`` every
    ``save_every`` iterations and at the end; a run started on an ``out`` with a checkpoint
    resumes from it and does exactly what the uninterrupted run would have done next.

    Under ``accelerate launch`` (more than one process) the loop is data-parallel
    (:mod:`gui_gym.train.data_parallel`): each process rolls out its share of the requests,
    every process sees the whole batch, each takes its share of every mini-batch and the
    gradients are summed, so an update equals the one-process update of the same batch; the
    main process alone writes files.

    Args:
        config: Shared hyperparameters.
        algorithm: The algorithm.
        policy: A loaded :class:`Policy` (default: :meth:`Policy.load` from ``config``).
        prompt: The agent's prompt: a name of :data:`gui_gym.agents.prompts.PROMPTS`
            (``progrm``, ``admire``, ``ui_s1``, ``gui_shepherd``, ``default``), a
            ``PromptFormat``, or a callable ``PromptInput -> chat messages``.
        on_batch: Called with each batch's groups and the iteration after collection and
            before advantages (ADMIRE's once-per-batch milestone refinement,
            :meth:`gui_gym.train.rewards.RewardStack.refine_milestones`).
        resume: Continue from ``out/checkpoint`` when there is one.
    """

    def __init__(
        self,
        config: TrainConfig,
        algorithm: Algorithm,
        *,
        policy: Policy | None = None,
        prompt: Any = "default",
        on_batch: Callable[[list[list[Trajectory]], int], None] | None = None,
        resume: bool = True,
    ):
        torch = _torch()
        from gui_gym.agents.llm import LLMAgent
        from gui_gym.models.llm import TransformersLLM

        self.config = config
        self.algorithm = algorithm
        self.on_batch = on_batch
        self.out = Path(config.out)
        self.parallel = DataParallel.from_environment(config.device)
        # one seed for everything built below, on every process (LoRA adapters and heads
        # start random and must start equal); sampling streams are per process (see below)
        seed_everything(config.seed)
        needs_ref = algorithm.needs_reference or config.kl_coef > 0
        self.policy = policy or Policy.load(
            config,
            need_reference=needs_ref,
            device=self.parallel.device(resolve_device(config.device)),
        )
        if needs_ref and self.policy.reference is None and not self.policy.is_lora:
            reference = copy.deepcopy(self.policy.model).eval()
            for p in reference.parameters():
                p.requires_grad_(False)
            self.policy.reference = reference
        llm = TransformersLLM(
            self.policy.model,
            self.policy.tokenizer,
            device=self.policy.device,
            batch_size=config.generation_batch_size,
        )
        self.agent = LLMAgent(
            llm,
            prompt=prompt,
            temperature=config.temperature,
            max_new_tokens=config.max_new_tokens,
        )
        self._engines: dict[Any, Any] = {}
        self.algorithm.setup(self)
        groups = [
            {
                "params": [p for _, p in self.policy.trainable_named_parameters()],
                "lr": config.learning_rate,
            },
            *self.algorithm.param_groups(),
        ]
        self.optimizer = torch.optim.AdamW(groups, weight_decay=config.weight_decay)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, self._lr_factor)
        if self.parallel.enabled:
            self.parallel.broadcast_parameters(self._parameters())
            seed_everything(self.parallel.seed(config.seed))
        self.iteration = 0
        self.history: list[dict[str, Any]] = []
        if resume and (self.out / "checkpoint" / "trainer_state.json").exists():
            self.load_checkpoint(self.out / "checkpoint")

    # -- schedule ---------------------------------------------------------------------------

    def _lr_factor(self, iteration: int) -> float:
        config = self.config
        if config.warmup_iterations and iteration < config.warmup_iterations:
            return (iteration + 1) / config.warmup_iterations
        if config.lr_schedule == "constant":
            return 1.0
        span = max(1, config.iterations - config.warmup_iterations)
        done = min(1.0, (iteration - config.warmup_iterations) / span)
        if config.lr_schedule == "linear":
            return 1.0 - done
        return 0.5 * (1.0 + math.cos(math.pi * done))

    def _parameters(self) -> list[Any]:
        """Every parameter the optimizer updates (policy, then the algorithm's)."""
        return [p for group in self.optimizer.param_groups for p in group["params"]]

    # -- rollouts ---------------------------------------------------------------------------

    def run_episodes(
        self, make_env: Callable[[], Any], requests: Sequence[dict[str, Any]]
    ) -> list[Trajectory]:
        """One episode per request (``{"seed": ..., "options": {"task": ...} | {...}}``)
        through the shared rollout engine (:mod:`gui_gym.train.rollout`), the policy acting on
        every env at once; an episode lost to an env or server failure carries
        ``infra_error`` and is left out of the update by the algorithms.

        Data-parallel, each process runs its contiguous share of ``requests`` and every
        process returns all the episodes, in request order."""
        from gui_gym.train.rollout import EpisodeSpec, RolloutEngine

        share = self.parallel.shard(len(requests))
        engine = self._engines.get(make_env)
        if engine is None:
            # an engine makes its envs up front: no more than the first batch needs
            size = max(1, min(self.config.num_envs, len(share)))
            engine = RolloutEngine(make_env, self.agent, num_envs=size, info_keys=STEP_INFO_KEYS)
            self._engines[make_env] = engine
        specs = []
        for position in share:
            options = dict(requests[position].get("options") or {})
            task = options.pop("task", None)
            specs.append(
                EpisodeSpec(
                    task,
                    requests[position].get("seed"),
                    episode=position,
                    options=options or None,
                )
            )
        episodes = engine.run(specs) if specs else []
        if not self.parallel.enabled:
            return episodes
        return [
            Trajectory.from_dict(record)
            for record in self.parallel.gather_shards([t.to_dict() for t in episodes])
        ]

    def close(self) -> None:
        """Close the rollout engines' envs."""
        for engine in self._engines.values():
            engine.close()
        self._engines.clear()

    # -- scoring ----------------------------------------------------------------------------

    def score(self, model: Any, turns: Sequence[TurnSample]) -> list[Any]:
        """Log-probs of the turns' completions under ``model``, micro-batched, no grad."""
        torch = _torch()
        out: list[Any] = []
        with torch.no_grad(), autocast_context(self.config, self.policy.device):
            for chunk in _chunks(range(len(turns)), self.config.micro_batch_turns):
                out.extend(
                    t.detach()
                    for t in score_completions(
                        model,
                        [turns[i] for i in chunk],
                        pad_id=self.policy.pad_id,
                        temperature=self.config.temperature,
                        device=self.policy.device,
                    )
                )
        return out

    def _score_shared(self, model: Any, turns: Sequence[TurnSample]) -> list[list[float]]:
        """:meth:`score` as lists, each process scoring its share of ``turns``."""
        share = [turns[i] for i in self.parallel.shard(len(turns))]
        local = [lp.cpu().tolist() for lp in self.score(model, share)]
        return self.parallel.gather_shards(local)

    def reference_logprobs(self, turns: Sequence[TurnSample]) -> None:
        """Fill ``ref_logprobs`` of every turn (the adapter switched off under LoRA)."""
        context = self.policy.reference_context()
        if context is not None:
            with context:
                scores = self._score_shared(self.policy.model, turns)
        elif self.policy.reference is not None:
            scores = self._score_shared(self.policy.reference, turns)
        else:
            raise ValueError("no reference model: set kl_coef > 0 or use LoRA")
        for turn, lp in zip(turns, scores):
            turn.ref_logprobs = lp

    def old_logprobs(self, turns: Sequence[TurnSample]) -> None:
        """Fill ``old_logprobs`` (``pi_old``: the current weights, before this update) of
        the turns that lack them."""
        missing = [t for t in turns if t.old_logprobs is None]
        for turn, lp in zip(missing, self._score_shared(self.policy.model, missing)):
            turn.old_logprobs = lp

    # -- one iteration ----------------------------------------------------------------------

    def step(self) -> dict[str, Any]:
        """Run one iteration (collect, advantages, update) and return its metrics."""
        iteration = self.iteration
        groups = self.algorithm.collect(self, iteration)
        episodes = [t for g in groups for t in g]
        clean = [t for t in episodes if getattr(t, "infra_error", None) is None]
        metrics: dict[str, Any] = {
            "iteration": iteration,
            "episodes": len(clean),
            "infra_errors": len(episodes) - len(clean),
            "success_rate": float(np.mean([t.success for t in clean])) if clean else None,
            "mean_return": float(np.mean([t.total_reward for t in clean])) if clean else None,
            "mean_steps": float(np.mean([len(t.steps) for t in clean])) if clean else None,
        }
        if self.on_batch is not None:
            groups = self._run_on_batch(groups, iteration)
        turns = self.algorithm.advantages(self, groups, iteration)
        metrics.update(self.update(turns))
        metrics["lr"] = self.scheduler.get_last_lr()[0]
        metrics.update(self.algorithm.metrics())  # running counters (dropped groups, ...)
        with warnings.catch_warnings():
            # the schedule runs per iteration, also one where no group taught anything and
            # the optimizer did not step
            warnings.filterwarnings("ignore", message="Detected call of `lr_scheduler.step")
            self.scheduler.step()
        self.iteration += 1
        return metrics

    def _run_on_batch(self, groups: list[list[Trajectory]], iteration: int) -> list[list]:
        """``on_batch`` on the main process (it may write, e.g. the milestone store); its
        re-scored groups are then every process's."""
        assert self.on_batch is not None
        if self.parallel.is_main:
            self.on_batch(groups, iteration)
        if not self.parallel.enabled:
            return groups
        records = self.parallel.broadcast_json([[t.to_dict() for t in g] for g in groups])
        return [[Trajectory.from_dict(r) for r in group] for group in records]

    def update(self, turns: list[TurnSample]) -> dict[str, Any]:
        """``update_epochs`` passes of mini-batches over ``turns``; returns mean statistics."""
        torch = _torch()
        config = self.config
        if not turns:
            return {"turns": 0, "tokens": 0}
        if (self.algorithm.needs_reference or config.kl_coef > 0) and any(
            t.ref_logprobs is None for t in turns
        ):
            self.reference_logprobs(turns)
        self.old_logprobs(turns)
        stats: dict[str, float] = {}
        grad_norms: list[float] = []
        drift = [
            abs(a - b)
            for t in turns
            if t.sampled_logprobs is not None and len(t.sampled_logprobs) == len(t.old_logprobs)
            for a, b in zip(t.sampled_logprobs, t.old_logprobs or [])
        ]
        params = self._parameters()
        device = self.policy.device
        for epoch in range(config.update_epochs):
            # the mini-batch order is a function of (seed, iteration, epoch): the same on
            # every data-parallel process and in a resumed run
            order = np.random.default_rng([config.seed, self.iteration, epoch, 1])
            for mini in _chunks(order.permutation(len(turns)).tolist(), config.mini_batch_turns):
                self.optimizer.zero_grad(set_to_none=True)
                total_tokens = sum(len(turns[i].completion_ids) for i in mini)
                # this process's share of the mini-batch; the loss denominators stay the
                # whole mini-batch's, so the summed gradient is the mini-batch's
                mine = [mini[i] for i in self.parallel.shard(len(mini))]
                for micro in _chunks(mine, config.micro_batch_turns):
                    batch = [turns[i] for i in micro]
                    with autocast_context(config, device):
                        logp = score_completions(
                            self.policy.model,
                            batch,
                            pad_id=self.policy.pad_id,
                            temperature=config.temperature,
                            device=device,
                        )

                    def tensors(name: str, batch: list[TurnSample] = batch) -> list[Any]:
                        return [
                            torch.tensor(getattr(t, name), dtype=torch.float32, device=device)
                            for t in batch
                        ]

                    inputs = LossInputs(
                        turns=batch,
                        logp=logp,
                        old_logp=tensors("old_logprobs"),
                        ref_logp=tensors("ref_logprobs")
                        if batch[0].ref_logprobs is not None
                        else None,
                        advantages=tensors("advantages"),
                        total_tokens=total_tokens,
                        total_turns=len(mini),
                        config=config,
                    )
                    with autocast_context(config, device):
                        loss, parts = self.algorithm.loss(self, inputs)
                    loss.backward()
                    for key, value in parts.items():
                        stats[key] = stats.get(key, 0.0) + value
                self.parallel.all_reduce_gradients(params)
                grad_norm = torch.nn.utils.clip_grad_norm_(params, config.max_grad_norm)
                grad_norms.append(float(grad_norm))
                self.optimizer.step()
        # loss parts are each micro-batch's share of its mini-batch: their sum over a
        # mini-batch (and over the processes) is the mini-batch's value, averaged here over
        # the mini-batches
        n_mini = math.ceil(len(turns) / config.mini_batch_turns) * config.update_epochs
        mean = {key: v / n_mini for key, v in self.parallel.all_reduce_sum(stats).items()}
        mean["grad_norm"] = float(np.mean(grad_norms))
        advantages = [a for t in turns for a in t.advantages]
        mean.update(
            turns=len(turns),
            tokens=sum(len(t.completion_ids) for t in turns),
            advantage_mean=float(np.mean(advantages)),
            advantage_std=float(np.std(advantages)),
            logprob_drift=float(np.mean(drift)) if drift else None,
        )
        return mean

    # -- the run ----------------------------------------------------------------------------

    def train(self, on_iteration: Callable[[dict[str, Any]], None] | None = None) -> list[dict]:
        """Run until ``config.iterations``; returns the metrics of this call's iterations."""
        config = self.config
        main = self.parallel.is_main
        if main:
            self.out.mkdir(parents=True, exist_ok=True)
            text = json.dumps(asdict(config), indent=2) + "\n"
            atomic_write_text(self.out / "config.json", text)
        done: list[dict[str, Any]] = []
        progress = _progress(progress_enabled(config.progress) and main)
        with progress:
            task = progress.add_task(
                f"{self.algorithm.name}", total=config.iterations, completed=self.iteration
            )
            while self.iteration < config.iterations:
                metrics = self.step()
                self.history.append(metrics)
                done.append(metrics)
                if main:
                    write_jsonl(self.out / "metrics.jsonl", self.history)
                if self.iteration % config.save_every == 0 or self.iteration == config.iterations:
                    self.save_checkpoint(self.out / "checkpoint")
                if on_iteration is not None:
                    on_iteration(metrics)
                success = metrics["success_rate"]
                progress.update(
                    task,
                    advance=1,
                    description=f"{self.algorithm.name} success "
                    + ("-" if success is None else f"{success:.2f}"),
                )
        if main:
            write_folder_atomically(self.out / "model", self.policy.save_pretrained)
        self.parallel.barrier()
        self.close()
        return done

    # -- checkpoints ------------------------------------------------------------------------

    def _rng_state(self) -> dict[str, Any]:
        """This process's random streams, JSON-safe."""
        torch = _torch()
        python_state = random.getstate()
        state: dict[str, Any] = {
            "torch_cpu": torch.get_rng_state().tolist(),
            "python_random": [python_state[0], list(python_state[1]), python_state[2]],
            "numpy_random": _numpy_state(),
        }
        if torch.cuda.is_available():
            state["torch_cuda"] = [s.tolist() for s in torch.cuda.get_rng_state_all()]
        return state

    def save_checkpoint(self, path: Path) -> None:
        """Everything the next iteration depends on, safetensors + JSON, written atomically.

        Data-parallel, every process must call it (each one's random streams are gathered);
        the main process writes: rank 0's streams under the one-process names, rank ``r``'s
        as ``rank{r}.torch_cpu`` (``rng.safetensors``) and ``ranks[r - 1]``
        (``trainer_state.json``)."""
        torch = _torch()
        streams = self.parallel.gather_json(self._rng_state())
        if not self.parallel.is_main:
            self.parallel.barrier()
            return

        weights = {
            f"policy.{n}": p.detach().cpu().contiguous()
            for n, p in self.policy.trainable_named_parameters()
        }
        for prefix, module in self.algorithm.modules().items():
            # parameters, not state_dict: tied weights appear once (safetensors refuses
            # shared tensors)
            for n, p in module.named_parameters():
                weights[f"{prefix}.{n}"] = p.detach().cpu().contiguous()
        rng = {}
        for rank, stream in enumerate(streams):
            prefix = f"rank{rank}." if rank else ""
            rng[f"{prefix}torch_cpu"] = torch.tensor(stream["torch_cpu"], dtype=torch.uint8)
            for i, cuda in enumerate(stream.get("torch_cuda", [])):
                rng[f"{prefix}torch_cuda_{i}"] = torch.tensor(cuda, dtype=torch.uint8)
        state = {
            "iteration": self.iteration,
            "algorithm": self.algorithm.name,
            "algorithm_state": self.algorithm.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "python_random": streams[0]["python_random"],
            "numpy_random": streams[0]["numpy_random"],
            "world_size": self.parallel.world_size,
            "ranks": [
                {key: s[key] for key in ("python_random", "numpy_random")} for s in streams[1:]
            ],
            "history": self.history,
        }
        write_checkpoint(path, weights=weights, optimizer=self.optimizer, state=state, rng=rng)
        self.parallel.barrier()

    def load_checkpoint(self, path: Path) -> None:
        """Restore a :meth:`save_checkpoint` folder.

        Raises:
            ValueError: when it was written by another algorithm or for another model.
        """
        torch = _torch()
        state, weights, rng = read_checkpoint(path)
        if state.get("algorithm") != self.algorithm.name:
            raise ValueError(
                f"{path} is a {state.get('algorithm')!r} checkpoint, not {self.algorithm.name!r};"
                " use another --out"
            )
        own = dict(self.policy.trainable_named_parameters())
        missing = [n for n in own if f"policy.{n}" not in weights]
        if missing:
            raise ValueError(
                f"checkpoint {path} does not fit this model (missing {missing[:3]}); "
                "use another --out"
            )
        with torch.no_grad():
            for name, param in own.items():
                param.copy_(weights[f"policy.{name}"].to(param.device, param.dtype))
            for prefix, module in self.algorithm.modules().items():
                for name, param in module.named_parameters():
                    key = f"{prefix}.{name}"
                    if key not in weights:
                        raise ValueError(f"checkpoint {path} has no {key}; use another --out")
                    param.copy_(weights[key].to(param.device, param.dtype))
        load_optimizer_state(self.optimizer, path)
        self.scheduler.load_state_dict(state["scheduler"])
        self._load_rng_state(path, state, rng)
        self.algorithm.load_state_dict(state["algorithm_state"])
        self.iteration = int(state["iteration"])
        self.history = list(state.get("history", []))

    def _load_rng_state(self, path: Path, state: dict[str, Any], rng: dict[str, Any]) -> None:
        """Restore this process's random streams from a checkpoint (see
        :meth:`save_checkpoint`); a process the checkpoint has none for (resumed with more
        processes than it was written with) keeps its fresh per-process seed, with a warning:
        the weights, optimizer and schedule are still exact, its sampling is not."""
        rank = self.parallel.rank
        saved = int(state.get("world_size", 1))
        if saved != self.parallel.world_size and self.parallel.is_main:
            warnings.warn(
                f"{path} was written by {saved} process(es) and resumes with "
                f"{self.parallel.world_size}: sampling streams differ from the original run's",
                stacklevel=3,
            )
        if rank >= saved:
            return
        prefix = f"rank{rank}." if rank else ""
        python, numpy_state = (
            (state["python_random"], state["numpy_random"])
            if rank == 0
            else (
                state["ranks"][rank - 1]["python_random"],
                state["ranks"][rank - 1]["numpy_random"],
            )
        )
        restore_torch_rng(rng, prefix)
        version, internal, gauss = python
        random.setstate((version, tuple(internal), gauss))
        np.random.set_state(tuple(numpy_state))  # type: ignore[arg-type]


# ------------------------------------------------------------------------- checkpoint files


def _numpy_state() -> list[Any]:
    name, keys, pos, has_gauss, gauss = np.random.get_state()
    return [name, keys.tolist(), int(pos), int(has_gauss), float(gauss)]


class _NoProgress:
    def __enter__(self) -> _NoProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, *args: Any, **kwargs: Any) -> int:
        return 0

    def update(self, *args: Any, **kwargs: Any) -> None:
        return None


def _progress(enabled: bool) -> Any:
    if not enabled:
        return _NoProgress()
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(file=sys.stderr),
    )


def load_metrics(out: str | Path) -> list[dict[str, Any]]:
    """The metrics records of a run folder (empty when there are none yet)."""
    path = Path(out) / "metrics.jsonl"
    return list(read_jsonl(path)) if path.exists() else []
