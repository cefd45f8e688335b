"""Advantage estimators of the RL trainers, as pure functions over plain numbers.

Each trainer in :mod:`gui_gym.train` turns rewards into advantages with one of these; tests hit
them with hand-worked vectors. Formulas that already live beside their paper are reused, not
repeated: step-level GRPO (ADMIRE Eq. 13) is :func:`gui_gym.rewards.milestones.
step_grpo_advantages`, episode-level GRPO (Shao et al.; UI-S1 Eq. 11 is the same formula) is
:func:`gui_gym.rewards.semi_online.episode_level_advantages`, and UI-S1's dual-level advantages
are :func:`gui_gym.rewards.semi_online.dual_level_advantages`. This module adds:

* :func:`gae`: generalised advantage estimation (Schulman et al. 2015), which GUI-Shepherd's
  PPO applies to the per-step PRM + format reward (Sec. 4.1, Eq. 4), with one state per step.
* :func:`rloo_advantages`: the leave-one-out baseline of RLOO (Ahmadian et al. 2024), one of
  the algorithms of ADMIRE Table 4.
* :func:`token_level_returns`: ProgRM's multi-turn REINFORCE++ credit assignment (Sec. 2.4,
  after Wen et al.'s action decomposition): the reward of a turn sits on its last token, a
  per-token penalty (the KL term) on every token, and returns are discounted by
  ``gamma_token`` inside a turn and by ``gamma_turn`` across turns.
* :func:`overlong_penalty`: DAPO's soft overlong punishment (Yu et al. 2025, Sec. 3.4,
  Eq. 13), a length-aware penalty on completions near the generation limit.
* :func:`global_batch_normalise`: REINFORCE++'s normalisation of advantages over the whole
  global batch rather than per prompt group (OpenRLHF's implementation).
* :func:`gigpo_advantages`: GiGPO's two-level advantages (Feng et al. 2025, verl-agent,
  arXiv 2505.10978): an episode-level group advantage plus a step-level one over the steps
  of the group taken from the same anchor state, with :func:`discounted_returns`.

Nothing here imports numpy, torch or Gymnasium.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

__all__ = [
    "DEFAULT_GAE_GAMMA",
    "DEFAULT_GAE_LAMBDA",
    "GIGPO_GAMMA",
    "discounted_returns",
    "gae",
    "gigpo_advantages",
    "global_batch_normalise",
    "overlong_penalty",
    "rloo_advantages",
    "token_level_returns",
]

DEFAULT_GAE_GAMMA = 1.0
"""GAE discount. GUI-Shepherd trains with verl (App. B.2) and states no gamma; verl's default
is 1.0, which also suits episodes capped at 15 steps."""
DEFAULT_GAE_LAMBDA = 1.0
"""GAE lambda; verl's default (GUI-Shepherd states none)."""


def gae(
    rewards: Sequence[float],
    values: Sequence[float],
    *,
    gamma: float = DEFAULT_GAE_GAMMA,
    lam: float = DEFAULT_GAE_LAMBDA,
    bootstrap: float = 0.0,
) -> tuple[list[float], list[float]]:
    """Generalised advantage estimation over one episode (GUI-Shepherd Eq. 4).

    ``delta_t = r_t + gamma V(s_{t+1}) - V(s_t)`` and ``A_t = delta_t + gamma lam A_{t+1}``,
    with ``V(s_T) = bootstrap`` after the last step: 0 for an episode that terminated, the
    critic's value of the final state for one cut by a step limit. The returns the critic is
    regressed on are ``A_t + V(s_t)``.

    Args:
        rewards: ``r_0..r_{T-1}``.
        values: ``V(s_0)..V(s_{T-1})`` from the critic at rollout time.
        gamma: Discount in [0, 1].
        lam: GAE lambda in [0, 1] (0: one-step TD; 1: Monte-Carlo return minus the value).
        bootstrap: ``V(s_T)``.

    Returns:
        ``(advantages, returns)``, one value per step each.

    Raises:
        ValueError: for lengths that differ or gamma/lambda outside [0, 1].
    """
    if len(rewards) != len(values):
        raise ValueError(f"rewards ({len(rewards)}) and values ({len(values)}) differ in length")
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {gamma!r}")
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam!r}")
    advantages = [0.0] * len(rewards)
    following_value = float(bootstrap)
    following_advantage = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        delta = float(rewards[t]) + gamma * following_value - float(values[t])
        following_advantage = delta + gamma * lam * following_advantage
        advantages[t] = following_advantage
        following_value = float(values[t])
    returns = [a + float(v) for a, v in zip(advantages, values)]
    return advantages, returns


