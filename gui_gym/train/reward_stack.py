"""Rewards are chosen, not coded: ``--reward outcome+0.3*milestone`` stacks the existing
wrappers on the env the trainer makes, and trainers read what the stack reported.

* :func:`parse_reward` reads a reward expression: terms from :data:`REWARD_TERMS` joined by
  ``+``, each with an optional ``WEIGHT*`` (``outcome``, ``outcome+progress``,
  ``outcome+0.3*milestone+0.5*prm``). Which term carries the task outcome depends on the
  algorithm: step-level GRPO's ``R_total(t)`` gives it to every step (ADMIRE Sec. 3.3), also
  under ``prm``; return-based algorithms (PPO, REINFORCE++) read the wrapped env's reward,
  which holds it at the last step except under ``prm``, whose reward is GUI-Shepherd's Eq. 3
  (``r_PRM + r_format``, no outcome term).
* :class:`RewardStack` wraps an env: the ProRe judge innermost (it replaces the outcome),
  then ProgRM's progress reward, GUI-Shepherd's PRM reward and ADMIRE's milestone reward
  (deferred credit, milestones fixed during a batch). :meth:`RewardStack.refine_milestones`
  is ADMIRE's once-per-batch refinement (Algorithm 1): for each task of the batch pick its
  best success (fewest steps), update the store once, then score every trajectory of the
  batch with that same milestone version. ``milestone_mode="static"`` is ADMIRE Table 3's
  static arm: a task's milestones are generated once (from its first batch with a success,
  or taken from a store given beforehand) and never refined.
* Readers of a finished :class:`~gui_gym.core.trajectory.Trajectory`:
  :func:`reward_stream` (the per-step rewards, deferred milestone credit included),
  :func:`admire_step_rewards` (ADMIRE's ``R_total(t)``, the outcome on every step),
  :func:`episode_return`, and :func:`clean_groups` (episodes lost to infrastructure left
  out, never scored 0).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gui_gym.core.trajectory import Step, Trajectory

__all__ = [
    "REWARD_TERMS",
    "RewardStack",
    "admire_format_rewards",
    "admire_step_rewards",
    "clean_groups",
    "episode_return",
    "outcome_reward",
    "parse_reward",
    "reward_stream",
    "shaped_step_rewards",
]

REWARD_TERMS = ("outcome", "progress", "milestone", "prm", "judge", "orm", "format")
"""What ``--reward`` can name: the task outcome, ProgRM's progress difference, ADMIRE's
milestones, GUI-Shepherd's process reward, ProRe's probing judge (replaces the outcome),
a learned outcome reward model (replaces the outcome: ProgRM Table 1's ORM baseline), and
GUI-Shepherd's per-step format reward alone (its ORM baseline's reward is
``outcome+format``, App. B.2; the ``prm`` term already holds the format reward)."""

MILESTONE_MODES = ("adaptive", "static")
"""ADMIRE's adaptive milestones (refined from each batch's best success) or Table 3's static
arm (generated once, never refined)."""

DEFAULT_WEIGHTS = {
    "outcome": 1.0,
    "progress": 1.0,
    "milestone": 0.3,
    "prm": 1.0,
    "judge": 1.0,
    "orm": 1.0,
    "format": 1.0,
}
"""Weight of a term written without one: ADMIRE's lambda0 = 0.3 for milestones (App. A.1.2),
1 elsewhere."""

_TERM = re.compile(
    r"^\s*(?:(?P<weight>[0-9]*\.?[0-9]+(?:e-?[0-9]+)?)\s*\*\s*)?(?P<name>[a-z_]+)\s*$"
)


def parse_reward(text: str) -> dict[str, float]:
    """``"outcome+0.3*milestone"`` -> ``{"outcome": 1.0, "milestone": 0.3}``.

    Raises:
        ValueError: for an unknown term, a repeated term, a bad weight, or a weight on
            ``outcome``, ``judge`` or ``orm`` (the outcome counts once), or ``judge`` with
            ``orm`` (both replace the outcome).
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"reward must name at least one of {', '.join(REWARD_TERMS)}")
    terms: dict[str, float] = {}
    for part in text.split("+"):
        match = _TERM.match(part)
        if match is None:
            raise ValueError(
                f"reward term {part.strip()!r} is not NAME or WEIGHT*NAME "
                f"(names: {', '.join(REWARD_TERMS)})"
            )
        name = match["name"]
        if name not in REWARD_TERMS:
            raise ValueError(f"unknown reward {name!r}; allowed: {', '.join(REWARD_TERMS)}")
        if name in terms:
            raise ValueError(f"reward {name!r} is named twice")
        weight = float(match["weight"]) if match["weight"] else DEFAULT_WEIGHTS[name]
        if name in ("outcome", "judge", "orm") and weight != 1.0:
            raise ValueError(f"{name} is the task outcome and takes no weight, got {weight}")
        terms[name] = weight
    if "judge" in terms and "orm" in terms:
        raise ValueError("judge and orm both replace the task outcome: name one of them")
    if "format" in terms and "prm" in terms:
        raise ValueError("the prm reward already holds GUI-Shepherd's format term: drop 'format'")
    terms.setdefault("outcome", 1.0)
    return terms


