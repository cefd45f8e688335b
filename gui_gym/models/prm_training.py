"""GUI-Shepherd PRM data collection and supervised training.

GUI-Shepherd builds its PRM data from trajectory rollouts in emulators plus one-step rollouts
from varied states, labels each step correct or not, keeps the classes balanced, and
fine-tunes a causal LM on the label token (Sec. 3, Sec. 5, App. A). Here the labels come from
the env instead of annotators:

* **positives**: the task's expert action in a state (on the expert's own path and in states
  that random rollouts reach, for temporal diversity), and any action that reaches a new env
  milestone or completes the task;
* **negatives**: perturbations of an expert action (another element, wrong text, wrong
  direction, premature end; :func:`gui_gym.rewards.prm.perturb_action`), each checked on a
  fork so that a perturbation that happens to be right is dropped; and the steps of failed
  random rollouts that the expert disagrees with and that reached no milestone.

Rationales are written from the same facts ("the step due is ..."), for the rationale
variant. :func:`build_prm_dataset` deduplicates, balances and splits by task;
:func:`train_prm` runs the SFT loop (progress bar, periodic safetensors checkpoints with the
optimizer state, resume) and :func:`evaluate_prm` reports accuracy, AUC and F1 per step
position.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from gui_gym.core.actions import Action, describe
from gui_gym.core.progress import progress_bar
from gui_gym.core.trajectory import (
    atomic_write_text,
    check_replaceable_folder,
    errors_naming,
    read_jsonl,
    write_jsonl,
)
from gui_gym.models.prm import RulePRM, TransformersPRM, write_folder_atomically
from gui_gym.rewards.prm import (
    DedupReport,
    LabelledStep,
    PRMQuery,
    RankingState,
    action_type_of,
    balance_labels,
    classification_metrics,
    deduplicate_steps,
    perturb_action,
    ranking_metrics,
    source_counts,
    split_by_task,
)
from gui_gym.train.checkpoint import load_optimizer_state, save_optimizer_state

__all__ = [
    "PRMDataset",
    "PRMTrainConfig",
    "build_prm_dataset",
    "collect_prm_steps",
    "collect_ranking_states",
    "collect_replay_steps",
    "collect_task_steps",
    "evaluate_prm",
    "evaluate_ranking",
    "read_labelled_steps",
    "run_training",
    "train_prm",
    "write_labelled_steps",
]

_POSITIVE_REASONS = ("expert", "milestone", "success")


# ---------------------------------------------------------------------------------------------
# Collection


def _rationale_due(expert: str) -> str:
    return f"The step due here is to {expert}."


_PERTURBATION_RATIONALE = {
    "other_element": "The action acts on the wrong element.",
    "wrong_text": "The text it uses is wrong.",
    "wrong_direction": "It scrolls the wrong way.",
    "premature_end": "It ends the task before the goal is reached.",
    "detour": "It wanders away from the task.",
}


def collect_task_steps(
    env: Any,
    task_id: str,
    *,
    seed: int,
    rng: np.random.Generator,
    random_rollouts: int = 2,
    random_max_steps: int | None = None,
    history_length: int = 4,
    perturbations_per_kind: int = 2,
    offpath_positive_steps: int = 3,
    noisy_rollouts: int = 0,
    noisy_p: float = 0.4,
    proposals_per_state: int = 3,
    env_id: str = "",
) -> list[LabelledStep]:
    """Labelled steps of one task: an expert rollout with perturbed negatives,
    ``random_rollouts`` random rollouts and ``noisy_rollouts`` noisy-expert rollouts (see the
    module docstring for the rules).

    Args:
        env: A gui-gym env (its ``unwrapped`` must have ``oracle_action``,
            ``candidate_actions`` and ``fork``); it is reset for each rollout.
        task_id: The task, passed as ``reset(options={"task": task_id})``.
        seed: Reset seed of the first rollout (later rollouts use ``seed + k``).
        rng: Source of perturbations and random actions.
        random_rollouts: Random-policy rollouts per task.
        random_max_steps: Cut random rollouts after this many steps (default: the env's
            own ``max_steps``).
        history_length: Earlier action descriptions kept in each query.
        perturbations_per_kind: Perturbed negatives of each kind per expert action
            (:func:`gui_gym.rewards.prm.perturb_action`).
        offpath_positive_steps: In random rollouts, label the expert's action (and its
            perturbations) at the states after the first this-many random steps only: near
            the expert's path, the expert's move varies; far from it, it is almost always
            ``GOBACK()``, which would flood the positives with one action.
        noisy_rollouts: Rollouts of a noisy expert (the expert's action with probability
            ``noisy_p``, else a random sensible action, as
            :class:`~gui_gym.agents.sampling.NoisyOraclePolicy` acts). In every state they
            visit, on the expert's path and off it, the expert's action is a positive (off
            the path: the recovery move), other proposable actions that make progress are
            positives too, and up to ``proposals_per_state`` of the wrong proposable actions,
            drawn uniformly, are negatives (source ``proposal``): the data matches what a
            best-of-N verifier ranks at inference. When no proposable action shares the
            expert's action type (``OPEN_APP``, ``ANSWER``, ``DONE``), the expert's action is
            also perturbed there, so that type has negatives in off-path states too.
        noisy_p: Probability of the expert's action in the noisy rollouts.
        proposals_per_state: Wrong proposable actions labelled per state of a noisy rollout.
        env_id: Recorded in each step.

    Returns:
        The steps, unbalanced and possibly with duplicates.
    """
    base = env.unwrapped
    for name in ("oracle_action", "candidate_actions", "fork"):
        if not hasattr(base, name):
            raise TypeError(f"{type(base).__name__} has no {name}(); PRM data needs a gui-gym env")
    rule = RulePRM()
    out: list[LabelledStep] = []

    def query(
        observation: dict[str, Any], action: Action, history: list[str], step: int
    ) -> PRMQuery:
        return PRMQuery(
            instruction=str(observation["instruction"]),
            screen=str(observation["screen"]),
            action=str(action),
            action_description=describe(action, base.ui_tree),
            history=tuple(history[-history_length:]) if history_length else (),
            step=step,
        )

    def add(q: PRMQuery, label: int, source: str, rationale: str) -> None:
        out.append(LabelledStep(q, label, task_id, source, rationale, env_id))

    def add_perturbations(
        observation: dict[str, Any],
        expert: Action,
        expert_q: PRMQuery,
        history: list[str],
        step: int,
    ) -> None:
        bad_ones = perturb_action(
            expert, base.ui_tree, rng, texts=texts, per_kind=perturbations_per_kind
        )
        for kind, bad in bad_ones:
            q = query(observation, bad, history, step)
            _, reason = rule.judge(q, base)
            if reason in _POSITIVE_REASONS:  # the perturbation happens to be right too
                continue
            due = _rationale_due(expert_q.action_description)
            add(q, 0, f"perturb:{kind}", f"{due} {_PERTURBATION_RATIONALE[kind]}")

    # Expert rollout: every expert action is a positive; its perturbations are negatives when
    # the rules confirm they are wrong.
    observation, info = base.reset(seed=seed, options={"task": task_id})
    texts = tuple(getattr(base.task, "vocabulary", ()) or ())
    history: list[str] = []
    step = 0
    done = False
    while not done:
        expert = base.oracle_action()
        expert_q = query(observation, expert, history, step)
        add(expert_q, 1, "oracle", f"{_rationale_due(expert_q.action_description)} This is it.")
        add_perturbations(observation, expert, expert_q, history, step)
        observation, _, terminated, truncated, info = base.step(expert)
        if info["action_valid"]:
            history.append(info["action_description"])
        step += 1
        done = terminated or truncated

    # Random rollouts: milestone-reaching and expert-agreeing steps are positives; in failed
    # rollouts the other accepted steps are negatives; in the first states off the expert's
    # path the expert's action is a positive as well, with its perturbations.
    for k in range(random_rollouts):
        observation, info = base.reset(seed=seed + 1 + k, options={"task": task_id})
        history = []
        pending: list[tuple[PRMQuery, str]] = []
        step = 0
        done = False
        while not done:
            expert = base.oracle_action()
            candidates = base.screen_candidate_actions()
            action = candidates[int(rng.integers(len(candidates)))]
            expert_q = query(observation, expert, history, step)
            q = query(observation, action, history, step)
            if 0 < step <= offpath_positive_steps:
                add(
                    expert_q,
                    1,
                    "oracle",
                    f"{_rationale_due(expert_q.action_description)} This is it.",
                )
                add_perturbations(observation, expert, expert_q, history, step)
            before = set(base.milestones)
            observation, _, terminated, truncated, info = base.step(action)
            new = [m for m in info["milestones"] if m not in before]
            if str(action) == str(expert):
                add(q, 1, "oracle", f"{_rationale_due(expert_q.action_description)} This is it.")
            elif info["success"] or new:
                reached = ", ".join(new) if new else "the goal"
                add(q, 1, "milestone", f"It makes progress: it reaches {reached}.")
            elif info["action_valid"]:
                pending.append(
                    (q, f"{_rationale_due(expert_q.action_description)} This action does not help.")
                )
            if info["action_valid"]:
                history.append(info["action_description"])
            step += 1
            done = (
                terminated
                or truncated
                or (random_max_steps is not None and step >= random_max_steps)
            )
        if not info["success"]:
            for q, rationale in pending:
                add(q, 0, "random_failed", rationale)

    # Noisy-expert rollouts: the states best-of-N meets, with the candidates it ranks there.
    for k in range(noisy_rollouts):
        observation, info = base.reset(
            seed=seed + 1 + random_rollouts + k, options={"task": task_id}
        )
        history = []
        step = 0
        done = False
        while not done:
            proposals = _proposals(base)
            reasons = _judge_all(rule, base, proposals)
            expert_q = query(observation, proposals[0], history, step)
            due = _rationale_due(expert_q.action_description)
            add(expert_q, 1, "oracle", f"{due} This is it.")
            if proposals[0].type not in {a.type for a in proposals[1:]}:
                # nothing proposable shares the expert's action type (OPEN_APP, ANSWER,
                # DONE, ...): perturbations give that type its negatives in this state
                add_perturbations(observation, proposals[0], expert_q, history, step)
            wrong = []
            for action, reason in zip(proposals[1:], reasons[1:]):
                if reason in _POSITIVE_REASONS:
                    add(
                        query(observation, action, history, step),
                        1,
                        "milestone",
                        f"It makes progress: {reason}.",
                    )
                else:
                    wrong.append(action)
            for action in _pick_actions(wrong, proposals_per_state, rng):
                add(query(observation, action, history, step), 0, "proposal", f"{due} Not this.")
            action = _noisy_choice(rng, noisy_p, base)
            observation, _, terminated, truncated, info = base.step(action)
            if info["action_valid"]:
                history.append(info["action_description"])
            step += 1
            done = terminated or truncated
    return out


def _pick_actions(actions: Sequence[Action], k: int, rng: np.random.Generator) -> list[Action]:
    """Up to ``k`` of ``actions``, uniformly without replacement."""
    if not actions or k < 1:
        return []
    chosen = rng.choice(len(actions), size=min(k, len(actions)), replace=False)
    return [actions[int(i)] for i in chosen]


def _proposals(base: Any) -> list[Action]:
    """The expert's action first, then the distinct other actions a noisy expert can propose
    (``candidate_actions()``): the candidates a best-of-N verifier sees in this state."""
    expert = base.oracle_action()
    out = [expert]
    seen = {str(expert)}
    for action in base.screen_candidate_actions():
        if str(action) not in seen:
            seen.add(str(action))
            out.append(action)
    return out


def _judge_all(rule: RulePRM, base: Any, actions: Sequence[Action]) -> list[str]:
    """RulePRM's reason for each action in the current state (``expert``, ``milestone``,
    ``success`` are correct)."""
    probe = PRMQuery(instruction="", screen="", action="")
    return [rule.judge(replace(probe, action=str(a)), base)[1] for a in actions]


def _noisy_choice(rng: np.random.Generator, p: float, base: Any) -> Action:
    """What ``NoisyOraclePolicy(p)`` acts with: the expert's action with probability ``p``,
    else one of ``candidate_actions()`` uniformly (which may be the expert's too)."""
    if rng.random() < p:
        return base.oracle_action()
    candidates = base.screen_candidate_actions()
    return candidates[int(rng.integers(len(candidates)))]


def collect_ranking_states(
    env_id: str,
    *,
    split: str = "test",
    tasks: Sequence[str] | None = None,
    max_tasks: int | None = None,
    episodes_per_task: int = 1,
    p: float = 0.4,
    max_steps: int = 15,
    history_length: int = 4,
    max_candidates: int | None = None,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    progress: bool = False,
) -> list[RankingState]:
    """States a noisy expert visits, each with every candidate a best-of-N verifier could be
    asked to rank: the expert's action plus the distinct actions
    :class:`~gui_gym.agents.sampling.NoisyOraclePolicy` proposes there (the env's
    ``candidate_actions()``). Correctness is :class:`~gui_gym.models.prm.RulePRM`'s (the
    expert's action, or one that reaches a new milestone or completes the task).

    The noisy expert (expert with probability ``p``) acts alone, so the episodes leave the
    expert's path and the states include the ones where recovering is due
    (``RankingState.on_path`` tells them apart). Feed the states to a PRM and
    :func:`gui_gym.rewards.prm.ranking_metrics`.

    Args:
        env_id: A registered gui-gym id.
        split: The env's split.
        tasks: Task ids (default: the split's).
        max_tasks: Only the first ``max_tasks`` tasks of a seeded shuffle.
        episodes_per_task: Noisy episodes per task.
        p: Probability of the expert's action in the acting policy.
        max_steps: Step budget of an episode.
        history_length: Earlier action descriptions kept in each query.
        max_candidates: Keep at most this many candidates per state: every correct one, then
            wrong ones at random (None keeps all).
        seed: Seeds the task order, resets and the policy.
        env_kwargs: More ``gym.make`` arguments.
        progress: Show a progress bar.
    """
    import gymnasium as gym

    import gui_gym  # noqa: F401  (registers the ids)

    rule = RulePRM()
    rng = np.random.default_rng(seed)
    env = gym.make(env_id, split=split, max_steps=max_steps, **(env_kwargs or {}))
    states: list[RankingState] = []
    try:
        base = env.unwrapped
        chosen = _task_order(base, tasks, max_tasks, rng)
        runs = [(t, e) for t in chosen for e in range(episodes_per_task)]
        for k, (task_id, episode) in enumerate(
            progress_bar(runs, desc=f"ranking states {env_id}", enabled=progress)
        ):
            observation, info = base.reset(
                seed=seed * 100_003 + k * 101 + episode, options={"task": task_id}
            )
            history: list[str] = []
            on_path = True
            step = 0
            done = False
            while not done:
                proposals = _proposals(base)
                reasons = _judge_all(rule, base, proposals)
                correct = [r in _POSITIVE_REASONS for r in reasons]
                keep = list(range(len(proposals)))
                if max_candidates is not None and len(keep) > max_candidates:
                    good = [i for i in keep if correct[i]]
                    bad = [i for i in keep if not correct[i]]
                    room = max(max_candidates - len(good), 0)
                    picked = rng.choice(len(bad), size=min(room, len(bad)), replace=False)
                    keep = sorted(good + [bad[int(i)] for i in picked])
                recent = tuple(history[-history_length:]) if history_length else ()
                queries = tuple(
                    PRMQuery(
                        instruction=str(observation["instruction"]),
                        screen=str(observation["screen"]),
                        action=str(proposals[i]),
                        action_description=describe(proposals[i], base.ui_tree),
                        history=recent,
                        step=step,
                    )
                    for i in keep
                )
                states.append(
                    RankingState(
                        queries=queries,
                        correct=tuple(correct[i] for i in keep),
                        task_id=task_id,
                        env_id=env_id,
                        on_path=on_path,
                    )
                )
                action = _noisy_choice(rng, p, base)
                index = [str(a) for a in proposals].index(str(action))
                on_path = on_path and correct[index]
                observation, _, terminated, truncated, info = base.step(action)
                if info["action_valid"]:
                    history.append(info["action_description"])
                step += 1
                done = terminated or truncated
    finally:
        env.close()
    return states


def _task_order(
    base: Any, tasks: Sequence[str] | None, max_tasks: int | None, rng: np.random.Generator
) -> list[str]:
    if tasks is None:
        pool = getattr(base, "_pool", None) or []
        tasks = [t.task_id for t in pool]
    tasks = list(tasks)
    order = rng.permutation(len(tasks))
    return [tasks[i] for i in order[: max_tasks if max_tasks is not None else len(tasks)]]


REPLAY_ENV_ID = "GuiGym/SemiOnlineReplay-v0"


def collect_replay_steps(
    dataset: Any,
    *,
    proposals_per_state: int = 3,
    history_length: int = 4,
    matcher: str = "strict",
    max_trajectories: int | None = None,
    seed: int = 0,
    env_id: str = REPLAY_ENV_ID,
    progress: bool = False,
) -> list[LabelledStep]:
    """GUI-Shepherd's second data source (Sec. 3, "Training Data Preparation"): single-step
    states of recorded expert episodes (AndroidControl in the paper; any dataset from
    ``gui-gym convert`` or ``gui-gym record`` here), each with one-step rollouts.

    Every expert state of every successful episode gives one positive, the expert's action,
    and up to ``proposals_per_state`` negatives: actions proposable on that screen
    (``candidate_actions``) that the replay env's ``matcher`` says do not match the expert's.
    The history of each query is the expert's earlier action descriptions, as an agent that
    followed the expert would have.

    Args:
        dataset: A dataset folder or an :class:`~gui_gym.envs.replay.ExpertDataset`.
        proposals_per_state: Negatives per state (fewer when the screen offers fewer).
        history_length: Earlier action descriptions kept in each query.
        matcher: How a proposal is compared with the expert's action (``"strict"``: UI-S1's
            thresholds; ``"loose"``; see :mod:`gui_gym.rewards.action_match`).
        max_trajectories: Use only the first ``max_trajectories`` episodes of a seeded shuffle.
        seed: Seeds the episode order and the choice of negatives.
        env_id: Recorded as each step's ``env_id``.
        progress: Show a progress bar over episodes.

    Raises:
        ValueError: for a negative ``proposals_per_state`` or ``history_length``.
        gui_gym.envs.replay.DatasetError: for a dataset that does not load.
    """
    import gymnasium as gym

    import gui_gym  # noqa: F401  (registers the ids)

    if proposals_per_state < 0 or history_length < 0:
        raise ValueError(
            "proposals_per_state and history_length must be >= 0, got "
            f"{proposals_per_state!r} and {history_length!r}"
        )
    # Every state is the expert's: the env only walks the recorded episode and judges.
    env = gym.make(REPLAY_ENV_ID, dataset=dataset, matcher=matcher, require_think=False).unwrapped
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(env.dataset))[:max_trajectories]
    out: list[LabelledStep] = []
    for index in progress_bar(order, desc="PRM data (replay)", enabled=progress):
        observation, _ = env.reset(options={"trajectory": int(index)})
        trajectory = env.trajectory
        assert trajectory is not None
        history: list[str] = []
        for step in range(len(trajectory.steps)):
            expert = env.oracle_action()
            tree = env.ui_tree
            due = _rationale_due(describe(expert, tree))

            positive = PRMQuery(
                instruction=trajectory.instruction,
                screen=str(observation["screen"]),
                action=str(expert),
                action_description=describe(expert, tree),
                history=tuple(history[-history_length:]) if history_length else (),
                step=step,
            )
            out.append(
                LabelledStep(
                    positive, 1, trajectory.task_id, "oracle", f"{due} This is it.", env_id
                )
            )
            wrong = [a for a in env.candidate_actions() if not env.matcher(a, expert, tree).exact]
            for k in rng.permutation(len(wrong))[:proposals_per_state]:
                action = wrong[int(k)]
                negative = replace(
                    positive, action=str(action), action_description=describe(action, tree)
                )
                out.append(
                    LabelledStep(
                        negative,
                        0,
                        trajectory.task_id,
                        "proposal",
                        f"{due} This action does not help.",
                        env_id,
                    )
                )
            history.append(positive.action_description)
            observation, _, terminated, truncated, _ = env.step(str(expert))
            if terminated or truncated:
                break
    env.close()
    return out


