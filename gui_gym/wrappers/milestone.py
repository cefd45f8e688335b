"""ADMIRE's adaptive milestone reward (Adaptive Milestone Reward for GUI Agents) on any gui-gym
env: :class:`MilestoneWrapper` for one env, :class:`MilestoneVectorWrapper` for a vector env
(one batched matcher call per step for all sub-envs). Both run one
:class:`~gui_gym.models.milestones.tracker.MilestoneTracker`, the engine that matches, updates
the store and pays the credit; they only feed it steps and report what it says."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numpy as np

from gui_gym.core.trajectory import Step, Trajectory
from gui_gym.models.milestones import MilestoneGenerator, MilestoneMatcher
from gui_gym.models.milestones.tracker import MilestoneEpisode, MilestoneTracker
from gui_gym.rewards.milestone_store import MilestoneStore
from gui_gym.wrappers.vector_slice import action_slice, autoreset_mode, env_slice

__all__ = ["MilestoneVectorWrapper", "MilestoneWrapper"]

_TRACKER_READS = frozenset({*(f.name for f in fields(MilestoneTracker)), "weight"})


class _MilestoneReward(gym.utils.RecordConstructorArgs):
    """The constructor both milestone wrappers share, and their handles on the tracker."""

    def __init__(
        self,
        env: gym.Env | gym.vector.VectorEnv,
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
        # every argument but env, as given: the tracker's settings and the spec's record
        settings = {name: value for name, value in locals().items() if name not in ("self", "env")}
        self.tracker = MilestoneTracker(**settings)
        path = store.path if isinstance(store, MilestoneStore) else store
        # generator and matcher hold models, clients and locks: record them as shared
        # handles (no deep copy); everything else recorded is an immutable value
        gym.utils.RecordConstructorArgs.__init__(
            self, _disable_deepcopy=True, **{**settings, "store": str(path)}
        )
        self._wrap(env)
        # an LLM generator checks its screenshots setting against the env (one line at
        # construction: a text-only model handed screenshots, or screenshots the env lacks)
        check = getattr(self.tracker.generator, "check_env", None)
        if callable(check):
            spaces = getattr(env, "single_observation_space", None) or env.observation_space
            check("screenshot" in (getattr(spaces, "spaces", None) or {}))

    def _wrap(self, env: Any) -> None:
        raise NotImplementedError  # each wrapper wraps its kind of env

    def __getattr__(self, name: str) -> Any:
        # the tracker's settings (store, generator, matcher, delta, ..., format_penalty) and
        # its current weight read through, as they did when the wrappers held them
        if name in _TRACKER_READS:
            return getattr(self.tracker, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def set_epoch(self, epoch: int) -> None:
        """Set the training epoch E that decays the milestone weight to
        ``lambda0 * decay**E`` (ADMIRE Algorithm 1 line 4). Through a vector env of
        single-env wrappers: ``envs.call("set_epoch", E)``."""
        self.tracker.set_epoch(epoch)

    def refine_from_success(self, trajectory: Trajectory) -> dict[str, Any]:
        """Initialise (Eq. 6) or refine (Eq. 7) the task's milestones from one successful
        trajectory (:meth:`MilestoneTracker.refine_from_success
        <gui_gym.models.milestones.tracker.MilestoneTracker.refine_from_success>`).

        A trainer that refines once per batch, as ADMIRE's Algorithm 1 does, runs the wrapper
        with ``adaptive=False``, calls this with the batch's best success, then scores every
        trajectory of the batch with :meth:`score_trajectory`, so one group never mixes
        milestone versions (:meth:`MilestoneTracker.refine_batch
        <gui_gym.models.milestones.tracker.MilestoneTracker.refine_batch>` does both).
        """
        return self.tracker.refine_from_success(trajectory)

    def score_trajectory(self, trajectory: Trajectory) -> dict[str, Any]:
        """The end-of-episode ``info["milestone"]`` entries of a finished trajectory matched
        against the task's current milestones; the store is not changed."""
        return self.tracker.score_trajectory(trajectory)


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

    The engine is ``tracker``, a :class:`~gui_gym.models.milestones.tracker.MilestoneTracker`;
    its settings (``store``, ``generator``, ``matcher``, ``delta``, ...) and ``weight`` read
    through the wrapper, and :meth:`set_epoch`, :meth:`refine_from_success` and
    :meth:`score_trajectory` call it.

    Raises:
        ValueError: for an argument out of range.
    """

    def _wrap(self, env: gym.Env) -> None:
        gym.Wrapper.__init__(self, env)  # type: ignore[arg-type]
        self._episode: MilestoneEpisode | None = None
        self._last_episode: MilestoneEpisode | None = None

    @property
    def milestones(self) -> list[str]:
        """The milestones this episode is matched against."""
        episode = self._episode or self._last_episode
        return list(episode.milestones) if episode is not None else []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        observation, info = self.env.reset(seed=seed, options=options)
        spec = self.env.spec
        env_id = spec.id if spec is not None else type(self.env.unwrapped).__name__
        self._episode, info["milestone"] = self.tracker.begin(observation, info, seed, env_id)
        return observation, info

    def step(self, action: Any):
        episode = self._episode
        if episode is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        observation, reward, terminated, truncated, info = self.env.step(action)
        tracker = self.tracker
        step, target = tracker.observe(episode, action, reward, terminated, truncated, info)
        similarities, model_error = (
            tracker.scores([step.action_description], [target])
            if target is not None
            else ([], None)
        )
        similarity = similarities[0] if similarities else None
        reward, info["milestone"], ended = tracker.record(
            episode, step, similarity, observation, info, reward, model_error
        )
        if ended:
            self._episode, self._last_episode = None, episode
        return observation, reward, terminated, truncated, info


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

    def _wrap(self, env: gym.vector.VectorEnv) -> None:
        gym.vector.VectorWrapper.__init__(self, env)  # type: ignore[arg-type]
        mode = autoreset_mode(env)
        if mode not in (gym.vector.AutoresetMode.NEXT_STEP, gym.vector.AutoresetMode.SAME_STEP):
            raise ValueError(
                f"MilestoneVectorWrapper needs autoreset mode NEXT_STEP or SAME_STEP, got {mode}"
            )
        self._same_step = mode == gym.vector.AutoresetMode.SAME_STEP
        self._env_ids = self._sub_env_ids()
        self._episodes: list[MilestoneEpisode | None] = [None] * self.num_envs
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
            episode, component = self.tracker.begin(
                env_slice(observation, i), env_slice(info, i), seeds[i], self._env_ids[i]
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
        tracker = self.tracker
        observation, reward, terminated, truncated, info = self.env.step(actions)
        reward = np.array(reward, dtype=np.float64, copy=True)
        pending: list[tuple[int, Step, dict[str, Any], dict[str, Any]]] = []
        descriptions: list[str] = []
        targets: list[str] = []
        rows: list[int] = []
        components: dict[int, dict[str, Any]] = {}
        for i in range(self.num_envs):
            obs_i, info_i = env_slice(observation, i), env_slice(info, i)
            episode = self._episodes[i]
            assert episode is not None
            if self._resetting[i]:  # NEXT_STEP autoreset: this step reset sub-env i
                self._episodes[i], components[i] = tracker.begin(
                    obs_i, info_i, None, self._env_ids[i]
                )
                continue
            if self._same_step and (terminated[i] or truncated[i]):
                # the observation is the next episode's; the finished one's is in final_obs
                obs_i = dict(info["final_obs"][i])
                info_i = env_slice(info["final_info"], i)
            step, target = tracker.observe(
                episode,
                action_slice(actions, i),
                float(reward[i]),
                bool(terminated[i]),
                bool(truncated[i]),
                info_i,
            )
            if target is not None:
                rows.append(len(pending))
                descriptions.append(step.action_description)
                targets.append(target)
            pending.append((i, step, obs_i, info_i))
        similarities: list[float | None] = [None] * len(pending)
        scores, model_error = tracker.scores(descriptions, targets)
        scored = set(rows)
        for row, value in zip(rows, scores):
            similarities[row] = value
        for row, ((i, step, obs_i, info_i), similarity) in enumerate(zip(pending, similarities)):
            episode = self._episodes[i]
            assert episode is not None
            reward[i], components[i], ended = tracker.record(
                episode,
                step,
                similarity,
                obs_i,
                info_i,
                reward[i],
                model_error if row in scored else None,
            )
            if ended and self._same_step:
                self._episodes[i], _ = tracker.begin(
                    env_slice(observation, i), env_slice(info, i), None, self._env_ids[i]
                )
        infos: dict[str, Any] = {}
        for i in sorted(components):
            infos = self._add_info(infos, {"milestone": components[i]}, i)
        info.update(infos)
        self._resetting = np.logical_or(terminated, truncated) & (not self._same_step)
        return observation, reward, terminated, truncated, info