@dataclass
class RewardStack:
    """The reward wrappers a trainer stacks on each env it makes.

    Args:
        weights: From :func:`parse_reward`.
        milestone_store: JSON file of ADMIRE's milestone store.
        embedder: ``minilm`` (all-MiniLM-L6-v2, the paper's SBERT) or ``hashing`` (the
            dependency-free bag-of-words fallback) for milestone matching and generation.
        prm_model: A ``gui-gym train-prm`` folder for the PRM term; None uses the rule-based
            :class:`~gui_gym.models.prm.RulePRM` (the env's expert and milestones).
        progress_model: A ProgRM folder for the progress term; None uses the env milestones
            (ProgRM-Env, :class:`~gui_gym.models.progress.MilestoneProgress`).
        orm_model: A ``gui-gym train-progress --kind orm`` folder for the ``orm`` term (the
            learned outcome reward model of ProgRM Table 1); required by that term.
        progress_k: History length ``k`` of the progress reward, ``Prog(s_t) - Prog(s_{t-k})``
            (ProgRM Eq. 2); 1 is the paper's default, 2 and 3 its Table 4 ablation.
        milestone_mode: ``adaptive`` (ADMIRE) or ``static`` (Table 3's baseline: a task's
            milestones are generated once and never refined).
        judge_model: The ``judge`` term's model: ProRe's five components (reasoner,
            evaluator, claim extractor, claim filter, judge) all run on it
            (:func:`~gui_gym.models.judge.llm_components`). A local Hugging Face folder, or
            with ``judge_url`` the served model's name. None keeps the rule-based components
            (the env's UI tree and expert, no model).
        judge_url: Base URL of an OpenAI-compatible server serving ``judge_model``.
        milestone_model: The ``milestone`` term's generator model: ADMIRE's own generator
            (:class:`~gui_gym.models.milestones.LLMMilestoneGenerator`, Eq. 6-7) on it. A
            local Hugging Face folder, or with ``milestone_url`` the served model's name.
            None keeps the LLM-free
            :class:`~gui_gym.models.milestones.TrajectoryMilestoneGenerator`. The matcher is
            the embedding :class:`~gui_gym.models.milestones.CosineMatcher` either way.
        milestone_url: Base URL of an OpenAI-compatible server serving ``milestone_model``.
    """

    weights: dict[str, float]
    milestone_store: str | Path = "milestones.json"
    embedder: str = "minilm"
    prm_model: str | Path | None = None
    progress_model: str | Path | None = None
    orm_model: str | Path | None = None
    progress_k: int = 1
    milestone_mode: str = "adaptive"
    judge_model: str | Path | None = None
    judge_url: str | None = None
    milestone_model: str | Path | None = None
    milestone_url: str | None = None
    _shared: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        unknown = set(self.weights) - set(REWARD_TERMS)
        if unknown:
            raise ValueError(f"unknown reward(s) {sorted(unknown)}; allowed: {REWARD_TERMS}")
        if self.milestone_mode not in MILESTONE_MODES:
            raise ValueError(
                f"milestone_mode must be one of {', '.join(MILESTONE_MODES)}, "
                f"got {self.milestone_mode!r}"
            )
        if self.embedder not in ("minilm", "hashing"):
            raise ValueError(f"embedder must be 'minilm' or 'hashing', got {self.embedder!r}")
        if isinstance(self.progress_k, bool) or not isinstance(self.progress_k, int):
            raise ValueError(f"progress_k must be an int >= 1, got {self.progress_k!r}")
        if self.progress_k < 1:
            raise ValueError(f"progress_k must be >= 1 (ProgRM Eq. 2), got {self.progress_k}")
        for term in ("judge", "milestone"):  # the terms that may run on an LLM
            model, url = getattr(self, f"{term}_model"), getattr(self, f"{term}_url")
            if url is not None and model is None:
                raise ValueError(
                    f"{term}_url needs {term}_model: the name the server serves it under"
                )
            if model is not None and term not in self.weights:
                raise ValueError(
                    f"{term}_model is the {term} reward's model, but the reward has no "
                    f"'{term}' term ({'+'.join(self.weights)}): add {term} to the reward or "
                    "drop the model"
                )
        if "orm" in self.weights and self.orm_model is None:
            raise ValueError(
                "the orm reward needs a learned outcome reward model: give orm_model "
                "(--orm-model), a folder written by `gui-gym train-progress --kind orm`"
            )

    @classmethod
    def from_text(cls, text: str, **kwargs: Any) -> RewardStack:
        return cls(parse_reward(text), **kwargs)

    def __getstate__(self) -> dict[str, Any]:
        # a copy sent to another process builds its own models there (a loaded model, its
        # lock or its HTTP client do not travel)
        return {**self.__dict__, "_shared": {}}

    def _model(self, name: str, build: Any) -> Any:
        # one model per stack (per process), shared by every env it wraps
        if name not in self._shared:
            self._shared[name] = build()
        return self._shared[name]

    def wrap(self, env: Any) -> Any:
        """``env`` with the chosen reward wrappers around it."""
        weights = self.weights
        if "judge" in weights:
            from gui_gym.wrappers import ProbingJudgeWrapper

            llm = {} if self.judge_model is None else self._model("judge", self._judge_llm)
            env = ProbingJudgeWrapper(env, **llm)
        if "orm" in weights:
            from gui_gym.wrappers import OutcomeModelWrapper

            env = OutcomeModelWrapper(env, self._model("orm", self._orm))
        if "progress" in weights:
            from gui_gym.wrappers import ProgressRewardWrapper

            env = ProgressRewardWrapper(
                env,
                self._model("progress", self._progress_model),
                k=self.progress_k,
                weight=weights["progress"],
            )
        if "prm" in weights:
            from gui_gym.wrappers import PRMWrapper

            env = PRMWrapper(env, self._model("prm", self._prm), weight=weights["prm"])
        if "format" in weights:
            from gui_gym.wrappers import FormatRewardWrapper

            env = FormatRewardWrapper(env, weight=weights["format"])
        if "milestone" in weights:
            from gui_gym.wrappers import MilestoneWrapper

            generator, matcher = self._model("milestone", self._milestone_models)
            env = MilestoneWrapper(
                env,
                store=self.milestone_store,
                generator=generator,
                matcher=matcher,
                lambda0=weights["milestone"],
                credit="deferred",
                adaptive=False,  # refined once per batch by refine_milestones
            )
        return env

    def _progress_model(self) -> Any:
        from gui_gym.models.progress import MilestoneProgress, ProgRM

        if self.progress_model is not None:
            return ProgRM.load(self.progress_model)
        return MilestoneProgress()

    def _orm(self) -> Any:
        from gui_gym.models.progress import ProgRM

        model = ProgRM.load(self.orm_model)  # type: ignore[arg-type]
        if model.kind != "orm":
            raise ValueError(
                f"{self.orm_model}: a {model.kind!r} model, not an outcome reward model "
                "(train one with `gui-gym train-progress --kind orm`)"
            )
        return model

    @staticmethod
    def _llm(model: str | Path, url: str | None) -> Any:
        """A term's LLM: the served ``model`` at ``url``, else the local folder ``model``."""
        if url is not None:
            from gui_gym.models.llm import OpenAICompatLLM

            return OpenAICompatLLM(str(model), url)
        from gui_gym.models.llm import TransformersLLM

        return TransformersLLM(model)

    def _judge_llm(self) -> dict[str, Any]:
        from gui_gym.models.judge import llm_components

        return llm_components(self._llm(self.judge_model, self.judge_url))  # type: ignore[arg-type]

    def _prm(self) -> Any:
        from gui_gym.models.prm import RulePRM, TransformersPRM

        if self.prm_model is not None:
            return TransformersPRM.load(self.prm_model)
        return RulePRM()

    def _milestone_models(self) -> tuple[Any, Any]:
        """The milestone term's (generator, matcher): ADMIRE's LLM generator on
        ``milestone_model`` when one is given, else the LLM-free trajectory generator; the
        embedding matcher either way."""
        from gui_gym.models.embeddings import default_embedder
        from gui_gym.models.milestones import (
            CosineMatcher,
            LLMMilestoneGenerator,
            TrajectoryMilestoneGenerator,
        )

        embedder = default_embedder(self.embedder)
        if self.milestone_model is None:
            generator: Any = TrajectoryMilestoneGenerator(embedder)
        else:  # ADMIRE Eq. 6-7: milestones written by an LLM from each batch's best success
            generator = LLMMilestoneGenerator(self._llm(self.milestone_model, self.milestone_url))
        return generator, CosineMatcher(embedder)

    def refine_milestones(
        self, env: Any, groups: Sequence[Sequence[Trajectory]], epoch: int | None = None
    ) -> dict:
        """ADMIRE Algorithm 1 once per batch: per task, refine the milestones from the
        batch's best success (fewest steps), then re-score *every* trajectory of the batch
        with the current milestones, writing ``episode_total_rewards`` into the final step's
        ``info["milestone"]``. Returns ``{task_id: update}``.

        With ``milestone_mode="static"`` only a task without milestones gets them (from its
        best success); a task that has milestones keeps them (update status ``"static"``).

        Args:
            env: An env made by :meth:`wrap` (its milestone wrapper is used).
            groups: The batch.
            epoch: Training epoch ``E`` of the milestone weight ``lambda0 * decay**E``
                (ADMIRE Algorithm 1 line 4); None keeps the wrapper's.
        """
        if "milestone" not in self.weights:
            return {}
        from gui_gym.wrappers import MilestoneWrapper

        wrapper = env
        while not isinstance(wrapper, MilestoneWrapper):
            if not hasattr(wrapper, "env"):
                raise TypeError("the env has no MilestoneWrapper; make it with RewardStack.wrap")
            wrapper = wrapper.env
        tracker = wrapper.tracker
        if epoch is not None:
            tracker.set_epoch(epoch)
        episodes = [
            t for g in groups for t in g if getattr(t, "infra_error", None) is None and t.steps
        ]
        # Under a ProRe judge the judge's verdict is the outcome (it replaces the task's):
        # milestones are learned from, and credit is given to, what the judge calls a success,
        # never the ground truth the reward does not see.
        judged = [
            t if _final_info(t, "judge") is None else replace(t, success=outcome_reward(t) >= 1.0)
            for t in episodes
        ]
        updates, scores = tracker.refine_batch(
            judged,
            static=self.milestone_mode == "static",  # ADMIRE Table 3's static arm
        )
        for trajectory, scored in zip(episodes, scores):
            last = trajectory.steps[-1]
            last.info = {**last.info, "milestone": {**last.info.get("milestone", {}), **scored}}
        return updates