def collect_prm_steps(
    env_id: str,
    *,
    split: str = "train",
    tasks: Sequence[str] | None = None,
    max_tasks: int | None = None,
    random_rollouts: int = 2,
    max_steps: int = 15,
    history_length: int = 4,
    perturbations_per_kind: int = 2,
    noisy_rollouts: int = 0,
    noisy_p: float = 0.4,
    proposals_per_state: int = 3,
    seed: int = 0,
    env_kwargs: dict[str, Any] | None = None,
    progress: bool = False,
    dataset: Any = None,
) -> list[LabelledStep]:
    """Labelled steps for the tasks of one env and split (see :func:`collect_task_steps`).

    For ``GuiGym/SemiOnlineReplay-v0`` the steps come from the recorded episodes of
    ``dataset`` instead (:func:`collect_replay_steps`, GUI-Shepherd's single-step states with
    one-step rollouts); ``split``, ``tasks`` and the rollout arguments do not apply there.

    Args:
        env_id: A registered gui-gym id (``GuiGym/WikiHow-v0``).
        split: The env's split.
        tasks: Task ids to use (default: the split's tasks; for template suites such as
            AndroidWorld, every template with the split's parameter stream).
        max_tasks: Use only the first ``max_tasks`` tasks of a seeded shuffle.
        random_rollouts: Random rollouts per task.
        max_steps: Step budget of every rollout (GUI-Shepherd caps trajectories at 15).
        history_length: Earlier actions kept in each query.
        perturbations_per_kind: Perturbed negatives of each kind per expert action.
        noisy_rollouts: Noisy-expert rollouts per task (their states carry the proposable
            actions as negatives; the data best-of-N verification needs).
        noisy_p: Probability of the expert's action in a noisy rollout.
        proposals_per_state: Wrong proposable actions labelled per noisy-rollout state.
        seed: Seeds task order, resets and random actions.
        env_kwargs: More ``gym.make`` arguments.
        progress: Show a progress bar over tasks.
        dataset: The expert dataset, for ``GuiGym/SemiOnlineReplay-v0`` only.

    Raises:
        ValueError: for a replay id without ``dataset``, or ``dataset`` with another id.
    """
    import gymnasium as gym

    import gui_gym  # noqa: F401  (registers the ids)

    if env_id == REPLAY_ENV_ID:
        if dataset is None:
            dataset = (env_kwargs or {}).get("dataset")
        if dataset is None:
            raise ValueError(
                f"{env_id} replays recorded episodes: pass dataset=DIR (gui-gym convert or "
                "gui-gym record output)"
            )
        return collect_replay_steps(
            dataset,
            proposals_per_state=proposals_per_state,
            history_length=history_length,
            max_trajectories=max_tasks,
            seed=seed,
            env_id=env_id,
            progress=progress,
        )
    if dataset is not None:
        raise ValueError(f"dataset= is for {REPLAY_ENV_ID}; {env_id} makes its own episodes")
    env = gym.make(env_id, split=split, max_steps=max_steps, **(env_kwargs or {}))
    try:
        base = env.unwrapped
        if tasks is None:
            pool = getattr(base, "_pool", None) or []
            tasks = [t.task_id for t in pool]
        tasks = list(tasks)
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(tasks))
        chosen = [tasks[i] for i in order[: max_tasks if max_tasks is not None else len(tasks)]]
        steps: list[LabelledStep] = []
        for k, task_id in enumerate(
            progress_bar(chosen, desc=f"PRM data {env_id}", enabled=progress)
        ):
            steps.extend(
                collect_task_steps(
                    env,
                    task_id,
                    seed=seed * 100_003 + k * 101,
                    rng=rng,
                    random_rollouts=random_rollouts,
                    history_length=history_length,
                    perturbations_per_kind=perturbations_per_kind,
                    noisy_rollouts=noisy_rollouts,
                    noisy_p=noisy_p,
                    proposals_per_state=proposals_per_state,
                    env_id=env_id,
                )
            )
    finally:
        env.close()
    return steps


