"""Soft longest common subsequence and ProgRM's step similarity.

ProgRM (Zhang et al., 2025, Appendix A) replaces the equality test of the LCS dynamic
programme with a soft match function ``f(a, b) -> [0, 1]`` (Eq. 8)::

    SoftLCS(a[:i], b[:j]) = max(SoftLCS(a[:i-1], b[:j-1]) + f(a_i, b_j),
                                SoftLCS(a[:i-1], b[:j]),
                                SoftLCS(a[:i], b[:j-1]))

and defines ``f`` for GUI actions (Eq. 9): 0 when the action types differ, the sentence
embedding similarity of the texts for INPUT/ANSWER, ``epsilon = 0.4`` for two NOTHING
actions, and exact equality otherwise. Here "equal" compares the *target element's identity*
(role, label, resource id), never its per-screen index: ``CLICK(4)`` on one screen and
``CLICK(7)`` on another are the same step when both tap the same link.

Everything is O(n * m). One row of the programme is vectorised: with
``c_j = max(D[i-1][j-1] + f_ij, D[i-1][j])`` the row is ``D[i][j] = max(c_1..c_j)`` (a running
maximum), so a row is three numpy calls, and :func:`soft_lcs_batch` runs the same recurrence
over a whole batch of padded pairs at once. :class:`StepSimilarity` embeds each distinct text
once and scores signature pairs as matrices.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from gui_gym.core.actions import (
    Action,
    ActionParseError,
    ActionType,
    parse_action,
    target_element,
)
from gui_gym.core.trajectory import Step
from gui_gym.core.ui import UITree

if TYPE_CHECKING:
    from gui_gym.rewards.embedding import Embedder

__all__ = [
    "INVALID",
    "LCSResult",
    "StepSignature",
    "StepSimilarity",
    "soft_lcs",
    "soft_lcs_batch",
    "soft_lcs_matrix",
    "step_signature",
]

T = TypeVar("T")

INVALID = "INVALID"
"""Signature type of a step whose action was malformed or rejected: it matches nothing."""

DEFAULT_EPSILON = 0.4
"""ProgRM Eq. 9: the match weight of two NOTHING actions (Appendix A uses 0.4)."""

DEFAULT_TEXT_TYPES = (ActionType.INPUT.value, ActionType.ANSWER.value, ActionType.SEARCH.value)
"""Types compared by text embedding. ProgRM Eq. 9 names INPUT and ANSWER; SEARCH (WebShop's
typed query) is the same kind of free text, so it is compared the same way."""

DEFAULT_EMPTY_TYPES = (ActionType.DO_NOTHING.value,)
"""Types weighted by epsilon when both steps have them (ProgRM Eq. 9's NOTHING)."""


@dataclass(frozen=True, slots=True)
class LCSResult:
    """A soft LCS.

    Attributes:
        score: The soft LCS length (sum of ``f`` over the matched pairs).
        pairs: Matched ``(i, j)`` index pairs, increasing in both ``i`` and ``j``; each pair
            has ``f(a_i, b_j) > 0``.
    """

    score: float
    pairs: tuple[tuple[int, int], ...]

    @property
    def length(self) -> int:
        """Number of matched pairs (the hard length of the alignment)."""
        return len(self.pairs)


def _dp_table(sim: np.ndarray) -> np.ndarray:
    """The full ``(n+1, m+1)`` table of ProgRM Eq. 8 for one similarity matrix."""
    n, m = sim.shape
    table = np.zeros((n + 1, m + 1), dtype=np.float64)
    for i in range(1, n + 1):
        previous = table[i - 1]
        # c_j = max(D[i-1][j-1] + f(a_i, b_j), D[i-1][j]); then D[i][j] = max(c_j, D[i][j-1])
        # unrolls to a running maximum over the row because D[i][0] = 0 and every c_j >= 0.
        candidate = np.maximum(previous[:-1] + sim[i - 1], previous[1:])
        np.maximum.accumulate(candidate, out=table[i, 1:])
    return table


def _traceback(table: np.ndarray, sim: np.ndarray, n: int, m: int) -> tuple[tuple[int, int], ...]:
    """Matched pairs of one optimal alignment, preferring a match over a skip.

    Walking back from the end and matching whenever the diagonal move is optimal pairs each
    recipe step with the *latest* equivalent trajectory step, so a step that is undone and
    redone (a GOBACK then the same click) is credited when it is redone.
    """
    pairs: list[tuple[int, int]] = []
    i, j = n, m
    while i > 0 and j > 0:
        value = table[i, j]
        f = sim[i - 1, j - 1]
        if f > 0.0 and value == table[i - 1, j - 1] + f:
            pairs.append((i - 1, j - 1))
            i -= 1
            j -= 1
        elif value == table[i - 1, j]:
            i -= 1
        else:
            j -= 1
    pairs.reverse()
    return tuple(pairs)


def soft_lcs_matrix(sim: np.ndarray | Sequence[Sequence[float]]) -> LCSResult:
    """Soft LCS from a precomputed similarity matrix (ProgRM Eq. 8).

    Args:
        sim: ``sim[i][j] = f(a_i, b_j)``, shape ``(len(a), len(b))``, values in ``[0, 1]``.

    Returns:
        The score and the matched index pairs.

    Raises:
        ValueError: if ``sim`` is not 2-D or holds values outside ``[0, 1]`` or NaN.
    """
    matrix = np.asarray(sim, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"similarity matrix must be 2-D, got shape {matrix.shape}")
    _check_unit_interval(matrix)
    n, m = matrix.shape
    if n == 0 or m == 0:
        return LCSResult(0.0, ())
    table = _dp_table(matrix)
    return LCSResult(float(table[n, m]), _traceback(table, matrix, n, m))


def soft_lcs(a: Sequence[T], b: Sequence[T], f: Callable[[T, T], float] | None = None) -> LCSResult:
    """Soft LCS of two sequences under a similarity ``f`` (ProgRM Eq. 8).

    With the default ``f`` (exact equality) this is the classic LCS of Eq. 7.

    Args:
        a: First sequence.
        b: Second sequence.
        f: Similarity of two items, in ``[0, 1]``; called once per pair.

    Returns:
        The soft LCS length and the matched ``(i, j)`` pairs.

    Raises:
        ValueError: if ``f`` returns a value outside ``[0, 1]``.
    """
    if f is None:
        sim = np.array([[1.0 if x == y else 0.0 for y in b] for x in a], dtype=np.float64)
    else:
        sim = np.array([[float(f(x, y)) for y in b] for x in a], dtype=np.float64)
    if sim.size == 0:
        return LCSResult(0.0, ())
    return soft_lcs_matrix(sim.reshape(len(a), len(b)))


def soft_lcs_batch(
    sims: np.ndarray,
    len_a: Sequence[int] | np.ndarray,
    len_b: Sequence[int] | np.ndarray,
    *,
    return_pairs: bool = False,
) -> tuple[np.ndarray, list[tuple[tuple[int, int], ...]] | None]:
    """Soft LCS of many pairs at once, vectorised over the batch (ProgRM Eq. 8).

    Args:
        sims: ``(P, N, M)`` similarity matrices, zero-padded past each pair's lengths
            (float32 is kept as float32, which halves the memory traffic; else float64).
        len_a: True length of each pair's first sequence (``<= N``).
        len_b: True length of each pair's second sequence (``<= M``).
        return_pairs: Also trace back the matched pairs of every alignment.

    Returns:
        ``(scores, pairs)``: scores of shape ``(P,)``; pairs per batch item, or None.

    Raises:
        ValueError: on shape mismatches or lengths outside the padded shape.
    """
    sims = np.asarray(sims)
    if sims.dtype != np.float32:
        sims = sims.astype(np.float64)
    if sims.ndim != 3:
        raise ValueError(f"sims must have shape (P, N, M), got {sims.shape}")
    count, n_max, m_max = sims.shape
    la = np.asarray(len_a, dtype=np.int64)
    lb = np.asarray(len_b, dtype=np.int64)
    if la.shape != (count,) or lb.shape != (count,):
        raise ValueError(f"len_a and len_b must have shape ({count},)")
    if count and (la.min() < 0 or lb.min() < 0 or la.max() > n_max or lb.max() > m_max):
        raise ValueError("sequence lengths must lie within the padded shape")
    if count == 0:
        return np.zeros(0), ([] if return_pairs else None)
    if not return_pairs:
        # Scores only: two rows suffice. Zero padding past a pair's lengths never raises the
        # table (each row is a running maximum), so the last cell holds D[len_a][len_b].
        row = np.zeros((count, m_max + 1), dtype=sims.dtype)
        for i in range(n_max):
            candidate = np.maximum(row[:, :-1] + sims[:, i], row[:, 1:])
            np.maximum.accumulate(candidate, axis=1, out=row[:, 1:])
        return row[:, -1].astype(np.float64), None
    tables = np.zeros((count, n_max + 1, m_max + 1), dtype=sims.dtype)
    for i in range(1, n_max + 1):
        previous = tables[:, i - 1]
        candidate = np.maximum(previous[:, :-1] + sims[:, i - 1], previous[:, 1:])
        np.maximum.accumulate(candidate, axis=1, out=tables[:, i, 1:])
    scores = tables[np.arange(count), la, lb].astype(np.float64)
    pairs = [
        _traceback(tables[p], sims[p], int(la[p]), int(lb[p])) if la[p] and lb[p] else ()
        for p in range(count)
    ]
    return scores, pairs


def _check_unit_interval(matrix: np.ndarray) -> None:
    if matrix.size and not (np.all(matrix >= 0.0) and np.all(matrix <= 1.0)):
        bad = matrix[~((matrix >= 0.0) & (matrix <= 1.0))].flat[0]
        raise ValueError(f"similarities must lie in [0, 1], got {bad!r}")


# ---------------------------------------------------------------------------------------------
# ProgRM's step similarity (Eq. 9)


@dataclass(frozen=True, slots=True)
class StepSignature:
    """What ProgRM's soft match compares about one step, with no per-screen index.

    Attributes:
        type: The action type (``CLICK``, ``INPUT``, ...), or ``INVALID``.
        target: Identity of the acted-on element ``(role, label, resource_id)``, or None.
        text: Typed text, answer, query, key or app name, when the action carries one.
        direction: Scroll direction.
        fallback: The action description, used as the target's identity when a step records
            no target (files written before ``Step.target`` existed); never an index.
    """

    type: str
    target: tuple[str, str, str] | None = None
    text: str | None = None
    direction: str | None = None
    fallback: str = ""

    @property
    def exact_key(self) -> tuple[Any, ...]:
        """What must be equal for the "otherwise" case of Eq. 9."""
        return (self.type, self.target or self.fallback, self.direction, self.text)

    def __str__(self) -> str:
        parts = [self.type]
        if self.target is not None:
            parts.append(f"{self.target[0]}:{self.target[1] or self.target[2]!r}")
        elif self.fallback:
            parts.append(repr(self.fallback))
        if self.direction:
            parts.append(self.direction)
        if self.text is not None:
            parts.append(repr(self.text))
        return " ".join(parts)


_TARGETED_TYPES = frozenset(
    {
        ActionType.CLICK,
        ActionType.DOUBLE_CLICK,
        ActionType.LONG_CLICK,
        ActionType.INPUT,
        ActionType.SCROLL,
    }
)


def step_signature(step: Step) -> StepSignature:
    """The index-free signature of a recorded step.

    The target's identity comes from ``step.target`` (recorded by the env as
    ``info["action_target"]``); failing that, from ``step.tree`` when the tree was recorded;
    failing that, the step's ``action_description`` stands in (it names the label and role).

    Args:
        step: A recorded step.

    Returns:
        The signature; a malformed or rejected action gives type ``INVALID``.
    """
    recorded = None
    if step.target is not None:
        role, label, resource_id = [*step.target, "", "", ""][:3]
        recorded = (str(role), str(label), str(resource_id))
    if step.tree is None or recorded is not None:
        # Labelling reads every step of every trajectory, and steps repeat a lot.
        return _signature(step.action, step.action_valid, recorded, step.action_description)
    return _signature_with_tree(step)


@functools.lru_cache(maxsize=65536)
def _signature(
    action_text: str, valid: bool, target: tuple[str, str, str] | None, description: str
) -> StepSignature:
    if not valid:
        return StepSignature(INVALID, fallback=action_text)
    try:
        action = parse_action(action_text)
    except ActionParseError:
        return StepSignature(INVALID, fallback=action_text)
    return _finish(action, target, description)


def _signature_with_tree(step: Step) -> StepSignature:
    if not step.action_valid:
        return StepSignature(INVALID, fallback=step.action)
    try:
        action = parse_action(step.action)
    except ActionParseError:
        return StepSignature(INVALID, fallback=step.action)
    target = None
    if action.type in _TARGETED_TYPES:
        assert step.tree is not None
        element = target_element(action, UITree.from_dict(step.tree))
        if element is not None:
            target = element.identity
    return _finish(action, target, step.action_description)


def _finish(action: Action, target: tuple[str, str, str] | None, description: str) -> StepSignature:
    fallback = ""
    if target is None and action.type in _TARGETED_TYPES:
        if action.index is not None or action.has_point:
            fallback = description
        elif action.label is not None:
            fallback = action.label
    return StepSignature(
        type=action.type.value,
        target=target,
        text=action.text,
        direction=action.direction,
        fallback=fallback,
    )


class StepSimilarity:
    """ProgRM's soft match function ``f`` over :class:`StepSignature` (Eq. 9).

    * 0 when the action types differ (and for INVALID steps);
    * embedding cosine of the texts, clipped to ``[0, 1]``, for INPUT/ANSWER (and SEARCH);
    * ``epsilon`` (0.4) when both are DO_NOTHING;
    * otherwise 1 when target identity, direction and text are equal, else 0.

    Args:
        embedder: Sentence embedder for text similarity, e.g.
            ``gui_gym.models.embeddings.default_embedder("minilm")`` (the paper's SBERT).
        epsilon: Weight of a NOTHING/NOTHING match.
        text_types: Types compared by text embedding.
        empty_types: Types weighted by ``epsilon``.

    Raises:
        ValueError: if ``epsilon`` is outside ``[0, 1]``.
        TypeError: if ``embedder`` has no ``encode``.
    """

    def __init__(
        self,
        embedder: Embedder,
        epsilon: float = DEFAULT_EPSILON,
        text_types: Sequence[str] = DEFAULT_TEXT_TYPES,
        empty_types: Sequence[str] = DEFAULT_EMPTY_TYPES,
    ):
        if not 0.0 <= float(epsilon) <= 1.0:
            raise ValueError(f"epsilon must lie in [0, 1], got {epsilon!r}")
        if not callable(getattr(embedder, "encode", None)):
            raise TypeError(f"embedder must have an encode(texts) method, got {embedder!r}")
        self.embedder = embedder
        self.epsilon = float(epsilon)
        self.text_types = frozenset(str(t) for t in text_types)
        self.empty_types = frozenset(str(t) for t in empty_types)

    def __call__(self, a: StepSignature, b: StepSignature) -> float:
        return float(self.matrix([a], [b])[0, 0])

    def matrix(self, a: Sequence[StepSignature], b: Sequence[StepSignature]) -> np.ndarray:
        """``f(a_i, b_j)`` for every pair, shape ``(len(a), len(b))`` (float64)."""
        vocabulary = list(dict.fromkeys([*a, *b]))
        index = {sig: k for k, sig in enumerate(vocabulary)}
        full = self.pairwise(vocabulary)
        ia = np.fromiter((index[s] for s in a), dtype=np.int64, count=len(a))
        ib = np.fromiter((index[s] for s in b), dtype=np.int64, count=len(b))
        return full[np.ix_(ia, ib)]

    def pairwise(self, signatures: Sequence[StepSignature]) -> np.ndarray:
        """Similarity of every pair of ``signatures``: a symmetric ``(U, U)`` matrix.

        Vectorised: types and exact keys become integer codes compared by broadcasting, and
        texts are embedded once each (the embedder caches across calls).
        """
        count = len(signatures)
        out = np.zeros((count, count), dtype=np.float64)
        if count == 0:
            return out
        type_codes = _codes([s.type for s in signatures])
        key_codes = _codes([s.exact_key for s in signatures])
        same_type = type_codes[:, None] == type_codes[None, :]
        is_text = np.array([s.type in self.text_types for s in signatures])
        is_empty = np.array([s.type in self.empty_types for s in signatures])
        is_invalid = np.array([s.type == INVALID for s in signatures])
        exact = same_type & ~is_text[:, None] & ~is_empty[:, None]
        out[exact & (key_codes[:, None] == key_codes[None, :])] = 1.0
        out[same_type & is_empty[:, None]] = self.epsilon
        text_rows = np.flatnonzero(is_text)
        if text_rows.size:
            texts = [signatures[k].text or "" for k in text_rows]
            distinct = list(dict.fromkeys(texts))
            vectors = np.asarray(self.embedder.encode(distinct), dtype=np.float32)
            position = {t: k for k, t in enumerate(distinct)}
            rows = vectors[[position[t] for t in texts]]
            norms = np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
            rows = rows / norms
            cosine = np.clip(rows @ rows.T, 0.0, 1.0).astype(np.float64)
            # Identical texts are identical answers: exactly 1, whatever float error says.
            text_codes = _codes(texts)
            cosine[text_codes[:, None] == text_codes[None, :]] = 1.0
            block = same_type[np.ix_(text_rows, text_rows)]
            out[np.ix_(text_rows, text_rows)] = np.where(block, cosine, 0.0)
        out[is_invalid, :] = 0.0
        out[:, is_invalid] = 0.0
        return out


def _codes(values: Sequence[Any]) -> np.ndarray:
    """Integer code per value, equal codes for equal values."""
    table: dict[Any, int] = {}
    return np.fromiter(
        (table.setdefault(v, len(table)) for v in values), dtype=np.int64, count=len(values)
    )