def rloo_advantages(rewards: Sequence[float]) -> list[float]:
    """RLOO: each sample's reward minus the mean reward of the *other* samples of its group.

    ``A_i = R_i - (1 / (G - 1)) sum_{j != i} R_j`` (Ahmadian et al. 2024; an option of ADMIRE
    Table 4). A group of one has no baseline and gets advantage 0.

    Raises:
        ValueError: for an empty group.
    """
    n = len(rewards)
    if n == 0:
        raise ValueError("a group needs at least one reward")
    if n == 1:
        return [0.0]
    total = sum(float(r) for r in rewards)
    return [float(r) - (total - float(r)) / (n - 1) for r in rewards]


def token_level_returns(
    turn_rewards: Sequence[float],
    token_penalties: Sequence[Sequence[float]],
    *,
    gamma_turn: float = 1.0,
    gamma_token: float = 1.0,
) -> list[list[float]]:
    """Per-token returns of one multi-turn episode (ProgRM Sec. 2.4, REINFORCE++).

    Every token ``k`` of turn ``t`` earns ``token_penalties[t][k]`` (REINFORCE++ folds the KL
    penalty ``-beta KL_k`` into the token rewards); the last token of turn ``t`` also earns the
    turn's reward ``r_t``. Returns run backwards: ``G_k = reward_k + gamma G_{k+1}``, where the
    discount is ``gamma_token`` when token ``k + 1`` is in the same turn and ``gamma_turn``
    when it opens the next one (Wen et al.'s intra-turn and inter-turn discounts; both 1.0 is
    OpenRLHF's default REINFORCE++).

    Args:
        turn_rewards: ``r_t`` per turn (step) of the episode.
        token_penalties: Per turn, one additive reward per generated token.
        gamma_turn: Discount between turns, in [0, 1].
        gamma_token: Discount between tokens of one turn, in [0, 1].

    Returns:
        Per turn, the return of each of its tokens.

    Raises:
        ValueError: for a turn count that differs, a turn with no tokens, or discounts outside
            [0, 1].
    """
    if len(turn_rewards) != len(token_penalties):
        raise ValueError(
            f"turn_rewards ({len(turn_rewards)}) and token_penalties ({len(token_penalties)}) "
            "differ in length"
        )
    for name, value in (("gamma_turn", gamma_turn), ("gamma_token", gamma_token)):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    returns: list[list[float]] = [[0.0] * len(p) for p in token_penalties]
    following = 0.0
    for t in range(len(turn_rewards) - 1, -1, -1):
        penalties = token_penalties[t]
        if not penalties:
            raise ValueError(f"turn {t} has no tokens; every turn generates at least one")
        last = len(penalties) - 1
        for k in range(last, -1, -1):
            reward = float(penalties[k]) + (float(turn_rewards[t]) if k == last else 0.0)
            discount = gamma_turn if k == last else gamma_token
            following = reward + discount * following
            returns[t][k] = following
    return returns


def global_batch_normalise(
    values: Sequence[Sequence[float]], *, eps: float = 1e-8
) -> list[list[float]]:
    """REINFORCE++'s global normalisation: ``(x - mean) / (std + eps)`` over every number of
    the whole batch (all tokens of all turns of all episodes), not per prompt group.

    The population standard deviation is used, as OpenRLHF's masked normalisation does; a
    batch of equal values comes back as zeros.

    Args:
        values: Any nesting of one level (e.g. per turn, per token).
        eps: Added to the standard deviation.

    Returns:
        Normalised values shaped like ``values``.

    Raises:
        ValueError: for a batch with no value at all.
    """
    flat = [float(v) for row in values for v in row]
    if not flat:
        raise ValueError("global normalisation needs at least one value")
    mean = sum(flat) / len(flat)
    std = math.sqrt(sum((v - mean) ** 2 for v in flat) / len(flat))
    return [[(float(v) - mean) / (std + eps) for v in row] for row in values]