@dataclass
class PRMDataset:
    """A balanced, deduplicated PRM dataset split by task."""

    train: list[LabelledStep]
    eval: list[LabelledStep]
    report: dict[str, Any] = field(default_factory=dict)


def build_prm_dataset(
    steps: Sequence[LabelledStep],
    *,
    eval_fraction: float = 0.2,
    seed: int = 0,
    balance_by: str | None = "action_type",
    pair_leftovers: bool = False,
) -> PRMDataset:
    """Deduplicate, split by task, then balance each side (GUI-Shepherd keeps a balanced
    positive:negative ratio, Sec. 5).

    Args:
        steps: Collected steps.
        eval_fraction: Share of tasks held out.
        seed: Seeds the split and the balancing.
        balance_by: ``"action_type"`` balances within each action type first (see
            :func:`gui_gym.rewards.prm.balance_labels`); None balances the totals only.
        pair_leftovers: After balancing each action type, also pair the leftovers across
            types (more data, but the type then says something about the label). Off by
            default: each type is exactly balanced, so the PRM must judge the step, not its
            type.

    Returns:
        The dataset; ``report`` gives counts before/after and per source.
    """
    kept, dedup = deduplicate_steps(steps)
    train, held = split_by_task(kept, eval_fraction, seed)
    if balance_by not in ("action_type", None):
        raise ValueError(f"balance_by must be 'action_type' or None, got {balance_by!r}")
    group = action_type_of if balance_by == "action_type" else None
    rng = np.random.default_rng(seed)
    train = balance_labels(train, rng, group, pair_leftovers)
    held = balance_labels(held, rng, group, pair_leftovers)
    report = {
        "collected": len(steps),
        "dedup": asdict(dedup) if isinstance(dedup, DedupReport) else dedup,
        "train": len(train),
        "eval": len(held),
        "train_tasks": len({(s.env_id, s.task_id) for s in train}),
        "eval_tasks": len({(s.env_id, s.task_id) for s in held}),
        "train_sources": source_counts(train),
        "eval_sources": source_counts(held),
    }
    return PRMDataset(train=train, eval=held, report=report)


