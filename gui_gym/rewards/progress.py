"""ProgRM progress labels, progress rewards and reward-model training data.

From ProgRM (Zhang et al., 2025):

* **Progress reward** (Sec. 2.1, Eq. 2): ``r_t = Prog(s_t; g) - Prog(s_{t-k}; g)``.
* **LCS labels** (Sec. 2.2, Algorithm 1, Appendix A), per task:

  1. *Recipe library.* Group the task's successful trajectories so that every two members
     of a group have ``Sim(Ti, Tj) = SoftLCS(Ti, Tj) / min(|Ti|, |Tj|) >= theta_L`` (Eq. 3,
     ``theta_L = 0.6``), and fold each group into one recipe ``T1 (.) T2 (.) ... (.) Tn`` with
     the pairwise soft LCS (Eq. 10).
  2. *Key steps.* Match each trajectory to the recipe with the highest completion ratio
     ``CR(Ti; Lj) = |l_ij| / |Lj|`` (Eq. 4); its steps matched to the recipe are key steps.
  3. *Labels.* The key step matched to recipe position ``kappa`` gets ``kappa / |Lj|``; every
     other step inherits the label of the nearest key step before it (0 before the first).

* **Env labels** (ProgRM-Env, end of Sec. 2.2): the key steps are the steps at which the
  env's milestones grew (``info["milestones"]``), labelled the same way with the task's
  milestones as the recipe.
* **Training data synthesis** (Appendix B) and the **1:1 step balance** (Appendix C).

Everything here is pure: no Gymnasium, no models. The similarity function comes in as a
:class:`~gui_gym.rewards.lcs.StepSimilarity` (or anything with ``pairwise``), and replaying
synthesized action sequences in an env comes in as a callable.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

from gui_gym.core.actions import Action, ActionParseError, ActionType, parse_action
from gui_gym.core.trajectory import Trajectory, read_jsonl_lines, write_jsonl
from gui_gym.rewards.lcs import (
    LCSResult,
    StepSignature,
    soft_lcs_batch,
    step_signature,
)

__all__ = [
    "DEFAULT_THETA",
    "Recipe",
    "RecipeLibrary",
    "StepLabel",
    "TrajectoryLabels",
    "assign_progress",
    "balance_steps",
    "build_recipe_library",
    "completion_ratio",
    "fold_recipe",
    "group_by_similarity",
    "label_env",
    "label_lcs",
    "milestone_key_steps",
    "mismatched_failures",
    "progress_gain",
    "progress_reward",
    "progress_rewards",
    "random_walk_failures",
    "read_labeled_trajectories",
    "success_variants",
    "synthesize_successes",
    "trajectory_similarity",
    "write_labeled_trajectories",
]

T = TypeVar("T")

DEFAULT_THETA = 0.6
"""ProgRM Appendix A: the grouping threshold theta_L."""

_MAX_BATCH_CELLS = 2_000_000
"""Cells of similarity matrices held at once by the batched soft LCS (about 16 MB)."""


class PairwiseSimilarity(Protocol):
    """What the labeler needs from a similarity: ``f`` for every pair of signatures."""

    def pairwise(self, signatures: Sequence[StepSignature]) -> np.ndarray: ...


# ---------------------------------------------------------------------------------------------
# Progress reward (Eq. 2)


def progress_reward(values: Sequence[float], k: int = 1) -> float:
    """ProgRM Eq. 2 for the latest state: ``Prog(s_t) - Prog(s_{t-k})``.

    Args:
        values: Progress of ``s_0 .. s_t`` (at least the last ``k + 1`` of them). When fewer
            than ``k + 1`` are given the reference is the first one, ``s_0`` (an episode's
            first steps are compared with the reset state).
        k: History length (the paper uses 1).

    Returns:
        The progress gain over the last ``k`` steps (0.0 for a single value).

    Raises:
        ValueError: if ``values`` is empty or ``k < 1``.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k!r}")
    count = len(values)
    if count == 0:
        raise ValueError("progress_reward needs at least one progress value")
    return float(values[-1]) - float(values[max(0, count - 1 - k)])


def progress_gain(window: Sequence[float]) -> float:
    """ProgRM Eq. 2 on a sliding window: ``window[-1] - window[0]``.

    ``window`` holds ``Prog(s_{max(0, t-k)}) .. Prog(s_t)``, as a ``deque(maxlen=k + 1)`` that
    starts with ``Prog(s_0)`` does; the difference is then ``Prog(s_t) - Prog(s_{t-k})``, with
    the reset state as the reference while ``t < k``. This is :func:`progress_reward` without
    the argument checks, for the wrapper's per-step path.
    """
    return window[-1] - window[0]


