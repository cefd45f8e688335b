"""A screen's candidate actions as a fixed-size choice, and the feature rows an array policy
scores them by: what the Stable-Baselines3 adapters (:mod:`gui_gym.wrappers.sb3`) compute,
as a space and plain functions of actions, strings and vectors.

* :class:`CandidateSpace`: ``Discrete(K)`` over them, sampling only the real ones.
* :func:`offered_candidates`: the env's candidates (``GuiEnv.candidate_actions()``), then
  typing each quoted phrase of the instruction (:func:`quoted_phrases`) into every field the
  env already offers typing into, the first ``room`` of them, then an optional final action
  (``DONE()``).
* :func:`candidate_features`: one flat vector ``[ e(instruction) | e(screen) | K x
  ( e(candidate) | cos(instruction, candidate) | one-hot of the candidate's type
  (len(CANDIDATE_TYPES) + 1) | is-real flag ) ]`` from L2-normalised embeddings; padding rows
  are zero and every value lies in ``[-1, 1]``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from gymnasium import spaces

from gui_gym.core.actions import Action, ActionType

__all__ = [
    "CANDIDATE_TYPES",
    "CandidateSpace",
    "candidate_features",
    "candidate_width",
    "offered_candidates",
    "quoted_phrases",
]

CANDIDATE_TYPES: tuple[ActionType, ...] = (
    ActionType.CLICK,
    ActionType.LONG_CLICK,
    ActionType.INPUT,
    ActionType.SCROLL,
    ActionType.GOBACK,
    ActionType.SEARCH,
    ActionType.DONE,
)
"""Action types with their own one-hot slot in a candidate's features (others share one)."""


class CandidateSpace(spaces.Discrete):
    """``Discrete(K)`` whose ``sample()`` draws from the current screen's candidates only.

    The wrapper (:class:`~gui_gym.wrappers.sb3.CandidateActions`) updates
    :attr:`current_mask` after every reset and step; an explicit ``mask`` or ``probability``
    passed to :meth:`sample` still wins. Libraries that sample their own random actions from
    ``n`` (TorchRL's ``rand()``) may hit a padding index: the wrapper maps it to a real
    candidate (``padding="wrap"``, the default) or counts it as an invalid step
    (``padding="invalid"``).
    """

    def __init__(self, n: int, seed: int | np.random.Generator | None = None):
        super().__init__(n, seed=seed)
        self.current_mask: np.ndarray | None = None

    def sample(
        self, mask: np.ndarray | None = None, probability: np.ndarray | None = None
    ) -> np.int64:
        if mask is None and probability is None and self.current_mask is not None:
            mask = self.current_mask.astype(np.int8)
        return super().sample(mask=mask, probability=probability)


_QUOTED = re.compile(r"\"([^\"]{1,80})\"|“([^”]{1,80})”|'([^']{1,80})'")


def quoted_phrases(instruction: str) -> list[str]:
    """The instruction's quoted phrases (``"..."``, ``“...”`` or ``'...'``, 1 to 80
    characters), stripped, each once, in order."""
    phrases: list[str] = []
    for match in _QUOTED.finditer(instruction):
        phrase = next(g for g in match.groups() if g is not None).strip()
        if phrase and phrase not in phrases:
            phrases.append(phrase)
    return phrases


def offered_candidates(
    found: Sequence[Action], instruction: str, room: int, final: Action | None = None
) -> tuple[list[Action], int]:
    """The candidates a screen offers and how many did not fit.

    Args:
        found: The env's candidate actions, in its order.
        instruction: The task instruction; each quoted phrase is offered as typing into every
            field ``found`` types into (unless ``found`` already offers that).
        room: How many of those are kept (the first ones).
        final: An action offered last, after the cut (``DONE()``), or None.

    Returns:
        ``(candidates, dropped)``.
    """
    offered = list(found)
    typed_into = {a.index for a in offered if a.type is ActionType.INPUT}
    if typed_into:
        typed = {(a.index, a.text) for a in offered if a.type is ActionType.INPUT}
        for phrase in quoted_phrases(instruction):
            for index in sorted(typed_into):
                if (index, phrase) not in typed:
                    offered.append(Action(ActionType.INPUT, index=index, text=phrase))
    dropped = max(0, len(offered) - room)
    offered = offered[:room]
    if final is not None:
        offered.append(final)
    return offered, dropped


def candidate_width(dim: int) -> int:
    """Length of one candidate's row in :func:`candidate_features` for embeddings of ``dim``."""
    return dim + 1 + len(CANDIDATE_TYPES) + 1 + 1


def candidate_features(
    vectors: np.ndarray, candidates: Sequence[Action], max_candidates: int, dim: int
) -> np.ndarray:
    """The flat float32 feature vector (layout in the module docstring).

    Args:
        vectors: Embeddings of the instruction, the screen, then each candidate's description,
            one row of ``dim`` each (``2 + len(candidates)`` rows).
        candidates: The candidates (for their types), at most ``max_candidates``.
        max_candidates: ``K``, the number of candidate rows.
        dim: The embeddings' dimension.
    """
    d = dim
    instruction, screen, candidate_vectors = vectors[0], vectors[1], vectors[2:]
    width = candidate_width(d)
    out = np.zeros((2 * d + max_candidates * width,), dtype=np.float32)
    out[:d] = instruction
    out[d : 2 * d] = screen
    rows = out[2 * d :].reshape(max_candidates, width)
    count = len(candidates)
    rows[:count, :d] = candidate_vectors
    rows[:count, d] = candidate_vectors @ instruction
    for row, action in enumerate(candidates):
        slot = CANDIDATE_TYPES.index(action.type) if action.type in CANDIDATE_TYPES else -1
        rows[row, d + 1 + (slot if slot >= 0 else len(CANDIDATE_TYPES))] = 1.0
    rows[:count, -1] = 1.0
    return np.clip(out, -1.0, 1.0, out=out)