# ---------------------------------------------------------------------------------- readers


def clean_groups(
    groups: Sequence[Sequence[Trajectory]], minimum: int = 2
) -> list[list[Trajectory]]:
    """Groups without the episodes lost to infrastructure (``infra_error``), and without
    groups left with fewer than ``minimum`` episodes (no baseline to compare with)."""
    out = []
    for group in groups:
        kept = [t for t in group if getattr(t, "infra_error", None) is None and t.steps]
        if len(kept) >= minimum:
            out.append(kept)
    return out


def _final_info(trajectory: Trajectory, key: str) -> dict[str, Any] | None:
    if not trajectory.steps:
        return None
    value = trajectory.steps[-1].info.get(key)
    return value if isinstance(value, dict) else None


def outcome_reward(trajectory: Trajectory) -> float:
    """The episode's outcome: the ProRe judge's reward when a judge ran, a learned outcome
    reward model's score when one ran, else the task's."""
    for key in ("judge", "orm"):
        verdict = _final_info(trajectory, key)
        if verdict is not None and "reward" in verdict:
            return float(verdict["reward"])
    return float(trajectory.task_reward)


def _milestone_totals(trajectory: Trajectory) -> list[float] | None:
    milestone = _final_info(trajectory, "milestone")
    totals = None if milestone is None else milestone.get("episode_total_rewards")
    if totals is None:
        return None
    if len(totals) != len(trajectory.steps):
        raise ValueError(
            f"task {trajectory.task_id!r}: {len(totals)} milestone rewards for "
            f"{len(trajectory.steps)} steps"
        )
    return [float(v) for v in totals]


