"""PPO with GAE and a value head, as GUI-Shepherd trains its agent online (Sec. 4.1,
Algorithm 1, App. B.2).

Read top to bottom: the hyperparameters, the critic, the batch (``tasks_per_iteration``
episodes, one per task), the advantages and the loss.

* Reward: the per-step reward the stack returns (GUI-Shepherd: PRM score + format term each
  step, Eq. 3: ``--reward outcome+prm``).
* Critic: a causal LM with a scalar head, read at the last prompt token (one value per step).
  :meth:`ValueModel.from_prm` initialises it from a ``gui-gym train-prm`` checkpoint, as
  GUI-Shepherd's Algorithm 1 initialises the value model from its PRM: the head is the
  difference of the PRM's positive and negative label rows of the output layer, so before any
  update the critic outputs the PRM's log-odds that the step is right.
* Advantages: GAE over the steps of each episode (Eq. 4;
  :func:`gui_gym.rewards.advantages.gae`), whitened over the batch (verl's default), the
  same advantage on every token of a step. ``V(s_T)`` is 0 after a terminated episode and the
  critic's value of the last state for one cut by the step limit (truncated): the rollout
  keeps that state's prompt (``metadata["final_prompt"]``) for it.
* Loss: the shared clipped surrogate (Eq. 5) plus ``vf_coef`` times the critic's squared
  error to the GAE returns, clipped around the values of the rollout
  (:func:`clipped_value_loss`; ``value_clip=0.5`` is verl's ``critic.cliprange_value``, the
  setting GUI-Shepherd's verl-based PPO ran with; ``None`` is the plain squared error); no KL
  (App. B.2).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from gui_gym.core.trajectory import Trajectory
from gui_gym.rewards.advantages import DEFAULT_GAE_GAMMA, DEFAULT_GAE_LAMBDA, gae
from gui_gym.train.config import epoch_draw, iteration_rng
from gui_gym.train.losses import LossInputs, TurnSample, policy_loss, turns_from_trajectory
from gui_gym.train.reward_stack import clean_groups, reward_stream
from gui_gym.train.trainer import Algorithm, Trainer

logger = logging.getLogger(__name__)

__all__ = [
    "PPO",
    "TRAIN_DEFAULTS",
    "PPOConfig",
    "ValueModel",
    "clipped_value_loss",
]

DEFAULT_VALUE_CLIP = 0.5
"""verl's ``critic.cliprange_value`` (``verl/trainer/config/critic/critic.yaml``): GUI-Shepherd
trains its PPO with verl (App. B.2) and states no value clip of its own."""

TRAIN_DEFAULTS: dict[str, Any] = {
    "loss_agg": "token_mean",
    "kl_coef": 0.0,  # GUI-Shepherd App. B.2: no KL coefficient
    "update_epochs": 1,  # verl's ppo_epochs; GUI-Shepherd (on verl, App. B.2) sets no other
}
"""GUI-Shepherd's PPO has no KL term (App. B.2); verl averages the policy loss over tokens."""


@dataclass
class PPOConfig:
    """PPO's own hyperparameters.

    Attributes:
        tasks_per_iteration: Episodes per iteration, one per task; GUI-Shepherd selects 8
            tasks and collects 8 trajectories per iteration (App. B.2).
        gamma, lam: GAE discount and lambda (verl's defaults, 1.0 and 1.0; GUI-Shepherd
            trains with verl and states none).
        critic_learning_rate: The critic's learning rate (verl's default 1e-5; GUI-Shepherd's
            value did not survive extraction).
        critic_max_grad_norm: The critic's own gradient-norm clip (verl's critic
            ``grad_clip`` 1.0), applied apart from the actor's ``max_grad_norm``.
        vf_coef: Weight of the value loss.
        value_clip: Half-width of the band around the rollout's values that the clipped
            value loss allows (:func:`clipped_value_loss`); 0.5 is verl's default, which
            GUI-Shepherd's PPO ran with; None turns clipping off (the plain squared error;
            cleanrl's ``clip_vloss=False``).
        normalize_advantages: Whiten advantages over the batch.
        critic_init: ``policy`` (a copy of the initial policy with a zero head) or the path of
            a ``gui-gym train-prm`` checkpoint.
    """

    tasks_per_iteration: int = 8
    gamma: float = DEFAULT_GAE_GAMMA
    lam: float = DEFAULT_GAE_LAMBDA
    critic_learning_rate: float = 1e-5  # verl critic optim.lr
    critic_max_grad_norm: float = 1.0  # verl critic grad_clip
    vf_coef: float = 0.5
    value_clip: float | None = DEFAULT_VALUE_CLIP
    normalize_advantages: bool = True
    critic_init: str = "policy"

    def __post_init__(self) -> None:
        if self.tasks_per_iteration < 1:
            raise ValueError(f"tasks_per_iteration must be >= 1, got {self.tasks_per_iteration}")
        if not self.critic_learning_rate > 0 or self.vf_coef < 0:
            raise ValueError("critic_learning_rate must be > 0 and vf_coef >= 0")
        if not self.critic_max_grad_norm > 0:
            raise ValueError(f"critic_max_grad_norm must be > 0, got {self.critic_max_grad_norm!r}")
        if self.value_clip is not None and not self.value_clip > 0:
            raise ValueError(
                f"value_clip must be > 0, or None for no clipping, got {self.value_clip!r}"
            )


