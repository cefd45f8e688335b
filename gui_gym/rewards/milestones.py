"""ADMIRE's milestone reward as pure functions (Adaptive Milestone Reward for GUI Agents, Sec. 3).

The pieces, in the order a trainer uses them:

1. **Pointer matching** (Sec. 3.2.1, Eq. 9, Algorithm 1 lines 20-28). A pointer ``p`` names
   the next milestone not yet reached. At each step the action description is compared with
   milestone ``p`` only; a similarity above ``delta`` is a *hit*: ``r_mil = similarity``,
   ``k += 1`` and the pointer moves on. After the last milestone there is nothing left to
   match, so ``k <= K`` always. (Algorithm 1 writes ``p <- min(p + 1, K)``, which would let
   the last milestone be hit again and ``k`` pass ``K``; we stop instead, as the text says.)
2. **Asymmetric credit** (Sec. 3.2.2). A successful trajectory is paid only at its hits
   (Eq. 10); a failed one is paid the running progress ``k/K`` at every step plus
   ``zeta * r_mil`` at hits (Eq. 11, with ``k`` counted up to and including step ``t`` as in
   Algorithm 1 line 33).
3. **Total reward** (Sec. 3.3, Algorithm 1 line 35):
   ``R_total(t) = R_outcome + eta * R_format(t) + lambda0 * gamma**epoch * R_mil(t)``, where
   ``R_outcome`` is the trajectory's binary outcome given to every step and ``R_format`` is
   -1 for an invalid action, 0 otherwise.
4. **Step-level GRPO advantages** (Eq. 13): every step's total reward normalised by the mean
   and standard deviation over all steps of all trajectories in the group.

The helpers at the end serve the LLM-free milestone generator: they keep the essential
action descriptions of a successful trajectory (loops and detours cut), intersect milestone
lists across successes with a soft longest common subsequence (ProgRM's Soft-LCS from
:mod:`gui_gym.rewards.lcs`), turn text typed differently into the same field into the
placeholder ``<Text>``, and match placeholder templates.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

import numpy as np

from gui_gym.core.actions import ActionParseError, ActionType, parse_action
from gui_gym.core.trajectory import Step
from gui_gym.rewards.lcs import soft_lcs_matrix

__all__ = [
    "DEFAULT_SKIP_TYPES",
    "PLACEHOLDER",
    "MilestoneMatch",
    "PlaceholderPattern",
    "advance_pointer",
    "alignment_text",
    "erase_loops",
    "format_reward",
    "generalize_typed_text",
    "key_step_descriptions",
    "match_milestones",
    "merge_milestones",
    "milestone_step_rewards",
    "milestone_weight",
    "placeholder_pattern",
    "soft_lcs_alignment",
    "step_grpo_advantages",
    "total_step_rewards",
]


def _check_unit(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")


# ----------------------------------------------------------------------- pointer matching


def advance_pointer(
    pointer: int, num_milestones: int, similarity: float, delta: float = 0.75
) -> tuple[float, int]:
    """One step of ADMIRE's pointer rule (Eq. 9).

    Args:
        pointer: Index of the current milestone (the next one not yet reached).
        num_milestones: K.
        similarity: Similarity of this step's action description with milestone
            ``pointer`` (ignored once ``pointer == K``).
        delta: The hit threshold (strictly greater is a hit).

    Returns:
        ``(r_mil, new_pointer)``: the similarity and ``pointer + 1`` on a hit, else
        ``(0.0, pointer)``. Once every milestone is reached nothing is hit.

    Raises:
        ValueError: for a pointer outside ``0..K``.
    """
    if not 0 <= pointer <= num_milestones:
        raise ValueError(f"pointer must be in 0..{num_milestones}, got {pointer}")
    if pointer < num_milestones and similarity > delta:
        return float(similarity), pointer + 1
    return 0.0, pointer


@dataclass(frozen=True)
class MilestoneMatch:
    """The pointer walk over one trajectory.

    Attributes:
        hits: Per step, whether it hit a milestone (``t in T_mil``).
        r_mil: Per step, Eq. 9's reward: the similarity at hits, 0 elsewhere.
        matched: Per step, the index of the milestone it hit, or -1.
        num_milestones: K.
    """

    hits: tuple[bool, ...]
    r_mil: tuple[float, ...]
    matched: tuple[int, ...]
    num_milestones: int

    @property
    def k(self) -> int:
        """Milestones reached by the end of the trajectory."""
        return sum(self.hits)

    @property
    def hit_steps(self) -> list[int]:
        """Indices of the steps that hit a milestone."""
        return [t for t, hit in enumerate(self.hits) if hit]

    @property
    def progress(self) -> float:
        """``k / K`` at the end (0 when there are no milestones)."""
        return self.k / self.num_milestones if self.num_milestones else 0.0


def match_milestones(
    similarity: np.ndarray | Sequence[Sequence[float]],
    delta: float = 0.75,
    valid: Sequence[bool] | None = None,
) -> MilestoneMatch:
    """Walk the pointer over a whole trajectory (ADMIRE Eq. 9, Algorithm 1 lines 20-28).

    Args:
        similarity: ``(T, K)`` similarities of each step's action description with each
            milestone; only the entry of the current pointer is read at each step.
        delta: The hit threshold.
        valid: Per step, whether the action was valid; invalid actions never hit (they
            changed nothing). None treats every step as valid.

    Returns:
        The :class:`MilestoneMatch`.

    Raises:
        ValueError: for a similarity that is not 2-D, or a ``valid`` of another length.
    """
    sims = np.asarray(similarity, dtype=np.float64)
    if sims.ndim != 2:
        if sims.size == 0:  # no steps
            sims = sims.reshape(0, 0)
        else:
            raise ValueError(f"similarity must be a (steps, milestones) matrix, got {sims.shape}")
    steps, num_milestones = sims.shape
    if valid is not None and len(valid) != steps:
        raise ValueError(f"valid has {len(valid)} entries for {steps} steps")
    pointer = 0
    hits: list[bool] = []
    rewards: list[float] = []
    matched: list[int] = []
    for t in range(steps):
        current = pointer
        if pointer < num_milestones and (valid is None or valid[t]):
            r, pointer = advance_pointer(pointer, num_milestones, float(sims[t, pointer]), delta)
        else:
            r = 0.0
        hit = pointer != current
        hits.append(hit)
        rewards.append(r)
        matched.append(current if hit else -1)
    return MilestoneMatch(tuple(hits), tuple(rewards), tuple(matched), num_milestones)


# ------------------------------------------------------------------------ asymmetric credit


def milestone_step_rewards(
    hits: Sequence[bool],
    r_mil: Sequence[float],
    num_milestones: int,
    success: bool,
    zeta: float = 0.5,
    *,
    base_on_success: bool = False,
    base_on_failure: bool = True,
) -> list[float]:
    """ADMIRE's asymmetric milestone reward ``R_mil(t)`` for every step (Eq. 10 and 11).

    * Success (Eq. 10, "denoising"): ``r_mil(t)`` at hit steps, 0 elsewhere.
    * Failure (Eq. 11, "scaffolding"): ``k_t / K`` at every step, where ``k_t`` counts the
      hits up to and including step ``t`` (Algorithm 1 line 33), plus ``zeta * r_mil(t)`` at
      hit steps.

    With no milestones (K = 0) every step gets 0. The two switches are the ablations of
    App. B.3 (defaults: the paper's design): ``base_on_success=True`` adds the base
    progress ``k_t / K`` to successful trajectories too ("w/ Base Reward for Successful
    Traj."); ``base_on_failure=False`` leaves failed ones the hit bonus alone ("w/o Base
    Reward for Fail Traj."). The third ablation, "w/o Reward Decay", is ``decay=1`` in
    :func:`milestone_weight`.

    Args:
        hits: Per step, whether it hit a milestone.
        r_mil: Per step, the raw similarity reward of Eq. 9.
        num_milestones: K.
        success: The trajectory's outcome ``O(tau)``.
        zeta: Weight of the hit bonus on failed trajectories.
        base_on_success: Add ``k_t / K`` on successful trajectories (ablation).
        base_on_failure: Add ``k_t / K`` on failed trajectories (Eq. 11; False: ablation).

    Returns:
        ``R_mil(t)`` per step.

    Raises:
        ValueError: for vectors of different lengths, more hits than milestones, or a
            negative K or zeta.
    """
    if len(hits) != len(r_mil):
        raise ValueError(f"hits ({len(hits)}) and r_mil ({len(r_mil)}) differ in length")
    if num_milestones < 0 or zeta < 0:
        raise ValueError(f"num_milestones and zeta must be >= 0, got {num_milestones}, {zeta}")
    if sum(bool(h) for h in hits) > num_milestones:
        raise ValueError(f"{sum(map(bool, hits))} hits but only {num_milestones} milestones")
    if num_milestones == 0:
        return [0.0] * len(hits)
    out: list[float] = []
    k = 0
    for hit, r in zip(hits, r_mil):
        bonus = float(r) if hit else 0.0
        k += bool(hit)
        if success:
            base = k / num_milestones if base_on_success else 0.0
            out.append(base + bonus)  # Eq. 10
        else:
            base = k / num_milestones if base_on_failure else 0.0
            out.append(base + zeta * bonus)  # Eq. 11
    return out


def milestone_weight(epoch: int, lambda0: float = 0.3, decay: float = 0.99) -> float:
    """The curriculum coefficient ``lambda0 * gamma**epoch`` of ADMIRE Sec. 3.3 (Algorithm 1
    line 4) that scales the milestone reward down as training goes on.

    Raises:
        ValueError: for a negative epoch or lambda0, or a decay outside (0, 1].
    """
    if epoch < 0:
        raise ValueError(f"epoch must be >= 0, got {epoch}")
    if lambda0 < 0:
        raise ValueError(f"lambda0 must be >= 0, got {lambda0}")
    if not 0.0 < decay <= 1.0:
        raise ValueError(f"decay must be in (0, 1], got {decay}")
    return lambda0 * decay**epoch


def format_reward(valid: bool) -> float:
    """ADMIRE's format term: -1 for an action whose syntax is invalid, 0 otherwise."""
    return 0.0 if valid else -1.0


def total_step_rewards(
    milestone_rewards: Sequence[float],
    outcome: float,
    format_rewards: Sequence[float] | None = None,
    *,
    epoch: int = 0,
    lambda0: float = 0.3,
    decay: float = 0.99,
    eta: float = 0.5,
) -> list[float]:
    """``R_total(t) = R_outcome + eta * R_format(t) + lambda0 * decay**epoch * R_mil(t)``
    (ADMIRE Sec. 3.3, Algorithm 1 line 35).

    Args:
        milestone_rewards: ``R_mil(t)`` per step (from :func:`milestone_step_rewards`).
        outcome: The trajectory's outcome reward (1 success, 0 failure), given to every step.
        format_rewards: ``R_format(t)`` per step (see :func:`format_reward`); None is all 0.
        epoch: Training epoch E for the decay.
        lambda0, decay: The milestone weight ``lambda0 * decay**E``.
        eta: Weight of the format term.

    Returns:
        ``R_total(t)`` per step.

    Raises:
        ValueError: for vectors of different lengths or invalid weights.
    """
    if format_rewards is None:
        format_rewards = [0.0] * len(milestone_rewards)
    if len(format_rewards) != len(milestone_rewards):
        raise ValueError(
            f"format_rewards ({len(format_rewards)}) and milestone_rewards "
            f"({len(milestone_rewards)}) differ in length"
        )
    if eta < 0:
        raise ValueError(f"eta must be >= 0, got {eta}")
    weight = milestone_weight(epoch, lambda0, decay)
    return [
        float(outcome) + eta * float(f) + weight * float(m)
        for m, f in zip(milestone_rewards, format_rewards)
    ]


def step_grpo_advantages(
    group_rewards: Sequence[Sequence[float]], eps: float = 1e-6
) -> list[np.ndarray]:
    """Step-level GRPO advantages (ADMIRE Eq. 13): each step's total reward minus the mean,
    over the standard deviation, both taken over *all steps of all trajectories* in the group.

    The population standard deviation is used; ``eps`` keeps a group of equal rewards at
    advantage 0 instead of dividing by zero.

    Args:
        group_rewards: ``R_total`` per step, one sequence per trajectory of the group.
        eps: Added to the standard deviation.

    Returns:
        One float64 array of advantages per trajectory, same shapes as the input.

    Raises:
        ValueError: for an empty group or one without any step.
    """
    arrays = [np.asarray(r, dtype=np.float64).reshape(-1) for r in group_rewards]
    if not arrays or sum(a.size for a in arrays) == 0:
        raise ValueError("a group needs at least one step")
    flat = np.concatenate(arrays)
    mean, std = flat.mean(), flat.std()
    return [(a - mean) / (std + eps) for a in arrays]


# ------------------------------------------------------- key steps and Soft-LCS merging

DEFAULT_SKIP_TYPES: frozenset[ActionType] = frozenset(
    {ActionType.SCROLL, ActionType.WAIT, ActionType.DO_NOTHING, ActionType.DONE}
)
"""Action types that are never milestones on their own: scrolling and waiting move no task
state, and ``DONE`` says nothing about the task (ProgRM's limitations name empty and
scrolling actions as the garbage to clean)."""


def _action_type(step: Step) -> ActionType | None:
    try:
        return parse_action(step.action).type
    except ActionParseError:
        return None


def erase_loops(steps: Sequence[Step]) -> list[Step]:
    """The steps with every loop cut out. A loop ends when a transition repeats: the same
    action (same description) taken on the same screen leads to the same next screen as
    earlier in the episode. The earlier occurrence and everything after it up to the repeat
    came back to where they started, so they go and the repeat stays.

    Requiring the whole transition, not just the screen, keeps repeated work on screens that
    look alike but are not (a second expense through the same empty form, a second recipe
    deleted through the same confirmation dialog: what follows differs). Steps whose screens
    were not recorded are never cut; invalid steps are left out.
    """
    valid = [s for s in steps if s.action_valid]
    path: list[Step] = []
    seen: dict[tuple[str, str, str], int] = {}  # transition -> its position in path
    keys: list[tuple[str, str, str] | None] = []
    for i, step in enumerate(valid):
        after = valid[i + 1].screen if i + 1 < len(valid) else ""
        key = (step.screen, step.action_description, after) if step.screen and after else None
        if key is not None and key in seen:
            cut = seen[key]
            for dropped in keys[cut:]:
                if dropped is not None:
                    seen.pop(dropped, None)
            del path[cut:]
            del keys[cut:]
        if key is not None:
            seen[key] = len(path)
        path.append(step)
        keys.append(key)
    return path


def key_step_descriptions(
    steps: Sequence[Step],
    skip_types: Collection[ActionType] = DEFAULT_SKIP_TYPES,
    drop_detours: bool = True,
    loops: bool = True,
) -> list[str]:
    """The action descriptions of the essential steps of a (successful) trajectory.

    Kept: valid actions whose type is not in ``skip_types``. Dropped: invalid actions, those
    types, repeats of the previous kept description, and, when ``drop_detours`` is set,
    *detours*: an action immediately undone by ``GOBACK`` (both go; skipped types in between
    do not count; a ``GOBACK`` with nothing to undo is kept). With ``loops``, loops are cut
    first (:func:`erase_loops`): a wander that ends by repeating an earlier transition is not
    part of the route.

    Args:
        steps: The trajectory's steps (``action``, ``action_valid``, ``action_description``,
            and ``screen`` for loop erasure).
        skip_types: Action types that are never key steps.
        drop_detours: Remove ``action, GOBACK`` pairs.
        loops: Cut loops (an earlier transition repeated).

    Returns:
        The kept descriptions, in order.
    """
    kept: list[str] = []
    undoable = False  # the last kept description came from the last counted action
    for step in erase_loops(steps) if loops else steps:
        if not step.action_valid or not step.action_description:
            continue
        kind = _action_type(step)
        if kind is None or kind in skip_types:
            continue
        if kind is ActionType.GOBACK and drop_detours and undoable and kept:
            kept.pop()
            undoable = False
            continue
        description = step.action_description.strip()
        if kept and kept[-1] == description:
            undoable = True
            continue
        kept.append(description)
        undoable = True
    return kept


def _typed_parts(description: str) -> tuple[str, str] | None:
    """``(text, field)`` of ``type "<text>" into <field>`` (the last ``" into `` with a
    non-empty field after it), else None. String scanning: descriptions and milestones can
    come from a model, and a regex here backtracked quadratically on repeated ``" into ``."""
    head = 'type "'
    if not description.startswith(head):
        return None
    rest = description[len(head) :]
    cut = rest.rfind('" into ', 0, len(rest) - 1)
    if cut < 0:
        return None
    return rest[:cut], rest[cut + len('" into ') :]


def alignment_text(description: str) -> str:
    """``description`` with the typed text of a ``type "..." into <field>`` action left out:
    two successes that typed different words into the same field took the same step."""
    parts = _typed_parts(description)
    return description if parts is None else f"type into {parts[1]}"


def soft_lcs_alignment(
    similarity: np.ndarray | Sequence[Sequence[float]], threshold: float = 0.8
) -> tuple[float, list[tuple[int, int]]]:
    """A soft longest common subsequence of two sequences of descriptions (ProgRM App. A,
    Eq. 8, via :func:`gui_gym.rewards.lcs.soft_lcs_matrix`), with the soft match score
    ``f(a_i, b_j)`` taken as the similarity when it reaches ``threshold`` and 0 otherwise.

    Args:
        similarity: ``(m, n)`` similarities (e.g. embedding cosines) of the items of ``a``
            with those of ``b``; clipped to [0, 1].
        threshold: The least similarity that counts as a match.

    Returns:
        ``(score, pairs)``: the soft LCS length and the aligned ``(i, j)`` index pairs, in
        order.

    Raises:
        ValueError: for a similarity that is not 2-D.
    """
    sims = np.asarray(similarity, dtype=np.float64)
    if sims.size == 0:
        return 0.0, []
    if sims.ndim != 2:
        raise ValueError(f"similarity must be an (m, n) matrix, got shape {sims.shape}")
    gain = np.where(sims >= threshold, np.clip(sims, 0.0, 1.0), 0.0)
    result = soft_lcs_matrix(gain)
    return result.score, list(result.pairs)


def merge_milestones(
    existing: Sequence[str],
    candidate: Sequence[str],
    similarity: np.ndarray | Sequence[Sequence[float]],
    threshold: float = 0.8,
    min_overlap: float = 0.5,
    combine: Callable[[str, str], str] | None = None,
) -> list[str]:
    """Refine milestones with the key steps of a new success (ADMIRE Eq. 7, without an LLM).

    The two lists are aligned by :func:`soft_lcs_alignment`. When they share a strategy
    (overlap ``score / min(len)``, ProgRM's Eq. 3 similarity, at least ``min_overlap``) the
    result is their common subsequence in the existing wording: steps one success needed and
    the other did without are not essential. When they do not (a different route), the
    shorter list wins, so a shortcut replaces a longer path (ADMIRE Sec. 3.1).

    Args:
        existing: The current milestones.
        candidate: Key-step descriptions of the new successful trajectory.
        similarity: ``(len(existing), len(candidate))`` similarities.
        threshold: Soft-match threshold of the alignment.
        min_overlap: Least overlap for the two to count as the same strategy.
        combine: ``(existing item, aligned candidate item) -> merged item``; None keeps the
            existing item (see :func:`generalize_typed_text`).

    Returns:
        The refined milestones (``existing`` unchanged when nothing is to be gained; never
        empty when ``existing`` is not).
    """
    _check_unit("min_overlap", min_overlap)
    if not existing:
        return list(candidate)
    if not candidate:
        return list(existing)
    score, pairs = soft_lcs_alignment(similarity, threshold)
    overlap = score / min(len(existing), len(candidate))
    if overlap < min_overlap:
        return list(candidate) if len(candidate) < len(existing) else list(existing)
    if combine is None:
        merged = [existing[i] for i, _ in pairs]
    else:
        merged = [combine(existing[i], candidate[j]) for i, j in pairs]
    return merged or list(existing)


PLACEHOLDER = re.compile(r"<[A-Za-z][A-Za-z0-9_ ]{0,30}>")
"""A placeholder in a milestone, such as ``<Name>`` or ``<Text>`` (ADMIRE's prompts)."""


def generalize_typed_text(existing: str, candidate: str) -> str:
    """Merge two aligned key steps: when both type into the same field but different text,
    the typed text becomes the placeholder ``<Text>`` (so the milestone no longer depends on
    one episode's values); otherwise the existing wording stays."""
    a, b = _typed_parts(existing), _typed_parts(candidate)
    if a and b and a[1] == b[1] and a[0] != b[0]:
        return f'type "<Text>" into {a[1]}'
    return existing


@dataclass(frozen=True)
class PlaceholderPattern:
    """A milestone with placeholders, as literal parts with one placeholder between each
    neighbouring pair; a placeholder stands for one or more characters of any kind.

    Matched by scanning, not as a regular expression: milestones come from an LLM, and a
    regex of ``k`` lazy wildcards backtracks in ``O(n^k)`` on a text it does not match.
    """

    parts: tuple[str, ...]

    def fullmatch(self, text: str) -> bool:
        """Whether all of ``text`` is the milestone with each placeholder filled in.

        Greedy-leftmost glob matching, linear in ``len(text)`` times the number of parts:
        placing each middle part at its leftmost possible position never rules out a match
        that a later position allows.
        """
        first, *middle, last = self.parts
        if not text.startswith(first):
            return False
        position = len(first)
        for part in middle:
            found = text.find(part, position + 1)  # the placeholder before takes >= 1 char
            if found < 0:
                return False
            position = found + len(part)
        return len(text) - len(last) >= position + 1 and text.endswith(last)


def placeholder_pattern(milestone: str) -> PlaceholderPattern | None:
    """A pattern that matches the texts ``milestone`` describes when each of its
    placeholders stands for any text (ADMIRE's judge prompt: a placeholder matches any
    value), or None when it has no placeholder. The rest of the milestone must match
    verbatim."""
    parts = PLACEHOLDER.split(milestone)
    if len(parts) == 1:
        return None
    return PlaceholderPattern(tuple(parts))
