"""``ProgressRewardWrapper``: ProgRM's progress reward added to every step.

``reward += weight * (Prog(s_t) - Prog(s_{t-k}))`` (ProgRM Eq. 2), with ``Prog(s_0)`` scored on
the reset observation. ``info["progress"]`` carries the value, the delta and the reference
value it was compared with. A model backed by an LLM (``LLMProgressJudge``) can fail: its
:class:`~gui_gym.models.llm.LLMError` never reaches the rollout; the step earns no progress
reward, the last value stands, a warning is logged and ``info["progress"]["model_error"]``
says why. :class:`ProgressRewardVectorWrapper` does the same for a
Gymnasium vector env with one batched model call per step, through the same per-env track
(:class:`_Track`) as the single-env wrapper.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv, VectorWrapper

from gui_gym.models.llm import LLMError, ModelUnavailable
from gui_gym.models.progress import ProgressModel, ProgressQuery
from gui_gym.rewards.progress import progress_gain
from gui_gym.wrappers.vector_slice import action_slice, autoreset_mode, env_slice

logger = logging.getLogger(__name__)

__all__ = ["OutcomeModelWrapper", "ProgressRewardVectorWrapper", "ProgressRewardWrapper"]


def _check_args(model: Any, k: Any, weight: Any) -> tuple[int, float]:
    if not callable(getattr(model, "predict", None)):
        raise TypeError(
            f"model must have predict(queries) -> values (a ProgressModel such as "
            f"MilestoneProgress or ProgRM), got {type(model).__name__}"
        )
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be an int >= 1 (the paper uses 1), got {k!r}")
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight):
        raise ValueError(f"weight must be a finite number, got {weight!r}")
    return k, float(weight)


def _predict(model: ProgressModel, queries: Sequence[ProgressQuery]) -> list[float]:
    """``Prog`` of each queried state, in one ``model.predict`` call."""
    return _checked(model.predict(queries), len(queries)) if queries else []


def _checked(values: Sequence[float], count: int) -> list[float]:
    out = [float(v) for v in values]
    if len(out) != count:
        raise ValueError(f"the progress model returned {len(out)} values for {count} states")
    for v in out:
        if not 0.0 <= v <= 1.0:  # also rejects NaN
            raise ValueError(f"the progress model returned {v!r}, outside [0, 1]")
    return out


def _action_text(info: dict[str, Any], action: Any) -> str:
    return info.get("action_description") or info.get("action") or str(action)


@dataclass
class _Track:
    """One env's episode as ProgRM scores it: the task, the descriptions of the actions
    taken so far, and the last ``k + 1`` values ``Prog(s_{t-k}) .. Prog(s_t)`` (Eq. 2)."""

    k: int
    task_id: str = ""
    total: int | None = None
    actions: list[str] = field(default_factory=list)
    values: deque[float] = field(init=False)

    def __post_init__(self) -> None:
        self.values = deque(maxlen=self.k + 1)

    def query(self, observation: dict[str, Any], milestones: Sequence[str]) -> ProgressQuery:
        """ProgRM's state ``[g, a_1..a_t, o_{t+1}]`` (Eq. 6) after the actions so far."""
        return ProgressQuery(
            observation["instruction"],
            tuple(self.actions),
            observation["screen"],
            self.task_id,
            milestones,
            self.total,
        )

    def push(self, value: float) -> tuple[float, float]:
        """Add ``Prog(s_t)``; returns the delta ``Prog(s_t) - Prog(s_{t-k})`` (ProgRM Eq. 2,
        against the oldest value kept early in an episode) and that reference."""
        self.values.append(value)
        return progress_gain(self.values), self.values[0]


def _step_tracked(wrapper: Any, action: Any) -> tuple[_Track, Any]:
    """The wrapper's episode track and ``env.step(action)``; a track is made at reset."""
    track = wrapper._track
    if track is None:
        raise gym.error.ResetNeeded("call reset() before step()")
    return track, wrapper.env.step(action)


