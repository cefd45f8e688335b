"""GUI-Shepherd process-reward data and arithmetic, as pure functions (no Gymnasium imports).

GUI-Shepherd (seed 003) casts the process reward model as a binary judge of one step: given
the instruction ``g``, the state ``s_t`` and the action ``a_t``, is the action correct
(Sec. 3, Eq. 1)? The label is read from two tokens of a causal LM (Eq. 2), optionally after a
chain-of-thought rationale. This module holds everything about that judgement that is plain
data:

* :class:`PRMQuery`, what a PRM scores, and :class:`LabelledStep`, a query with its label;
* :class:`PromptTemplate`, our own wording of the judge prompt;
* :func:`perturb_action`, the negatives made by perturbing a correct action (another element,
  wrong text, wrong direction, premature end);
* :func:`deduplicate_steps`, :func:`balance_labels` and :func:`split_by_task` for the dataset
  (the paper keeps positives and negatives balanced, Sec. 5);
* :func:`binary_auc`, :func:`binary_f1`, :func:`classification_metrics` for evaluation per
  step position;
* :func:`prm_step_reward`, the per-step reward ``r_t = r_PRM + r_format`` of GUI-Shepherd's
  online PPO (Sec. 4.1, Eq. 3), and :func:`select_candidate`, the best-of-N argmax (Eq. 6).

The env-facing collector that produces labelled steps from rollouts lives in
:mod:`gui_gym.train.prm_data`, the trainer in :mod:`gui_gym.train.prm`, the scorers in
:mod:`gui_gym.models.prm`.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UITree

__all__ = [
    "NEGATIVE_SOURCES",
    "PERTURBATION_KINDS",
    "POSITIVE_SOURCES",
    "SELECTIONS",
    "DedupReport",
    "LabelledStep",
    "PRMQuery",
    "PRMReward",
    "PromptTemplate",
    "RankingState",
    "action_type_of",
    "balance_labels",
    "binary_auc",
    "binary_f1",
    "classification_metrics",
    "deduplicate_steps",
    "format_step_reward",
    "perturb_action",
    "position_bucket",
    "prm_step_reward",
    "ranking_metrics",
    "select_candidate",
    "source_counts",
    "split_by_task",
]

POSITIVE_SOURCES = ("oracle", "milestone")
"""Where positives come from: the task's expert action, or an action that reached a new env
milestone (or completed the task)."""
PERTURBATION_KINDS = ("other_element", "wrong_text", "wrong_direction", "premature_end", "detour")
"""Ways :func:`perturb_action` corrupts a correct action."""
NEGATIVE_SOURCES = (
    *(f"perturb:{k}" for k in PERTURBATION_KINDS),
    "random_failed",
    "proposal",
)
"""Where negatives come from: a perturbation of a positive, a step of a failed random
rollout that the expert disagrees with and that reached no milestone, or a wrong action
among those a sampling policy proposes in a state (``proposal``: the verifier's inference-time
distractors)."""


# ---------------------------------------------------------------------------------------------
# What a PRM scores


@dataclass(frozen=True)
class PRMQuery:
    """One step for a process reward model to judge: ``(instruction, state, action)``.

    Attributes:
        instruction: The task instruction ``g``.
        screen: The rendered screen the action was chosen on (the state ``s_t``).
        action: The action ``a_t`` as text (canonical grammar when it parsed).
        action_description: Natural-language form of the action on that screen
            (``click "Search" button``), as ``info["action_description"]`` gives it.
        history: Descriptions of the earlier actions of the episode, oldest first.
        step: How many steps were taken before this one (its position in the episode).
        screenshot: The screenshot the action was chosen on (an HxWx3 uint8 array), for a
            vision-language PRM; not part of the query's key or its JSON form.
    """

    instruction: str
    screen: str
    action: str
    action_description: str = ""
    history: tuple[str, ...] = ()
    step: int = 0
    screenshot: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("instruction", "screen", "action", "action_description"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(f"PRMQuery.{name} must be a str, got {type(value).__name__}")
        if not isinstance(self.history, tuple):
            object.__setattr__(self, "history", tuple(self.history))
        if not all(isinstance(h, str) for h in self.history):
            raise TypeError("PRMQuery.history must hold strings")
        if isinstance(self.step, bool) or not isinstance(self.step, int) or self.step < 0:
            raise ValueError(f"PRMQuery.step must be a non-negative int, got {self.step!r}")

    def key(self) -> tuple[str, str, str, tuple[str, ...]]:
        """What makes two queries the same prompt (used to deduplicate)."""
        return (self.instruction, self.screen, self.action, self.history)

    def to_dict(self) -> dict[str, Any]:
        return {
            "instruction": self.instruction,
            "screen": self.screen,
            "action": self.action,
            "action_description": self.action_description,
            "history": list(self.history),
            "step": self.step,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PRMQuery:
        """Inverse of :meth:`to_dict`.

        Raises:
            ValueError: naming a missing or malformed field.
        """
        try:
            return cls(
                instruction=data["instruction"],
                screen=data["screen"],
                action=data["action"],
                action_description=data.get("action_description", ""),
                history=tuple(data.get("history", ())),
                step=data.get("step", 0),
            )
        except KeyError as err:
            raise ValueError(f"PRM query record is missing {err.args[0]!r}") from None
        except TypeError as err:
            raise ValueError(f"malformed PRM query record: {err}") from None


@dataclass(frozen=True)
class LabelledStep:
    """A :class:`PRMQuery` with its binary correctness label (GUI-Shepherd Eq. 1).

    Attributes:
        query: The step.
        label: 1 when the action is correct (positive), 0 when it is not.
        task_id: The task the step belongs to (datasets are split by it).
        source: How the label was made: one of :data:`POSITIVE_SOURCES` or
            :data:`NEGATIVE_SOURCES`.
        rationale: A short explanation of the label, for training the rationale variant
            (the paper's GPT-4o rationales; ours are written from the facts behind the label).
        env_id: The env the step came from.
    """

    query: PRMQuery
    label: int
    task_id: str
    source: str
    rationale: str = ""
    env_id: str = ""

    def __post_init__(self) -> None:
        if self.label not in (0, 1) or isinstance(self.label, bool):
            raise ValueError(f"label must be 0 or 1, got {self.label!r}")
        if self.source not in POSITIVE_SOURCES + NEGATIVE_SOURCES:
            raise ValueError(
                f"unknown source {self.source!r}; expected one of "
                f"{', '.join(POSITIVE_SOURCES + NEGATIVE_SOURCES)}"
            )
        positive = self.source in POSITIVE_SOURCES
        if positive != (self.label == 1):
            raise ValueError(f"source {self.source!r} cannot carry label {self.label}")

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.query.to_dict(),
            "label": self.label,
            "task_id": self.task_id,
            "source": self.source,
            "rationale": self.rationale,
            "env_id": self.env_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LabelledStep:
        """Inverse of :meth:`to_dict` (one JSONL record of a PRM dataset).

        Raises:
            ValueError: naming a missing or malformed field.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"a labelled step must be a JSON object, got {type(data).__name__}")
        try:
            return cls(
                query=PRMQuery.from_dict(data),
                label=data["label"],
                task_id=str(data["task_id"]),
                source=str(data["source"]),
                rationale=str(data.get("rationale", "")),
                env_id=str(data.get("env_id", "")),
            )
        except KeyError as err:
            raise ValueError(f"labelled step record is missing {err.args[0]!r}") from None