def write_labelled_steps(path: str | Path, steps: Sequence[LabelledStep]) -> int:
    """Write steps as JSON Lines, atomically; returns the count."""
    return write_jsonl(path, (s.to_dict() for s in steps))


def read_labelled_steps(path: str | Path) -> list[LabelledStep]:
    """Read steps written by :func:`write_labelled_steps`.

    Raises:
        ValueError: naming the file and record of a malformed step.
    """
    out = []
    for i, record in enumerate(read_jsonl(path)):
        try:
            out.append(LabelledStep.from_dict(record))
        except (ValueError, TypeError) as err:
            raise ValueError(f"{path}: record {i + 1}: {err}") from None
    return out


# ---------------------------------------------------------------------------------------------
# Training


@dataclass
class PRMTrainConfig:
    """Settings of :func:`train_prm`.

    Attributes:
        epochs: Passes over the training steps (the paper trains 2 epochs, App. A.3).
        batch_size: Steps per optimizer update (the paper's global batch of 32, App. A.3).
        lr: AdamW learning rate (constant, as in App. A.3).
        weight_decay: AdamW weight decay.
        rationale_weight: Weight of the next-token loss on rationale tokens (rationale PRMs).
            1.0 is the paper's: its CoT variant is plain SFT on rationale-then-label, the
            label and the rationale counted alike (Sec. 3); smaller values are ours.
        prompt_lm_weight: Weight of a next-token loss on the prompt tokens. 0 for a pretrained
            model; a tiny model trained from scratch needs it to learn to read the prompt at
            all (it stands in for the pretraining GUI-Shepherd's UI-TARS base brings).
        max_grad_norm: Gradient clipping (0 disables it).
        checkpoint_every: Save a resumable checkpoint every this many updates (0: only at the
            end of each epoch).
        eval_batch_size: Queries per forward pass when evaluating.
        keep_best: After each epoch, validate and keep the weights of the best epoch so far;
            the returned PRM is that epoch's (``"auc"`` or ``"accuracy"`` on the eval steps,
            or whatever ``train_prm(select=...)`` measures). None (the paper's: it trains 2
            epochs and uses the result) keeps the last epoch. Ours, as an option: a tiny
            model trained from scratch overfits within a few epochs, so the last epoch is
            often not the best one.
        lr_schedule: ``"constant"`` (the paper's, App. A.3) or ``"linear"`` (decays linearly
            to zero over all updates; a from-scratch model settles better with it).
        seed: Seeds the data order.
    """

    epochs: int = 2
    batch_size: int = 32  # GUI-Shepherd App. A.3: global batch size 32
    lr: float = 5e-4
    weight_decay: float = 0.0
    rationale_weight: float = 1.0  # GUI-Shepherd Sec. 3: SFT on the rationale and the label
    prompt_lm_weight: float = 0.0
    max_grad_norm: float = 1.0
    checkpoint_every: int = 200
    eval_batch_size: int = 32
    keep_best: str | None = None  # GUI-Shepherd App. A.3: the model after 2 epochs
    lr_schedule: str = "constant"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1 or self.eval_batch_size < 1:
            raise ValueError("epochs, batch_size and eval_batch_size must be >= 1")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr!r}")
        if self.checkpoint_every < 0:
            raise ValueError(f"checkpoint_every must be >= 0, got {self.checkpoint_every}")
        if self.lr_schedule not in ("constant", "linear"):
            raise ValueError(
                f"lr_schedule must be 'constant' or 'linear', got {self.lr_schedule!r}"
            )
        if self.keep_best not in ("auc", "accuracy", None):
            raise ValueError(f"keep_best must be 'auc', 'accuracy' or None, got {self.keep_best!r}")