class ProgressRewardWrapper(
    gym.Wrapper[dict[str, Any], Any, dict[str, Any], Any], gym.utils.RecordConstructorArgs
):
    """Add ProgRM's progress reward ``weight * (Prog(s_t) - Prog(s_{t-k}))`` to each step.

    The state scored after each step is ProgRM's ``[g, a_1..a_t, o_{t+1}]`` (Eq. 6): the
    instruction, the descriptions of the actions taken so far and the new screen. Early in an
    episode (``t < k``) the reference is ``Prog(s_0)``, scored at reset. The env's own reward
    is kept (``info["task_reward"]`` keeps the outcome in any case).

    ``info["progress"] = {"value": Prog(s_t), "delta": Prog(s_t) - Prog(s_{t-k}),
    "reference": Prog(s_{t-k})}``; at reset the delta is 0.

    A model that also has ``milestone_progress(reached, total, task_id)`` (as
    :class:`~gui_gym.models.progress.MilestoneProgress` does) is asked that instead of
    ``predict``: the milestone count is all it reads, so no query is built per step.

    Args:
        env: A gui-gym env (its info must carry ``action_description``; ``milestones`` for
            :class:`~gui_gym.models.progress.MilestoneProgress`).
        model: A progress model: ``predict(queries) -> values in [0, 1]``.
        k: History length of Eq. 2 (the paper uses 1).
        weight: Scale of the progress reward.

    Raises:
        TypeError: if ``model`` has no ``predict``.
        ValueError: for ``k < 1`` or a non-finite ``weight``; at run time, when the model
            returns a value outside ``[0, 1]``.
    """

    def __init__(self, env: gym.Env, model: ProgressModel, k: int = 1, weight: float = 1.0):
        k, weight = _check_args(model, k, weight)
        # the model (a network, an LLM client) is shared, never deep-copied
        gym.utils.RecordConstructorArgs.__init__(
            self, _disable_deepcopy=True, model=model, k=k, weight=weight
        )
        gym.Wrapper.__init__(self, env)
        self.model = model
        self.k = k
        self.weight = weight
        # A model that reads only the milestone count (MilestoneProgress) is asked for that
        # count directly: no query to build, no history to keep.
        self._by_milestones = getattr(model, "milestone_progress", None)
        self._track: _Track | None = None

    def _score(self, observation: dict[str, Any], info: dict[str, Any]) -> float:
        """``Prog`` of the current state (the step's hot path is inlined in :meth:`step`)."""
        track = self._track
        assert track is not None
        by_milestones = self._by_milestones
        if by_milestones is not None:
            value = by_milestones(len(info.get("milestones", ())), track.total, track.task_id)
            if not 0.0 <= value <= 1.0:  # also rejects NaN
                raise ValueError(f"the progress model returned {value!r}, outside [0, 1]")
            return value
        return _predict(self.model, [track.query(observation, info.get("milestones", ()))])[0]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        task = getattr(self.env.unwrapped, "task", None)
        total = len(getattr(task, "milestones", ())) or None
        self._track = _Track(self.k, info.get("task_id", ""), total)
        try:
            value: float | None = self._score(observation, info)
            error = None
        except ModelUnavailable:  # no answer: infrastructure, not a score
            raise
        except LLMError as err:  # the first scored state becomes the reference instead
            value, error = None, _model_error(err)
        if value is not None:
            self._track.values.append(value)
        info["progress"] = {"value": value, "delta": 0.0, "reference": value, "model_error": error}
        return observation, info

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        track, (observation, reward, terminated, truncated, info) = _step_tracked(self, action)
        by_milestones = self._by_milestones
        if by_milestones is not None:
            value = by_milestones(len(info.get("milestones", ())), track.total, track.task_id)
            if not 0.0 <= value <= 1.0:  # also rejects NaN
                raise ValueError(f"the progress model returned {value!r}, outside [0, 1]")
        else:
            track.actions.append(_action_text(info, action))
            try:
                value = self._score(observation, info)
            except ModelUnavailable:  # no answer: infrastructure, not a score
                raise
            except LLMError as err:  # neutral: no progress reward, the last value stands
                last = track.values[-1] if track.values else None
                info["progress"] = {
                    "value": last,
                    "delta": 0.0,
                    "reference": last,
                    "model_error": _model_error(err),
                }
                return observation, reward, terminated, truncated, info
        values = track.values  # Track.push inlined: this is the per-step hot path
        values.append(value)
        delta = progress_gain(values)  # ProgRM Eq. 2 (values is a deque of k + 1)
        info["progress"] = {
            "value": value,
            "delta": delta,
            "reference": values[0],
            "model_error": None,
        }
        return observation, reward + self.weight * delta, terminated, truncated, info


