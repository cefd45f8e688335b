"""What every process reward model is: the :class:`ProcessRewardModel` protocol, its
errors, and what best-of-N ranks by (GUI-Shepherd).

A scorer's ``score(queries, envs=None)`` returns, for each
:class:`~gui_gym.rewards.prm.PRMQuery`, the probability in [0, 1] that its action is correct.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from gui_gym.rewards.prm import PRMQuery

__all__ = [
    "ON_ERROR",
    "PRMOutputError",
    "PRMResponseWarning",
    "ProcessRewardModel",
    "check_on_error",
    "check_queries",
    "label_token_ids",
    "verification_scores",
]


class PRMOutputError(RuntimeError):
    """A PRM produced something that is not a usable score (non-finite logits, a server
    response without the label tokens' log-probabilities, a timeout)."""


class PRMResponseWarning(UserWarning):
    """A PRM server response was unusable and a neutral score was used instead."""


@runtime_checkable
class ProcessRewardModel(Protocol):
    """Scores steps: the probability in [0, 1] that each query's action is correct.

    ``requires_env`` is True for scorers that inspect the environment (rule-based ones); they
    are then given, aligned with ``queries``, envs in the state *before* each action, which
    they must not change (fork them instead).
    """

    requires_env: bool

    def score(self, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None) -> np.ndarray:
        """One float64 score in [0, 1] per query."""
        ...


def check_queries(queries: Sequence[PRMQuery]) -> list[PRMQuery]:
    if isinstance(queries, PRMQuery):
        raise TypeError("score() takes a sequence of PRMQuery; wrap a single query in a list")
    out = list(queries)
    for i, q in enumerate(out):
        if not isinstance(q, PRMQuery):
            raise TypeError(f"queries[{i}] is a {type(q).__name__}, expected a PRMQuery")
    return out


def verification_scores(
    prm: ProcessRewardModel, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None
) -> np.ndarray:
    """What best-of-N ranks candidates by, following GUI-Shepherd (Sec. 4.2, Alg. 2): the
    positive label's logit where the PRM exposes it (``prm.positive_logits``, as
    :class:`~gui_gym.models.prm.TransformersPRM` does), else its score. A server PRM
    (:class:`~gui_gym.models.prm.OpenAICompatPRM`) returns log-probabilities, not logits, and
    :class:`~gui_gym.models.prm.RulePRM` has no logits: both rank by
    :meth:`ProcessRewardModel.score`.
    """
    positive_logits = getattr(prm, "positive_logits", None)
    if callable(positive_logits):
        return np.asarray(positive_logits(queries, envs=envs), dtype=np.float64)
    return np.asarray(prm.score(queries, envs=envs), dtype=np.float64)


ON_ERROR = ("neutral", "raise")
"""What a model-backed PRM does with an unusable response: ``neutral`` gives its
``neutral_score`` with a :class:`PRMResponseWarning` (a rollout never dies mid-episode);
``raise`` raises."""


def check_on_error(on_error: str, neutral_score: float) -> None:
    """Check a PRM's ``on_error`` and ``neutral_score`` arguments.

    Raises:
        ValueError: for an ``on_error`` not in :data:`ON_ERROR` or a ``neutral_score``
            outside [0, 1].
    """
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be 'neutral' or 'raise', got {on_error!r}")
    if not 0.0 <= neutral_score <= 1.0:
        raise ValueError(f"neutral_score must be in [0, 1], got {neutral_score!r}")


def label_token_ids(
    tokenizer: Any, positive_token: str, negative_token: str, hint: str = ""
) -> tuple[int, int]:
    """The ids of a model PRM's two label tokens (``positive_token``, ``negative_token``) in
    ``tokenizer``: each a non-empty string that is exactly one token, the two different.

    Raises:
        ValueError: naming the label and what is wrong (``hint`` ends the message of a label
            that is not one token).
    """

    def single(text: str, name: str) -> int:
        if not isinstance(text, str) or not text:
            raise ValueError(f"{name} must be a non-empty string, got {text!r}")
        ids = tokenizer.encode(text, add_special_tokens=False)
        if len(ids) != 1:
            raise ValueError(
                f"{name} {text!r} is {len(ids)} tokens {ids} in this tokenizer; the label must "
                f"be exactly one token{hint}"
            )
        return int(ids[0])

    positive = single(positive_token, "positive_token")
    negative = single(negative_token, "negative_token")
    if positive == negative:
        raise ValueError(
            f"positive_token {positive_token!r} and negative_token {negative_token!r} are "
            f"the same token (id {positive})"
        )
    return positive, negative