def _outcome_in_reward(step: Step, is_last: bool, outcome: float) -> float:
    """How much of the outcome the env stack left in this step's ``reward``.

    The PRM wrapper says it (``info["prm"]["components"]["outcome"]``): GUI-Shepherd's Eq. 3
    reward holds no outcome, so with its default ``outcome_weight=0`` that share is 0 and
    the step's reward is all shaping. Without a PRM wrapper the env's outcome (or the ProRe
    judge's, which replaces it) is in the last step's reward.
    """
    prm = step.info.get("prm")
    if isinstance(prm, dict):
        components = prm.get("components")
        if isinstance(components, dict) and "outcome" in components:
            return float(components["outcome"])
    return outcome if is_last else float(step.task_reward)


def _shaped(trajectory: Trajectory) -> list[float]:
    """Per-step rewards the wrappers added on top of the outcome (progress, PRM terms)."""
    outcome = outcome_reward(trajectory)
    last = len(trajectory.steps) - 1
    return [
        float(s.reward) - _outcome_in_reward(s, i == last, outcome)
        for i, s in enumerate(trajectory.steps)
    ]


def reward_stream(trajectory: Trajectory) -> list[float]:
    """Per-step rewards ``r_t`` for return-based algorithms (PPO, REINFORCE++): what the env
    stack returned each step, plus ADMIRE's deferred milestone and format credit
    (``episode_total_rewards - R_outcome``) when a milestone wrapper ran."""
    rewards = [float(s.reward) for s in trajectory.steps]
    totals = _milestone_totals(trajectory)
    if totals is not None:
        outcome = outcome_reward(trajectory)
        rewards = [r + total - outcome for r, total in zip(rewards, totals)]
    return rewards