def evaluate_prm(
    prm: Any, steps: Sequence[LabelledStep], threshold: float = 0.5, batch_size: int = 256
) -> dict[str, Any]:
    """Score ``steps`` with a text PRM and report accuracy, AUC and F1, overall and per step
    position (:func:`gui_gym.rewards.prm.classification_metrics`)."""
    if not steps:
        return {"n": 0}
    scores = np.concatenate(
        [
            prm.score([s.query for s in steps[i : i + batch_size]])
            for i in range(0, len(steps), batch_size)
        ]
    )
    return classification_metrics(
        [s.label for s in steps], scores, [s.query.step for s in steps], threshold
    )


def evaluate_ranking(
    prm: Any, states: Sequence[RankingState], batch_size: int = 256
) -> dict[str, Any]:
    """Score every candidate of every state with a text PRM and report
    :func:`gui_gym.rewards.prm.ranking_metrics` (per-state top-1 and pairwise ranking)."""
    if not states:
        return {"n_states": 0}
    flat = [q for state in states for q in state.queries]
    scores = np.concatenate(
        [prm.score(flat[i : i + batch_size]) for i in range(0, len(flat), batch_size)]
    )
    per_state = []
    start = 0
    for state in states:
        per_state.append(scores[start : start + len(state.queries)])
        start += len(state.queries)
    return ranking_metrics(states, per_state)