def clipped_value_loss(values: Any, old_values: Any, returns: Any, clip: float | None) -> Any:
    """PPO's value loss per step, as verl's ``compute_value_loss`` and cleanrl's
    ``clip_vloss`` compute it.

    ``0.5 * max((V - R)^2, (clip(V, V_old - c, V_old + c) - R)^2)``: the new value ``V`` may
    move at most ``c`` from the rollout's ``V_old`` before the loss stops rewarding it (the
    pessimistic maximum, as in the policy's clipped surrogate). ``clip=None`` gives
    ``0.5 * (V - R)^2``.

    Args:
        values: The critic's current values (differentiable), one per step.
        old_values: Its values at the rollout (no gradient).
        returns: The regression targets (GAE returns).
        clip: ``c``; None for no clipping.
    """
    import torch

    unclipped = (values - returns) ** 2
    if clip is None:
        return 0.5 * unclipped
    moved = old_values + torch.clamp(values - old_values, -clip, clip)
    return 0.5 * torch.maximum(unclipped, (moved - returns) ** 2)


def _value_model_class() -> Any:
    import torch

    from gui_gym.models.llm.vision_inputs import token_type_inputs

    class _ValueModel(torch.nn.Module):
        def __init__(self, backbone: Any, tokenizer: Any, head: Any, *, own_tokenizer: bool):
            super().__init__()
            self.backbone = backbone
            self.head = head
            self.tokenizer = tokenizer
            self.own_tokenizer = own_tokenizer

        def forward(
            self,
            prompts: list[list[int]],
            pad_id: int,
            pixels: dict[str, Any] | None = None,
            processor: Any = None,
        ) -> Any:
            """``V`` at each prompt's last token; ``pixels`` are a VLM's pixel inputs for the
            rows that show screenshots (:func:`~gui_gym.train.losses.batch_pixel_inputs`),
            ``processor`` the one that made them (some VLMs need its token types too)."""
            device = self.head.weight.device
            width = max(len(p) for p in prompts)
            ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
            mask = torch.zeros_like(ids)
            for i, p in enumerate(prompts):
                ids[i, : len(p)] = torch.tensor(p)
                mask[i, : len(p)] = 1
            out = self.backbone(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                output_hidden_states=True,
                **{k: v.to(device) for k, v in (pixels or {}).items()},
                **(token_type_inputs(processor, ids.to(device)) if pixels else {}),
            )
            last = torch.tensor([len(p) - 1 for p in prompts], device=device)
            hidden = out.hidden_states[-1][torch.arange(len(prompts), device=device), last]
            return self.head(hidden.to(self.head.weight.dtype)).squeeze(-1).float()

    return _ValueModel


@dataclass
class _State:
    """A state the critic reads but the policy did not act in: the prompt only."""

    prompt_ids: list[int]
    prompt: Any = None
    vision: dict[str, Any] | None = None


