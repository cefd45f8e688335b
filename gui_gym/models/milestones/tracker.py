"""ADMIRE's milestone engine (Adaptive Milestone Reward for GUI Agents, Sec. 3, Algorithm 1).

:class:`MilestoneTracker` follows episodes step by step against a task's milestones and
keeps the milestone store up to date; :class:`~gui_gym.wrappers.MilestoneWrapper`,
:class:`~gui_gym.wrappers.MilestoneVectorWrapper` and the trainers' once-per-batch
refinement (:meth:`gui_gym.train.reward_stack.RewardStack.refine_milestones`) all run it.
The formulas it applies are the pure functions of :mod:`gui_gym.rewards.milestones`; what
it adds is the state around them:

* **matching** (Eq. 9): an episode's pointer, advanced by the matcher's score of each valid
  action against the current milestone only;
* **store updates** (Eq. 6/7, Algorithm 1 phase 1): the generator initialises or refines a
  task's milestones from a success, committed with the version they were generated from and
  regenerated when another worker got there first;
* **re-matching**: after an update the episode is matched again, as Algorithm 1 computes
  rewards after the update;
* **credit** (Eq. 10/11 and Algorithm 1 line 35): the deferred per-step rewards at the end
  of an episode, or the online reward paid at each step.

A model that fails (an :class:`~gui_gym.models.llm.LLMError` from the matcher's or the
generator's LLM, or a generator answer that does not parse) never raises mid-rollout: the
step scores no hit, the store stays as it is, and the reason is logged and reported.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from gui_gym.core.actions import ActionParseError, parse_action
from gui_gym.core.trajectory import Step, Trajectory
from gui_gym.models.llm.base import LLMError, ModelUnavailable
from gui_gym.models.milestones.generators import (
    MilestoneGenerationError,
    MilestoneGenerator,
    TrajectoryMilestoneGenerator,
)
from gui_gym.models.milestones.matchers import CosineMatcher, MilestoneMatcher, score_pairs
from gui_gym.rewards.milestone_store import MilestoneStore, StaleMilestonesError
from gui_gym.rewards.milestones import (
    advance_pointer,
    format_reward,
    milestone_step_rewards,
    milestone_weight,
    total_step_rewards,
)

__all__ = ["FORMAT_PENALTIES", "MilestoneEpisode", "MilestoneTracker"]

logger = logging.getLogger(__name__)

_COMMIT_ATTEMPTS = 3  # generations of one store update when other workers keep committing first

FORMAT_PENALTIES = ("malformed", "rejected")
"""Which actions ADMIRE's format term penalises (see :class:`MilestoneTracker`)."""


@dataclass
class MilestoneEpisode:
    """One env's running episode: its milestones, pointer and trajectory so far.

    Attributes:
        task_key: What the milestones are stored under (the task id or the instruction).
        trajectory: The steps so far; each step's ``info`` holds ``milestone_hit`` and
            ``r_mil``.
        seed: The reset seed, recorded with a store update.
        screen: The screen the next action is chosen on (generators cut loops by screen).
        milestones: The milestones the episode is matched against.
        version: Their version in the store (0: none yet).
        pointer: Index of the next milestone not yet reached.
        well_formed: Per step, whether the action escapes the format penalty
            (``R_format(t) = -1`` where False).
        screenshot: The screenshot of ``screen`` when the generator reads screenshots
            (each step of the trajectory then holds its screen's array in ``screenshot``).
    """

    task_key: str
    trajectory: Trajectory
    seed: int | None
    screen: str
    milestones: list[str]
    version: int
    pointer: int = 0
    well_formed: list[bool] = field(default_factory=list)
    screenshot: Any = None  # the next action's screen, kept for a generator that reads them


def _parses(action: Any) -> bool:
    try:
        parse_action(action)
    except ActionParseError:
        return False
    return True


