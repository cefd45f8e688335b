"""The stable import path of the RL trainers' shared core: everything an algorithm does not own.

An algorithm module (``grpo.py``, ``reinforce_pp.py``, ``ppo.py``, ``semi_online.py``,
``offline_grpo.py``, ``arpo.py``) holds only what makes it that algorithm: how it collects its
groups, its advantages and its loss. The rest lives once, split by job as Stable-Baselines3
splits its ``common/``, and this module re-exports the public names of each part so that
``from gui_gym.train.core import TrainConfig, Trainer`` keeps working:

* :mod:`gui_gym.train.config`: :class:`TrainConfig` (the hyperparameters every algorithm
  shares, each default cited), ``KL_ESTIMATORS``, ``LOSS_AGGREGATIONS``, ``LR_SCHEDULES``,
  ``STEP_INFO_KEYS``, :func:`resolve_device`, :func:`seed_everything`, :func:`iteration_rng`;
* :mod:`gui_gym.train.policy`: :class:`Policy` (the model from a folder, LoRA through
  :func:`apply_lora`, the reference model for KL, bf16 on CUDA via
  :func:`autocast_context`);
* :mod:`gui_gym.train.losses`: :class:`TurnSample` and :func:`turns_from_trajectory`,
  token-exact :func:`score_completions`, :func:`kl_estimate`, :func:`clipped_surrogate`,
  :func:`aggregate_tokens`, :class:`LossInputs` and :func:`policy_loss`;
* :mod:`gui_gym.train.checkpoint`: the one checkpoint format (:func:`write_checkpoint`,
  :func:`read_checkpoint`, the random streams);
* :mod:`gui_gym.train.trainer`: :class:`Algorithm`, :class:`Trainer` (the loop, metrics,
  progress, checkpoints with exact resume) and :func:`load_metrics`.

Code inside gui-gym imports each name from the module that owns it.
"""

from __future__ import annotations

from gui_gym.train.checkpoint import (
    read_checkpoint,
    restore_torch_rng,
    torch_rng_tensors,
    write_checkpoint,
)
from gui_gym.train.config import (
    KL_ESTIMATORS,
    LOSS_AGGREGATIONS,
    LR_SCHEDULES,
    STEP_INFO_KEYS,
    TrainConfig,
    iteration_rng,
    resolve_device,
    seed_everything,
)
from gui_gym.train.losses import (
    LossInputs,
    TurnSample,
    aggregate_tokens,
    clipped_surrogate,
    kl_estimate,
    policy_loss,
    score_completions,
    turns_from_trajectory,
)
from gui_gym.train.policy import Policy, apply_lora, autocast_context
from gui_gym.train.trainer import Algorithm, Trainer, load_metrics

__all__ = [
    "KL_ESTIMATORS",
    "LOSS_AGGREGATIONS",
    "LR_SCHEDULES",
    "STEP_INFO_KEYS",
    "Algorithm",
    "LossInputs",
    "Policy",
    "TrainConfig",
    "Trainer",
    "TurnSample",
    "aggregate_tokens",
    "apply_lora",
    "autocast_context",
    "clipped_surrogate",
    "iteration_rng",
    "kl_estimate",
    "load_metrics",
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