# ---------------------------------------------------------------------------------------------
# The judge prompt


@dataclass(frozen=True)
class PromptTemplate:
    """The text a PRM reads: our wording of a step-correctness question.

    GUI-Shepherd asks whether an action, in a given state, contributes positively to the
    instruction, and reads the answer from a positive and a negative token (Sec. 3, App. A.2).
    The prompt is split in three parts so a tokenizer can cut the screen, the only part that
    can be long, and keep the question and the label position intact.

    Attributes:
        max_screen_chars: Screens longer than this are cut (with a note) before rendering.
        max_history: How many earlier actions are listed (the most recent ones).
        rationale_marker: Line that opens the rationale in the rationale variant.
        verdict_marker: Text right before the label token.
    """

    max_screen_chars: int = 6000
    max_history: int = 4
    rationale_marker: str = "Reasoning:"
    verdict_marker: str = "Verdict:"

    def __post_init__(self) -> None:
        if self.max_screen_chars < 1:
            raise ValueError(f"max_screen_chars must be >= 1, got {self.max_screen_chars}")
        if self.max_history < 0:
            raise ValueError(f"max_history must be >= 0, got {self.max_history}")
        if not self.verdict_marker.strip():
            raise ValueError("verdict_marker must not be blank")

    def parts(
        self, query: PRMQuery, positive: str, negative: str, rationale: bool = False
    ) -> tuple[str, str, str]:
        """``(head, screen, tail)``: their concatenation is the prompt, ending right before
        the rationale (``rationale=True``) or right before the label token."""
        history = query.history[-self.max_history :] if self.max_history else ()
        earlier = "\n".join(f"- {h}" for h in history) if history else "- (none yet)"
        screen = query.screen
        if len(screen) > self.max_screen_chars:
            screen = screen[: self.max_screen_chars] + "\n<!-- screen cut -->"
        head = (
            "You check one step of an assistant that operates an app for a user.\n"
            f"Goal: {query.instruction}\n"
            f"Earlier actions:\n{earlier}\n"
            "Screen, one element per line with its index:\n"
        )
        described = f" ({query.action_description})" if query.action_description else ""
        yes, no = positive.strip(), negative.strip()
        how = "Think it over briefly, then answer" if rationale else "Answer"
        tail = (
            f"\nProposed action: {query.action}{described}\n"
            "Is this the right next action toward the goal on this screen? "
            f"{how} {yes} if it is and {no} if it is not.\n"
        )
        tail += f"{self.rationale_marker}" if rationale else f"{self.verdict_marker}"
        return head, screen, tail

    def render(self, query: PRMQuery, positive: str, negative: str, rationale: bool = False) -> str:
        """The whole prompt as one string (for HTTP servers)."""
        return "".join(self.parts(query, positive, negative, rationale))

    def verdict_suffix(self) -> str:
        """What follows a rationale, right before the label token."""
        return f"\n{self.verdict_marker}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "max_screen_chars": self.max_screen_chars,
            "max_history": self.max_history,
            "rationale_marker": self.rationale_marker,
            "verdict_marker": self.verdict_marker,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PromptTemplate:
        unknown = set(data) - {
            "max_screen_chars",
            "max_history",
            "rationale_marker",
            "verdict_marker",
        }
        if unknown:
            raise ValueError(f"unknown PromptTemplate field(s) {sorted(unknown)}")
        return cls(**dict(data))


