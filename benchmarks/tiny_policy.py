"""A tiny learned GUI policy for the SOP study: a linear softmax over candidate actions.

It is trained by imitation on oracle trajectories of the *train* split and acts on the *test*
split without any access to the oracle, so its mistakes are its own (it may loop, stop short,
or wander), unlike the synthetic agents of ``sop_correlation.py``. Skill is graded by how
many expert trajectories it learns from.

Model: each candidate action (the env's ``candidate_actions()`` plus typing the task's whole
vocabulary into a text field) is described by hashed sparse features of its type, its
target's role and label, the label's overlap with the instruction, label-word x
instruction-word crosses, the step number and whether it repeats the previous action. A weight
vector scores the candidates; training minimises the softmax cross-entropy of the expert's
choice with Adam (numpy only). Steps whose expert action is not a candidate (ANSWER, OPEN_APP,
DONE) are skipped in training, so the policy cannot finish QA tasks.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from gui_gym.core.actions import Action, ActionType, candidate_actions
from gui_gym.core.ui import UITree
from gui_gym.envs.replay import ExpertDataset

DIM = 1 << 14
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "of",
        "and",
        "or",
        "in",
        "on",
        "for",
        "how",
        "then",
        "check",
        "access",
        "search",
        "article",
        "learn",
        "my",
        "is",
    ]
)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _hash(key: str) -> int:
    return zlib.crc32(key.encode("utf-8")) % DIM


def candidates(tree: UITree, base: list[Action], vocabulary: Sequence[str]) -> list[Action]:
    """The env's candidates plus typing the whole vocabulary as one query."""
    out = list(base)
    if vocabulary:
        query = " ".join(vocabulary)
        out.extend(Action(ActionType.INPUT, index=e.index, text=query) for e in tree if e.editable)
    return out


def features(
    instruction: str, tree: UITree, action: Action, step: int, previous: str | None
) -> list[int]:
    """Hashed feature indices of one candidate."""
    kind = action.type.value + (f"_{action.direction}" if action.direction else "")
    keys = [f"type={kind}", f"type={kind}|step={min(step, 4)}"]
    if previous is not None and str(action) == previous:
        keys.append(f"repeat|{kind}")
    instr = _words(instruction)
    instr_set = set(instr)
    tail = [w for w in _words(instruction.split(".")[-2] if "." in instruction else instruction)]
    content = [w for w in tail if w not in _STOP][:12]
    element = (
        tree.elements[action.index]
        if action.index is not None and action.index < len(tree)
        else None
    )
    if element is not None:
        label = _words(element.label)[:8]
        keys.append(f"role={element.role}|{kind}")
        if label:
            overlap = sum(w in instr_set for w in label) / len(label)
            keys.append(f"overlap={round(overlap * 4)}|{kind}")
            norm = " ".join(label)
            keys.append(f"verbatim={norm in ' '.join(instr)}|{kind}")
            for w in label[:6]:
                keys.append(f"lab={w}|{kind}")
                for c in content:
                    keys.append(f"x={w}|{c}")
    if action.type is ActionType.INPUT:
        keys.append(f"input_words={min(len(_words(action.text or '')), 4)}")
    if action.type is ActionType.SCROLL:
        keys.append(f"scroll|more={tree.can_scroll_down}|step={min(step, 6)}")
        for c in content:
            keys.append(f"scroll|{c}")
    return [_hash(k) for k in keys]


def _expert_position(expert: Action, options: list[Action]) -> int | None:
    text = str(expert)
    for i, option in enumerate(options):
        if str(option) == text:
            return i
    if expert.type is ActionType.INPUT:  # the whole-vocabulary query stands for the expert's
        for i in range(len(options) - 1, -1, -1):
            o = options[i]
            if o.type is ActionType.INPUT and o.index == expert.index and " " in (o.text or ""):
                return i
    return None


def _base_candidates(tree: UITree, vocabulary: Sequence[str]) -> list[Action]:
    """What ``GuiEnv.candidate_actions`` offers on ``tree`` (recomputed offline)."""
    return candidate_actions(tree, tuple(vocabulary))


def train(
    dataset: ExpertDataset, trajectories: int, epochs: int = 30, lr: float = 0.05, seed: int = 0
) -> np.ndarray:
    """Weights learned from the first ``trajectories`` expert trajectories."""
    examples: list[tuple[list[list[int]], int]] = []
    for t in list(dataset)[:trajectories]:
        previous = None
        for k, step in enumerate(t.steps):
            options = candidates(step.tree, _base_candidates(step.tree, t.vocabulary), t.vocabulary)
            target = _expert_position(step.action, options)
            if target is not None:
                feats = [features(t.instruction, step.tree, o, k, previous) for o in options]
                examples.append((feats, target))
            previous = str(step.action)
    w = np.zeros(DIM)
    m, v = np.zeros(DIM), np.zeros(DIM)
    rng = np.random.default_rng(seed)
    step_no = 0
    for _ in range(epochs):
        for index in rng.permutation(len(examples)):
            feats, target = examples[index]
            scores = np.array([w[f].sum() for f in feats])
            p = np.exp(scores - scores.max())
            p /= p.sum()
            grad = np.zeros(DIM)
            for j, f in enumerate(feats):
                np.add.at(grad, f, p[j] - (j == target))
            step_no += 1
            m = 0.9 * m + 0.1 * grad
            v = 0.999 * v + 0.001 * grad**2
            w -= lr * (m / (1 - 0.9**step_no)) / (np.sqrt(v / (1 - 0.999**step_no)) + 1e-8)
    return w


class TinyPolicyAgent:
    """Acts greedily with learned weights (ties to the first candidate)."""

    name = "tiny-policy"

    def __init__(self, env: Any, weights: np.ndarray):
        self.env = env.unwrapped
        self.w = weights
        self.k = 0
        self.previous: str | None = None

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        self.k = 0
        self.previous = None

    def _vocabulary(self) -> tuple[str, ...]:
        task = getattr(self.env, "task", None)
        if task is not None and hasattr(task, "vocabulary"):
            return tuple(task.vocabulary)
        return tuple(self.env.trajectory.vocabulary)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        tree = self.env.ui_tree
        options = candidates(tree, self.env.candidate_actions(), self._vocabulary())
        instruction = observation["instruction"]
        scores = [
            self.w[features(instruction, tree, o, self.k, self.previous)].sum() for o in options
        ]
        action = options[int(np.argmax(scores))]
        self.k += 1
        self.previous = str(action)
        return action
