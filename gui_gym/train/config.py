"""The RL trainers' configuration: :class:`TrainConfig`, the hyperparameters every algorithm
shares (each default cited), the allowed values of its enumerated fields, and the run-wide
setup every piece of training asks for first: torch itself (:func:`require_torch`), the device
(:func:`resolve_device`) and the seeds (:func:`seed_everything`, :func:`iteration_rng`).

An algorithm's own hyperparameters live in its module (``grpo.GRPOConfig``, ...).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

__all__ = [
    "KL_ESTIMATORS",
    "LOSS_AGGREGATIONS",
    "LR_SCHEDULES",
    "STEP_INFO_KEYS",
    "TrainConfig",
    "iteration_rng",
    "require_torch",
    "resolve_device",
    "seed_everything",
]

KL_ESTIMATORS = ("k1", "k2", "k3")
"""Schulman's estimators of ``KL(pi || pi_ref)`` from samples of ``pi``."""
LOSS_AGGREGATIONS = ("token_mean", "turn_mean")
"""How per-token losses become one number (see :func:`~gui_gym.train.losses.aggregate_tokens`)."""
LR_SCHEDULES = ("constant", "linear", "cosine")
STEP_INFO_KEYS = ("semi_online", "milestone", "prm", "judge", "orm", "progress", "format")
"""Wrapper components the rollout engine keeps in ``Step.info`` for the algorithms."""