class ProgressRewardVectorWrapper(VectorWrapper, gym.utils.RecordConstructorArgs):
    """:class:`ProgressRewardWrapper` for a Gymnasium vector env, scoring all sub-envs in one
    ``model.predict`` call per step.

    Works with the ``NEXT_STEP`` autoreset mode (Gymnasium's default: the step after an
    episode ends resets that sub-env; its reward is left alone and its progress restarts
    from ``Prog(s_0)``) and ``SAME_STEP`` (the ending step is scored on ``final_obs``, then
    the reset observation is scored as the new ``s_0``). ``infos["progress"]`` holds arrays
    ``value``, ``delta`` and ``reference`` over the sub-envs; a sub-env that resets this step
    reports its new ``Prog(s_0)`` with delta 0 (``NEXT_STEP``) or its ended step
    (``SAME_STEP``).

    Milestone totals are not in a vector env's info: give
    :class:`~gui_gym.models.progress.MilestoneProgress` its totals
    (``MilestoneProgress.from_env_id(env_id)``).

    Args:
        env: The vector env.
        model: A progress model.
        k: History length of Eq. 2.
        weight: Scale of the progress reward.

    Raises:
        TypeError: if ``env`` is not a vector env or ``model`` has no ``predict``.
        ValueError: for a bad ``k``/``weight`` or the ``DISABLED`` autoreset mode.
    """

    def __init__(self, env: VectorEnv, model: ProgressModel, k: int = 1, weight: float = 1.0):
        k, weight = _check_args(model, k, weight)
        # the model (a network, an LLM client) is shared, never deep-copied
        gym.utils.RecordConstructorArgs.__init__(
            self, _disable_deepcopy=True, model=model, k=k, weight=weight
        )
        VectorWrapper.__init__(self, env)
        mode = autoreset_mode(env)
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise ValueError(
                f"autoreset mode {mode} is not supported; use NEXT_STEP (the default) or SAME_STEP"
            )
        self.autoreset_mode = mode
        self.model = model
        self.k = k
        self.weight = weight
        self._tracks = [_Track(k) for _ in range(self.num_envs)]
        self._ended = np.zeros(self.num_envs, dtype=bool)

    def _start(self, i: int, info: dict[str, Any]) -> _Track:
        """Sub-env ``i``'s new episode (its ``Prog(s_0)`` still to score)."""
        self._tracks[i] = _Track(self.k, str(info.get("task_id", "")))
        return self._tracks[i]

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        observation, infos = self.env.reset(seed=seed, options=options)
        mask = (options or {}).get("reset_mask")
        rows = range(self.num_envs) if mask is None else np.flatnonzero(np.asarray(mask))
        queries = []
        for i in rows:
            obs_i, info_i = env_slice(observation, i), env_slice(infos, i)
            queries.append(self._start(i, info_i).query(obs_i, _milestones(info_i)))
            self._ended[i] = False
        error = None
        try:
            values = _predict(self.model, queries)
        except ModelUnavailable:  # no answer: infrastructure, not a score
            raise
        except LLMError as err:  # each env's first scored state becomes its reference
            values, error = [], _model_error(err)
        for i, v in zip(rows, values):
            self._tracks[i].values.append(v)
        current = np.array(
            [t.values[-1] if t.values else np.nan for t in self._tracks], dtype=np.float64
        )
        self._attach(infos, current, np.zeros(self.num_envs), current.copy(), error)
        return observation, infos

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        observation, rewards, terminations, truncations, infos = self.env.step(actions)
        n = self.num_envs
        ended_now = np.logical_or(terminations, truncations)
        next_step = self.autoreset_mode is AutoresetMode.NEXT_STEP
        queries: list[ProgressQuery] = []
        plan: list[tuple[int, _Track, bool]] = []  # (env index, its track, a new episode?)
        for i in range(n):
            obs_i, info_i = env_slice(observation, i), env_slice(infos, i)
            if not next_step and ended_now[i]:  # SAME_STEP: score the ending step, then s_0
                final_info = env_slice(infos.get("final_info", {}), i)
                track = self._tracks[i]
                track.actions.append(_action_text(final_info, action_slice(actions, i)))
                queries.append(track.query(infos["final_obs"][i], _milestones(final_info)))
                plan.append((i, track, False))
            if (next_step and self._ended[i]) or (not next_step and ended_now[i]):
                queries.append(self._start(i, info_i).query(obs_i, _milestones(info_i)))
                plan.append((i, self._tracks[i], True))
                continue
            track = self._tracks[i]
            track.actions.append(_action_text(info_i, action_slice(actions, i)))
            queries.append(track.query(obs_i, _milestones(info_i)))
            plan.append((i, track, False))
        deltas = np.zeros(n, dtype=np.float64)
        value = np.zeros(n, dtype=np.float64)
        reference = np.zeros(n, dtype=np.float64)
        if next_step:
            self._ended = np.asarray(ended_now, dtype=bool).copy()
        try:
            values = _predict(self.model, queries)
        except ModelUnavailable:  # no answer: infrastructure, not a score
            raise
        except LLMError as err:  # neutral for every env: no progress reward, values stand
            for i, track in enumerate(self._tracks):
                value[i] = reference[i] = track.values[-1] if track.values else np.nan
            self._attach(infos, value, deltas, reference, _model_error(err))
            return observation, rewards, terminations, truncations, infos
        for (i, track, new_episode), v in zip(plan, values):
            if not new_episode:
                deltas[i], reference[i] = track.push(v)
                value[i] = v
            else:
                track.values.append(v)
                if next_step:
                    value[i] = reference[i] = v
        self._attach(infos, value, deltas, reference)
        rewards = np.asarray(rewards, dtype=np.float64) + self.weight * deltas
        return observation, rewards, terminations, truncations, infos

    def _attach(
        self,
        infos: dict[str, Any],
        value: np.ndarray,
        delta: np.ndarray,
        reference: np.ndarray,
        error: str | None = None,
    ) -> None:
        infos["progress"] = {
            "value": value,
            "delta": delta,
            "reference": reference,
            "model_error": np.full(self.num_envs, error, dtype=object),
        }
        infos["_progress"] = np.ones(self.num_envs, dtype=bool)