def admire_format_rewards(trajectory: Trajectory) -> list[float]:
    """ADMIRE's ``R_format(t)`` per step (Sec. 3.3): -1 for an action whose syntax is
    invalid (it does not parse), 0 otherwise, as the milestone wrapper's default
    ``format_penalty="malformed"`` scores it."""
    from gui_gym.core.actions import try_parse_action
    from gui_gym.rewards.milestones import format_reward

    return [format_reward(try_parse_action(s.action)[0] is not None) for s in trajectory.steps]


def admire_step_rewards(trajectory: Trajectory, format_eta: float = 0.0) -> list[float]:
    """ADMIRE's ``R_total(t) = R_outcome + eta R_format(t) + lambda R_mil(t)`` (Sec. 3.3),
    plus any other per-step shaping: the outcome is given to every step, as step-level GRPO
    compares steps across a group.

    A milestone wrapper's totals already hold ``eta R_format(t)`` (its own ``eta``); without
    one, ``format_eta`` adds it here, so an arm without milestones (ADMIRE's outcome and
    process-reward baselines: ``R_total`` with ``lambda = 0``) keeps the same format term."""
    totals = _milestone_totals(trajectory)
    if totals is not None:
        base = totals
    else:
        outcome = outcome_reward(trajectory)
        base = [outcome] * len(trajectory.steps)
        if format_eta:
            base = [b + format_eta * f for b, f in zip(base, admire_format_rewards(trajectory))]
    return [b + s for b, s in zip(base, _shaped(trajectory))]


def shaped_step_rewards(trajectory: Trajectory, format_eta: float = 0.0) -> list[float]:
    """Per-step rewards in time order: :func:`reward_stream` plus ``format_eta R_format(t)``
    when no milestone wrapper put ADMIRE's format term in them already; they sum to
    :func:`episode_return` (what GiGPO discounts into step returns)."""
    rewards = reward_stream(trajectory)
    if format_eta and _milestone_totals(trajectory) is None:
        formats = admire_format_rewards(trajectory)
        rewards = [r + format_eta * f for r, f in zip(rewards, formats)]
    return rewards


def episode_return(trajectory: Trajectory, format_eta: float = 0.0) -> float:
    """``R(tau)``: the sum of :func:`reward_stream`, plus ``format_eta * sum R_format(t)``
    when no milestone wrapper put ADMIRE's format term in it already."""
    total = float(sum(reward_stream(trajectory)))
    if format_eta and _milestone_totals(trajectory) is None:
        total += format_eta * sum(admire_format_rewards(trajectory))
    return total