def progress_rewards(values: Sequence[float], k: int = 1) -> list[float]:
    """ProgRM Eq. 2 along a whole episode: ``r_t`` for ``t = 1..T`` given ``Prog(s_0..s_T)``.

    Raises:
        ValueError: if ``values`` is empty or ``k < 1``.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k!r}")
    if len(values) == 0:
        raise ValueError("progress_rewards needs at least the reset state's progress")
    v = [float(x) for x in values]
    return [v[t] - v[max(0, t - k)] for t in range(1, len(v))]


# ---------------------------------------------------------------------------------------------
# Labels


@dataclass(frozen=True, slots=True)
class StepLabel:
    """The progress label of one step (the progress *after* the step's action).

    Attributes:
        progress: Label in ``[0, 1]``.
        key: Whether the step is a key step.
        reason: Why it has this label, in words.
    """

    progress: float
    key: bool
    reason: str


@dataclass
class TrajectoryLabels:
    """Per-step progress labels of one trajectory.

    Attributes:
        task_id: The trajectory's task.
        method: ``"lcs"`` or ``"env"``.
        labels: One label per step.
        recipe: Index of the matched recipe in the task's library (LCS), else None.
        completion_ratio: CR of the matched recipe (LCS, Eq. 4), else None.
    """

    task_id: str
    method: str
    labels: list[StepLabel]
    recipe: int | None = None
    completion_ratio: float | None = None

    @property
    def progress(self) -> list[float]:
        """The labels as floats, one per step."""
        return [label.progress for label in self.labels]

    @property
    def key_steps(self) -> list[int]:
        """Indices of the key steps."""
        return [i for i, label in enumerate(self.labels) if label.key]

    def __len__(self) -> int:
        return len(self.labels)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (what ``gui-gym label`` stores under ``"progress"``)."""
        return {
            "method": self.method,
            "labels": [label.progress for label in self.labels],
            "key_steps": [label.key for label in self.labels],
            "reasons": [label.reason for label in self.labels],
            "recipe": self.recipe,
            "completion_ratio": self.completion_ratio,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], task_id: str = "") -> TrajectoryLabels:
        """Inverse of :meth:`to_dict`.

        Raises:
            ValueError: if the lists are missing, of different lengths, or out of ``[0, 1]``.
        """
        try:
            values = [float(v) for v in data["labels"]]
            keys = [bool(v) for v in data.get("key_steps", [False] * len(values))]
            reasons = [str(v) for v in data.get("reasons", [""] * len(values))]
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"malformed progress labels: {err!r}") from None
        if not len(values) == len(keys) == len(reasons):
            raise ValueError(
                f"progress labels, key_steps and reasons differ in length "
                f"({len(values)}, {len(keys)}, {len(reasons)})"
            )
        bad = [v for v in values if not 0.0 <= v <= 1.0]
        if bad:
            raise ValueError(f"progress labels must lie in [0, 1], got {bad[0]!r}")
        return cls(
            task_id=task_id,
            method=str(data.get("method", "")),
            labels=[StepLabel(v, k, r) for v, k, r in zip(values, keys, reasons)],
            recipe=data.get("recipe"),
            completion_ratio=data.get("completion_ratio"),
        )


def assign_progress(
    n_steps: int,
    matches: Sequence[tuple[int, int]],
    recipe_length: int,
    key_reasons: Mapping[int, str] | None = None,
) -> list[StepLabel]:
    """Progress label assignment (ProgRM Sec. 2.2, stage 3).

    The key step matched to recipe position ``kappa`` (1-based) is labelled
    ``kappa / |L|``; a non-key step inherits the label of the nearest key step before it;
    steps before the first key step are labelled 0.

    Args:
        n_steps: Steps in the trajectory.
        matches: ``(step index, kappa)`` of each key step, steps increasing.
        recipe_length: ``|L|``, the recipe's length (or the task's milestone count).
        key_reasons: Optional reason text per key step index.

    Returns:
        One :class:`StepLabel` per step.

    Raises:
        ValueError: on steps out of range or not increasing, or kappa outside ``1..|L|``.
    """
    if recipe_length < 1 and matches:
        raise ValueError(
            f"recipe_length must be >= 1 when there are key steps, got {recipe_length}"
        )
    kappa_of: dict[int, int] = {}
    last_step = -1
    for step, kappa in matches:
        if not 0 <= step < n_steps:
            raise ValueError(f"key step {step} is outside a trajectory of {n_steps} steps")
        if step <= last_step:
            raise ValueError(f"key steps must be strictly increasing, got {step} after {last_step}")
        if not 1 <= kappa <= recipe_length:
            raise ValueError(f"kappa must lie in 1..{recipe_length}, got {kappa}")
        kappa_of[step] = kappa
        last_step = step
    labels: list[StepLabel] = []
    current = 0.0
    source: int | None = None
    for step in range(n_steps):
        kappa = kappa_of.get(step)
        if kappa is not None:
            current = kappa / recipe_length
            source = step
            reason = (key_reasons or {}).get(step) or f"key step {kappa}/{recipe_length}"
            labels.append(StepLabel(current, True, reason))
        elif source is None:
            labels.append(StepLabel(0.0, False, "before the first key step"))
        else:
            labels.append(
                StepLabel(current, False, f"inherits {current:.3f} from key step {source}")
            )
    return labels