def _save_checkpoint(
    prm: TransformersPRM,
    optimizer: Any,
    state: dict[str, Any],
    path: Path,
    best: dict[str, Any] | None = None,
) -> None:
    import torch
    from safetensors.torch import save_file, save_model

    def write(folder: Path) -> None:
        save_model(prm.model, str(folder / "weights.safetensors"))
        if best is not None:
            save_file(best, str(folder / "best.safetensors"))
        save_optimizer_state(optimizer, folder)
        save_file({"cpu": torch.get_rng_state()}, str(folder / "rng.safetensors"))
        (folder / "trainer_state.json").write_text(json.dumps(state, indent=2) + "\n")

    check_replaceable_folder(path, "trainer_state.json", "PRM training checkpoint")
    write_folder_atomically(path, write)


def _load_best(path: Path) -> dict[str, Any] | None:
    from safetensors.torch import load_file

    file = path / "best.safetensors"
    if not file.exists():
        return None
    with errors_naming(file):
        return load_file(str(file))


def _load_checkpoint(prm: TransformersPRM, optimizer: Any, path: Path) -> dict[str, Any]:
    import torch
    from safetensors.torch import load_file, load_model

    with errors_naming(path / "weights.safetensors"):
        missing, unexpected = load_model(prm.model, str(path / "weights.safetensors"), strict=False)
    if unexpected or missing:
        raise ValueError(
            f"checkpoint {path} does not fit this model (missing {sorted(missing)[:5]}, "
            f"unexpected {sorted(unexpected)[:5]}); train with --no-resume or another --out"
        )
    load_optimizer_state(optimizer, path)
    with errors_naming(path / "rng.safetensors"):
        torch.set_rng_state(load_file(str(path / "rng.safetensors"))["cpu"])
    with errors_naming(path / "trainer_state.json"):
        return json.loads((path / "trainer_state.json").read_text())