# ---------------------------------------------------------------------------------------------
# Negatives by perturbation

_OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")


def _distractor_texts(action_text: str, tree: UITree, texts: Sequence[str]) -> list[str]:
    """Texts unlike ``action_text``: given distractors, then words seen on the screen."""
    target = action_text.strip().lower()
    pool: list[str] = [t for t in texts if t.strip() and t.strip().lower() != target]
    words = {w.lower() for e in tree.elements for w in _WORD.findall(e.text or "")}
    words -= set(target.split())
    pool.extend(sorted(words))
    return list(dict.fromkeys(pool))


def _wrong_text(text: str, tree: UITree, texts: Sequence[str], rng: np.random.Generator) -> str:
    """A text that should not satisfy the step: a distractor, else a corrupted copy."""
    pool = _distractor_texts(text, tree, texts)
    if pool:
        return pool[int(rng.integers(len(pool)))]
    stripped = text.strip()
    number = re.fullmatch(r"[+-]?\d+", stripped)
    if number:
        return str(int(stripped) + int(rng.choice([-2, -1, 1, 2])))
    words = stripped.split()
    if len(words) > 1:
        return " ".join(words[:-1])
    return stripped[::-1] + "x" if stripped else "x"


def _on_screen(action: Action, tree: UITree) -> bool:
    return action.index is not None and 0 <= action.index < len(tree.elements)


def _role(action: Action, tree: UITree) -> str | None:
    return tree.elements[action.index].role if _on_screen(action, tree) else None


def _pick(items: Sequence[Any], k: int, rng: np.random.Generator) -> list[Any]:
    """Up to ``k`` distinct items, uniformly without replacement, in a random order."""
    if not items:
        return []
    chosen = rng.choice(len(items), size=min(k, len(items)), replace=False)
    return [items[int(i)] for i in chosen]