def trajectory_similarity(score: float, len_i: int, len_j: int) -> float:
    """ProgRM Eq. 3: ``SoftLCS(Ti, Tj) / min(|Ti|, |Tj|)`` (0 when either is empty)."""
    shortest = min(len_i, len_j)
    return float(score) / shortest if shortest > 0 else 0.0


def completion_ratio(score: float, recipe_length: int) -> float:
    """ProgRM Eq. 4: ``|l_ij| / |L_j|``, with the soft LCS length as ``|l_ij|``."""
    return float(score) / recipe_length if recipe_length > 0 else 0.0


def group_by_similarity(
    similarity: np.ndarray | Sequence[Sequence[float]],
    theta: float = DEFAULT_THETA,
    order: Sequence[int] | None = None,
) -> list[list[int]]:
    """Group items so that every two members of a group have similarity ``>= theta``.

    ProgRM Sec. 2.2 requires exactly this of its trajectory groups. Greedy: items are taken
    in ``order`` (default: as given) and each joins the first group all of whose members it
    is similar enough to, else starts a new group.

    Args:
        similarity: Symmetric ``(n, n)`` matrix of ``Sim`` values (Eq. 3).
        theta: The threshold theta_L.
        order: The order items are considered in.

    Returns:
        Groups of item indices, each in the order its members joined.

    Raises:
        ValueError: if the matrix is not square or ``order`` is not a permutation.
    """
    sim = np.asarray(similarity, dtype=np.float64)
    if sim.ndim != 2 or sim.shape[0] != sim.shape[1]:
        raise ValueError(f"similarity must be a square matrix, got shape {sim.shape}")
    n = sim.shape[0]
    sequence = list(range(n)) if order is None else [int(i) for i in order]
    if sorted(sequence) != list(range(n)):
        raise ValueError(f"order must be a permutation of 0..{n - 1}")
    groups: list[list[int]] = []
    # weakest[g, x]: the lowest similarity of item x to any member of group g, so "x is
    # similar enough to every member" is one comparison per group.
    weakest = np.empty((n, n), dtype=np.float64)
    for item in sequence:
        fits = np.flatnonzero(weakest[: len(groups), item] >= theta)
        if fits.size:
            g = int(fits[0])
            groups[g].append(item)
            np.minimum(weakest[g], sim[item], out=weakest[g])
        else:
            weakest[len(groups)] = sim[item]
            groups.append([item])
    return groups


def fold_recipe(
    sequences: Sequence[Sequence[T]], lcs: Callable[[Sequence[T], Sequence[T]], LCSResult]
) -> list[T]:
    """A group's recipe: the left fold ``a1 (.) a2 (.) ... (.) an`` of ProgRM Eq. 10.

    Each fold keeps the matched items of the left operand, so a recipe's items come from the
    group's first sequence.

    Args:
        sequences: The group, in order (at least one).
        lcs: The two-sequence (soft) LCS.

    Raises:
        ValueError: for an empty group.
    """
    if not sequences:
        raise ValueError("a recipe needs at least one sequence")
    recipe = list(sequences[0])
    for other in sequences[1:]:
        result = lcs(recipe, other)
        recipe = [recipe[i] for i, _ in result.pairs]
    return recipe


@dataclass
class Recipe:
    """One recipe of a task's library.

    Attributes:
        task_id: The task.
        index: Position in the task's library.
        steps: The recipe's step signatures.
        members: Positions (in the list given to the builder) of the successful trajectories
            whose group produced it.
    """

    task_id: str
    index: int
    steps: tuple[StepSignature, ...]
    members: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.steps)


@dataclass
class RecipeLibrary:
    """Recipes per task (ProgRM's ``L^(g)``).

    Attributes:
        recipes: Task id to its recipes.
        theta: The grouping threshold used.
    """

    recipes: dict[str, list[Recipe]] = field(default_factory=dict)
    theta: float = DEFAULT_THETA

    def for_task(self, task_id: str) -> list[Recipe]:
        """The task's recipes (empty when it had no successful trajectory)."""
        return self.recipes.get(task_id, [])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: each recipe's steps as text and its members."""
        return {
            "theta": self.theta,
            "tasks": {
                task: [{"steps": [str(s) for s in r.steps], "members": list(r.members)} for r in rs]
                for task, rs in self.recipes.items()
            },
        }


