"""``PRMWrapper`` and ``PRMVectorWrapper``: GUI-Shepherd's dense process reward.

GUI-Shepherd's online PPO rewards every step with the PRM's score of the action taken from
the state before it, plus a format reward (Sec. 4.1, Eq. 3; App. B.2). The arithmetic is
:func:`gui_gym.rewards.prm.prm_step_reward`; these wrappers only gather the query, call the
PRM, and add the result. ``PRMVectorWrapper`` does the same for a whole vector env with one
batched PRM call per step.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from gui_gym.core.actions import ActionParseError, parse_action
from gui_gym.models.prm import PRMOutputError, ProcessRewardModel
from gui_gym.rewards.prm import PRMQuery, format_step_reward, prm_step_reward

__all__ = ["FormatRewardWrapper", "PRMVectorWrapper", "PRMWrapper"]


def _check_args(
    prm: Any,
    weight: float,
    format_weight: float,
    invalid_penalty: float,
    history_length: int,
    outcome_weight: float,
) -> None:
    if not callable(getattr(prm, "score", None)):
        raise TypeError(
            f"prm must have score(queries, envs=None) (a ProcessRewardModel), got {type(prm).__name__}"
        )
    for name, value in (
        ("weight", weight),
        ("format_weight", format_weight),
        ("invalid_penalty", invalid_penalty),
        ("outcome_weight", outcome_weight),
    ):
        if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if (
        isinstance(history_length, bool)
        or not isinstance(history_length, int)
        or history_length < 0
    ):
        raise ValueError(f"history_length must be a non-negative int, got {history_length!r}")


def _checked_scores(prm: Any, values: Any, n: int) -> np.ndarray:
    scores = np.asarray(values, dtype=np.float64).reshape(-1)
    if scores.shape != (n,):
        raise PRMOutputError(
            f"{type(prm).__name__} returned {scores.shape[0]} scores for {n} queries"
        )
    if not (np.isfinite(scores).all() and (scores >= 0).all() and (scores <= 1).all()):
        raise PRMOutputError(
            f"{type(prm).__name__} returned scores outside [0, 1]: {scores.tolist()[:8]}"
        )
    return scores


def _try_parse(action: Any) -> str | None:
    """The canonical text of ``action``, or None when it does not parse."""
    try:
        return str(parse_action(action))
    except ActionParseError:
        return None


def _last_error(prm: Any, i: int) -> str | None:
    errors = getattr(prm, "last_errors", None)
    if isinstance(errors, list) and i < len(errors):
        return errors[i]
    return None


class PRMWrapper(
    gym.Wrapper[dict[str, Any], Any, dict[str, Any], Any], gym.utils.RecordConstructorArgs
):
    """Reward every step with GUI-Shepherd's process reward.

    ``reward = outcome_weight * task outcome + prm + format + invalid``
    (:func:`~gui_gym.rewards.prm.prm_step_reward`):

    * ``prm = weight * PRM(g, s_t, a_t)`` for an action the env accepted, scored on the
      instruction, the screen the action was chosen on, the action and its description, and
      the descriptions of the last ``history_length`` actions;
    * ``format = format_weight`` for an action that parsed;
    * ``invalid = invalid_penalty`` for an action that did not parse or that the env rejected
      (such actions are not sent to the PRM).

    ``info["prm"]`` carries ``score`` (None when the action was not judged), ``reward`` (the
    total added), ``components`` (``prm``, ``format``, ``invalid``) and ``error`` (a PRM
    server's reason for a neutral score, else None); ``components`` also holds ``outcome``,
    the share of the base reward kept. GUI-Shepherd's Eq. 3 rewards a step with the PRM and
    format terms only, so ``outcome_weight`` defaults to 0 and the env's outcome reward is
    dropped from ``reward``; ``outcome_weight=1`` adds the shaped reward to the outcome
    instead (ours, not the paper's). ``info["task_reward"]`` always holds the outcome.

    A PRM with ``requires_env`` (``RulePRM``) is asked before the step, with the env in the
    state the action is taken from (it judges on a fork); a text PRM is asked after it, so an
    action the env rejects costs no PRM call.

    Args:
        env: A gui-gym env (possibly wrapped).
        prm: The process reward model.
        weight: Scale of the PRM term.
        format_weight: Reward for a well-formed action.
        invalid_penalty: Reward added for an unparsable or rejected action.
        history_length: Earlier action descriptions shown to the PRM.
        outcome_weight: Scale of the env's own (outcome) reward in ``reward``; 0, the
            paper's Eq. 3, by default.

    Raises:
        TypeError: when ``prm`` has no ``score`` method.
        ValueError: for a non-finite weight or a negative ``history_length``.
    """

    def __init__(
        self,
        env: gym.Env,
        prm: ProcessRewardModel,
        weight: float = 1.0,
        format_weight: float = 0.1,
        invalid_penalty: float = -0.1,
        history_length: int = 4,
        outcome_weight: float = 0.0,  # GUI-Shepherd Eq. 3: r_t = r_PRM + r_format
    ):
        _check_args(prm, weight, format_weight, invalid_penalty, history_length, outcome_weight)
        gym.utils.RecordConstructorArgs.__init__(
            self,
            _disable_deepcopy=True,  # the PRM (a model, a client) is shared, never copied
            prm=prm,
            weight=weight,
            format_weight=format_weight,
            invalid_penalty=invalid_penalty,
            history_length=history_length,
            outcome_weight=outcome_weight,
        )
        gym.Wrapper.__init__(self, env)
        if getattr(prm, "requires_env", False) and not hasattr(env.unwrapped, "fork"):
            raise TypeError(
                f"{type(prm).__name__} judges on a fork of the env, and "
                f"{type(env.unwrapped).__name__} has no fork()"
            )
        self.prm = prm
        self.weight = float(weight)
        self.format_weight = float(format_weight)
        self.invalid_penalty = float(invalid_penalty)
        self.history_length = history_length
        self.outcome_weight = float(outcome_weight)
        self._observation: dict[str, Any] = {}
        self._history: list[str] = []
        self._step = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset the env and the PRM history."""
        observation, info = self.env.reset(seed=seed, options=options)
        self._observation = observation
        self._history = []
        self._step = int(info.get("step", 0))
        return observation, info

    def _query(self, action_text: str, description: str) -> PRMQuery:
        history = self._history[-self.history_length :] if self.history_length else []
        return PRMQuery(
            instruction=str(self._observation.get("instruction", "")),
            screen=str(self._observation.get("screen", "")),
            action=action_text,
            action_description=description,
            history=tuple(history),
            step=self._step,
        )

    def step(self, action: Any):
        """Step the env and add the PRM and format rewards (see the class docstring)."""
        action_text = _try_parse(action)
        parsed = action_text is not None
        score: float | None = None
        if parsed and self.prm.requires_env:
            # Judge before acting: the PRM needs the state the action is taken from.
            assert action_text is not None
            query = self._query(action_text, "")
            score = float(
                _checked_scores(self.prm, self.prm.score([query], envs=[self.env.unwrapped]), 1)[0]
            )
        observation, reward, terminated, truncated, info = self.env.step(action)
        valid = parsed and bool(info.get("action_valid", True))
        if valid and score is None:
            assert action_text is not None
            query = self._query(
                str(info.get("action", action_text)), str(info.get("action_description", ""))
            )
            score = float(_checked_scores(self.prm, self.prm.score([query]), 1)[0])
        parts = prm_step_reward(
            score if valid else None,
            parsed=parsed,
            valid=valid,
            weight=self.weight,
            format_weight=self.format_weight,
            invalid_penalty=self.invalid_penalty,
        )
        outcome = self.outcome_weight * float(reward)
        info["prm"] = {
            "score": score if valid else None,
            "reward": parts.total,
            "components": {
                "prm": parts.prm,
                "format": parts.format,
                "invalid": parts.invalid,
                "outcome": outcome,
            },
            "error": _last_error(self.prm, 0) if valid and not self.prm.requires_env else None,
        }
        if valid:
            self._history.append(str(info.get("action_description", "")))
        self._observation = observation
        self._step = int(info.get("step", self._step + 1))
        return observation, outcome + parts.total, terminated, truncated, info


class FormatRewardWrapper(
    gym.Wrapper[dict[str, Any], Any, dict[str, Any], Any], gym.utils.RecordConstructorArgs
):
    """Add GUI-Shepherd's per-step format reward to the env's outcome reward: the reward of
    its ORM baseline (App. B.2: the task's programmatic check on the final step, and "a
    format reward ... at each step to penalize unparsable actions").

    ``reward = outcome + weight * (format + invalid)``
    (:func:`~gui_gym.rewards.prm.format_step_reward`); ``info["format"]`` holds ``reward``
    (the amount added) and ``components`` (``format``, ``invalid``).

    Args:
        env: A gui-gym env (possibly wrapped).
        weight: Scale of the format term.
        format_weight: Reward for a well-formed action (as :class:`PRMWrapper`).
        invalid_penalty: Reward added for an unparsable or rejected action.

    Raises:
        ValueError: for a non-finite number.
    """

    def __init__(
        self,
        env: gym.Env,
        weight: float = 1.0,
        format_weight: float = 0.1,
        invalid_penalty: float = -0.1,
    ):
        for name, value in (
            ("weight", weight),
            ("format_weight", format_weight),
            ("invalid_penalty", invalid_penalty),
        ):
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not np.isfinite(value)
            ):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
        gym.utils.RecordConstructorArgs.__init__(
            self, weight=weight, format_weight=format_weight, invalid_penalty=invalid_penalty
        )
        gym.Wrapper.__init__(self, env)
        self.weight = float(weight)
        self.format_weight = float(format_weight)
        self.invalid_penalty = float(invalid_penalty)

    def step(self, action: Any):
        """Step the env and add the format reward."""
        parsed = _try_parse(action) is not None
        observation, reward, terminated, truncated, info = self.env.step(action)
        parts = format_step_reward(
            parsed=parsed,
            valid=parsed and bool(info.get("action_valid", True)),
            format_weight=self.format_weight,
            invalid_penalty=self.invalid_penalty,
        )
        added = self.weight * parts.total
        info["format"] = {
            "reward": added,
            "components": {"format": parts.format, "invalid": parts.invalid},
        }
        return observation, float(reward) + added, terminated, truncated, info


class PRMVectorWrapper(gym.vector.VectorWrapper, gym.utils.RecordConstructorArgs):
    """:class:`PRMWrapper` for a vector env: one batched PRM call per step for all sub-envs.

    Text PRMs work with any vector env (sync or async): queries are built from the batched
    observations and infos. PRMs that judge on the env (``RulePRM``) need the sub-envs
    themselves, so they work with ``SyncVectorEnv`` only. Sub-envs being auto-reset on this
    step (Gymnasium's next-step autoreset) get no PRM reward. ``info["prm"]`` holds arrays
    ``score`` (NaN where not judged), ``reward``, ``prm``, ``format`` and ``invalid``, with
    the usual ``info["_prm"]`` mask, and ``outcome`` (the share of the base reward kept).

    Args:
        env: A vector env of gui-gym envs.
        prm, weight, format_weight, invalid_penalty, history_length, outcome_weight: As in
            :class:`PRMWrapper`.

    Raises:
        TypeError: for an env-judging PRM on a vector env without ``envs`` (async).
    """

    def __init__(
        self,
        env: gym.vector.VectorEnv,
        prm: ProcessRewardModel,
        weight: float = 1.0,
        format_weight: float = 0.1,
        invalid_penalty: float = -0.1,
        history_length: int = 4,
        outcome_weight: float = 0.0,  # GUI-Shepherd Eq. 3: r_t = r_PRM + r_format
    ):
        _check_args(prm, weight, format_weight, invalid_penalty, history_length, outcome_weight)
        gym.utils.RecordConstructorArgs.__init__(
            self,
            _disable_deepcopy=True,  # the PRM (a model, a client) is shared, never copied
            prm=prm,
            weight=weight,
            format_weight=format_weight,
            invalid_penalty=invalid_penalty,
            history_length=history_length,
            outcome_weight=outcome_weight,
        )
        gym.vector.VectorWrapper.__init__(self, env)
        if getattr(prm, "requires_env", False) and not hasattr(env.unwrapped, "envs"):
            raise TypeError(
                f"{type(prm).__name__} judges on the sub-envs themselves; use a SyncVectorEnv "
                f"(got {type(env.unwrapped).__name__}), or a text PRM"
            )
        self.prm = prm
        self.weight = float(weight)
        self.format_weight = float(format_weight)
        self.invalid_penalty = float(invalid_penalty)
        self.history_length = history_length
        self.outcome_weight = float(outcome_weight)
        mode = env.metadata.get("autoreset_mode", gym.vector.AutoresetMode.NEXT_STEP)
        self._next_step_reset = mode == gym.vector.AutoresetMode.NEXT_STEP or mode == "NextStep"
        n = self.num_envs
        self._instructions = [""] * n
        self._screens = [""] * n
        self._histories: list[list[str]] = [[] for _ in range(n)]
        self._steps = [0] * n
        self._resetting = np.zeros(n, dtype=bool)

    def _remember(self, observation: dict[str, Any]) -> None:
        # Copy now: async envs hand out live views of shared memory.
        self._instructions = [str(x) for x in observation["instruction"]]
        self._screens = [str(x) for x in observation["screen"]]

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None):
        """Reset every sub-env and the PRM histories."""
        observation, info = self.env.reset(seed=seed, options=options)
        self._remember(observation)
        self._histories = [[] for _ in range(self.num_envs)]
        self._steps = [0] * self.num_envs
        self._resetting = np.zeros(self.num_envs, dtype=bool)
        return observation, info

    def _query(self, i: int, action_text: str, description: str) -> PRMQuery:
        history = self._histories[i][-self.history_length :] if self.history_length else []
        return PRMQuery(
            instruction=self._instructions[i],
            screen=self._screens[i],
            action=action_text,
            action_description=description,
            history=tuple(history),
            step=self._steps[i],
        )

    def step(self, actions: Any):
        """Step all sub-envs and add the rewards of one batched PRM call."""
        n = self.num_envs
        if len(actions) != n:
            raise ValueError(f"expected {n} actions, got {len(actions)}")
        texts = [_try_parse(a) for a in actions]
        judged = ~self._resetting
        scores = np.full(n, np.nan)
        errors: list[str | None] = [None] * n
        if self.prm.requires_env:
            idx = [i for i in range(n) if judged[i] and texts[i] is not None]
            if idx:
                envs = [self.env.unwrapped.envs[i].unwrapped for i in idx]
                queries = [self._query(i, texts[i] or "", "") for i in idx]
                scores[idx] = _checked_scores(
                    self.prm, self.prm.score(queries, envs=envs), len(idx)
                )
        observation, reward, terminated, truncated, info = self.env.step(actions)
        valid_flags = np.asarray(info.get("action_valid", np.ones(n, dtype=bool)), dtype=bool)
        valid = judged & np.array([t is not None for t in texts]) & valid_flags
        if not self.prm.requires_env:
            idx = [i for i in range(n) if valid[i]]
            if idx:
                actions_taken = info.get("action", texts)
                descriptions = info.get("action_description", [""] * n)
                queries = [
                    self._query(i, str(actions_taken[i] or texts[i]), str(descriptions[i]))
                    for i in idx
                ]
                scores[idx] = _checked_scores(self.prm, self.prm.score(queries), len(idx))
                for j, i in enumerate(idx):
                    errors[i] = _last_error(self.prm, j)
        parts = [
            prm_step_reward(
                float(scores[i]) if valid[i] else None,
                parsed=texts[i] is not None,
                valid=bool(valid[i]),
                weight=self.weight,
                format_weight=self.format_weight,
                invalid_penalty=self.invalid_penalty,
            )
            if judged[i]
            else None
            for i in range(n)
        ]
        added = np.array([p.total if p is not None else 0.0 for p in parts])
        outcome = self.outcome_weight * np.asarray(reward, dtype=np.float64)
        info["prm"] = {
            "score": np.where(valid, scores, np.nan),
            "reward": added,
            "prm": np.array([p.prm if p else 0.0 for p in parts]),
            "format": np.array([p.format if p else 0.0 for p in parts]),
            "invalid": np.array([p.invalid if p else 0.0 for p in parts]),
            "outcome": outcome,
            "error": np.array(errors, dtype=object),
        }
        info["_prm"] = judged.copy()
        descriptions = info.get("action_description", [""] * n)
        step_numbers = info.get("step", [0] * n)
        ended = np.asarray(terminated) | np.asarray(truncated)
        for i in range(n):
            if not judged[i] or ended[i]:  # this step was a reset, or the next one starts anew
                self._histories[i] = []
                self._steps[i] = 0
            else:
                if valid[i]:
                    self._histories[i].append(str(descriptions[i]))
                self._steps[i] = int(step_numbers[i])
        self._remember(observation)
        self._resetting = ended.copy() if self._next_step_reset else np.zeros(n, dtype=bool)
        return (
            observation,
            outcome + added,
            terminated,
            truncated,
            info,
        )