def overlong_penalty(length: int, max_length: int, buffer: int) -> float:
    """DAPO's soft overlong punishment (Yu et al. 2025, Sec. 3.4, Eq. 13).

    ``0`` for ``|y| <= L_max - L_cache``; ``((L_max - L_cache) - |y|) / L_cache`` inside the
    buffer (from 0 down to -1 at ``L_max``); ``-1`` beyond ``L_max``. DAPO sets
    ``L_max = 20480`` with a buffer ``L_cache = 4096`` (a fifth of the limit); ``buffer=0``
    switches the penalty off.

    Args:
        length: ``|y|``, the completion's token count.
        max_length: ``L_max``, the generation limit (``max_new_tokens``).
        buffer: ``L_cache``, the soft band's width in tokens (``0 <= buffer <= max_length``).

    Raises:
        ValueError: for negative numbers or a buffer wider than the limit.
    """
    if length < 0 or max_length < 1 or not 0 <= buffer <= max_length:
        raise ValueError(
            f"need length >= 0, max_length >= 1 and 0 <= buffer <= max_length, got "
            f"{length}, {max_length}, {buffer}"
        )
    if buffer == 0:
        return 0.0
    if length > max_length:
        return -1.0
    start = max_length - buffer
    return 0.0 if length <= start else (start - length) / buffer


GIGPO_GAMMA = 0.95
"""GiGPO's step-return discount (verl-agent's ALFWorld and WebShop scripts: ``gamma=0.95``)."""


def discounted_returns(rewards: Sequence[float], gamma: float) -> list[float]:
    """``R_t = sum_{k >= t} gamma^(k - t) r_k`` over one episode (GiGPO Eq. 5)."""
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {gamma!r}")
    out = [0.0] * len(rewards)
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = float(rewards[t]) + gamma * running
        out[t] = running
    return out


def _group_relative(values: Sequence[float], std_norm: bool, eps: float) -> list[float]:
    """``(v - mean) / F``: ``F = 1`` (``mean_norm``) or the group's sample standard deviation
    (``mean_std_norm``; 1 for a group of one, as verl-agent's ``torch.std`` fallback)."""
    n = len(values)
    mean = sum(values) / n
    if not std_norm:
        return [v - mean for v in values]
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 1.0
    return [(v - mean) / (std + eps) for v in values]


def gigpo_advantages(
    rewards: Sequence[Sequence[float]],
    anchors: Sequence[Sequence[Hashable]],
    *,
    gamma: float = GIGPO_GAMMA,
    step_weight: float = 1.0,
    std_norm: bool = False,
    eps: float = 1e-6,
) -> list[list[float]]:
    """GiGPO's advantage of every step of a group of episodes of one task from one seed.

    * Episode level (Eq. 3): ``A^E(tau_i) = (R(tau_i) - mean_j R(tau_j)) / F``, with
      ``R(tau_i) = sum_t r_t^(i)``.
    * Step level (Eq. 6-7): the steps of the group whose anchor state is the same form a
      step group; a step's discounted return ``R_t^(i)`` (:func:`discounted_returns`) is
      compared within it: ``A^S = (R_t^(i) - mean) / F``. A state only one step reached gets 0.
    * ``A = A^E + step_weight * A^S`` (Eq. 8; ``omega = 1`` in the paper).

    ``F`` is 1 (``std_norm=False``, verl-agent's ``mean_norm``, its scripts' choice) or the
    group's standard deviation (``mean_std_norm``), at both levels.

    Args:
        rewards: Each episode's per-step rewards ``r_t``.
        anchors: Each episode's per-step anchor key (equal keys = the same state).
        gamma: Step-return discount.
        step_weight: ``omega``, the step advantage's weight.
        std_norm: Divide by the standard deviation.
        eps: Added to standard deviations.

    Returns:
        Each episode's per-step advantages.
    """
    if len(rewards) != len(anchors):
        raise ValueError(f"{len(rewards)} reward rows but {len(anchors)} anchor rows")
    for i, (row, keys) in enumerate(zip(rewards, anchors)):
        if len(row) != len(keys):
            raise ValueError(f"episode {i}: {len(row)} rewards but {len(keys)} anchors")
    if not rewards:
        return []
    episode = _group_relative([float(sum(row)) for row in rewards], std_norm, eps)
    returns = [discounted_returns(row, gamma) for row in rewards]
    groups: dict[Hashable, list[tuple[int, int]]] = {}
    for i, keys in enumerate(anchors):
        for t, key in enumerate(keys):
            groups.setdefault(key, []).append((i, t))
    step = [[0.0] * len(row) for row in rewards]
    for members in groups.values():
        if len(members) < 2:
            continue
        relative = _group_relative([returns[i][t] for i, t in members], std_norm, eps)
        for (i, t), value in zip(members, relative):
            step[i][t] = value
    return [[episode[i] + step_weight * a for a in step[i]] for i in range(len(rewards))]