def perturb_action(
    action: Action,
    tree: UITree,
    rng: np.random.Generator,
    *,
    texts: Sequence[str] = (),
    kinds: Iterable[str] = PERTURBATION_KINDS,
    per_kind: int = 1,
) -> list[tuple[str, Action]]:
    """Corrupted versions of a correct action on the same screen: candidate negatives.

    Up to ``per_kind`` of each kind, each differing from ``action``:

    * ``other_element``: the same click/long-click/typing aimed at another element that
      accepts it, or, for an action that is not a click, a click on some other element;
      half of them (rounded up) on elements of the target's role when there are such
      (another search result for a search result: the hard negatives);
    * ``wrong_text``: typing, answering or opening (an app) another text (a distractor from
      ``texts``, a word from the screen, or a corrupted copy; for an app, preferably the
      label of another tappable element, e.g. another app on the launcher);
    * ``wrong_direction``: scrolling the opposite way;
    * ``detour``: going back, or scrolling, when something else is due (the moves an agent
      makes when it is lost; without them a learned PRM sees ``GOBACK()`` mostly as the
      expert's recovery move and learns to like it everywhere);
    * ``premature_end``: ending the episode early with ``DONE()`` or an ``ANSWER`` of a
      screen word (only the answer when ``DONE()`` itself was due; none for an ``ANSWER``,
      whose wrong text is ``wrong_text``).

    A perturbation can happen to be correct too (two links to the same page); the collector
    checks each on a copy of the env before labelling it negative.

    Args:
        action: The correct action.
        tree: The screen it is correct on.
        rng: Source of the random choices.
        texts: Distractor texts for typing and answering.
        kinds: Which kinds to make (subset of :data:`PERTURBATION_KINDS`).
        per_kind: Most perturbations of one kind (``other_element`` and ``wrong_text``
            can have several; the others have at most one).

    Returns:
        ``(kind, action)`` pairs.

    Raises:
        ValueError: for an unknown kind.
    """
    kinds = tuple(kinds)
    if per_kind < 1:
        raise ValueError(f"per_kind must be >= 1, got {per_kind}")
    unknown = set(kinds) - set(PERTURBATION_KINDS)
    if unknown:
        raise ValueError(
            f"unknown perturbation kind(s) {sorted(unknown)}; choose from {PERTURBATION_KINDS}"
        )
    out: list[tuple[str, Action]] = []
    t = action.type
    if "other_element" in kinds:
        alternatives: list[Action] = []
        if action.index is not None:
            if t in (ActionType.CLICK, ActionType.DOUBLE_CLICK):
                ok = [e.index for e in tree.elements if e.clickable and e.enabled]
            elif t is ActionType.LONG_CLICK:
                ok = [
                    e.index
                    for e in tree.elements
                    if (e.long_clickable or e.clickable) and e.enabled
                ]
            elif t is ActionType.INPUT:
                ok = [e.index for e in tree.elements if e.editable and e.enabled]
            elif t is ActionType.SCROLL:
                ok = [e.index for e in tree.elements if e.scrollable and e.enabled]
            else:
                ok = []
            alternatives = [
                Action(t, index=i, text=action.text, direction=action.direction)
                for i in ok
                if i != action.index
            ]
        if t not in (ActionType.CLICK, ActionType.DOUBLE_CLICK):
            # a tap somewhere else instead of the due typing, scrolling, ending, ...
            alternatives += [
                Action(ActionType.CLICK, index=e.index)
                for e in tree.elements
                if e.clickable and e.enabled and e.index != action.index
            ]
        # Hard negatives first: elements of the same role as the target (another search
        # result, another list row) are the plausible-but-wrong choices a verifier must tell
        # apart (GUI-Shepherd Sec. 5.1); the rest come from anywhere on the screen.
        role = tree.elements[action.index].role if _on_screen(action, tree) else None
        alike = [a for a in alternatives if role is not None and _role(a, tree) == role]
        picked = _pick(alike, (per_kind + 1) // 2, rng)
        rest = [a for a in alternatives if a not in picked]
        picked += _pick(rest, per_kind - len(picked), rng)
        for alternative in picked:
            out.append(("other_element", alternative))
    text_types = (ActionType.INPUT, ActionType.ANSWER, ActionType.OPEN_APP)
    if "wrong_text" in kinds and t in text_types and action.text:
        pool = _distractor_texts(action.text, tree, texts)
        if t is ActionType.OPEN_APP:
            # another app: the labels of tappable elements (app icons on a launcher) first
            target = action.text.strip().lower()
            names = [
                e.text.strip() for e in tree.elements if e.clickable and (e.text or "").strip()
            ]
            names = [n for n in dict.fromkeys(names) if n.lower() != target]
            pool = names or pool
        wrongs = _pick(pool, per_kind, rng) if pool else [_wrong_text(action.text, tree, (), rng)]
        for wrong in wrongs:
            if wrong.strip().lower() != action.text.strip().lower():
                out.append(("wrong_text", Action(t, index=action.index, text=wrong)))
    if "wrong_direction" in kinds and t is ActionType.SCROLL:
        direction = _OPPOSITE[action.direction or "down"]
        out.append(("wrong_direction", Action(t, index=action.index, direction=direction)))
    if "detour" in kinds:
        detours: list[Action] = []
        if t is not ActionType.GOBACK:
            detours.append(Action(ActionType.GOBACK))
        if t is not ActionType.SCROLL:
            if tree.can_scroll_down:
                detours.append(Action(ActionType.SCROLL, direction="down"))
            if tree.can_scroll_up:
                detours.append(Action(ActionType.SCROLL, direction="up"))
        for detour in _pick(detours, 1, rng):
            out.append(("detour", detour))
    if "premature_end" in kinds and t is not ActionType.ANSWER:
        # DONE() or an ANSWER with a screen word, instead of the step that was due; when
        # DONE() itself was due, only the answer is premature (it ends the task wrongly).
        pool = _distractor_texts("", tree, texts)
        answer_it = bool(pool) and (t is ActionType.DONE or rng.random() < 0.5)
        if answer_it:
            word = pool[int(rng.integers(len(pool)))]
            out.append(("premature_end", Action(ActionType.ANSWER, text=word)))
        elif t is not ActionType.DONE:
            out.append(("premature_end", Action(ActionType.DONE)))
    return out


# ---------------------------------------------------------------------------------------------
# Dataset hygiene


@dataclass(frozen=True)
class DedupReport:
    """What :func:`deduplicate_steps` removed."""

    kept: int
    duplicates: int
    conflicts: int
    """Queries seen with both labels; every copy of them is dropped (an ambiguous prompt
    teaches the PRM nothing)."""


def deduplicate_steps(steps: Sequence[LabelledStep]) -> tuple[list[LabelledStep], DedupReport]:
    """Keep the first copy of each distinct query (instruction, screen, action, history).

    Queries that occur with both labels are dropped entirely.

    Returns:
        The kept steps, in their original order, and a :class:`DedupReport`.
    """
    labels: dict[tuple[Any, ...], set[int]] = defaultdict(set)
    for s in steps:
        labels[s.query.key()].add(s.label)
    seen: set[tuple[Any, ...]] = set()
    kept: list[LabelledStep] = []
    duplicates = 0
    for s in steps:
        key = s.query.key()
        if len(labels[key]) > 1:
            continue
        if key in seen:
            duplicates += 1
            continue
        seen.add(key)
        kept.append(s)
    conflicts = sum(1 for v in labels.values() if len(v) > 1)
    return kept, DedupReport(kept=len(kept), duplicates=duplicates, conflicts=conflicts)


def action_type_of(step: LabelledStep) -> str:
    """The action type of a step (``CLICK``, ``GOBACK``, ...; ``"?"`` when it does not parse):
    the default group of :func:`balance_labels`."""
    head = step.query.action.split("(", 1)[0].strip().upper()
    return head or "?"


def balance_labels(
    steps: Sequence[LabelledStep],
    rng: np.random.Generator,
    group: Callable[[LabelledStep], Any] | None = action_type_of,
    pair_leftovers: bool = True,
) -> list[LabelledStep]:
    """Equal numbers of positives and negatives, as equal as the data allows within groups.

    GUI-Shepherd trains on a balanced ratio of positives to negatives (Sec. 5). Balancing
    within groups (by default the action type) keeps a cheap shortcut out of the data: in
    env-labelled steps, most ``GOBACK()`` steps are the expert recovering (positive) and most
    clicks are random (negative), so a PRM could score the action type instead of the step.

    1. In each group, keep ``min(positives, negatives)`` of each class, chosen at random.
    2. With ``pair_leftovers``, pair up the leftovers of both classes across groups, at
       random, until one runs out. This keeps more data but lets the group leak the label
       again (a type with only positives stays all positive); without it every group is
       exactly balanced, so the action type alone predicts nothing (chance is 0.5 in each),
       and a type seen with one label only is dropped.

    With ``group=None`` this is plain downsampling of the larger class. The kept steps stay
    in their original order.
    """
    keys = [group(s) if group is not None else None for s in steps]
    chosen: set[int] = set()
    left_pos: list[int] = []
    left_neg: list[int] = []
    for key in dict.fromkeys(keys):
        pos = [i for i, s in enumerate(steps) if keys[i] == key and s.label == 1]
        neg = [i for i, s in enumerate(steps) if keys[i] == key and s.label == 0]
        n = min(len(pos), len(neg))
        pos_order, neg_order = rng.permutation(pos).tolist(), rng.permutation(neg).tolist()
        chosen.update(pos_order[:n] + neg_order[:n])
        left_pos += pos_order[n:]
        left_neg += neg_order[n:]
    n = min(len(left_pos), len(left_neg)) if pair_leftovers else 0
    chosen.update(rng.permutation(left_pos).tolist()[:n])
    chosen.update(rng.permutation(left_neg).tolist()[:n])
    return [s for i, s in enumerate(steps) if i in chosen]


def split_by_task(
    steps: Sequence[LabelledStep], eval_fraction: float, seed: int = 0
) -> tuple[list[LabelledStep], list[LabelledStep]]:
    """Split steps into train and eval so that no task has steps on both sides.

    Tasks are keyed by ``(env_id, task_id)``, shuffled with ``seed``, and
    ``round(eval_fraction * n_tasks)`` of them (at least one when the fraction is positive
    and there are two or more tasks) go to eval.

    Raises:
        ValueError: when ``eval_fraction`` is outside [0, 1).
    """
    if not 0.0 <= eval_fraction < 1.0:
        raise ValueError(f"eval_fraction must be in [0, 1), got {eval_fraction!r}")
    tasks = sorted({(s.env_id, s.task_id) for s in steps})
    n_eval = round(eval_fraction * len(tasks))
    if eval_fraction > 0 and n_eval == 0 and len(tasks) >= 2:
        n_eval = 1
    order = np.random.default_rng(seed).permutation(len(tasks))
    eval_tasks = {tasks[i] for i in order[:n_eval]}
    train = [s for s in steps if (s.env_id, s.task_id) not in eval_tasks]
    held = [s for s in steps if (s.env_id, s.task_id) in eval_tasks]
    return train, held


# ---------------------------------------------------------------------------------------------
# Metrics


def binary_auc(labels: Sequence[int] | np.ndarray, scores: Sequence[float] | np.ndarray) -> float:
    """Area under the ROC curve: the probability that a random positive scores above a
    random negative, ties counting one half (the Mann-Whitney U statistic over n+ * n-).

    Returns:
        The AUC, or NaN when one class is absent.

    Raises:
        ValueError: when the lengths differ or a label is not 0/1.
    """
    y = np.asarray(labels)
    s = np.asarray(scores, dtype=np.float64)
    if y.shape != s.shape or y.ndim != 1:
        raise ValueError(
            f"labels and scores must be 1-D of one length, got {y.shape} and {s.shape}"
        )
    if not np.isin(y, (0, 1)).all():
        raise ValueError("labels must be 0 or 1")
    n_pos = int((y == 1).sum())
    n_neg = len(y) - n_pos
    if n_pos == 0 or n_neg == 0:
        return math.nan
    # Average ranks (1-based) with ties sharing the mean of their positions.
    order = np.argsort(s, kind="mergesort")
    sorted_scores = s[order]
    ranks = np.empty(len(s), dtype=np.float64)
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    rank_sum = float(ranks[y == 1].sum())
    return (rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


def binary_f1(labels: Sequence[int] | np.ndarray, predictions: Sequence[int] | np.ndarray) -> float:
    """F1 of the positive class: ``2 TP / (2 TP + FP + FN)``; 0.0 when there is no positive
    label and no positive prediction (nothing to find, nothing found)."""
    y = np.asarray(labels).astype(bool)
    p = np.asarray(predictions).astype(bool)
    if y.shape != p.shape:
        raise ValueError(f"labels and predictions differ in shape: {y.shape} vs {p.shape}")
    tp = int((y & p).sum())
    fp = int((~y & p).sum())
    fn = int((y & ~p).sum())
    denominator = 2 * tp + fp + fn
    return 0.0 if denominator == 0 else 2 * tp / denominator


def position_bucket(step: int, last: int = 5) -> str:
    """The step-position group a step is reported under: ``"0"`` .. ``"4"``, then ``"5+"``."""
    return str(step) if step < last else f"{last}+"


def classification_metrics(
    labels: Sequence[int] | np.ndarray,
    scores: Sequence[float] | np.ndarray,
    positions: Sequence[int] | None = None,
    threshold: float = 0.5,
) -> dict[str, Any]:
    """Accuracy, AUC, F1, precision, recall and false-positive rate of scores, overall and
    per step position (the measures of ProgRM's Table 2 and GUI-Shepherd's PRM evaluation).

    Args:
        labels: True labels (0/1).
        scores: PRM scores in [0, 1]; a score >= ``threshold`` predicts positive.
        positions: Step index of each example; grouped by :func:`position_bucket`.
        threshold: Decision threshold.

    Returns:
        ``{"n", "accuracy", "auc", "f1", "precision", "recall", "false_positive_rate",
        "positive_rate", "by_position": {bucket: {...}}}`` (AUC is NaN in a group with one
        class only; precision is NaN with no positive prediction, recall with no positive
        label, the false-positive rate with no negative label).
    """
    y = np.asarray(labels, dtype=np.int64)
    s = np.asarray(scores, dtype=np.float64)
    if y.shape != s.shape:
        raise ValueError(f"labels and scores differ in shape: {y.shape} vs {s.shape}")

    def group(mask: np.ndarray) -> dict[str, Any]:
        yy, ss = y[mask], s[mask]
        pred = (ss >= threshold).astype(np.int64)
        tp = int(((pred == 1) & (yy == 1)).sum())
        fp = int(((pred == 1) & (yy == 0)).sum())
        positives, negatives, predicted = int((yy == 1).sum()), int((yy == 0).sum()), tp + fp
        return {
            "n": len(yy),
            "accuracy": float((pred == yy).mean()) if len(yy) else math.nan,
            "auc": binary_auc(yy, ss) if len(yy) else math.nan,
            "f1": binary_f1(yy, pred),
            "precision": tp / predicted if predicted else math.nan,
            "recall": tp / positives if positives else math.nan,
            "false_positive_rate": fp / negatives if negatives else math.nan,
            "positive_rate": float(yy.mean()) if len(yy) else math.nan,
        }

    report = group(np.ones(len(y), dtype=bool))
    if positions is not None:
        pos = np.asarray(positions)
        if pos.shape != y.shape:
            raise ValueError(f"positions differ in shape from labels: {pos.shape} vs {y.shape}")
        buckets = [position_bucket(int(p)) for p in pos]
        names = sorted(set(buckets), key=lambda b: int(b.rstrip("+")))
        arr = np.asarray(buckets)
        report["by_position"] = {b: group(arr == b) for b in names}
    return report


# ---------------------------------------------------------------------------------------------
# Rewards and selection


@dataclass(frozen=True)
class PRMReward:
    """The parts of the PRM step reward (see :func:`prm_step_reward`)."""

    total: float
    prm: float
    format: float
    invalid: float

    def to_dict(self) -> dict[str, float]:
        return {
            "total": self.total,
            "prm": self.prm,
            "format": self.format,
            "invalid": self.invalid,
        }


def prm_step_reward(
    score: float | None,
    *,
    parsed: bool,
    valid: bool,
    weight: float = 1.0,
    format_weight: float = 0.1,
    invalid_penalty: float = -0.1,
) -> PRMReward:
    """GUI-Shepherd's dense step reward ``r_t = r_PRM + r_format`` (Sec. 4.1, Eq. 3).

    * ``prm = weight * score`` for an action the env accepted (the PRM's probability that the
      action is correct); 0 for an action that did not parse or that the env rejected, which
      is not judged at all;
    * ``format = format_weight`` when the action parsed in the action grammar, else 0 (the
      paper's format reward penalises unparsable actions, App. B.2);
    * ``invalid = invalid_penalty`` when the action did not parse or the env rejected it
      (an index not on screen), else 0.

    So with the defaults: a valid action earns ``0.1 + score``, a well-formed impossible one
    ``0.1 - 0.1 = 0``, garbage ``-0.1``.

    Args:
        score: The PRM score in [0, 1]; None (or anything) is ignored when not ``valid``.
        parsed: Whether the action parsed.
        valid: Whether the env accepted it (implies ``parsed``).
        weight: Scale of the PRM term.
        format_weight: Reward for a well-formed action.
        invalid_penalty: Added for an action that did not parse or was rejected (<= 0 to
            penalise).

    Raises:
        ValueError: when a valid action has no score, or a score outside [0, 1].
    """
    if valid and not parsed:
        raise ValueError("an action the env accepted must have parsed (valid implies parsed)")
    prm = 0.0
    if valid:
        if score is None or not (0.0 <= float(score) <= 1.0):
            raise ValueError(f"a valid action needs a PRM score in [0, 1], got {score!r}")
        prm = float(weight) * float(score)
    rest = format_step_reward(
        parsed=parsed, valid=valid, format_weight=format_weight, invalid_penalty=invalid_penalty
    )
    return PRMReward(total=prm + rest.total, prm=prm, format=rest.format, invalid=rest.invalid)


def format_step_reward(
    *, parsed: bool, valid: bool, format_weight: float = 0.1, invalid_penalty: float = -0.1
) -> PRMReward:
    """The format part of :func:`prm_step_reward` alone (``prm = 0``): what GUI-Shepherd's
    ORM baseline adds to each step beside the terminal outcome (App. B.2: "a format reward is
    computed at each step to penalize unparsable actions").

    With the defaults a valid action earns 0.1, a well-formed one the env rejected 0,
    garbage -0.1.

    Raises:
        ValueError: when ``valid`` is set without ``parsed``.
    """
    if valid and not parsed:
        raise ValueError("an action the env accepted must have parsed (valid implies parsed)")
    fmt = float(format_weight) if parsed else 0.0
    invalid = 0.0 if valid else float(invalid_penalty)
    return PRMReward(total=fmt + invalid, prm=0.0, format=fmt, invalid=invalid)


SELECTIONS = ("argmax", "count_weighted")
"""How best-of-N picks among scored candidates (:func:`select_candidate`)."""


def select_candidate(
    scores: Sequence[float] | np.ndarray,
    counts: Sequence[int] | None = None,
    selection: str = "argmax",
) -> int:
    """Index of the candidate to act with.

    * ``"argmax"`` (default): the highest PRM score, GUI-Shepherd's Eq. 6. Ties go to the
      candidate the policy proposed most often (``counts``), then to the earliest one, so
      with a flat scorer best-of-N falls back to the policy's own mode.
    * ``"count_weighted"`` (not in the paper): the highest ``score * count``, i.e. the sum
      of the PRM's scores over the ``N`` proposals rather than their maximum. A candidate the
      policy proposes often needs a lower score to win, so the policy's own preference and
      the verifier's are combined (like weighted majority voting); ties as for argmax.

    Raises:
        ValueError: for no candidates, NaN scores, mismatched counts or an unknown
            selection.
    """
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}")
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or len(s) == 0:
        raise ValueError("select_candidate needs a non-empty 1-D sequence of scores")
    if np.isnan(s).any():
        raise ValueError(f"NaN among candidate scores {s.tolist()}")
    c = np.ones(len(s)) if counts is None else np.asarray(counts, dtype=np.float64)
    if c.shape != s.shape:
        raise ValueError(f"counts {c.shape} do not match scores {s.shape}")
    value = s * c if selection == "count_weighted" else s
    tied = np.flatnonzero(value == value.max())
    return int(tied[np.argmax(c[tied])])  # argmax returns the first of equal counts


def source_counts(steps: Iterable[LabelledStep]) -> dict[str, int]:
    """How many steps came from each source (for dataset reports)."""
    return dict(sorted(Counter(s.source for s in steps).items()))


# ---------------------------------------------------------------------------------------------
# Ranking: what best-of-N needs from a PRM


@dataclass(frozen=True)
class RankingState:
    """One state with the candidate actions a verifier must rank, and which are correct.

    Step accuracy and AUC pool steps from every state; best-of-N only ever compares the
    candidates of *one* state (GUI-Shepherd Eq. 6). A PRM can separate positives from
    negatives well on average and still rank a wrong candidate first in many states, e.g.
    when its scores drift with the screen more than with the action. This is the unit the
    ranking metrics are computed on.

    Attributes:
        queries: The candidates, one query each (same instruction, screen and history).
        correct: Whether each candidate is correct (the expert's action, or one that makes
            env progress); at least one is.
        task_id: The task.
        env_id: The env.
        on_path: True when every earlier action of the episode was correct (the state lies
            on a path the expert could have taken); False once the episode went astray.
    """

    queries: tuple[PRMQuery, ...]
    correct: tuple[bool, ...]
    task_id: str = ""
    env_id: str = ""
    on_path: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.queries, tuple):
            object.__setattr__(self, "queries", tuple(self.queries))
        if not isinstance(self.correct, tuple):
            object.__setattr__(self, "correct", tuple(bool(c) for c in self.correct))
        if len(self.queries) != len(self.correct) or not self.queries:
            raise ValueError(
                f"a ranking state needs one correctness flag per candidate and at least one "
                f"candidate, got {len(self.queries)} queries and {len(self.correct)} flags"
            )
        if not any(self.correct):
            raise ValueError("a ranking state needs at least one correct candidate")


