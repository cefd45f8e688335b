"""What each term of the reward stack added to one step's reward, for the engine adapters.

A trainer inside gui-gym reads the components from ``info`` itself (the
:mod:`gui_gym.train.reward_stack` readers); an engine on the other side of a socket or an
adapter (an OpenEnv client, a skyrl-gym generator, verl's agent loop and TRL through
:class:`~gui_gym.integrations.episode.ChatEpisode`) gets one float per term instead:
:func:`step_reward_components`, the one split every adapter uses, splits the step's
``reward`` into the terms of the stack that produced it, so that the parts always add up to
the reward the env returned.

The stack's wrappers nest (``RewardStack.wrap``: judge or ORM innermost, then progress, PRM,
format and milestone outermost), each adding its part to the reward it receives; the split
peels them from the outside in:

* ``format``: ``info["format"]["reward"]`` (GUI-Shepherd's per-step format term);
* ``prm``: ``info["prm"]["reward"]`` (PRM score, format and invalid-action terms). The PRM
  wrapper keeps only ``outcome_weight`` times the reward it received (GUI-Shepherd Eq. 3:
  0 by default), so every term inside it is scaled by that weight;
* ``progress``: the progress wrapper's ``weight * delta`` (ProgRM Eq. 2), scaled as above;
* the rest is the outcome, named after the term that supplies it: ``judge`` (ProRe's
  verdict), ``orm`` (a learned outcome model) or ``outcome`` (the task's own reward);
* ``milestone`` is 0 on every step: ADMIRE's milestone credit is deferred to the end of the
  episode (``info["milestone"]["episode_total_rewards"]``), which the adapters pass on as is.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["outcome_term", "step_reward_components"]


def _wrappers(env: Any) -> dict[str, Any]:
    """The reward wrappers around ``env``'s base env, by class name."""
    found: dict[str, Any] = {}
    while env is not None and hasattr(env, "env"):
        found.setdefault(type(env).__name__, env)
        env = env.env
    return found


def outcome_term(weights: dict[str, float] | None) -> str:
    """The name the outcome carries under a reward expression's terms: ``judge`` or ``orm``
    when one replaces the task's outcome, else ``outcome``."""
    weights = weights or {}
    return "judge" if "judge" in weights else "orm" if "orm" in weights else "outcome"


def _part(info: dict[str, Any], key: str) -> float | None:
    value = info.get(key)
    if isinstance(value, dict) and value.get("reward") is not None:
        return float(value["reward"])
    return None


def step_reward_components(
    env: Any, reward: float, info: dict[str, Any], weights: dict[str, float] | None = None
) -> dict[str, float]:
    """Split one step's ``reward`` into the reward stack's terms (module docstring).

    Args:
        env: The wrapped env that returned the step (its wrappers give the weights the
            split needs: the progress weight, the PRM's ``outcome_weight``).
        reward: The step's reward as the wrapped env returned it.
        info: The step's info.
        weights: The stack's terms (:func:`~gui_gym.train.reward_stack.parse_reward`); every
            term named there gets an entry, 0 where it added nothing this step.

    Returns:
        ``{term: amount}`` whose values sum to ``reward`` (up to float rounding).

    Raises:
        ValueError: for a non-finite reward.
    """
    reward = float(reward)
    if not math.isfinite(reward):
        raise ValueError(f"the step's reward is {reward!r}, not a finite number")
    wrappers = _wrappers(env)
    components = {name: 0.0 for name in (weights or {})}
    rest = reward
    scale = 1.0  # what the wrappers outside keep of the reward inside them
    fmt = _part(info, "format")
    if fmt is not None:
        components["format"] = fmt
        rest -= fmt
    prm = _part(info, "prm")
    if prm is not None:
        components["prm"] = prm
        rest -= prm
        prm_wrapper = wrappers.get("PRMWrapper")
        scale = float(getattr(prm_wrapper, "outcome_weight", 0.0))
    progress = info.get("progress")
    progress_wrapper = wrappers.get("ProgressRewardWrapper")
    if isinstance(progress, dict) and progress_wrapper is not None:
        delta = progress.get("delta")
        added = scale * float(progress_wrapper.weight) * float(delta or 0.0)
        components["progress"] = added
        rest -= added
    if "milestone" in (weights or {}) or isinstance(info.get("milestone"), dict):
        components.setdefault("milestone", 0.0)
    name = outcome_term(weights)
    components[name] = components.get(name, 0.0) + rest
    if name != "outcome":
        components.pop("outcome", None)
    return components
