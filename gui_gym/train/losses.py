"""What the RL loss is made of: the unit of training, :class:`TurnSample` (one step's prompt
ids, completion ids and per-token advantages, cut from a trajectory by
:func:`turns_from_trajectory`); :func:`score_completions`, the log-probabilities of the *given*
completion token ids (the ids the policy sampled; decoded text is never re-tokenized); and the
loss pieces: :func:`kl_estimate` (k1, k2, k3), :func:`clipped_surrogate`,
:func:`aggregate_tokens` (token-mean or turn-mean), and :func:`policy_loss` built from them
over a micro-batch's :class:`LossInputs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gui_gym.core.trajectory import Trajectory
from gui_gym.train.config import KL_ESTIMATORS, LOSS_AGGREGATIONS, TrainConfig, require_torch

__all__ = [
    "LossInputs",
    "TurnSample",
    "aggregate_tokens",
    "batch_pixel_inputs",
    "clipped_surrogate",
    "kl_estimate",
    "policy_loss",
    "score_completions",
    "turns_from_trajectory",
]


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
        vision: A vision-language step's screenshots and processor settings
            (:class:`~gui_gym.models.llm.vision_inputs.VisionRef` as a dict); scoring rebuilds
            its pixel inputs from these and refuses ids that do not fit them.
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
    vision: dict[str, Any] | None = None

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
                vision=getattr(step, "vision", None),
                episode=episode,
                step=index,
            )
        )
    return out


# ------------------------------------------------------------------------------- scoring


def batch_pixel_inputs(
    model: Any, turns: Sequence[Any], vision: tuple[Any, Any] | None
) -> dict[str, Any]:
    """The pixel inputs of a batch of turns (rows in order), rebuilt from each turn's ``vision``
    record with :func:`~gui_gym.models.llm.vision_inputs.rebuild_inputs` and cast to ``model``'s
    dtype; ``{}`` when no turn shows a screenshot. The policy's scoring and PPO's critic both
    read a VLM step through it, so they see the same pixels the sampler saw.

    Raises:
        ValueError: for a vision turn without ``vision=(processor, image_store)``.
        VisionMismatch: when stored ids and rebuilt pixels disagree.
    """
    if not any(getattr(t, "vision", None) for t in turns):
        return {}
    if vision is None:
        raise ValueError(
            "these turns show screenshots: scoring needs vision=(processor, image_store) "
            "of the policy that sampled them"
        )
    torch = require_torch()
    from gui_gym.models.llm.vision_inputs import rebuild_inputs

    parts: dict[str, list[Any]] = {}
    for turn in turns:
        if turn.vision:
            for key, value in rebuild_inputs(*vision, turn.vision, turn.prompt_ids).items():
                parts.setdefault(key, []).append(value)
    dtype = next(model.parameters()).dtype
    pixels: dict[str, Any] = {}
    for key, values in parts.items():
        joined = torch.cat(values)
        pixels[key] = joined.to(dtype) if joined.is_floating_point() else joined
    return pixels


def score_completions(
    model: Any,
    turns: Sequence[TurnSample],
    *,
    pad_id: int,
    temperature: float = 1.0,
    device: str | None = None,
    vision: tuple[Any, Any] | None = None,
) -> list[Any]:
    """Log-probabilities of each turn's completion ids under ``model``: one 1-D float32
    tensor per turn, differentiable when grad is enabled.

    Prompt and completion ids are concatenated as given (never decoded and re-encoded),
    batched by :func:`completion_logits` (left-padded, the output layer at the completion
    positions only, where the model allows), and read there with ``log_softmax(logits / T)``,
    the distribution the sampler drew from.

    Turns with a ``vision`` record (a vision-language policy's steps) need ``vision=(processor,
    image_store)``: their pixel inputs are rebuilt from the stored screenshots with
    :func:`~gui_gym.models.llm.vision_inputs.rebuild_inputs`, which refuses ids that do not fit
    them, and go with the batch in row order.

    Raises:
        ValueError: for a vision turn without ``vision``.
        VisionMismatch: when stored ids and rebuilt pixels disagree.
    """
    torch = require_torch()
    pixels = batch_pixel_inputs(model, turns, vision)
    placeholders: list[int] | None = None
    if vision is not None and any(t.vision for t in turns):
        from gui_gym.models.llm.vision_inputs import placeholder_token_ids

        # the sampler never draws a media placeholder (TransformersLLM suppresses them)
        placeholders = placeholder_token_ids(vision[0])

    device = device or str(next(model.parameters()).device)
    pixels = {k: v.to(device) for k, v in pixels.items()}
    logits, starts = completion_logits(
        model,
        [(t.prompt_ids, t.completion_ids) for t in turns],
        pad_id=pad_id,
        device=device,
        pixels=pixels,
        processor=None if vision is None else vision[0],
    )
    out = []
    for i, turn in enumerate(turns):
        start = starts[i]  # logits[i, start + k] predicts completion token k
        rows = logits[i, start : start + len(turn.completion_ids)].float() / temperature
        if placeholders is not None and turn.vision:
            rows = rows.index_fill(-1, torch.tensor(placeholders, device=rows.device), -torch.inf)
        target = torch.tensor(turn.completion_ids, dtype=torch.long, device=rows.device)
        out.append(torch.log_softmax(rows, dim=-1).gather(-1, target[:, None]).squeeze(-1))
    return out


def takes_logits_to_keep(model: Any) -> bool:
    """Whether ``model`` (a causal LM, or a peft/DDP wrapper of one) can run its output layer
    on the last positions only (``logits_to_keep``: every causal LM of transformers 5 but a
    few remote-code ones)."""
    import inspect

    base = model
    for _ in range(4):
        if hasattr(base, "get_base_model"):
            base = base.get_base_model()
        elif hasattr(base, "module") and callable(getattr(base.module, "forward", None)):
            base = base.module
        else:
            break
    try:
        return "logits_to_keep" in inspect.signature(base.forward).parameters
    except (TypeError, ValueError):
        return False


def completion_logits(
    model: Any,
    rows: Sequence[tuple[Sequence[int], Sequence[int]]],
    *,
    pad_id: int,
    device: str | Any,
    pixels: dict[str, Any] | None = None,
    processor: Any = None,
) -> tuple[Any, list[int]]:
    """The logits that predict each row's completion tokens, in one forward pass over
    ``(prompt_ids, completion_ids)`` rows (concatenated as given, never re-tokenized).

    Returns ``(logits, starts)``: ``logits[i, starts[i] + k]`` predicts completion token ``k``
    of row ``i``.

    Text-only batches are padded on the left, so every completion ends at the last position,
    and the output layer runs on the last ``longest completion + 1`` positions only
    (``logits_to_keep``): a screen prompt is hundreds of tokens and a completion tens, so most
    of the output layer's work (576 x 49,152 per position for SmolLM2) and nearly all of the
    logits' memory go. Position ids count real tokens only, so a left-padded row sees the
    positions it would see unpadded; the log-probabilities equal a right-padded pass's up to
    float rounding (tests/test_sft_defaults.py). Batches with pixel inputs (a vision-language
    policy), and models without ``logits_to_keep``, run every position, padded on the right;
    ``processor`` then adds the token types Qwen2-VL's M-RoPE reads.
    """
    torch = require_torch()
    pixels = dict(pixels or {})
    left = not pixels and takes_logits_to_keep(model)
    width = max(len(p) + len(c) for p, c in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, (prompt, completion) in enumerate(rows):
        seq = list(prompt) + list(completion)
        first = width - len(seq) if left else 0
        ids[i, first : first + len(seq)] = torch.tensor(seq, dtype=torch.long)
        mask[i, first : first + len(seq)] = 1
    ids, mask = ids.to(device), mask.to(device)
    if left:
        keep = max(len(c) for _, c in rows) + 1
        logits = model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=(mask.cumsum(-1) - 1).clamp(min=0),
            logits_to_keep=keep,
        ).logits
        return logits, [keep - 1 - len(c) for _, c in rows]
    if pixels and processor is not None:
        from gui_gym.models.llm.vision_inputs import token_type_inputs

        pixels.update(token_type_inputs(processor, ids))
    logits = model(input_ids=ids, attention_mask=mask, **pixels).logits
    return logits, [len(p) - 1 for p, _ in rows]  # position p predicts token p + 1


# ------------------------------------------------------------------------------- losses


def kl_estimate(logp: Any, ref_logp: Any, estimator: str = "k3") -> Any:
    """Per-token estimate of ``KL(pi || pi_ref)`` from tokens sampled from ``pi``.

    With ``r = log pi - log pi_ref``: ``k1 = r`` (unbiased, can be negative), ``k2 = r^2 / 2``
    and ``k3 = exp(-r) - 1 + r`` (unbiased and never negative; GRPO's choice, Shao et al.).

    Raises:
        ValueError: for an unknown estimator.
    """
    torch = require_torch()
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
    torch = require_torch()
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
    torch = require_torch()
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