def _model_error(err: LLMError) -> str:
    logger.warning("progress model failed; this step earns no progress reward: %s", err)
    return f"{type(err).__name__}: {err}"


def _milestones(info: dict[str, Any]) -> Sequence[str]:
    return info.get("milestones", ()) or ()


class OutcomeModelWrapper(
    gym.Wrapper[dict[str, Any], Any, dict[str, Any], Any], gym.utils.RecordConstructorArgs
):
    """A learned outcome reward model (ORM) in place of the task's outcome: ProgRM Table 1's
    baseline ("w/ ORM"), the model a ``gui-gym train-progress --kind orm`` run trains on each
    trajectory's final state and success (ProgRM Sec. 3.1).

    When an episode ends (terminated or truncated), the ORM scores the final state
    ``[g, a_1..a_T, o_{T+1}]`` (the same query as ProgRM's, Eq. 6) and its score in ``[0, 1]``
    replaces the env's outcome in that step's reward: ``reward - task_reward + ORM(s_T)``.
    Earlier steps are left alone. ``info["orm"] = {"reward", "task_reward"}`` on the last step
    (trainers read ``reward`` as the episode's outcome, as they read a ProRe judge's); the
    task's own outcome stays in ``info["task_reward"]`` for evaluation.

    Args:
        env: A gui-gym env (possibly wrapped).
        model: ``predict(queries) -> values in [0, 1]`` (a :class:`~gui_gym.models.
            progress_model.ProgRM` trained with ``kind="orm"``).

    Raises:
        TypeError: if ``model`` has no ``predict``.
        ValueError: at run time, when the model returns a value outside ``[0, 1]``.
    """

    def __init__(self, env: gym.Env, model: ProgressModel):
        _check_args(model, 1, 1.0)
        gym.utils.RecordConstructorArgs.__init__(self, _disable_deepcopy=True, model=model)
        gym.Wrapper.__init__(self, env)
        self.model = model
        self._track: _Track | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        self._track = _Track(1, info.get("task_id", ""))
        return observation, info

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        track, (observation, reward, terminated, truncated, info) = _step_tracked(self, action)
        track.actions.append(_action_text(info, action))
        if terminated or truncated:
            [score] = _predict(self.model, [track.query(observation, info.get("milestones", ()))])
            task_reward = float(info.get("task_reward", 0.0))
            info["orm"] = {"reward": score, "task_reward": task_reward}
            reward = float(reward) - task_reward + score
            self._track = None
        return observation, reward, terminated, truncated, info