class _TaskBatch:
    """One task's trajectories as integer sequences over a shared signature vocabulary, with
    the similarity of every vocabulary pair, for batched soft LCS."""

    def __init__(self, signatures: Sequence[Sequence[StepSignature]], sim: PairwiseSimilarity):
        vocabulary: dict[StepSignature, int] = {}
        self.index = vocabulary
        self.sequences = [
            np.fromiter(
                (vocabulary.setdefault(s, len(vocabulary)) for s in seq), np.int64, len(seq)
            )
            for seq in signatures
        ]
        self.vocabulary = list(vocabulary)
        full = np.asarray(sim.pairwise(self.vocabulary), dtype=np.float64)
        size = len(self.vocabulary)
        if full.shape != (size, size):
            raise ValueError(f"pairwise() returned shape {full.shape}, expected ({size}, {size})")
        if size and (full.min() < 0.0 or full.max() > 1.0 or np.isnan(full).any()):
            raise ValueError("pairwise() similarities must lie in [0, 1]")
        # One extra zero row/column is the padding symbol. float32 halves the batched DP's
        # memory traffic; the sums it takes are of at most a few hundred values in [0, 1].
        self.table = np.zeros((size + 1, size + 1), dtype=np.float32)
        self.table[:size, :size] = full
        self.pad = size

    def encode(self, seq: Sequence[StepSignature]) -> np.ndarray:
        return np.array([self.index[s] for s in seq], dtype=np.int64)

    def _pad(self, seqs: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        lengths = np.fromiter((len(q) for q in seqs), np.int64, len(seqs))
        width = max(1, int(lengths.max(initial=0)))
        padded = np.full((len(seqs), width), self.pad, dtype=np.int64)
        if lengths.sum():
            padded[np.arange(width)[None, :] < lengths[:, None]] = np.concatenate(seqs)
        return padded, lengths

    def run(
        self,
        left: Sequence[np.ndarray],
        right: Sequence[np.ndarray],
        pairs: Sequence[tuple[int, int]] | np.ndarray,
        return_pairs: bool = False,
    ) -> tuple[np.ndarray, list[tuple[tuple[int, int], ...]]]:
        """Soft LCS of ``left[i]`` with ``right[j]`` for each ``(i, j)`` in ``pairs``."""
        index = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        scores = np.zeros(len(index), dtype=np.float64)
        matched: list[tuple[tuple[int, int], ...]] = []
        if not len(index):
            return scores, matched
        left_padded, left_lengths = self._pad(left)
        right_padded, right_lengths = self._pad(right)
        n_max, m_max = left_padded.shape[1], right_padded.shape[1]
        chunk = max(1, _MAX_BATCH_CELLS // (n_max * m_max))
        for start in range(0, len(index), chunk):
            rows, cols = index[start : start + chunk, 0], index[start : start + chunk, 1]
            a, b = left_padded[rows], right_padded[cols]
            sims = self.table[a[:, :, None], b[:, None, :]]
            part_scores, part_pairs = soft_lcs_batch(
                sims, left_lengths[rows], right_lengths[cols], return_pairs=return_pairs
            )
            scores[start : start + len(rows)] = part_scores
            if return_pairs and part_pairs is not None:
                matched.extend(part_pairs)
        return scores, matched


def _group_recipes(
    task_id: str,
    batch: _TaskBatch,
    success_positions: Sequence[int],
    theta: float,
) -> tuple[list[Recipe], list[list[int]]]:
    """Group a task's successes (Eq. 3) and fold each group into a recipe (Eq. 10).

    Returns the recipes (``members`` are entries of ``success_positions``) and the groups as
    positions into ``success_positions``.
    """
    seqs = [batch.sequences[p] for p in success_positions]
    count = len(seqs)
    sim = np.eye(count, dtype=np.float64)
    pairs = [(i, j) for i in range(count) for j in range(i + 1, count)]
    scores, _ = batch.run(seqs, seqs, pairs)
    for (i, j), score in zip(pairs, scores):
        sim[i, j] = sim[j, i] = trajectory_similarity(score, len(seqs[i]), len(seqs[j]))
    # Our choice where the paper is silent: the shortest trajectories seed the groups (ties
    # keep input order), so a group's recipe is folded starting from its most direct member.
    order = sorted(range(count), key=lambda i: (len(seqs[i]), i))
    groups = group_by_similarity(sim, theta, order)
    recipes: list[Recipe] = []

    def lcs_ids(a: Sequence[int], b: Sequence[int]) -> LCSResult:
        scores, matched = batch.run(
            [np.asarray(a, np.int64)], [np.asarray(b, np.int64)], [(0, 0)], return_pairs=True
        )
        return LCSResult(float(scores[0]), matched[0])

    for index, group in enumerate(groups):
        recipe_ids = fold_recipe([seqs[m] for m in group], lcs_ids)
        recipes.append(
            Recipe(
                task_id=task_id,
                index=index,
                steps=tuple(batch.vocabulary[k] for k in recipe_ids),
                members=tuple(success_positions[m] for m in group),
            )
        )
    return recipes, groups


def _by_task(trajectories: Sequence[Trajectory]) -> dict[str, list[int]]:
    tasks: dict[str, list[int]] = {}
    for position, trajectory in enumerate(trajectories):
        tasks.setdefault(trajectory.task_id, []).append(position)
    return tasks


def build_recipe_library(
    trajectories: Sequence[Trajectory],
    similarity: PairwiseSimilarity,
    theta: float = DEFAULT_THETA,
) -> RecipeLibrary:
    """ProgRM stage 1: the LCS recipe library of every task's successful trajectories.

    Args:
        trajectories: Trajectories of any tasks; only successful ones make recipes.
        similarity: The soft match ``f`` (a :class:`~gui_gym.rewards.lcs.StepSimilarity`).
        theta: The grouping threshold theta_L (Eq. 3).

    Returns:
        The library; ``Recipe.members`` index into ``trajectories``.

    Raises:
        ValueError: if ``theta`` is outside ``[0, 1]``.
    """
    _check_theta(theta)
    library = RecipeLibrary(theta=theta)
    for task_id, positions in _by_task(trajectories).items():
        successes = [p for p in positions if trajectories[p].success]
        if not successes:
            continue
        batch = _TaskBatch([_signatures(trajectories[p]) for p in successes], similarity)
        local = list(range(len(successes)))
        recipes, _ = _group_recipes(task_id, batch, local, theta)
        for recipe in recipes:
            recipe.members = tuple(successes[m] for m in recipe.members)
        library.recipes[task_id] = recipes
    return library


def _signatures(trajectory: Trajectory) -> list[StepSignature]:
    return [step_signature(step) for step in trajectory.steps]


def _check_theta(theta: float) -> None:
    if not (isinstance(theta, int | float) and 0.0 <= float(theta) <= 1.0):
        raise ValueError(f"theta must lie in [0, 1], got {theta!r}")


def label_lcs(
    trajectories: Sequence[Trajectory],
    similarity: PairwiseSimilarity,
    theta: float = DEFAULT_THETA,
    library: RecipeLibrary | None = None,
    progress: Callable[[Iterable[Any]], Iterable[Any]] | None = None,
) -> list[TrajectoryLabels]:
    """ProgRM's LCS progress labels (Sec. 2.2, Algorithm 1) for every trajectory.

    Per task: build the recipe library from the successful trajectories (unless ``library``
    is given), match every trajectory (successful or not) to the recipe with the highest
    completion ratio (Eq. 4; ties go to the recipe of the larger group, then the shorter
    recipe), and label its steps with :func:`assign_progress`.

    Args:
        trajectories: Trajectories of one or many tasks.
        similarity: The soft match ``f`` (e.g. ``StepSimilarity(default_embedder())``).
        theta: Grouping threshold theta_L (Eq. 3; the paper uses 0.6).
        library: A prebuilt library (e.g. from training data) instead of building one.
        progress: Optional wrapper around the per-task loop (e.g. ``tqdm``).

    Returns:
        Labels in the order of ``trajectories``. A task with no successful trajectory has no
        recipe: its steps are labelled 0 with that reason.

    Raises:
        ValueError: if ``theta`` is outside ``[0, 1]`` or the similarity misbehaves.
    """
    _check_theta(theta)
    out: list[TrajectoryLabels | None] = [None] * len(trajectories)
    tasks = _by_task(trajectories)
    loop: Iterable[tuple[str, list[int]]] = tasks.items()
    if progress is not None:
        loop = progress(loop)
    for task_id, positions in loop:
        signatures = [_signatures(trajectories[p]) for p in positions]
        given = library.for_task(task_id) if library is not None else []
        batch = _TaskBatch([*signatures, *(list(r.steps) for r in given)], similarity)
        count = len(positions)
        traj_seqs = batch.sequences[:count]
        if library is None:
            successes = [k for k, p in enumerate(positions) if trajectories[p].success]
            recipes: list[Recipe] = []
            if successes:
                recipes, _ = _group_recipes(task_id, batch, successes, theta)
                for recipe in recipes:
                    recipe.members = tuple(positions[m] for m in recipe.members)
            recipe_seqs = [batch.encode(r.steps) for r in recipes]
        else:
            recipes = given
            recipe_seqs = batch.sequences[count:]
        if not recipes:
            for p in positions:
                reason = "no recipe: the task has no successful trajectory"
                n_steps = len(trajectories[p].steps)
                out[p] = TrajectoryLabels(task_id, "lcs", [StepLabel(0.0, False, reason)] * n_steps)
            continue
        pairs = [(i, j) for i in range(count) for j in range(len(recipes))]
        scores, _ = batch.run(traj_seqs, recipe_seqs, pairs)
        scores = scores.reshape(count, len(recipes))
        lengths = np.array([len(r) for r in recipes], dtype=np.float64)
        ratios = scores / np.maximum(lengths, 1.0)
        # Highest CR (Eq. 4); ties: the recipe of the larger group, then the shorter recipe.
        preference = sorted(
            range(len(recipes)), key=lambda j: (-len(recipes[j].members), len(recipes[j]), j)
        )
        rank = np.empty(len(recipes), dtype=np.int64)
        rank[preference] = np.arange(len(recipes))
        rounded = np.round(ratios, 9)
        best = rounded == rounded.max(axis=1, keepdims=True)
        chosen = np.where(best, rank[None, :], len(recipes)).argmin(axis=1).tolist()
        _, matched = batch.run(
            traj_seqs, recipe_seqs, [(i, chosen[i]) for i in range(count)], return_pairs=True
        )
        for i, p in enumerate(positions):
            recipe = recipes[chosen[i]]
            recipe_ids = recipe_seqs[chosen[i]]
            reasons: dict[int, str] = {}
            matches: list[tuple[int, int]] = []
            for step, position in matched[i]:
                kappa = position + 1
                f = batch.table[traj_seqs[i][step], recipe_ids[position]]
                matches.append((step, kappa))
                reasons[step] = (
                    f"key step: matches step {kappa}/{len(recipe)} of recipe {recipe.index} "
                    f"({recipe.steps[position]}, f={f:.2f})"
                )
            out[p] = TrajectoryLabels(
                task_id,
                "lcs",
                assign_progress(len(traj_seqs[i]), matches, len(recipe), reasons),
                recipe=recipe.index,
                completion_ratio=float(ratios[i, chosen[i]]),
            )
    return [labels for labels in out if labels is not None]


def milestone_key_steps(trajectory: Trajectory) -> list[int]:
    """Steps at which the env's milestone list grew (ProgRM-Env's key steps)."""
    keys: list[int] = []
    previous = 0
    for index, step in enumerate(trajectory.steps):
        count = len(step.milestones)
        if count > previous:
            keys.append(index)
        previous = max(previous, count)
    return keys


def label_env(
    trajectories: Sequence[Trajectory],
    total_milestones: Mapping[str, int] | None = None,
) -> list[TrajectoryLabels]:
    """ProgRM-Env labels: key steps are the steps at which ``info["milestones"]`` grew.

    The key step that brings the count of reached milestones to ``kappa`` is labelled
    ``kappa / K`` with ``K`` the task's number of milestones; other steps inherit as in
    :func:`assign_progress`. This is also the ground truth of ProgRM's key-step MAE (Sec.
    3.3: progress gains even among the milestone steps).

    Args:
        trajectories: Trajectories with ``Step.milestones`` recorded.
        total_milestones: ``K`` per task id (e.g. from the env's task suite). A task missing
            from it uses the most milestones any of its successful trajectories reached
            (else any trajectory), and the reasons say so.

    Returns:
        Labels in the order of ``trajectories``.

    Raises:
        ValueError: if a given total is below 1 or below a count a trajectory reached.
    """
    observed: dict[str, int] = {}
    observed_success: dict[str, int] = {}
    for trajectory in trajectories:
        reached = max((len(s.milestones) for s in trajectory.steps), default=0)
        observed[trajectory.task_id] = max(observed.get(trajectory.task_id, 0), reached)
        if trajectory.success:
            task = trajectory.task_id
            observed_success[task] = max(observed_success.get(task, 0), reached)
    out: list[TrajectoryLabels] = []
    for trajectory in trajectories:
        task_id = trajectory.task_id
        note = ""
        if total_milestones is not None and task_id in total_milestones:
            total = int(total_milestones[task_id])
            if total < 1:
                raise ValueError(f"task {task_id!r}: total milestones must be >= 1, got {total}")
        elif observed_success.get(task_id):
            total = observed_success[task_id]
            note = " (K = most milestones of a successful trajectory)"
        else:
            total = observed.get(task_id, 0)
            note = " (K = most milestones reached in any trajectory)"
        matches: list[tuple[int, int]] = []
        reasons: dict[int, str] = {}
        previous: list[str] = []
        for index in milestone_key_steps(trajectory):
            step = trajectory.steps[index]
            kappa = len(step.milestones)
            if kappa > total:
                raise ValueError(
                    f"task {task_id!r}: a trajectory reached {kappa} milestones, "
                    f"more than the total {total}"
                )
            new = [m for m in step.milestones if m not in previous] or step.milestones[-1:]
            previous = list(step.milestones)
            matches.append((index, kappa))
            reasons[index] = f"key step: milestone {', '.join(new)} reached ({kappa}/{total}){note}"
        labels = assign_progress(len(trajectory.steps), matches, max(total, 1), reasons)
        out.append(TrajectoryLabels(task_id, "env", labels))
    return out


# ---------------------------------------------------------------------------------------------
# Data synthesis (Appendix B) and balancing (Appendix C)


def _tagged_copy(trajectory: Trajectory, **metadata: Any) -> Trajectory:
    clone = copy.deepcopy(trajectory)
    clone.metadata = {**clone.metadata, **metadata}
    return clone


def mismatched_failures(
    trajectories: Sequence[Trajectory], n: int, rng: np.random.Generator
) -> list[Trajectory]:
    """Failed trajectories from a mismatched instruction (ProgRM Appendix B, first way).

    Each is one trajectory of task ``b`` presented as an attempt at a different task ``a``
    (``a``'s id, instruction, category and split): its actions do not do ``a``. The steps'
    milestones are cleared, since the env never measured ``a``'s milestones on them, and the
    outcome is failure.

    Args:
        trajectories: Pool of trajectories of at least two tasks.
        n: How many to make.
        rng: Source of randomness.

    Returns:
        ``n`` trajectories tagged ``metadata["synthetic"] = "mismatched_instruction"``.

    Raises:
        ValueError: if ``n < 0`` or the pool has fewer than two tasks.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    representative: dict[str, Trajectory] = {}
    for trajectory in trajectories:
        representative.setdefault(trajectory.task_id, trajectory)
    tasks = list(representative)
    if n and len(tasks) < 2:
        raise ValueError("mismatched instructions need trajectories of at least two tasks")
    out: list[Trajectory] = []
    for _ in range(n):
        source = trajectories[int(rng.integers(len(trajectories)))]
        others = [t for t in tasks if t != source.task_id]
        target = representative[others[int(rng.integers(len(others)))]]
        clone = _tagged_copy(
            source, synthetic="mismatched_instruction", source_task_id=source.task_id
        )
        clone.task_id = target.task_id
        clone.instruction = target.instruction
        for key in ("category", "split"):
            if key in target.metadata:
                clone.metadata[key] = target.metadata[key]
        clone.success = False
        clone.task_reward = 0.0
        for step in clone.steps:
            step.milestones = []
            step.reward = 0.0
            step.task_reward = 0.0
        out.append(clone)
    return out


def random_walk_failures(walks: Iterable[Trajectory]) -> list[Trajectory]:
    """Failed trajectories from random walks (ProgRM Appendix B, second way).

    Args:
        walks: Episodes of a random policy (e.g. ``RandomAgent``).

    Returns:
        Copies of the walks that failed, tagged ``metadata["synthetic"] = "random_walk"``; a
        walk that happened to succeed is not a failure and is left out.
    """
    return [_tagged_copy(w, synthetic="random_walk") for w in walks if not w.success]


def _action_type(action: str) -> ActionType | None:
    try:
        return parse_action(action).type
    except ActionParseError:
        return None


def _scroll(action: str) -> str | None:
    try:
        parsed = parse_action(action)
    except ActionParseError:
        return None
    if parsed.type is ActionType.SCROLL and parsed.index is None:
        return parsed.direction
    return None


_OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}
_NOTHING = str(Action(ActionType.DO_NOTHING))
_GOBACK = str(Action(ActionType.GOBACK))


def _edits(actions: list[str]) -> list[tuple[str, int]]:
    """Every applicable edit of ProgRM Appendix B's successful-trajectory synthesis."""
    n = len(actions)
    edits: list[tuple[str, int]] = []
    # Insertions go before step i; never after the last action, which ends the episode.
    edits.extend(("insert_nothing", i) for i in range(n))
    edits.extend(("insert_scroll_pair", i) for i in range(n))
    edits.extend(("insert_back_repeat", i) for i in range(1, n))
    for i in range(n - 1):
        if _action_type(actions[i]) is ActionType.DO_NOTHING:
            edits.append(("remove_nothing", i))
        direction = _scroll(actions[i])
        if direction is not None and _scroll(actions[i + 1]) == _OPPOSITE[direction]:
            edits.append(("remove_scroll_pair", i))
        if (
            i >= 1
            and _action_type(actions[i]) is ActionType.GOBACK
            and actions[i + 1] == actions[i - 1]
        ):
            edits.append(("remove_back_repeat", i))
    return edits


def _apply(actions: list[str], edit: tuple[str, int]) -> list[str]:
    kind, i = edit
    if kind == "insert_nothing":
        return [*actions[:i], _NOTHING, *actions[i:]]
    if kind == "insert_scroll_pair":
        return [*actions[:i], "SCROLL(down)", "SCROLL(up)", *actions[i:]]
    if kind == "insert_back_repeat":
        return [*actions[:i], _GOBACK, actions[i - 1], *actions[i:]]
    if kind == "remove_nothing":
        return [*actions[:i], *actions[i + 1 :]]
    # remove_scroll_pair and remove_back_repeat both drop steps i and i + 1
    return [*actions[:i], *actions[i + 2 :]]


def success_variants(
    actions: Sequence[str], rng: np.random.Generator, n: int = 2, max_edits: int = 2
) -> list[list[str]]:
    """Action sequences that should still succeed (ProgRM Appendix B, successful synthesis).

    Each variant applies 1..``max_edits`` random edits: insert or remove a DO_NOTHING, insert
    or remove an effect-free pair (``SCROLL(down)`` then ``SCROLL(up)``; ``GOBACK()`` then
    the action before it again). Whether a variant really succeeds is for the env to say:
    replay it (see :func:`synthesize_successes`).

    Args:
        actions: A successful episode's actions (canonical strings).
        rng: Source of randomness.
        n: Variants wanted (fewer come back when the edits run out of new sequences).
        max_edits: Edits per variant.

    Returns:
        Distinct sequences, none equal to ``actions``.

    Raises:
        ValueError: if ``n < 0`` or ``max_edits < 1``.
    """
    if n < 0 or max_edits < 1:
        raise ValueError(f"need n >= 0 and max_edits >= 1, got n={n}, max_edits={max_edits}")
    original = list(actions)
    seen = {tuple(original)}
    out: list[list[str]] = []
    attempts = 0
    while len(out) < n and attempts < 20 * max(n, 1) and original:
        attempts += 1
        variant = list(original)
        for _ in range(int(rng.integers(1, max_edits + 1))):
            edits = _edits(variant)
            if not edits:
                break
            variant = _apply(variant, edits[int(rng.integers(len(edits)))])
        if variant and tuple(variant) not in seen:
            seen.add(tuple(variant))
            out.append(variant)
    return out


def synthesize_successes(
    trajectories: Sequence[Trajectory],
    replay: Callable[[Trajectory, list[str]], Trajectory | None],
    rng: np.random.Generator,
    per_trajectory: int = 1,
    max_edits: int = 2,
) -> list[Trajectory]:
    """Extra successful trajectories from successful prototypes (ProgRM Appendix B).

    Args:
        trajectories: Pool; only the successful ones are used as prototypes.
        replay: Runs a prototype's task with the given actions and returns the recorded
            episode (e.g. ``run_episode`` with a replaying agent on the same task and seed),
            or None when it cannot.
        rng: Source of randomness.
        per_trajectory: Variants tried per prototype.
        max_edits: Edits per variant.

    Returns:
        The replayed variants that succeeded, tagged ``metadata["synthetic"] =
        "success_variant"``; variants the env did not accept as successes are dropped.
    """
    out: list[Trajectory] = []
    for trajectory in trajectories:
        if not trajectory.success:
            continue
        for actions in success_variants(trajectory.actions, rng, per_trajectory, max_edits):
            result = replay(trajectory, actions)
            if result is not None and result.success:
                out.append(_tagged_copy(result, synthetic="success_variant"))
    return out


def balance_steps(
    success: Sequence[bool] | np.ndarray, rng: np.random.Generator, ratio: float = 1.0
) -> np.ndarray:
    """Indices of a class-balanced subset of steps (ProgRM Appendix C).

    The paper keeps every step of successful trajectories and samples steps of failed ones
    until the two are about 1:1. Here the smaller class is kept whole and the larger one is
    sampled without replacement down to ``ratio`` times the smaller one.

    Args:
        success: Per step, whether its trajectory succeeded.
        rng: Source of randomness.
        ratio: Wanted size of the larger class over the smaller one (>= 1).

    Returns:
        Sorted indices into ``success``; all of them when one class is empty.

    Raises:
        ValueError: if ``ratio < 1`` or not finite.
    """
    if not (math.isfinite(ratio) and ratio >= 1.0):
        raise ValueError(f"ratio must be a finite number >= 1, got {ratio!r}")
    flags = np.asarray(success, dtype=bool)
    positive = np.flatnonzero(flags)
    negative = np.flatnonzero(~flags)
    if positive.size == 0 or negative.size == 0:
        return np.arange(flags.size)
    small, large = (positive, negative) if positive.size <= negative.size else (negative, positive)
    keep = min(large.size, round(ratio * small.size))
    sampled = rng.choice(large, size=keep, replace=False)
    return np.sort(np.concatenate([small, sampled]))


# ---------------------------------------------------------------------------------------------
# Labelled trajectory files


def write_labeled_trajectories(
    path: str | Path, trajectories: Sequence[Trajectory], labels: Sequence[TrajectoryLabels]
) -> int:
    """Write trajectories with their labels as JSONL, atomically.

    Each line is the trajectory's own record (so the file still reads as trajectories) with
    the labels under ``"progress"`` (:meth:`TrajectoryLabels.to_dict`).

    Returns:
        The number of records written.

    Raises:
        ValueError: if the counts of trajectories and labels differ.
    """
    if len(trajectories) != len(labels):
        raise ValueError(f"{len(trajectories)} trajectories but {len(labels)} label sets")
    return write_jsonl(
        path, ({**t.to_dict(), "progress": lab.to_dict()} for t, lab in zip(trajectories, labels))
    )


def read_labeled_trajectories(
    path: str | Path, require_labels: bool = True
) -> tuple[list[Trajectory], list[TrajectoryLabels | None]]:
    """Read a file written by :func:`write_labeled_trajectories` (or ``gui-gym label``).

    Args:
        path: The JSONL file.
        require_labels: Raise when a record has no ``"progress"`` labels (else None).

    Raises:
        ValueError: naming the line of a record without labels, or with labels that do not
            fit its steps.
    """
    trajectories: list[Trajectory] = []
    labels: list[TrajectoryLabels | None] = []
    for number, record in read_jsonl_lines(path):
        try:
            trajectory = Trajectory.from_dict(record)
        except ValueError as err:
            raise ValueError(f"{path}:{number}: {err}") from None
        data = record.get("progress")
        if data is None:
            if require_labels:
                raise ValueError(
                    f"{path}:{number}: no progress labels; run `gui-gym label` on the file first"
                )
            labelled = None
        else:
            try:
                labelled = TrajectoryLabels.from_dict(data, trajectory.task_id)
            except ValueError as err:
                raise ValueError(f"{path}:{number}: {err}") from None
            if len(labelled) != len(trajectory.steps):
                raise ValueError(
                    f"{path}:{number}: {len(labelled)} labels for {len(trajectory.steps)} steps"
                )
        trajectories.append(trajectory)
        labels.append(labelled)
    return trajectories, labels
