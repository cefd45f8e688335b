"""ADMIRE's adaptive milestone reward (Adaptive Milestone Reward for GUI Agents) on any gui-gym
env: :class:`MilestoneWrapper` for one env, :class:`MilestoneVectorWrapper` for a vector env
(one batched matcher call per step for all sub-envs)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numpy as np

from gui_gym.core.actions import ActionParseError, parse_action
from gui_gym.core.trajectory import Step, Trajectory
from gui_gym.models.llm import LLMError
from gui_gym.models.milestones import (
    CosineMatcher,
    MilestoneGenerationError,
    MilestoneGenerator,
    MilestoneMatcher,
    TrajectoryMilestoneGenerator,
    score_pairs,
)
from gui_gym.rewards.milestone_store import MilestoneStore, StaleMilestonesError
from gui_gym.rewards.milestones import (
    advance_pointer,
    format_reward,
    milestone_step_rewards,
    milestone_weight,
    total_step_rewards,
)

__all__ = ["MilestoneVectorWrapper", "MilestoneWrapper"]

logger = logging.getLogger(__name__)

_COMMIT_ATTEMPTS = 3


@dataclass
class _Episode:
    """One env's running episode: its milestones, pointer and trajectory so far."""

    task_key: str
    trajectory: Trajectory
    seed: int | None
    screen: str  # the screen the next action is chosen on (generators cut loops by screen)
    milestones: list[str]
    version: int
    pointer: int = 0
    well_formed: list[bool] = field(default_factory=list)  # R_format(t) = -1 where False


FORMAT_PENALTIES = ("malformed", "rejected")
"""Which actions ADMIRE's format term penalises (see :class:`MilestoneWrapper`)."""


def _parses(action: Any) -> bool:
    try:
        parse_action(action)
    except ActionParseError:
        return False
    return True