def require_torch() -> Any:
    """The ``torch`` module, imported on first use so that ``import gui_gym`` stays light.

    Raises:
        gymnasium.error.DependencyNotInstalled: without torch (the ``llm`` extra).
    """
    try:
        import torch
    except ImportError as err:  # pragma: no cover - the llm extra is installed in CI
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(
            "training needs torch and transformers; pip install 'gui-gym[llm]'"
        ) from err
    return torch


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
        adam_beta1, adam_beta2: AdamW's betas; torch's (0.9, 0.999) by default, ProgRM's
            (0.9, 0.95) for its REINFORCE++ (App. D: "for both reward model training and
            online RL training").
        max_grad_norm: Gradient-norm clip (verl's default 1.0).
        update_epochs: Passes over each batch; 2 in ADMIRE App. A.1.2.
        mini_batch_turns: Turns per optimizer step; 128 in ADMIRE App. A.1.2.
        mini_batches: A fixed number of optimizer steps per epoch instead (the batch's turns
            split into that many near-equal mini-batches, verl's ``fixed_num_mini_batches``;
            4 in UI-S1 Table 9); None uses ``mini_batch_turns``.
        micro_batch_turns: Turns per forward/backward (gradient accumulation inside a
            mini-batch; the loss is exactly that of the whole mini-batch).
        clip_eps: PPO clip ratio; 0.2 in ADMIRE App. A.1.2.
        clip_eps_high: Upper clip bound when set (DAPO's clip-higher uses 0.28); None means
            ``clip_eps`` on both sides.
        kl_coef: Weight of the KL loss to the reference model; 0 in ADMIRE (App. A.1.2) and
            GUI-Shepherd's PPO (App. B.2).
        kl_estimator: ``k1``, ``k2`` or ``k3`` (see :func:`~gui_gym.train.losses.kl_estimate`).
        loss_agg: ``token_mean`` (UI-S1 Eq. 13: 1/K over all tokens) or ``turn_mean`` (ADMIRE
            Eq. 12: the mean over steps of each step's token-mean).
        temperature: Sampling temperature; scoring uses the same ``logits / temperature``.
        max_new_tokens: Generation budget per step; 512 in ADMIRE App. A.1.2.
        num_envs: Envs the rollout engine steps at once (one batched generation per round).
        generation_batch_size: Prompts per ``generate`` call of the local policy.
        save_every: Iterations between checkpoints (and one at the end).
        device: ``auto`` (CUDA when present), ``cpu`` or ``cuda[:i]``.
        dtype: ``auto``: where the device computes bf16 natively (CUDA, or a CPU with
            AMX-BF16/AVX512-BF16; ``gui_gym.models.llm.precision``), a LoRA run keeps the
            frozen base in bf16 (peft keeps the adapters in fp32) and a full fine-tune keeps
            fp32 master weights with bf16 autocast for the forward passes, rollout generation
            included (bf16 weights cannot take 1e-6 updates); fp32 elsewhere.
            ``bfloat16``: bf16 weights everywhere (less memory, lossy updates; on a CPU
            without native bf16 one warning that it is slow).
            ``float32``: no bf16 at all.
        progress: Show a rich progress bar.
        screenshot: The policy is a vision-language model (a folder with a processor) whose
            prompts show the current screenshot (the envs must make them).
        images: Earlier screenshots each prompt shows besides the current one (UI-S1: 2).
        coordinates: The space of the policy's ``_XY`` coordinates (``screen``,
            ``qwen2_5_vl``, ``relative_1000``): mapped to screen pixels before the env.
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
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999
    max_grad_norm: float = 1.0
    update_epochs: int = 2
    mini_batch_turns: int = 128
    mini_batches: int | None = None
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
    screenshot: bool = False
    images: int = 0
    coordinates: str = "screen"

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
        for name in ("adam_beta1", "adam_beta2"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"{name} must be in [0, 1), got {getattr(self, name)!r}")
        if self.mini_batches is not None and (
            not isinstance(self.mini_batches, int)
            or isinstance(self.mini_batches, bool)
            or self.mini_batches < 1
        ):
            raise ValueError(
                f"mini_batches must be a positive int or None, got {self.mini_batches!r}"
            )
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
        if not isinstance(self.images, int) or self.images < 0:
            raise ValueError(f"images must be an int >= 0, got {self.images!r}")
        if self.images and not self.screenshot:
            raise ValueError("images > 0 shows earlier screenshots: it needs screenshot=True")
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
    torch = require_torch()
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for, but torch sees no CUDA device")
    if not (device == "cpu" or device.startswith("cuda")):
        raise ValueError(f"device must be auto, cpu or cuda[:i], got {device!r}")
    return device


def seed_everything(seed: int) -> None:
    """Seed Python, numpy and torch (CPU and every CUDA device)."""
    torch = require_torch()
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def epoch_of(iteration: int, population: int, count: int) -> int:
    """The 1-based epoch (pass over the ``population`` tasks) that iteration ``iteration``
    (0-based, ``count`` tasks each, as :func:`epoch_draw` deals them) belongs to: ADMIRE's
    Algorithm 1 counts epochs from 1 (line 3) and decays the milestone weight per epoch
    (line 4: ``lambda0 * gamma**E``), not per batch."""
    if population < 1 or count < 1 or iteration < 0:
        raise ValueError(
            f"need population >= 1, count >= 1 and iteration >= 0; got {population}, {count},"
            f" {iteration}"
        )
    return 1 + (iteration * count) // population


def epoch_draw(seed: int, iteration: int, population: int, count: int) -> list[int]:
    """Iteration ``iteration``'s ``count`` items of ``population``, drawn without replacement
    within an epoch: the items are dealt in a random order, epoch after epoch, ``count`` per
    iteration, so every task is trained on once before any is seen again (GUI-Shepherd
    App. B draws distinct tasks per batch; with-replacement draws repeated a task in 24% of
    PPO's iterations over 116 tasks).

    A batch that straddles two epochs never holds an item twice (while ``count <= population``):
    the items the old epoch already gave the batch go to the end of the new epoch's order. The
    draw is a function of ``seed`` and ``iteration`` only, so a resumed run draws what the
    uninterrupted one did.

    Raises:
        ValueError: for an empty population, a count below 1 or a negative iteration.
    """
    if population < 1 or count < 1 or iteration < 0:
        raise ValueError(
            f"need population >= 1, count >= 1 and iteration >= 0; got {population}, {count},"
            f" {iteration}"
        )
    start, stop = iteration * count, (iteration + 1) * count
    last_epoch = (stop - 1) // population
    order = list(np.random.default_rng([seed, 0, 0xE9]).permutation(population))
    orders = [order]
    for epoch in range(1, last_epoch + 1):
        fresh = list(np.random.default_rng([seed, epoch, 0xE9]).permutation(population))
        boundary = epoch * population
        # the part of the batch that straddles this boundary which the old epoch gave
        taken = set(order[population - (boundary % count) :]) if boundary % count else set()
        order = [i for i in fresh if i not in taken] + [i for i in fresh if i in taken]
        orders.append(order)
    return [int(orders[p // population][p % population]) for p in range(start, stop)]


def iteration_rng(seed: int, iteration: int) -> np.random.Generator:
    """The generator of an iteration's task order and env seeds: a function of the run seed
    and the iteration only, so a resumed run draws what the uninterrupted one did."""
    return np.random.default_rng([seed, iteration])
