"""``PRMWrapper`` and ``PRMVectorWrapper``: GUI-Shepherd's dense process reward.

GUI-Shepherd's online PPO rewards every step with the PRM's score of the action taken from
the state before it, plus a format reward (Sec. 4.1, Eq. 3; App. B.2). The arithmetic is
:func:`gui_gym.rewards.prm.prm_step_reward` and each step's query comes from a
:class:`~gui_gym.rewards.prm_context.PRMContext`; these wrappers only keep one per env, call
the PRM, and add the result. ``PRMVectorWrapper`` does the same for a whole vector env with one
batched PRM call per step, through the same scoring code as ``PRMWrapper``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from gui_gym.core.actions import try_parse_action
from gui_gym.models.prm import PRMOutputError, ProcessRewardModel
from gui_gym.rewards.prm import PRMReward, format_step_reward, prm_step_reward
from gui_gym.rewards.prm_context import PRMContext
from gui_gym.wrappers.vector_slice import autoreset_mode, env_slice

__all__ = ["FormatRewardWrapper", "PRMVectorWrapper", "PRMWrapper"]


def _check_finite(**values: Any) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")


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
    parsed, _ = try_parse_action(action)
    return None if parsed is None else str(parsed)


def _last_error(prm: Any, i: int) -> str | None:
    errors = getattr(prm, "last_errors", None)
    if isinstance(errors, list) and i < len(errors):
        return errors[i]
    return None


class _PRMReward(gym.utils.RecordConstructorArgs):
    """The constructor and the scoring both PRM wrappers share."""

    def __init__(
        self,
        env: gym.Env | gym.vector.VectorEnv,
        prm: ProcessRewardModel,
        weight: float = 1.0,
        format_weight: float = 0.1,
        invalid_penalty: float = -0.1,
        history_length: int = 4,
        outcome_weight: float = 0.0,  # GUI-Shepherd Eq. 3: r_t = r_PRM + r_format
    ):
        if not callable(getattr(prm, "score", None)):
            raise TypeError(
                "prm must have score(queries, envs=None) (a ProcessRewardModel), "
                f"got {type(prm).__name__}"
            )
        _check_finite(
            weight=weight,
            format_weight=format_weight,
            invalid_penalty=invalid_penalty,
            outcome_weight=outcome_weight,
        )
        if (
            isinstance(history_length, bool)
            or not isinstance(history_length, int)
            or history_length < 0
        ):
            raise ValueError(f"history_length must be a non-negative int, got {history_length!r}")
        # every argument but env, as given; the PRM (a model, a client) is shared, never copied
        settings = {name: value for name, value in locals().items() if name not in ("self", "env")}
        gym.utils.RecordConstructorArgs.__init__(self, _disable_deepcopy=True, **settings)
        self.prm = prm
        self.weight = float(weight)
        self.format_weight = float(format_weight)
        self.invalid_penalty = float(invalid_penalty)
        self.history_length = history_length
        self.outcome_weight = float(outcome_weight)
        self._wrap(env)

    def _wrap(self, env: Any) -> None:
        raise NotImplementedError  # each wrapper wraps its kind of env

    def _score(
        self,
        contexts: list[PRMContext],
        actions: list[str],
        descriptions: list[str],
        envs: list[gym.Env] | None = None,
    ) -> tuple[np.ndarray, list[str | None]]:
        """One PRM call for the actions taken from ``contexts``: the scores, and per query
        the reason a PRM server gave a neutral score (None for a PRM that judges on
        ``envs``, the sub-envs in the state each action is taken from)."""
        queries = [
            c.query(a, d, self.history_length) for c, a, d in zip(contexts, actions, descriptions)
        ]
        if envs is not None:
            scores = self.prm.score(queries, envs=envs)
            return _checked_scores(self.prm, scores, len(queries)), [None] * len(queries)
        scores = _checked_scores(self.prm, self.prm.score(queries), len(queries))
        return scores, [_last_error(self.prm, j) for j in range(len(queries))]

    def _reward(self, score: float | None, parsed: bool, valid: bool) -> PRMReward:
        """GUI-Shepherd Eq. 3 for one step (:func:`~gui_gym.rewards.prm.prm_step_reward`)."""
        return prm_step_reward(
            score if valid else None,
            parsed=parsed,
            valid=valid,
            weight=self.weight,
            format_weight=self.format_weight,
            invalid_penalty=self.invalid_penalty,
        )


class PRMWrapper(
    _PRMReward,
    gym.Wrapper[dict[str, Any], Any, dict[str, Any], Any],
    gym.utils.RecordConstructorArgs,
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

    def _wrap(self, env: gym.Env) -> None:
        gym.Wrapper.__init__(self, env)  # type: ignore[arg-type]
        if getattr(self.prm, "requires_env", False) and not hasattr(env.unwrapped, "fork"):
            raise TypeError(
                f"{type(self.prm).__name__} judges on a fork of the env, and "
                f"{type(env.unwrapped).__name__} has no fork()"
            )
        self._context = PRMContext()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset the env and the PRM history."""
        observation, info = self.env.reset(seed=seed, options=options)
        self._context = PRMContext.start(observation, info)
        return observation, info

    def step(self, action: Any):
        """Step the env and add the PRM and format rewards (see the class docstring)."""
        action_text = _try_parse(action)
        parsed = action_text is not None
        context = self._context
        score: float | None = None
        error: str | None = None
        if action_text is not None and self.prm.requires_env:
            # Judge before acting: the PRM needs the state the action is taken from.
            scores, _ = self._score([context], [action_text], [""], envs=[self.env.unwrapped])
            score = float(scores[0])
        observation, reward, terminated, truncated, info = self.env.step(action)
        valid = parsed and bool(info.get("action_valid", True))
        if valid and score is None:
            taken = str(info.get("action") or action_text)
            description = str(info.get("action_description", ""))
            scores, errors = self._score([context], [taken], [description])
            score, error = float(scores[0]), errors[0]
        parts = self._reward(score, parsed, valid)
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
            "error": error if valid else None,
        }
        context.advance(observation, info, valid)
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
        _check_finite(weight=weight, format_weight=format_weight, invalid_penalty=invalid_penalty)
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