class _MilestoneReward:
    """Settings, matching rule, credit and store updates shared by both wrappers.

    Subclasses call :meth:`_configure` and then, per env, :meth:`_begin` at reset,
    :meth:`_target` and :meth:`_record` at each step.
    """

    def _configure(
        self,
        store: MilestoneStore | str | Path,
        generator: MilestoneGenerator | None,
        matcher: MilestoneMatcher | None,
        delta: float,
        zeta: float,
        lambda0: float,
        decay: float,
        eta: float,
        credit: str,
        adaptive: bool,
        key: str,
        epoch: int,
        format_penalty: str,
        base_on_success: bool,
        base_on_failure: bool,
    ) -> None:
        if format_penalty not in FORMAT_PENALTIES:
            raise ValueError(
                f"format_penalty must be one of {FORMAT_PENALTIES}, got {format_penalty!r}"
            )
        if not 0.0 <= delta < 1.0:
            raise ValueError(f"delta must be in [0, 1), got {delta!r}")
        if zeta < 0 or eta < 0:
            raise ValueError(f"zeta and eta must be >= 0, got {zeta!r}, {eta!r}")
        milestone_weight(epoch, lambda0, decay)  # validates lambda0, decay and epoch
        if credit not in ("deferred", "online"):
            raise ValueError(f"credit must be 'deferred' or 'online', got {credit!r}")
        if key not in ("task_id", "instruction"):
            raise ValueError(f"key must be 'task_id' or 'instruction', got {key!r}")
        if generator is not None and not isinstance(generator, MilestoneGenerator):
            raise TypeError(f"generator must have initialize() and refine(), got {generator!r}")
        if matcher is not None and not isinstance(matcher, MilestoneMatcher):
            raise TypeError(f"matcher must have score(description, milestone), got {matcher!r}")
        self.store = store if isinstance(store, MilestoneStore) else MilestoneStore(store)
        self.generator: MilestoneGenerator = (
            generator if generator is not None else TrajectoryMilestoneGenerator()
        )
        self.matcher: MilestoneMatcher = matcher if matcher is not None else CosineMatcher()
        self.delta = float(delta)
        self.zeta = float(zeta)
        self.lambda0 = float(lambda0)
        self.decay = float(decay)
        self.eta = float(eta)
        self.credit = credit
        self.adaptive = bool(adaptive)
        self.key = key
        self.epoch = int(epoch)
        self.format_penalty = format_penalty
        self.base_on_success = bool(base_on_success)
        self.base_on_failure = bool(base_on_failure)

    # ------------------------------------------------------------------------------ public

    def set_epoch(self, epoch: int) -> None:
        """Set the training epoch E that decays the milestone weight to
        ``lambda0 * decay**E`` (ADMIRE Algorithm 1 line 4). Through a vector env of
        single-env wrappers: ``envs.call("set_epoch", E)``."""
        milestone_weight(epoch, self.lambda0, self.decay)  # validates
        self.epoch = int(epoch)

    @property
    def weight(self) -> float:
        """The current milestone weight ``lambda0 * decay**epoch``."""
        return milestone_weight(self.epoch, self.lambda0, self.decay)

    # ----------------------------------------------------------------------------- episode

    def _begin(
        self,
        observation: dict[str, Any],
        info: dict[str, Any],
        seed: int | None,
        env_id: str,
    ) -> tuple[_Episode, dict[str, Any]]:
        """A new episode from a reset's observation and info, and its ``info["milestone"]``."""
        task_id = str(info.get("task_id", ""))
        instruction = str(observation.get("instruction", ""))
        task_key = instruction if self.key == "instruction" else task_id
        if not task_key:
            raise ValueError(f"the env gave no {self.key} to key the milestones by")
        episode = _Episode(
            task_key=task_key,
            trajectory=Trajectory(
                env_id=env_id, task_id=task_id, instruction=instruction, seed=seed
            ),
            seed=seed,
            screen=str(observation.get("screen", "")),
            milestones=[],
            version=0,
        )
        self._load_milestones(episode)
        return episode, self._step_info(episode, similarity=None, hit=False, r_mil=0.0)

    def _new_step(
        self,
        episode: _Episode,
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
        )
        episode.well_formed.append(
            step.action_valid if self.format_penalty == "rejected" else _parses(action)
        )
        target = None
        if step.action_valid and episode.pointer < len(episode.milestones):
            target = episode.milestones[episode.pointer]
        return step, target

    def _record(
        self,
        episode: _Episode,
        step: Step,
        similarity: float | None,
        observation: dict[str, Any],
        info: dict[str, Any],
        reward: float,
        model_error: str | None = None,
    ) -> tuple[float, dict[str, Any], bool]:
        """Apply the pointer rule to ``step`` scored ``similarity``; returns the step reward
        (with the online credit when asked), ``info["milestone"]``, and whether the episode
        ended (then it is finished: the store is updated and the episode rewards set)."""
        episode.screen = str(observation.get("screen", ""))
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
            reward = (
                float(reward)
                + self.eta * format_reward(episode.well_formed[-1])
                + self.weight * r_mil
            )
        component = self._step_info(episode, similarity=similarity, hit=hit, r_mil=r_mil)
        component["model_error"] = model_error
        ended = step.terminated or step.truncated
        if ended:
            episode.trajectory.finish(observation, info)
            component.update(self._finish(episode))
        return reward, component, ended

    # ----------------------------------------------------------------------------- helpers

    def _scores(
        self, descriptions: list[str], targets: list[str]
    ) -> tuple[list[float | None], str | None]:
        """The matcher's scores of the pairs, or no scores (no hit: the neutral outcome) and
        the error when the matcher's model failed (an LLM judge's server down, ...)."""
        if not descriptions:
            return [], None
        try:
            values = score_pairs(self.matcher, descriptions, targets)
        except LLMError as err:
            logger.warning("milestone matcher failed; these steps score no hit: %s", err)
            return [None] * len(descriptions), f"{type(err).__name__}: {err}"
        return [float(v) for v in values], None

    def _load_milestones(self, episode: _Episode) -> None:
        current = self.store.get(episode.task_key)
        episode.milestones = list(current.milestones) if current else []
        episode.version = current.version if current else 0
        episode.pointer = 0
        prepare = getattr(self.matcher, "prepare", None)
        if prepare is not None and episode.milestones:
            prepare(episode.milestones)

    def _step_info(
        self, episode: _Episode, similarity: float | None, hit: bool, r_mil: float
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

    def _rematch(self, episode: _Episode) -> None:
        """Match the finished episode again against the current milestones.

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

    def _finish(self, episode: _Episode) -> dict[str, Any]:
        trajectory = episode.trajectory
        success = bool(trajectory.success)
        if success and self.adaptive:
            update = self._update_store(episode)
            if update.get("version", episode.version) != episode.version:
                before = (episode.milestones, episode.version, episode.pointer)
                self._load_milestones(episode)
                try:
                    self._rematch(episode)  # Algorithm 1: rewards after the update
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

    def _episode_rewards(self, episode: _Episode) -> dict[str, Any]:
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

    # -------------------------------------------------------------- batch-level refinement

    def _episode_of(self, trajectory: Trajectory) -> _Episode:
        """A finished trajectory as an episode of this wrapper (its steps copied, so matching
        never touches the caller's records)."""
        task_key = trajectory.instruction if self.key == "instruction" else trajectory.task_id
        if not task_key:
            raise ValueError(f"the trajectory has no {self.key} to key the milestones by")
        copied = replace(trajectory, steps=[replace(s, info={}) for s in trajectory.steps])
        well_formed = [
            s.action_valid if self.format_penalty == "rejected" else _parses(s.action)
            for s in trajectory.steps
        ]
        return _Episode(task_key, copied, trajectory.seed, "", [], 0, well_formed=well_formed)

    def refine_from_success(self, trajectory: Trajectory) -> dict[str, Any]:
        """Initialise (Eq. 6) or refine (Eq. 7) the task's milestones from one successful
        trajectory and commit them to the store; returns the update (``status``,
        ``version``).

        A trainer that refines once per batch, as ADMIRE's Algorithm 1 does, runs the wrapper
        with ``adaptive=False``, calls this with the batch's best success, then scores every
        trajectory of the batch with :meth:`score_trajectory`, so one group never mixes
        milestone versions.

        Raises:
            ValueError: for a trajectory that did not succeed.
        """
        if not trajectory.success:
            raise ValueError("milestones are learned from successful trajectories only")
        return self._update_store(self._episode_of(trajectory))

    def score_trajectory(self, trajectory: Trajectory) -> dict[str, Any]:
        """The end-of-episode ``info["milestone"]`` entries (``episode_rewards``,
        ``episode_total_rewards``, ``hits``, ``version``, ...) of a finished trajectory
        matched against the task's current milestones; the store is not changed."""
        episode = self._episode_of(trajectory)
        self._load_milestones(episode)
        self._rematch(episode)
        return self._episode_rewards(episode)

    def _update_store(self, episode: _Episode) -> dict[str, Any]:
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


def _recorded_args(store: MilestoneStore | str | Path, **kwargs: Any) -> dict[str, Any]:
    # generator and matcher hold models, clients and locks: record them as shared handles
    # (no deep copy); everything else recorded is an immutable value
    return {
        "_disable_deepcopy": True,
        "store": str(store.path) if isinstance(store, MilestoneStore) else str(store),
        **kwargs,
    }


class MilestoneWrapper(
    _MilestoneReward,
    gym.Wrapper[dict[str, Any], Any, dict[str, Any], Any],
    gym.utils.RecordConstructorArgs,
):
    """ADMIRE's milestone reward: match each action against the task's milestones, learn the
    milestones from successes, and pay asymmetric credit.

    Each step, ``info["action_description"]`` is scored by ``matcher`` against the current
    milestone only; a score above ``delta`` is a hit and the pointer moves on (Eq. 9; nothing
    is matched after the last milestone, and invalid actions never hit). When an episode ends
    in success, ``generator`` initialises the task's milestones (Eq. 6) or refines them
    (Eq. 7) and the result is committed to ``store`` as a new version (Algorithm 1, phase 1);
    the episode is then re-matched against the updated milestones, as Algorithm 1 computes
    rewards after the update. Garbage from the generator leaves the store unchanged and is
    logged.

    Credit:

    * ``"deferred"`` (default): the step reward is the env's reward, unchanged. At the end of
      the episode, ``info["milestone"]`` carries ``episode_rewards`` (the asymmetric
      ``R_mil(t)`` per step: Eq. 10 for a success, Eq. 11 for a failure) and
      ``episode_total_rewards`` (``R_outcome + eta * R_format(t) + lambda0 * decay**epoch *
      R_mil(t)``, Algorithm 1 line 35), ready for step-level GRPO
      (:func:`gui_gym.rewards.milestones.step_grpo_advantages`, Eq. 13).
    * ``"online"``: for libraries that cannot assign credit after the fact, each step's
      reward is the env's reward plus ``eta * R_format(t) + lambda0 * decay**epoch * r_mil(t)``
      (the hit reward, paid when the hit happens). The failure scaffold ``k/K`` of Eq. 11
      needs the outcome, so it exists only in the deferred numbers, which are reported in
      both modes.

    ``info["milestone"]`` on every step: ``task_key``, ``version``, ``milestones``, ``K``,
    ``pointer``, ``k``, ``similarity`` (None when nothing was compared), ``hit``, ``r_mil``,
    ``weight``; at the end also ``success``, ``hits`` (step indices), ``episode_rewards``,
    ``episode_total_rewards`` and ``update`` (what happened to the store: ``status`` is
    ``"initialized"``, ``"refined"``, ``"unchanged"``, ``"rejected"`` with a ``reason``,
    ``"stale"``, or ``"skipped"`` for failures and ``adaptive=False``).

    A model that fails (an :class:`~gui_gym.models.llm.LLMError` from the matcher's or the
    generator's LLM, or a generator answer that does not parse) never raises mid-rollout:
    the step scores no hit, the store stays unchanged, a warning is logged, and
    ``info["milestone"]["model_error"]`` (per step) or ``["update"]["model_error"]`` says
    what failed.

    Args:
        env: A gui-gym env (any env whose info has ``task_id``, ``action_description``,
            ``action_valid`` and, at the end, ``success``).
        store: A :class:`~gui_gym.rewards.milestone_store.MilestoneStore` or its JSON path.
        generator: Produces milestones from successes; None uses
            :class:`~gui_gym.models.milestones.TrajectoryMilestoneGenerator` (no LLM).
        matcher: Scores descriptions against milestones; None uses
            :class:`~gui_gym.models.milestones.CosineMatcher` (offline all-MiniLM-L6-v2).
        delta: Hit threshold in [0, 1) (0.75 in the paper).
        zeta: Weight of the hit bonus on failed trajectories (Eq. 11; 0.5).
        lambda0: Initial milestone weight (0.3).
        decay: Per-epoch decay gamma of the milestone weight (0.99; 1 disables decay).
        eta: Weight of the format term (0.5).
        credit: ``"deferred"`` or ``"online"``.
        adaptive: Update the store from successes. False keeps the milestones fixed (the
            paper's static-milestone baseline, or evaluation).
        key: Store milestones per ``"task_id"`` (instances of a template share them; what
            placeholders are for) or per ``"instruction"``.
        epoch: Initial epoch for the decay (see :meth:`set_epoch`).
        format_penalty: Which actions get ``R_format = -1``: ``"malformed"`` (default, the
            paper's "the action syntax is invalid": output that does not parse as an action)
            or ``"rejected"`` (ours: also well-formed actions the env refuses, such as
            ``CLICK(999)`` on a screen without element 999).
        base_on_success: Give successful trajectories the base progress ``k/K`` too
            (App. B.3 ablation "w/ Base Reward for Successful Traj."; default False, Eq. 10).
        base_on_failure: Give failed trajectories the base progress ``k/K`` (default True,
            Eq. 11; False is the ablation "w/o Base Reward for Fail Traj."). The third
            ablation, "w/o Reward Decay", is ``decay=1.0``.

    Raises:
        ValueError: for an argument out of range.
    """

    def __init__(
        self,
        env: gym.Env,
        store: MilestoneStore | str | Path,
        generator: MilestoneGenerator | None = None,
        matcher: MilestoneMatcher | None = None,
        delta: float = 0.75,
        zeta: float = 0.5,
        lambda0: float = 0.3,
        decay: float = 0.99,
        eta: float = 0.5,
        credit: Literal["deferred", "online"] = "deferred",
        adaptive: bool = True,
        key: Literal["task_id", "instruction"] = "task_id",
        epoch: int = 0,
        format_penalty: Literal["malformed", "rejected"] = "malformed",  # ADMIRE Eq. 12
        base_on_success: bool = False,  # ADMIRE Eq. 10; True: App. B.3 ablation
        base_on_failure: bool = True,  # ADMIRE Eq. 11; False: App. B.3 ablation
    ):
        settings = dict(
            generator=generator,
            matcher=matcher,
            delta=delta,
            zeta=zeta,
            lambda0=lambda0,
            decay=decay,
            eta=eta,
            credit=credit,
            adaptive=adaptive,
            key=key,
            epoch=epoch,
            format_penalty=format_penalty,
            base_on_success=base_on_success,
            base_on_failure=base_on_failure,
        )
        self._configure(store, **settings)
        gym.utils.RecordConstructorArgs.__init__(self, **_recorded_args(store, **settings))
        gym.Wrapper.__init__(self, env)
        self._episode: _Episode | None = None
        self._last_episode: _Episode | None = None

    @property
    def milestones(self) -> list[str]:
        """The milestones this episode is matched against."""
        episode = self._episode or self._last_episode
        return list(episode.milestones) if episode is not None else []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        observation, info = self.env.reset(seed=seed, options=options)
        spec = self.env.spec
        env_id = spec.id if spec is not None else type(self.env.unwrapped).__name__
        self._episode, info["milestone"] = self._begin(observation, info, seed, env_id)
        return observation, info

    def step(self, action: Any):
        episode = self._episode
        if episode is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        observation, reward, terminated, truncated, info = self.env.step(action)
        step, target = self._new_step(episode, action, reward, terminated, truncated, info)
        similarities, model_error = (
            self._scores([step.action_description], [target]) if target is not None else ([], None)
        )
        similarity = similarities[0] if similarities else None
        reward, info["milestone"], ended = self._record(
            episode, step, similarity, observation, info, reward, model_error
        )
        if ended:
            self._episode, self._last_episode = None, episode
        return observation, reward, terminated, truncated, info


def _env_slice(batched: dict[str, Any], i: int) -> dict[str, Any]:
    """Sub-env ``i``'s entries of a vector env's info dict (Gymnasium's ``_key`` masks)."""
    out: dict[str, Any] = {}
    for key, value in batched.items():
        if key.startswith("_"):
            continue
        mask = batched.get(f"_{key}")
        if mask is not None and not mask[i]:
            continue
        if isinstance(value, dict):
            out[key] = _env_slice(value, i)
        else:
            item = value[i]
            out[key] = item.item() if isinstance(item, np.generic) else item
    return out


class MilestoneVectorWrapper(
    _MilestoneReward, gym.vector.VectorWrapper, gym.utils.RecordConstructorArgs
):
    """:class:`MilestoneWrapper` for a vector env: the sub-envs' actions of one step are
    matched in one batched call (:func:`~gui_gym.models.milestones.score_pairs`: one MiniLM
    forward pass for all new descriptions, or one batch of judge prompts).

    Rewards, credit, store updates and ``info["milestone"]`` are those of
    :class:`MilestoneWrapper`, per sub-env, batched the Gymnasium way: ``info["milestone"]``
    is a dict of arrays (lists such as ``milestones`` and ``episode_rewards`` in object
    arrays) with the mask ``info["_milestone"]``. Works with sync and async vector envs
    (it reads only observations and infos) in the ``NEXT_STEP`` (default) and
    ``SAME_STEP`` autoreset modes. In ``NEXT_STEP`` mode the step that resets a finished
    sub-env starts its new episode and pays nothing.

    Args:
        env: A vector env of gui-gym envs.
        store, generator, matcher, delta, zeta, lambda0, decay, eta, credit, adaptive, key,
            epoch, format_penalty, base_on_success, base_on_failure: As in
            :class:`MilestoneWrapper`.

    Raises:
        ValueError: for an argument out of range, or a vector env with autoreset disabled.
    """

    def __init__(
        self,
        env: gym.vector.VectorEnv,
        store: MilestoneStore | str | Path,
        generator: MilestoneGenerator | None = None,
        matcher: MilestoneMatcher | None = None,
        delta: float = 0.75,
        zeta: float = 0.5,
        lambda0: float = 0.3,
        decay: float = 0.99,
        eta: float = 0.5,
        credit: Literal["deferred", "online"] = "deferred",
        adaptive: bool = True,
        key: Literal["task_id", "instruction"] = "task_id",
        epoch: int = 0,
        format_penalty: Literal["malformed", "rejected"] = "malformed",  # ADMIRE Eq. 12
        base_on_success: bool = False,  # ADMIRE Eq. 10; True: App. B.3 ablation
        base_on_failure: bool = True,  # ADMIRE Eq. 11; False: App. B.3 ablation
    ):
        settings = dict(
            generator=generator,
            matcher=matcher,
            delta=delta,
            zeta=zeta,
            lambda0=lambda0,
            decay=decay,
            eta=eta,
            credit=credit,
            adaptive=adaptive,
            key=key,
            epoch=epoch,
            format_penalty=format_penalty,
            base_on_success=base_on_success,
            base_on_failure=base_on_failure,
        )
        self._configure(store, **settings)
        gym.utils.RecordConstructorArgs.__init__(self, **_recorded_args(store, **settings))
        gym.vector.VectorWrapper.__init__(self, env)
        mode = env.metadata.get("autoreset_mode", gym.vector.AutoresetMode.NEXT_STEP)
        mode = gym.vector.AutoresetMode(mode) if isinstance(mode, str) else mode
        if mode not in (gym.vector.AutoresetMode.NEXT_STEP, gym.vector.AutoresetMode.SAME_STEP):
            raise ValueError(
                f"MilestoneVectorWrapper needs autoreset mode NEXT_STEP or SAME_STEP, got {mode}"
            )
        self._same_step = mode == gym.vector.AutoresetMode.SAME_STEP
        self._env_ids = self._sub_env_ids()
        self._episodes: list[_Episode | None] = [None] * self.num_envs
        self._resetting = np.zeros(self.num_envs, dtype=bool)

    def _sub_env_ids(self) -> list[str]:
        spec = getattr(self.env.unwrapped, "spec", None)
        try:
            specs = self.env.unwrapped.get_attr("spec")
        except Exception:  # any vector env without sub-env specs
            specs = [spec] * self.num_envs
        return [s.id if s is not None else type(self.env.unwrapped).__name__ for s in specs]

    @property
    def milestones(self) -> list[list[str]]:
        """Each sub-env's current milestones."""
        return [list(e.milestones) if e is not None else [] for e in self._episodes]

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None):
        """Reset every sub-env and start their episodes."""
        observation, info = self.env.reset(seed=seed, options=options)
        seeds = (
            list(seed)
            if isinstance(seed, list | tuple)
            else [None if seed is None else seed + i for i in range(self.num_envs)]
        )
        infos: dict[str, Any] = {}
        for i in range(self.num_envs):
            episode, component = self._begin(
                _env_slice(observation, i), _env_slice(info, i), seeds[i], self._env_ids[i]
            )
            self._episodes[i] = episode
            infos = self._add_info(infos, {"milestone": component}, i)
        self._resetting[:] = False
        info.update(infos)
        return observation, info

    def step(self, actions: Any):
        """Step all sub-envs, match their actions in one batch, and pay the credit."""
        if any(e is None for e in self._episodes):
            raise gym.error.ResetNeeded("call reset() before step()")
        observation, reward, terminated, truncated, info = self.env.step(actions)
        reward = np.array(reward, dtype=np.float64, copy=True)
        pending: list[tuple[int, Step, dict[str, Any], dict[str, Any]]] = []
        descriptions: list[str] = []
        targets: list[str] = []
        rows: list[int] = []
        components: dict[int, dict[str, Any]] = {}
        for i in range(self.num_envs):
            obs_i, info_i = _env_slice(observation, i), _env_slice(info, i)
            episode = self._episodes[i]
            assert episode is not None
            if self._resetting[i]:  # NEXT_STEP autoreset: this step reset sub-env i
                self._episodes[i], components[i] = self._begin(
                    obs_i, info_i, None, self._env_ids[i]
                )
                continue
            if self._same_step and (terminated[i] or truncated[i]):
                # the observation is the next episode's; the finished one's is in final_obs
                obs_i = dict(info["final_obs"][i])
                info_i = _env_slice(info["final_info"], i)
            action = (
                {k: v[i] for k, v in actions.items()} if isinstance(actions, dict) else actions[i]
            )
            step, target = self._new_step(
                episode, action, float(reward[i]), bool(terminated[i]), bool(truncated[i]), info_i
            )
            if target is not None:
                rows.append(len(pending))
                descriptions.append(step.action_description)
                targets.append(target)
            pending.append((i, step, obs_i, info_i))
        similarities: list[float | None] = [None] * len(pending)
        scores, model_error = self._scores(descriptions, targets)
        scored = set(rows)
        for row, value in zip(rows, scores):
            similarities[row] = value
        for row, ((i, step, obs_i, info_i), similarity) in enumerate(zip(pending, similarities)):
            episode = self._episodes[i]
            assert episode is not None
            reward[i], components[i], ended = self._record(
                episode,
                step,
                similarity,
                obs_i,
                info_i,
                reward[i],
                model_error if row in scored else None,
            )
            if ended and self._same_step:
                self._episodes[i], _ = self._begin(
                    _env_slice(observation, i), _env_slice(info, i), None, self._env_ids[i]
                )
        infos: dict[str, Any] = {}
        for i in sorted(components):
            infos = self._add_info(infos, {"milestone": components[i]}, i)
        info.update(infos)
        self._resetting = np.logical_or(terminated, truncated) & (not self._same_step)
        return observation, reward, terminated, truncated, info