@dataclass(eq=False)
class MilestoneTracker:
    """ADMIRE's milestone matching, store updates and credit for any number of episodes.

    Per env: :meth:`begin` at reset; at each step :meth:`observe`, then :meth:`scores` of
    the targets it names (one batched matcher call for many envs), then :meth:`record`.
    For whole trajectories after the fact: :meth:`refine_from_success`,
    :meth:`score_trajectory`, and :meth:`refine_batch` (Algorithm 1 once per batch).

    Args:
        store: A :class:`~gui_gym.rewards.milestone_store.MilestoneStore` or its JSON path.
        generator: Produces milestones from successes; None uses
            :class:`~gui_gym.models.milestones.TrajectoryMilestoneGenerator` (no LLM).
        matcher: Scores descriptions against milestones; None uses
            :class:`~gui_gym.models.milestones.CosineMatcher` (offline all-MiniLM-L6-v2).
        delta: Hit threshold in [0, 1) (0.75, ADMIRE App. A).
        zeta: Weight of the hit bonus on failed trajectories (Eq. 11; 0.5).
        lambda0: Initial milestone weight (0.3, App. A.1.2).
        decay: Per-epoch decay gamma of the milestone weight (0.99; 1 disables decay).
        eta: Weight of the format term (0.5).
        credit: ``"deferred"`` (the step reward is left alone; the credit comes at the end)
            or ``"online"`` (each step's reward gains its format and hit terms).
        adaptive: Update the store from successes. False keeps the milestones fixed.
        key: Store milestones per ``"task_id"`` or per ``"instruction"``.
        epoch: Initial epoch for the decay (see :meth:`set_epoch`).
        format_penalty: ``"malformed"`` (Eq. 12: output that does not parse) or
            ``"rejected"`` (ours: also well-formed actions the env refuses).
        base_on_success: Give successes the base progress ``k/K`` (App. B.3 ablation).
        base_on_failure: Give failures the base progress ``k/K`` (Eq. 11; False: ablation).

    After construction ``store`` is a :class:`~gui_gym.rewards.milestone_store.MilestoneStore`
    and ``generator`` and ``matcher`` are set (the defaults above where None was given).

    Raises:
        ValueError: for an argument out of range.
        TypeError: for a generator or matcher without the protocol's methods.
    """

    store: MilestoneStore | str | Path
    generator: MilestoneGenerator | None = None
    matcher: MilestoneMatcher | None = None
    delta: float = 0.75  # ADMIRE App. A
    zeta: float = 0.5  # ADMIRE Eq. 11, App. A
    lambda0: float = 0.3  # ADMIRE App. A.1.2
    decay: float = 0.99  # ADMIRE Sec. 3.3, App. A
    eta: float = 0.5  # ADMIRE Sec. 3.3, App. A
    credit: Literal["deferred", "online"] = "deferred"
    adaptive: bool = True
    key: Literal["task_id", "instruction"] = "task_id"
    epoch: int = 0
    format_penalty: Literal["malformed", "rejected"] = "malformed"  # ADMIRE Eq. 12
    base_on_success: bool = False  # ADMIRE Eq. 10; True: App. B.3 ablation
    base_on_failure: bool = True  # ADMIRE Eq. 11; False: App. B.3 ablation

    def __post_init__(self) -> None:
        if self.format_penalty not in FORMAT_PENALTIES:
            raise ValueError(
                f"format_penalty must be one of {FORMAT_PENALTIES}, got {self.format_penalty!r}"
            )
        if not 0.0 <= self.delta < 1.0:
            raise ValueError(f"delta must be in [0, 1), got {self.delta!r}")
        if self.zeta < 0 or self.eta < 0:
            raise ValueError(f"zeta and eta must be >= 0, got {self.zeta!r}, {self.eta!r}")
        milestone_weight(self.epoch, self.lambda0, self.decay)  # validates lambda0, decay, epoch
        if self.credit not in ("deferred", "online"):
            raise ValueError(f"credit must be 'deferred' or 'online', got {self.credit!r}")
        if self.key not in ("task_id", "instruction"):
            raise ValueError(f"key must be 'task_id' or 'instruction', got {self.key!r}")
        if self.generator is not None and not isinstance(self.generator, MilestoneGenerator):
            raise TypeError(
                f"generator must have initialize() and refine(), got {self.generator!r}"
            )
        if self.matcher is not None and not isinstance(self.matcher, MilestoneMatcher):
            raise TypeError(
                f"matcher must have score(description, milestone), got {self.matcher!r}"
            )
        if not isinstance(self.store, MilestoneStore):
            self.store = MilestoneStore(self.store)
        if self.generator is None:
            self.generator = TrajectoryMilestoneGenerator()
        if self.matcher is None:
            self.matcher = CosineMatcher()
        for name in ("delta", "zeta", "lambda0", "decay", "eta"):
            setattr(self, name, float(getattr(self, name)))
        self.adaptive = bool(self.adaptive)
        self.epoch = int(self.epoch)
        self.base_on_success = bool(self.base_on_success)
        self.base_on_failure = bool(self.base_on_failure)

    # ------------------------------------------------------------------------------ weight

    def set_epoch(self, epoch: int) -> None:
        """Set the training epoch E that decays the milestone weight to
        ``lambda0 * decay**E`` (ADMIRE Algorithm 1 line 4).

        Raises:
            ValueError: for a negative epoch.
        """
        milestone_weight(epoch, self.lambda0, self.decay)  # validates
        self.epoch = int(epoch)

    @property
    def weight(self) -> float:
        """The current milestone weight ``lambda0 * decay**epoch``."""
        return milestone_weight(self.epoch, self.lambda0, self.decay)

    # ----------------------------------------------------------------------------- episode

    def begin(
        self,
        observation: dict[str, Any],
        info: dict[str, Any],
        seed: int | None,
        env_id: str,
    ) -> tuple[MilestoneEpisode, dict[str, Any]]:
        """A new episode from a reset's observation and info, and its ``info["milestone"]``.

        Raises:
            ValueError: when the env gives no task id (or instruction) to key by.
        """
        task_id = str(info.get("task_id", ""))
        instruction = str(observation.get("instruction", ""))
        task_key = instruction if self.key == "instruction" else task_id
        if not task_key:
            raise ValueError(f"the env gave no {self.key} to key the milestones by")
        episode = MilestoneEpisode(
            task_key=task_key,
            trajectory=Trajectory(
                env_id=env_id, task_id=task_id, instruction=instruction, seed=seed
            ),
            seed=seed,
            screen=str(observation.get("screen", "")),
            milestones=[],
            version=0,
        )
        episode.screenshot = self._kept_screenshot(observation)
        self._load_milestones(episode)
        return episode, self._step_info(episode, similarity=None, hit=False, r_mil=0.0)

    def _kept_screenshot(self, observation: dict[str, Any]) -> Any:
        """The observation's screenshot when the generator may read screenshots (an LLM
        generator not built with ``screenshots=False``), else None."""
        if not getattr(self.generator, "reads_screenshots", False):
            return None
        shot = observation.get("screenshot")
        # a copy: a vector env's slice is a view into a batch buffer it may reuse
        return None if shot is None else np.array(shot, dtype=np.uint8, copy=True)

    def observe(
        self,
        episode: MilestoneEpisode,
        action: Any,
        reward: float,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> tuple[Step, str | None]:
        """The step just taken, and the milestone to match it against (None: no matching,
        for an invalid action or when every milestone is reached)."""
        step = Step.from_transition(
            len(episode.trajectory.steps),
            episode.screen,
            action,
            reward,
            terminated,
            truncated,
            info,
            screenshot=episode.screenshot,  # in memory only: never written to a file
        )
        episode.well_formed.append(
            step.action_valid if self.format_penalty == "rejected" else _parses(action)
        )
        target = None
        if step.action_valid and episode.pointer < len(episode.milestones):
            target = episode.milestones[episode.pointer]
        return step, target

    def scores(
        self, descriptions: list[str], targets: list[str]
    ) -> tuple[list[float | None], str | None]:
        """The matcher's scores of the pairs in one call, or no scores (no hit: the neutral
        outcome) and the error when the matcher's model failed (an LLM judge's server
        down, ...)."""
        if not descriptions:
            return [], None
        try:
            values = score_pairs(self.matcher, descriptions, targets)
        except ModelUnavailable:  # no answer: infrastructure, not a score
            raise
        except LLMError as err:
            logger.warning("milestone matcher failed; these steps score no hit: %s", err)
            return [None] * len(descriptions), f"{type(err).__name__}: {err}"
        return [float(v) for v in values], None

    def record(
        self,
        episode: MilestoneEpisode,
        step: Step,
        similarity: float | None,
        observation: dict[str, Any],
        info: dict[str, Any],
        reward: float,
        model_error: str | None = None,
    ) -> tuple[float, dict[str, Any], bool]:
        """Apply the pointer rule (Eq. 9) to ``step`` scored ``similarity``.

        Returns:
            The step reward (with the online credit when asked), ``info["milestone"]``, and
            whether the episode ended (then it is finished: the store is updated and the
            episode rewards are set).
        """
        episode.screen = str(observation.get("screen", ""))
        episode.screenshot = self._kept_screenshot(observation)
        episode.trajectory.steps.append(step)
        r_mil = 0.0
        before = episode.pointer
        if similarity is not None:
            r_mil, episode.pointer = advance_pointer(
                episode.pointer, len(episode.milestones), float(similarity), self.delta
            )
        hit = episode.pointer != before
        step.info = {"milestone_hit": hit, "r_mil": r_mil}
        if self.credit == "online":
            # Algorithm 1 line 35 paid as the step happens: the env's step reward stands in
            # for R_outcome, and the hit reward r_mil for R_mil (Eq. 11's k/K scaffold needs
            # the outcome, so it exists only in the deferred credit)
            (reward,) = total_step_rewards(
                [r_mil],
                outcome=float(reward),
                format_rewards=[format_reward(episode.well_formed[-1])],
                epoch=self.epoch,
                lambda0=self.lambda0,
                decay=self.decay,
                eta=self.eta,
            )
        component = self._step_info(episode, similarity=similarity, hit=hit, r_mil=r_mil)
        component["model_error"] = model_error
        ended = step.terminated or step.truncated
        if ended:
            episode.trajectory.finish(observation, info)
            component.update(self._finish(episode))
        return reward, component, ended

    # ------------------------------------------------------------------ finished trajectories

    def refine_from_success(self, trajectory: Trajectory) -> dict[str, Any]:
        """Initialise (Eq. 6) or refine (Eq. 7) the task's milestones from one successful
        trajectory and commit them to the store; returns the update (``status``,
        ``version``).

        Raises:
            ValueError: for a trajectory that did not succeed.
        """
        if not trajectory.success:
            raise ValueError("milestones are learned from successful trajectories only")
        return self._update_store(self._episode_of(trajectory))

    def score_trajectory(self, trajectory: Trajectory) -> dict[str, Any]:
        """The end-of-episode ``info["milestone"]`` entries (``episode_rewards``,
        ``episode_total_rewards``, ``hits``, ``version``, ...) of a finished trajectory
        matched against the task's current milestones; the store is not changed.

        Raises:
            LLMError: when the matcher's model fails.
        """
        episode = self._episode_of(trajectory)
        self._load_milestones(episode)
        self._rematch(episode)
        return self._episode_rewards(episode)

    def refine_batch(
        self, trajectories: Iterable[Trajectory], static: bool = False
    ) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
        """ADMIRE Algorithm 1 once per batch: per task, refine the milestones from the
        batch's best success (fewest steps; lines 7-16), then score every trajectory with
        the task's current milestones (lines 17-35), so one group never mixes versions.

        Args:
            trajectories: The batch's finished trajectories.
            static: ADMIRE Table 3's static arm: only a task without milestones gets them
                (from its best success); a task that has milestones keeps them (update
                status ``"static"``).

        Returns:
            ``({task key: update}, scored)``: what happened to each task's milestones, and
            per trajectory, in order, its :meth:`score_trajectory` entries.
        """
        batch = list(trajectories)
        best: dict[str, Trajectory] = {}
        for trajectory in batch:
            if trajectory.success:
                key = self._task_key(trajectory)
                known = best.get(key)
                if known is None or len(trajectory.steps) < len(known.steps):
                    best[key] = trajectory
        updates = {}
        for key, trajectory in best.items():
            if static and self.store.get(key) is not None:
                updates[key] = {"status": "static", "version": self.store.version(key)}
            else:
                updates[key] = self.refine_from_success(trajectory)
        return updates, [self.score_trajectory(t) for t in batch]

    # ----------------------------------------------------------------------------- helpers

    def _task_key(self, trajectory: Trajectory) -> str:
        task_key = trajectory.instruction if self.key == "instruction" else trajectory.task_id
        if not task_key:
            raise ValueError(f"the trajectory has no {self.key} to key the milestones by")
        return task_key

    def _load_milestones(self, episode: MilestoneEpisode) -> None:
        current = self.store.get(episode.task_key)
        episode.milestones = list(current.milestones) if current else []
        episode.version = current.version if current else 0
        episode.pointer = 0
        prepare = getattr(self.matcher, "prepare", None)
        if prepare is not None and episode.milestones:
            prepare(episode.milestones)

    def _step_info(
        self, episode: MilestoneEpisode, similarity: float | None, hit: bool, r_mil: float
    ) -> dict[str, Any]:
        return {
            "task_key": episode.task_key,
            "version": episode.version,
            "milestones": list(episode.milestones),
            "K": len(episode.milestones),
            "pointer": episode.pointer,
            "k": episode.pointer,  # one hit per milestone, in order: k equals the pointer
            "similarity": similarity,
            "hit": hit,
            "r_mil": r_mil,
            "weight": self.weight,
        }

    def _rematch(self, episode: MilestoneEpisode) -> None:
        """Match the finished episode again against the current milestones, scoring only
        the milestone under the pointer at each step (as during the episode).

        Raises:
            LLMError: when the matcher's model fails; the episode is then left unchanged.
        """
        pointer = 0
        infos = []
        for step in episode.trajectory.steps:
            r_mil = 0.0
            before = pointer
            if step.action_valid and pointer < len(episode.milestones):
                similarity = self.matcher.score(
                    step.action_description, episode.milestones[pointer]
                )
                r_mil, pointer = advance_pointer(
                    pointer, len(episode.milestones), float(similarity), self.delta
                )
            infos.append({"milestone_hit": pointer != before, "r_mil": r_mil})
        episode.pointer = pointer
        for step, step_info in zip(episode.trajectory.steps, infos):
            step.info = step_info

    def _finish(self, episode: MilestoneEpisode) -> dict[str, Any]:
        trajectory = episode.trajectory
        success = bool(trajectory.success)
        if success and self.adaptive:
            update = self._update_store(episode)
            if update.get("version", episode.version) != episode.version:
                before = (episode.milestones, episode.version, episode.pointer)
                self._load_milestones(episode)
                try:
                    self._rematch(episode)  # Algorithm 1: rewards after the update
                except ModelUnavailable:  # no answer: infrastructure, not a score
                    raise
                except LLMError as err:  # pay against the milestones the episode ran with
                    logger.warning("re-matching after the update failed: %s", err)
                    episode.milestones, episode.version, episode.pointer = before
                    update["model_error"] = f"{type(err).__name__}: {err}"
        else:
            update = {
                "status": "skipped",
                "reason": "not adaptive" if success else "episode failed",
                "version": episode.version,
            }
        return {**self._episode_rewards(episode), "update": update}

    def _episode_rewards(self, episode: MilestoneEpisode) -> dict[str, Any]:
        """The end-of-episode credit of a matched episode (Eq. 10/11 and the total)."""
        trajectory = episode.trajectory
        success = bool(trajectory.success)
        hits = [bool(s.info["milestone_hit"]) for s in trajectory.steps]
        r_mil = [float(s.info["r_mil"]) for s in trajectory.steps]
        rewards = milestone_step_rewards(
            hits,
            r_mil,
            len(episode.milestones),
            success,
            self.zeta,
            base_on_success=self.base_on_success,
            base_on_failure=self.base_on_failure,
        )
        total = total_step_rewards(
            rewards,
            outcome=1.0 if success else 0.0,
            format_rewards=[format_reward(ok) for ok in episode.well_formed],
            epoch=self.epoch,
            lambda0=self.lambda0,
            decay=self.decay,
            eta=self.eta,
        )
        return {
            "version": episode.version,
            "milestones": list(episode.milestones),
            "K": len(episode.milestones),
            "pointer": episode.pointer,
            "k": episode.pointer,
            "success": success,
            "hits": [t for t, h in enumerate(hits) if h],
            "episode_rewards": rewards,
            "episode_total_rewards": total,
        }

    def _episode_of(self, trajectory: Trajectory) -> MilestoneEpisode:
        """A finished trajectory as an episode (its steps copied, so matching never touches
        the caller's records)."""
        task_key = self._task_key(trajectory)
        copied = replace(trajectory, steps=[replace(s, info={}) for s in trajectory.steps])
        well_formed = [
            s.action_valid if self.format_penalty == "rejected" else _parses(s.action)
            for s in trajectory.steps
        ]
        return MilestoneEpisode(
            task_key, copied, trajectory.seed, "", [], 0, well_formed=well_formed
        )

    def _update_store(self, episode: MilestoneEpisode) -> dict[str, Any]:
        """Initialise or refine the task's milestones from a success (Eq. 6 / Eq. 7)."""
        key = episode.task_key
        trajectory = episode.trajectory
        for _ in range(_COMMIT_ATTEMPTS):
            current = self.store.get(key)
            base = current.version if current else 0
            try:
                if current is None:
                    kind, proposed = "init", self.generator.initialize(trajectory)
                else:
                    kind = "refine"
                    proposed = self.generator.refine(trajectory, list(current.milestones))
            except ModelUnavailable:  # no answer: infrastructure, not a score
                raise
            except (MilestoneGenerationError, LLMError) as err:
                # garbage or a failed model call: the store stays as it is (neutral)
                logger.warning("milestones of %r left unchanged: %s", key, err)
                update = {"status": "rejected", "reason": str(err), "version": base}
                if isinstance(err, LLMError):
                    update["model_error"] = f"{type(err).__name__}: {err}"
                return update
            try:
                record = self.store.commit(
                    key,
                    proposed,
                    expected_version=base,
                    kind=kind,
                    generator=getattr(self.generator, "name", type(self.generator).__name__),
                    instruction=trajectory.instruction,
                    meta={
                        "env_id": trajectory.env_id,
                        "task_id": trajectory.task_id,
                        "seed": episode.seed,
                        "steps": len(trajectory.steps),
                    },
                )
            except StaleMilestonesError:
                continue  # another worker refined it meanwhile: regenerate from theirs
            if record is None:
                return {"status": "unchanged", "version": base}
            status = "initialized" if kind == "init" else "refined"
            return {"status": status, "version": record.version}
        logger.warning("milestones of %r changed under us %d times; skipped", key, _COMMIT_ATTEMPTS)
        return {"status": "stale", "version": self.store.version(key)}
