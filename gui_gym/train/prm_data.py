"""GUI-Shepherd PRM data: labelled steps collected from env rollouts, deduplicated, balanced
and split by task (the trainer is :mod:`gui_gym.train.prm`).

GUI-Shepherd builds its PRM data from trajectory rollouts in emulators plus one-step rollouts
from varied states, labels each step correct or not, and keeps the classes balanced (Sec. 3,
Sec. 5, App. A). Here the labels come from the env instead of annotators:

* **positives**: the task's expert action in a state (on the expert's own path and in states
  that random rollouts reach, for temporal diversity), and any action that reaches a new env
  milestone or completes the task;
* **negatives**: perturbations of an expert action (another element, wrong text, wrong
  direction, premature end; :func:`gui_gym.rewards.prm.perturb_action`), each checked on a
  fork so that a perturbation that happens to be right is dropped; and the steps of failed
  random rollouts that the expert disagrees with and that reached no milestone.

Rationales are written from the same facts ("the step due is ..."), for the rationale
variant. :func:`build_prm_dataset` deduplicates, balances and splits by task;
:func:`collect_ranking_states` gives the held-out states a best-of-N verifier is judged on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from gui_gym.core.actions import Action, describe
from gui_gym.core.env import ExpertUnavailable
from gui_gym.core.progress import progress_bar
from gui_gym.core.trajectory import read_jsonl, write_jsonl
from gui_gym.models.prm import RulePRM
from gui_gym.rewards.prm import (
    DedupReport,
    LabelledStep,
    PRMQuery,
    RankingState,
    action_type_of,
    balance_labels,
    deduplicate_steps,
    perturb_action,
    source_counts,
    split_by_task,
)

__all__ = [
    "REPLAY_ENV_ID",
    "PRMDataset",
    "build_prm_dataset",
    "collect_prm_steps",
    "collect_ranking_states",
    "collect_replay_steps",
    "collect_task_steps",
    "read_labelled_steps",
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
    module docstring for the rules). Off the expert's path the expert may have no answer
    (:class:`~gui_gym.core.env.ExpertUnavailable`: ALFWorld's planner at its bound): a random
    rollout's state is then labelled by its milestones and outcome alone, and a noisy rollout
    ends there (its labels need the expert's action).

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
            # an env made with screenshot=True: the state a vision PRM sees
            screenshot=None
            if observation.get("screenshot") is None
            else np.array(observation["screenshot"], dtype=np.uint8),
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
            try:
                expert: Action | None = base.oracle_action()
            except ExpertUnavailable:  # off the path, past the planner's bound
                expert = None
            candidates = base.screen_candidate_actions()
            action = candidates[int(rng.integers(len(candidates)))]
            expert_q = None if expert is None else query(observation, expert, history, step)
            q = query(observation, action, history, step)
            due = "" if expert_q is None else _rationale_due(expert_q.action_description) + " "
            if expert is not None and expert_q is not None and 0 < step <= offpath_positive_steps:
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
            if expert is not None and str(action) == str(expert):
                add(q, 1, "oracle", f"{due}This is it.")
            elif info["success"] or new:
                reached = ", ".join(new) if new else "the goal"
                add(q, 1, "milestone", f"It makes progress: it reaches {reached}.")
            elif info["action_valid"]:
                pending.append((q, f"{due}This action does not help."))
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
            try:
                proposals = _proposals(base)
            except ExpertUnavailable:  # the state's labels need the expert: the rollout ends
                break
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
                try:
                    proposals = _proposals(base)
                except ExpertUnavailable:  # a state without the expert cannot be ranked
                    break
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
    screenshots: bool = False,
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
        screenshots: Give every query its state's recorded screenshot (a vision-language
            PRM's input, GUI-Shepherd's setting); every used episode must have them.

    Raises:
        ValueError: for a negative ``proposals_per_state`` or ``history_length``, or with
            ``screenshots`` for an episode recorded without screenshots.
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
    env = gym.make(
        REPLAY_ENV_ID,
        dataset=dataset,
        matcher=matcher,
        require_think=False,
        screenshot=screenshots,
    ).unwrapped
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(env.dataset))[:max_trajectories]
    out: list[LabelledStep] = []
    for index in progress_bar(order, desc="PRM data (replay)", enabled=progress):
        observation, _ = env.reset(options={"trajectory": int(index)})
        trajectory = env.trajectory
        assert trajectory is not None
        if screenshots and any(s.screenshot is None for s in trajectory.steps):
            # the replay env would draw the tree instead: not the screen the PRM must judge
            raise ValueError(
                f"episode {trajectory.trajectory_id!r} of {dataset} has steps without a "
                "screenshot; a vision-language PRM needs a dataset recorded with --screenshots "
                "(or converted with its screenshots)"
            )
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
                screenshot=np.array(observation["screenshot"], dtype=np.uint8)
                if screenshots
                else None,
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


SCREENSHOTS_DIR = "screenshots"
"""Folder beside a steps file holding its queries' screenshots (PNG, named by content)."""


def _save_screenshot(folder: Path, image: Any) -> str:
    import hashlib

    from PIL import Image

    array = np.ascontiguousarray(np.asarray(image, dtype=np.uint8))
    digest = hashlib.sha256(repr(array.shape).encode() + array.tobytes()).hexdigest()[:32]
    name = f"{SCREENSHOTS_DIR}/{digest}.png"
    target = folder / name
    if not target.exists():  # content-addressed: a screenshot shared by steps is stored once
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".png.partial")
        Image.fromarray(array).save(partial, format="PNG")
        partial.replace(target)
    return name


def write_labelled_steps(path: str | Path, steps: Sequence[LabelledStep]) -> int:
    """Write steps as JSON Lines, atomically; returns the count. A query's screenshot (a
    vision PRM's input) is written once by content under ``screenshots/`` beside the file,
    and the record names it (``"screenshot": "screenshots/<sha>.png"``)."""
    folder = Path(path).parent

    def records() -> Any:
        for s in steps:
            record = s.to_dict()
            if s.query.screenshot is not None:
                record["screenshot"] = _save_screenshot(folder, s.query.screenshot)
            yield record

    return write_jsonl(path, records())


def read_labelled_steps(path: str | Path) -> list[LabelledStep]:
    """Read steps written by :func:`write_labelled_steps`.

    Raises:
        ValueError: naming the file and record of a malformed step.
    """
    from dataclasses import replace

    from PIL import Image, UnidentifiedImageError

    out = []
    folder = Path(path).parent
    for i, record in enumerate(read_jsonl(path)):
        try:
            step = LabelledStep.from_dict(record)
            shot = record.get("screenshot") if isinstance(record, dict) else None
            if shot is not None:
                file = (folder / str(shot)).resolve()
                if folder.resolve() not in file.parents:
                    raise ValueError(f"screenshot path {shot!r} leaves the data folder")
                with Image.open(file) as image:
                    array = np.asarray(image.convert("RGB"), dtype=np.uint8)
                step = replace(step, query=replace(step.query, screenshot=array))
        except (OSError, UnidentifiedImageError) as err:
            raise ValueError(f"{path}: record {i + 1}: unreadable screenshot ({err})") from None
        except (ValueError, TypeError) as err:
            raise ValueError(f"{path}: record {i + 1}: {err}") from None
        out.append(step)
    return out