def train_prm(
    prm: TransformersPRM,
    train: Sequence[LabelledStep],
    eval_steps: Sequence[LabelledStep] = (),
    *,
    config: PRMTrainConfig | None = None,
    out_dir: str | Path | None = None,
    resume: bool = True,
    progress: bool = True,
    max_updates: int | None = None,
    on_epoch: Callable[[int, dict[str, Any]], None] | None = None,
    select: Callable[[TransformersPRM], float] | None = None,
) -> dict[str, Any]:
    """Supervised fine-tuning of ``prm`` on labelled steps (GUI-Shepherd Eq. 2).

    Each update: a batch of steps, cross-entropy over the two label tokens at the label
    position, plus ``rationale_weight`` times the next-token loss on the rationale when the
    PRM uses rationales; AdamW at a constant learning rate. After each epoch the eval steps
    are scored (accuracy, AUC, F1 per step position). With ``config.keep_best`` the weights
    of the epoch with the best validation figure are kept and restored at the end (the
    report's ``best_epoch``); ``select``, when given, is that figure (higher is better), e.g.
    per-state ranking accuracy on held-out states
    (:func:`evaluate_ranking`), which tracks best-of-N better than step accuracy does.

    With ``out_dir``: a checkpoint (weights, AdamW state, RNG state, position in the data
    order; all safetensors/JSON) is written atomically to ``out_dir/checkpoint`` every
    ``checkpoint_every`` updates and at each epoch end, and with ``resume=True`` a rerun
    continues from it, reproducing the uninterrupted run. The final PRM is saved to
    ``out_dir/model`` and the report to ``out_dir/metrics.json``.

    Args:
        prm: The PRM to train (its model is updated in place).
        train: Training steps.
        eval_steps: Held-out steps (other tasks).
        config: Hyperparameters.
        out_dir: Where checkpoints, the final model and metrics go (None: keep in memory).
        resume: Continue from ``out_dir/checkpoint`` when it exists.
        progress: Show a tqdm progress bar.
        max_updates: Stop after this many updates in total (for tests and interrupted runs;
            the checkpoint is written first).
        on_epoch: Called with ``(epoch, eval_metrics)`` after each epoch.
        select: Validation figure of the model after an epoch, higher is better (default:
            ``config.keep_best`` of the eval steps).

    Returns:
        ``{"updates", "epochs", "train_loss", "train_accuracy", "eval", "history",
        "best_epoch", "selection", "seconds"}``; ``eval`` is of the returned (best) model.

    Raises:
        ValueError: for an empty training set.
    """
    import torch

    config = config or PRMTrainConfig()
    if not train:
        raise ValueError("no training steps")
    train = list(train)
    out = Path(out_dir) if out_dir is not None else None
    checkpoint = out / "checkpoint" if out is not None else None
    model = prm.model
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.lr, weight_decay=config.weight_decay
    )
    per_epoch = math.ceil(len(train) / config.batch_size)
    state: dict[str, Any] = {"epoch": 0, "batch": 0, "updates": 0, "history": [], "seconds": 0.0}
    if checkpoint is not None and resume and (checkpoint / "trainer_state.json").exists():
        state = _load_checkpoint(prm, optimizer, checkpoint)
        if state.get("n_train") != len(train) or state.get("per_epoch") != per_epoch:
            raise ValueError(
                f"checkpoint {checkpoint} was made with {state.get('n_train')} training steps, "
                f"this run has {len(train)}; resume with the same data or pass resume=False"
            )
    best = _load_best(checkpoint) if checkpoint is not None and state["updates"] else None
    keep_best = config.keep_best is not None and (select is not None or bool(eval_steps))
    selection = (
        None if not keep_best else ("select" if select is not None else f"eval_{config.keep_best}")
    )
    state["n_train"] = len(train)
    state["per_epoch"] = per_epoch
    total = config.epochs * per_epoch
    started = time.perf_counter() - float(state.get("seconds", 0.0))
    window_loss: list[float] = []
    window_correct: list[float] = []
    bar = progress_bar(total=total, initial=state["updates"], desc="train PRM", enabled=progress)

    def save() -> None:
        if checkpoint is not None:
            state["seconds"] = time.perf_counter() - started
            _save_checkpoint(prm, optimizer, state, checkpoint, best)

    stopped = False
    try:
        for epoch in range(state["epoch"], config.epochs):
            order = np.random.default_rng(config.seed * 7919 + epoch).permutation(len(train))
            model.train()
            for b in range(state["batch"], per_epoch):
                if max_updates is not None and state["updates"] >= max_updates:
                    stopped = True
                    break
                batch_steps = [
                    train[i] for i in order[b * config.batch_size : (b + 1) * config.batch_size]
                ]
                if config.lr_schedule == "linear":
                    # from the update count alone, so a resumed run gets the same rates
                    for group in optimizer.param_groups:
                        group["lr"] = config.lr * (1.0 - state["updates"] / total)
                batch = prm.training_batch(batch_steps, prompt_loss=config.prompt_lm_weight > 0)
                loss, pair = prm.loss(batch, config.rationale_weight, config.prompt_lm_weight)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                if config.max_grad_norm:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
                optimizer.step()
                value = float(loss.detach())
                if not math.isfinite(value):
                    raise FloatingPointError(
                        f"training loss became {value} at update {state['updates']}"
                    )
                correct = (pair.argmax(-1) == batch["labels"]).float().mean().item()
                window_loss = [*window_loss, value][-50:]
                window_correct = [*window_correct, correct][-50:]
                state["updates"] += 1
                state["batch"] = b + 1
                bar.update(1)
                bar.set_postfix(
                    loss=f"{np.mean(window_loss):.3f}", acc=f"{np.mean(window_correct):.2f}"
                )
                if config.checkpoint_every and state["updates"] % config.checkpoint_every == 0:
                    save()
            if stopped:
                break
            model.eval()
            metrics = (
                evaluate_prm(prm, eval_steps, batch_size=config.eval_batch_size)
                if eval_steps
                else {}
            )
            row = {
                "epoch": epoch + 1,
                "updates": state["updates"],
                "train_loss": float(np.mean(window_loss)) if window_loss else None,
                "eval_accuracy": metrics.get("accuracy"),
                "eval_auc": metrics.get("auc"),
            }
            if keep_best:
                value = float(select(prm) if select is not None else metrics[config.keep_best])
                row["selection"] = value
                previous = state.get("best_value")
                if previous is None or (math.isfinite(value) and value > previous):
                    state["best_value"], state["best_epoch"] = value, epoch + 1
                    best = {k: v.detach().clone() for k, v in model.state_dict().items()}
            state["history"].append(row)
            state["epoch"] = epoch + 1
            state["batch"] = 0
            save()
            if on_epoch is not None:
                on_epoch(epoch + 1, metrics)
        if stopped:
            save()
    finally:
        bar.close()
        model.eval()
    if best is not None and not stopped:
        model.load_state_dict(best)
    final = (
        evaluate_prm(prm, eval_steps, batch_size=config.eval_batch_size)
        if eval_steps and not stopped
        else {}
    )
    report = {
        "updates": state["updates"],
        "epochs": state["epoch"],
        "finished": not stopped,
        "train_loss": float(np.mean(window_loss)) if window_loss else None,
        "train_accuracy": float(np.mean(window_correct)) if window_correct else None,
        "eval": final,
        "history": state["history"],
        "best_epoch": state.get("best_epoch") if best is not None else None,
        "selection": selection,
        "seconds": time.perf_counter() - started,
        "config": asdict(config),
    }
    if out is not None and not stopped:
        prm.save(out / "model")
        atomic_write_text(out / "metrics.json", json.dumps(_json_safe(report), indent=2) + "\n")
    return report