def _final_state(trajectory: Trajectory) -> _State | None:
    """The last state of an episode cut by a step limit (truncated, not terminated), from the
    prompt the rollout kept for it; None for an episode that terminated.

    A truncated episode without the kept prompt (its encoding failed, or a rollout engine
    without ``final_prompts`` recorded it) is bootstrapped with 0, with a warning: that treats
    the cut as the end of the task.
    """
    last = trajectory.steps[-1] if trajectory.steps else None
    if last is None or not last.truncated or last.terminated:
        return None
    final = trajectory.metadata.get("final_prompt")
    if not final or not final.get("prompt_ids"):
        logger.warning(
            "task %r was cut by a step limit but its last state's prompt was not kept "
            "(RolloutEngine(final_prompts=True) keeps it): bootstrapping V(s_T) with 0",
            trajectory.task_id,
        )
        return None
    return _State(list(final["prompt_ids"]), final.get("prompt"), final.get("vision"))


class ValueModel:
    """Builders of the critic (a ``torch.nn.Module``: ``critic(prompt_ids, pad_id) -> V``)."""

    @staticmethod
    def from_policy(policy: Any) -> Any:
        """A copy of the policy's backbone with a zero-initialised scalar head."""
        import copy

        import torch

        backbone = copy.deepcopy(policy.model)
        if hasattr(backbone, "merge_and_unload"):
            backbone = backbone.merge_and_unload()
        # a VLM's config nests its language model's (LlavaConfig, Qwen2VLConfig...): the
        # hidden states the head reads are the language model's
        hidden = backbone.config.get_text_config().hidden_size
        head = torch.nn.Linear(hidden, 1, device=policy.device)
        torch.nn.init.zeros_(head.weight)
        torch.nn.init.zeros_(head.bias)
        return _value_model_class()(backbone, policy.tokenizer, head, own_tokenizer=False)

    @staticmethod
    def from_prm(path: str | Path, device: str) -> Any:
        """A critic initialised from a GUI-Shepherd PRM checkpoint (GUI-Shepherd Algorithm 1):
        the backbone's weights, and a head equal to the positive minus the negative label
        row of the output layer, so ``V(s)`` starts as the PRM's log-odds."""
        import torch

        from gui_gym.models.prm import TransformersPRM

        prm = TransformersPRM.load(path, device=device)
        output = prm.model.get_output_embeddings()
        head = torch.nn.Linear(output.weight.shape[1], 1, device=device)
        with torch.no_grad():
            head.weight.copy_(
                (output.weight[prm.positive_id] - output.weight[prm.negative_id])[None].float()
            )
            bias = getattr(output, "bias", None)
            head.bias.copy_(
                (bias[prm.positive_id] - bias[prm.negative_id]).reshape(1)
                if bias is not None
                else torch.zeros(1)
            )
        return _value_model_class()(prm.model, prm.tokenizer, head, own_tokenizer=True)


