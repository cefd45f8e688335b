"""``MilestoneWrapper``: ADMIRE's adaptive milestone reward (Adaptive Milestone Reward for GUI
Agents) on any gui-gym env."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym

from gui_gym.core.trajectory import Step, Trajectory
from gui_gym.models.milestones import (
    CosineMatcher,
    MilestoneGenerationError,
    MilestoneGenerator,
    MilestoneMatcher,
    TrajectoryMilestoneGenerator,
)
from gui_gym.rewards.milestone_store import MilestoneStore, StaleMilestonesError
from gui_gym.rewards.milestones import (
    advance_pointer,
    format_reward,
    milestone_step_rewards,
    milestone_weight,
    total_step_rewards,
)

__all__ = ["MilestoneWrapper"]

logger = logging.getLogger(__name__)

_COMMIT_ATTEMPTS = 3


class MilestoneWrapper(
    gym.Wrapper[dict[str, Any], Any, dict[str, Any], Any], gym.utils.RecordConstructorArgs
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
    ):
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
        # generator and matcher hold models, clients and locks: record them as shared
        # handles (no deep copy); everything else recorded is an immutable value
        gym.utils.RecordConstructorArgs.__init__(
            self,
            _disable_deepcopy=True,
            store=str(store.path) if isinstance(store, MilestoneStore) else str(store),
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
        )
        gym.Wrapper.__init__(self, env)
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
        self._task_key = ""
        self._version = 0
        self._milestones: list[str] = []
        self._pointer = 0
        self._trajectory: Trajectory | None = None
        self._seed: int | None = None
        self._screen = ""

    # ------------------------------------------------------------------------------ public

    def set_epoch(self, epoch: int) -> None:
        """Set the training epoch E that decays the milestone weight to
        ``lambda0 * decay**E`` (ADMIRE Algorithm 1 line 4). Through a vector env:
        ``envs.call("set_epoch", E)``."""
        milestone_weight(epoch, self.lambda0, self.decay)  # validates
        self.epoch = int(epoch)

    @property
    def weight(self) -> float:
        """The current milestone weight ``lambda0 * decay**epoch``."""
        return milestone_weight(self.epoch, self.lambda0, self.decay)

    @property
    def milestones(self) -> list[str]:
        """The milestones this episode is matched against."""
        return list(self._milestones)

    # ------------------------------------------------------------------------ gym contract

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        observation, info = self.env.reset(seed=seed, options=options)
        self._seed = seed
        task_id = str(info.get("task_id", ""))
        instruction = str(observation.get("instruction", ""))
        self._task_key = instruction if self.key == "instruction" else task_id
        if not self._task_key:
            raise ValueError(f"the env gave no {self.key} to key the milestones by")
        self._load_milestones()
        spec = self.env.spec
        self._trajectory = Trajectory(
            env_id=spec.id if spec is not None else type(self.env.unwrapped).__name__,
            task_id=task_id,
            instruction=instruction,
            seed=seed,
        )
        self._screen = str(observation.get("screen", ""))  # generators cut loops by screen
        info["milestone"] = self._step_info(similarity=None, hit=False, r_mil=0.0)
        return observation, info

    def step(self, action: Any):
        if self._trajectory is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        observation, reward, terminated, truncated, info = self.env.step(action)
        trajectory = self._trajectory
        step = Step.from_transition(
            len(trajectory.steps), self._screen, action, reward, terminated, truncated, info
        )
        self._screen = str(observation.get("screen", ""))
        trajectory.steps.append(step)
        similarity: float | None = None
        r_mil = 0.0
        before = self._pointer
        if step.action_valid and self._pointer < len(self._milestones):
            similarity = float(
                self.matcher.score(step.action_description, self._milestones[self._pointer])
            )
            r_mil, self._pointer = advance_pointer(
                self._pointer, len(self._milestones), similarity, self.delta
            )
        hit = self._pointer != before
        step.info = {"milestone_hit": hit, "r_mil": r_mil}
        if self.credit == "online":
            reward = (
                float(reward) + self.eta * format_reward(step.action_valid) + self.weight * r_mil
            )
        component = self._step_info(similarity=similarity, hit=hit, r_mil=r_mil)
        if terminated or truncated:
            trajectory.finish(observation, info)
            component.update(self._finish(trajectory))
            self._trajectory = None
        info["milestone"] = component
        return observation, reward, terminated, truncated, info

    # ----------------------------------------------------------------------------- helpers

    def _load_milestones(self) -> None:
        current = self.store.get(self._task_key)
        self._milestones = list(current.milestones) if current else []
        self._version = current.version if current else 0
        self._pointer = 0
        prepare = getattr(self.matcher, "prepare", None)
        if prepare is not None and self._milestones:
            prepare(self._milestones)

    def _step_info(self, similarity: float | None, hit: bool, r_mil: float) -> dict[str, Any]:
        return {
            "task_key": self._task_key,
            "version": self._version,
            "milestones": list(self._milestones),
            "K": len(self._milestones),
            "pointer": self._pointer,
            "k": self._pointer,  # one hit per milestone, in order: k equals the pointer
            "similarity": similarity,
            "hit": hit,
            "r_mil": r_mil,
            "weight": self.weight,
        }

    def _rematch(self, trajectory: Trajectory) -> None:
        """Match the finished episode again against the current milestones."""
        self._pointer = 0
        for step in trajectory.steps:
            r_mil = 0.0
            before = self._pointer
            if step.action_valid and self._pointer < len(self._milestones):
                similarity = self.matcher.score(
                    step.action_description, self._milestones[self._pointer]
                )
                r_mil, self._pointer = advance_pointer(
                    self._pointer, len(self._milestones), float(similarity), self.delta
                )
            step.info = {"milestone_hit": self._pointer != before, "r_mil": r_mil}

    def _finish(self, trajectory: Trajectory) -> dict[str, Any]:
        success = bool(trajectory.success)
        if success and self.adaptive:
            update = self._update_store(trajectory)
            if update.get("version", self._version) != self._version:
                self._load_milestones()
                self._rematch(trajectory)  # Algorithm 1: rewards after the update
        else:
            update = {
                "status": "skipped",
                "reason": "not adaptive" if success else "episode failed",
                "version": self._version,
            }
        hits = [bool(s.info["milestone_hit"]) for s in trajectory.steps]
        r_mil = [float(s.info["r_mil"]) for s in trajectory.steps]
        episode = milestone_step_rewards(hits, r_mil, len(self._milestones), success, self.zeta)
        total = total_step_rewards(
            episode,
            outcome=1.0 if success else 0.0,
            format_rewards=[format_reward(s.action_valid) for s in trajectory.steps],
            epoch=self.epoch,
            lambda0=self.lambda0,
            decay=self.decay,
            eta=self.eta,
        )
        return {
            "version": self._version,
            "milestones": list(self._milestones),
            "K": len(self._milestones),
            "pointer": self._pointer,
            "k": self._pointer,
            "success": success,
            "hits": [t for t, h in enumerate(hits) if h],
            "episode_rewards": episode,
            "episode_total_rewards": total,
            "update": update,
        }

    def _update_store(self, trajectory: Trajectory) -> dict[str, Any]:
        """Initialise or refine the task's milestones from a success (Eq. 6 / Eq. 7)."""
        key = self._task_key
        for _ in range(_COMMIT_ATTEMPTS):
            current = self.store.get(key)
            base = current.version if current else 0
            try:
                if current is None:
                    kind, proposed = "init", self.generator.initialize(trajectory)
                else:
                    kind = "refine"
                    proposed = self.generator.refine(trajectory, list(current.milestones))
            except MilestoneGenerationError as err:
                logger.warning("milestones of %r left unchanged: %s", key, err)
                return {"status": "rejected", "reason": str(err), "version": base}
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
                        "seed": self._seed,
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