class PRMVectorWrapper(_PRMReward, gym.vector.VectorWrapper, gym.utils.RecordConstructorArgs):
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

    def _wrap(self, env: gym.vector.VectorEnv) -> None:
        gym.vector.VectorWrapper.__init__(self, env)  # type: ignore[arg-type]
        if getattr(self.prm, "requires_env", False) and not hasattr(env.unwrapped, "envs"):
            raise TypeError(
                f"{type(self.prm).__name__} judges on the sub-envs themselves; use a "
                f"SyncVectorEnv (got {type(env.unwrapped).__name__}), or a text PRM"
            )
        self._next_step_reset = autoreset_mode(env) == gym.vector.AutoresetMode.NEXT_STEP
        self._contexts = [PRMContext() for _ in range(self.num_envs)]
        self._resetting = np.zeros(self.num_envs, dtype=bool)

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None):
        """Reset every sub-env and the PRM histories."""
        observation, info = self.env.reset(seed=seed, options=options)
        self._contexts = [
            PRMContext.start(env_slice(observation, i), {}) for i in range(self.num_envs)
        ]
        self._resetting = np.zeros(self.num_envs, dtype=bool)
        return observation, info

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
                scores[idx], _ = self._score(
                    [self._contexts[i] for i in idx],
                    [texts[i] or "" for i in idx],
                    [""] * len(idx),
                    envs=[self.env.unwrapped.envs[i].unwrapped for i in idx],
                )
        observation, reward, terminated, truncated, info = self.env.step(actions)
        rows = [env_slice(info, i) for i in range(n)]
        valid = np.array(
            [
                judged[i] and texts[i] is not None and bool(rows[i].get("action_valid", True))
                for i in range(n)
            ],
            dtype=bool,
        )
        if not self.prm.requires_env:
            idx = [i for i in range(n) if valid[i]]
            if idx:
                scores[idx], found = self._score(
                    [self._contexts[i] for i in idx],
                    [str(rows[i].get("action") or texts[i]) for i in idx],
                    [str(rows[i].get("action_description", "")) for i in idx],
                )
                for j, i in enumerate(idx):
                    errors[i] = found[j]
        parts = [
            self._reward(float(scores[i]), texts[i] is not None, bool(valid[i]))
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
        ended = np.asarray(terminated) | np.asarray(truncated)
        for i in range(n):
            observation_i = env_slice(observation, i)
            if judged[i] and not ended[i]:
                self._contexts[i].advance(observation_i, rows[i], bool(valid[i]))
            else:  # this step was a reset, or the next one starts anew
                self._contexts[i] = PRMContext.start(observation_i, {})
        self._resetting = ended.copy() if self._next_step_reset else np.zeros(n, dtype=bool)
        return observation, outcome + added, terminated, truncated, info