class PPO(Algorithm):
    """PPO with GAE over steps and a critic read at each step's prompt.

    Args:
        make_env: Builds the (reward-wrapped) env; it must accept ``options={"task": id}``.
        tasks: Task ids to train on.
        config: :class:`PPOConfig`.
    """

    name: ClassVar[str] = "ppo"
    bootstraps: ClassVar[bool] = True

    def __init__(
        self, make_env: Callable[[], Any], tasks: list[str], config: PPOConfig | None = None
    ):
        if not tasks:
            raise ValueError("PPO needs at least one task id to train on")
        self.make_env = make_env
        self.tasks = list(tasks)
        self.config = config or PPOConfig()
        self.critic: Any = None

    def setup(self, trainer: Trainer) -> None:
        init = self.config.critic_init
        if init == "policy":
            self.critic = ValueModel.from_policy(trainer.policy)
        else:
            self.critic = ValueModel.from_prm(init, trainer.policy.device)
        self.critic.train(False)  # no dropout, as for the policy
        # a VLM policy's critic reads each step with the pixels its policy saw (the same
        # vision record and image store the policy's scoring rebuilds them from)
        self._vision = None if self.critic.own_tokenizer else trainer.vision
        self._pad = trainer.policy.pad_id
        if self.critic.own_tokenizer:
            tok = self.critic.tokenizer
            self._pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id

    def modules(self) -> dict[str, Any]:
        return {"critic": self.critic}

    def param_groups(self) -> list[dict[str, Any]]:
        return [
            {
                "name": "critic",
                "params": list(self.critic.parameters()),
                "lr": self.config.critic_learning_rate,
                "max_grad_norm": self.config.critic_max_grad_norm,
            }
        ]

    def _critic_inputs(self, turns: list[Any]) -> list[list[int]]:
        if not self.critic.own_tokenizer:
            return [t.prompt_ids for t in turns]
        from gui_gym.models.llm import prompt_text

        # a PRM-initialised critic has its own tokenizer: it reads the prompt text (the
        # policy's log-probs, which must be token-exact, never go through this path)
        return [
            self.critic.tokenizer.encode(prompt_text(t.prompt or ""), add_special_tokens=True)
            or [self._pad]
            for t in turns
        ]

    def values(self, turns: list[Any], grad: bool = False) -> Any:
        import torch

        from gui_gym.train.losses import batch_pixel_inputs

        pixels, processor = None, None
        if not self.critic.own_tokenizer and any(getattr(t, "vision", None) for t in turns):
            if self._vision is None:
                raise ValueError(
                    "these steps show screenshots but the critic has no processor to rebuild "
                    "their pixels (the policy is not a vision-language model)"
                )
            pixels = batch_pixel_inputs(self.critic.backbone, turns, self._vision)
            processor = self._vision[0]
        with torch.set_grad_enabled(grad):
            return self.critic(self._critic_inputs(turns), self._pad, pixels, processor)

    # -- rollout ------------------------------------------------------------------------------

    def collect(self, trainer: Trainer, iteration: int) -> list[list[Trajectory]]:
        rng = iteration_rng(trainer.config.seed, iteration)
        chosen = epoch_draw(
            trainer.config.seed, iteration, len(self.tasks), self.config.tasks_per_iteration
        )
        requests = [
            {"seed": int(rng.integers(2**31)), "options": {"task": self.tasks[i]}} for i in chosen
        ]
        return [[t] for t in trainer.run_episodes(self.make_env, requests)]

    # -- advantages ---------------------------------------------------------------------------

    def advantages(
        self, trainer: Trainer, groups: list[list[Trajectory]], iteration: int
    ) -> list[TurnSample]:
        turns: list[TurnSample] = []
        per_step: list[float] = []
        for index, group in enumerate(clean_groups(groups, minimum=1)):
            trajectory = group[0]
            rows = turns_from_trajectory(trajectory, [0.0] * len(trajectory.steps), episode=index)
            final = _final_state(trajectory)
            values = self.values([*rows, *([final] if final is not None else [])]).cpu().tolist()
            # V(s_T): 0 after a real end (termination), the critic's value of the last state
            # when a step limit cut the episode (the return goes on past the cut)
            bootstrap = values.pop() if final is not None else 0.0
            advantages, returns = gae(
                reward_stream(trajectory),
                values,
                gamma=self.config.gamma,
                lam=self.config.lam,
                bootstrap=bootstrap,
            )
            for turn, advantage, target, value in zip(rows, advantages, returns, values):
                turn.returns = target
                turn.old_value = value
                per_step.append(advantage)
            turns.extend(rows)
        if self.config.normalize_advantages and len(per_step) > 1:
            mean, std = float(np.mean(per_step)), float(np.std(per_step))
            per_step = [(a - mean) / (std + 1e-8) for a in per_step]
        for turn, advantage in zip(turns, per_step):
            turn.advantages = [advantage] * len(turn.completion_ids)
        return turns

    # -- loss ---------------------------------------------------------------------------------

    def loss(self, trainer: Trainer, inputs: LossInputs) -> tuple[Any, dict[str, float]]:
        import torch

        loss, stats = policy_loss(inputs)
        turns = list(inputs.turns)
        values = self.values(turns, grad=True)
        targets = torch.tensor([t.returns for t in turns], device=values.device)
        old = torch.tensor([t.old_value for t in turns], device=values.device)
        # each micro-batch's share of the mini-batch's mean (clipped) squared error
        per_step = clipped_value_loss(values, old, targets, self.config.value_clip)
        value_loss = per_step.sum() / inputs.total_turns
        stats["value_clip_fraction"] = float(
            ((values.detach() - old).abs() > (self.config.value_clip or float("inf"))).sum()
            / inputs.total_turns
        )
        stats["value_loss"] = float(value_loss.detach())
        return loss + self.config.vf_coef * value_loss, stats