def _type_name(action: str) -> str:
    return action.split("(", 1)[0].strip().upper() or "?"


def ranking_metrics(
    states: Sequence[RankingState], scores: Sequence[Sequence[float] | np.ndarray]
) -> dict[str, Any]:
    """How well a PRM ranks the candidates of each state: the number behind best-of-N.

    * ``top1``: share of states where a correct candidate has the highest score (ties share
      the credit: with ``k`` candidates tied on top of which ``c`` are correct, the state
      counts ``c / k``). With all proposable actions as candidates this is best-of-N's
      chance of a correct step when the policy proposes everything.
    * ``pairwise``: per state, the share of (best-scored correct, wrong) candidate pairs
      ordered right (ties one half), averaged over states with a wrong candidate. When a
      state's N proposals hold ``k`` wrong ones and the correct action once, the verifier
      keeps the correct one with probability about ``pairwise ** k``; so a PRM that is good
      on average (high AUC) but with ``pairwise`` well below 1 gets worse as N grows.
    * ``top1_on_path`` / ``top1_off_path``: ``top1`` over states on / off the expert's path.
    * ``wrong_top_types``: when a wrong candidate is ranked first (ties: the first of them),
      how often each action type was ranked first, and ``wrong_over``: the pairs
      ``"<type ranked first> over <expert type>"``; what the PRM prefers when it is wrong.
    * ``mean_candidates``: candidates per state.

    Args:
        states: The states.
        scores: The PRM's scores of each state's candidates, aligned with ``queries``.

    Returns:
        The metrics above plus ``n_states``, ``n_on_path`` and ``n_off_path``.

    Raises:
        ValueError: when ``scores`` does not match ``states``.
    """
    if len(scores) != len(states):
        raise ValueError(f"got scores for {len(scores)} states, expected {len(states)}")
    top1: list[float] = []
    pairwise: list[float] = []
    on: list[float] = []
    off: list[float] = []
    wrong_top: Counter[str] = Counter()
    wrong_over: Counter[str] = Counter()
    for state, values in zip(states, scores):
        s = np.asarray(values, dtype=np.float64)
        ok = np.asarray(state.correct, dtype=bool)
        if s.shape != ok.shape:
            raise ValueError(
                f"state of task {state.task_id!r} has {len(ok)} candidates, got {s.shape} scores"
            )
        tied = s == s.max()
        hit = float(ok[tied].sum() / tied.sum())
        top1.append(hit)
        (on if state.on_path else off).append(hit)
        if (~ok).any():
            best = s[ok].max()
            wrong = s[~ok]
            pairwise.append(float(((best > wrong) + 0.5 * (best == wrong)).mean()))
        if hit < 1.0:
            first = int(np.flatnonzero(tied & ~ok)[0])
            expert = int(np.flatnonzero(ok)[0])
            kind = _type_name(state.queries[first].action)
            wrong_top[kind] += 1
            wrong_over[f"{kind} over {_type_name(state.queries[expert].action)}"] += 1

    def mean(values: list[float]) -> float:
        return float(np.mean(values)) if values else math.nan

    return {
        "n_states": len(states),
        "n_on_path": len(on),
        "n_off_path": len(off),
        "mean_candidates": mean([float(len(s.queries)) for s in states]),
        "top1": mean(top1),
        "pairwise": mean(pairwise),
        "top1_on_path": mean(on),
        "top1_off_path": mean(off),
        "wrong_top_types": dict(wrong_top.most_common()),
        "wrong_over": dict(wrong_over.most_common(12)),
    }