def _json_safe(value: Any) -> Any:
    """NaN (AUC of a one-class group) becomes null so the file is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def run_training(
    out: str | Path,
    *,
    env_ids: Sequence[str] = ("GuiGym/WikiHow-v0",),
    data: str | Path | None = None,
    replay_datasets: Sequence[str | Path] = (),
    max_tasks: int | None = None,
    random_rollouts: int = 2,
    noisy_rollouts: int = 0,
    noisy_p: float = 0.4,
    proposals_per_state: int = 3,
    pair_leftovers: bool = False,
    eval_fraction: float = 0.2,
    model: str | Path | None = None,
    positive_token: str = " True",
    negative_token: str = " False",
    rationale: bool = False,
    vocab_size: int = 1024,
    n_layer: int = 2,
    n_embd: int = 64,
    max_length: int = 768,
    device: str | None = None,
    config: PRMTrainConfig | None = None,
    resume: bool = True,
    progress: bool = True,
) -> dict[str, Any]:
    """The whole ``gui-gym train-prm`` pipeline in one run folder.

    1. Data: ``out/data/{train,eval}.jsonl`` are reused when they exist and ``resume`` is
       set; otherwise steps are read from ``data`` or collected from each env's train split
       (:func:`collect_prm_steps`) and from each recorded expert dataset in
       ``replay_datasets`` (:func:`collect_replay_steps`: GUI-Shepherd's single-step states
       with one-step rollouts), then deduplicated, split by task and balanced.
    2. Model: a local causal LM folder (``model``, safetensors), or a tiny GPT-2 with a BPE
       tokenizer trained on the prompts, saved once to ``out/init`` so a resumed run uses
       the same tokenizer.
    3. :func:`train_prm` with checkpoints in ``out/checkpoint``; the PRM goes to
       ``out/model`` and the report (with the data counts) to ``out/metrics.json``.

    Returns:
        The training report with a ``data`` entry.
    """
    config = config or PRMTrainConfig()
    out = Path(out)
    train_file, eval_file = out / "data" / "train.jsonl", out / "data" / "eval.jsonl"
    if resume and train_file.exists() and eval_file.exists():
        train, held = read_labelled_steps(train_file), read_labelled_steps(eval_file)
        data_report: dict[str, Any] = {"reused": True}
    else:
        if data is not None:
            steps = read_labelled_steps(data)
        else:
            steps = []
            for env_id in env_ids:
                steps.extend(
                    collect_prm_steps(
                        env_id,
                        split="train",
                        max_tasks=max_tasks,
                        random_rollouts=random_rollouts,
                        noisy_rollouts=noisy_rollouts,
                        noisy_p=noisy_p,
                        proposals_per_state=proposals_per_state,
                        seed=config.seed,
                        progress=progress,
                    )
                )
            for folder in replay_datasets:
                steps.extend(
                    collect_replay_steps(
                        folder,
                        proposals_per_state=proposals_per_state,
                        max_trajectories=max_tasks,
                        seed=config.seed,
                        progress=progress,
                    )
                )
        dataset = build_prm_dataset(
            steps, eval_fraction=eval_fraction, seed=config.seed, pair_leftovers=pair_leftovers
        )
        train, held = dataset.train, dataset.eval
        write_labelled_steps(train_file, train)
        write_labelled_steps(eval_file, held)
        data_report = dataset.report
    data_report.update(
        train=len(train),
        eval=len(held),
        train_sources=source_counts(train),
        eval_sources=source_counts(held),
    )
    settings = {
        "positive_token": positive_token,
        "negative_token": negative_token,
        "rationale": rationale,
        "max_length": max_length,
    }
    init = out / "init"
    if model is not None:
        prm = TransformersPRM.load(model, device=device, **settings)
    elif resume and init.exists():
        prm = TransformersPRM.load(init, device=device)
    else:
        template_prm_texts = _tokenizer_corpus(train, positive_token, negative_token, rationale)
        prm = TransformersPRM.tiny(
            template_prm_texts,
            vocab_size=vocab_size,
            n_layer=n_layer,
            n_embd=n_embd,
            n_head=max(1, n_embd // 32),
            n_positions=max_length,
            seed=config.seed,
            device=device,
            **settings,
        )
        prm.save(init)
    report = train_prm(
        prm, train, held, config=config, out_dir=out, resume=resume, progress=progress
    )
    report["data"] = data_report
    if report["finished"]:
        atomic_write_text(out / "metrics.json", json.dumps(_json_safe(report), indent=2) + "\n")
    return report


def _tokenizer_corpus(
    steps: Sequence[LabelledStep], positive: str, negative: str, rationale: bool, limit: int = 3000
) -> list[str]:
    """Texts a tiny tokenizer is trained on: rendered prompts (and rationales) of the first
    ``limit`` training steps."""
    from gui_gym.rewards.prm import PromptTemplate

    template = PromptTemplate()
    texts = []
    for s in steps[:limit]:
        texts.append(template.render(s.query, positive, negative, rationale))
        if rationale and s.rationale:
            texts.append(s.rationale + template.verdict_suffix())
    return texts
