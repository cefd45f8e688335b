"""Adapters for array-based RL libraries (Stable-Baselines3, sb3-contrib, TorchRL, cleanrl).

gui-gym's own spaces are honest but textual (a ``Dict`` of strings in, an action string
out), which array libraries cannot batch. Two thin wrappers turn any gui-gym env into the
``Box`` in / ``Discrete`` out shape those libraries expect:

* :class:`CandidateActions`: ``Discrete(K)`` over the current screen's candidate actions
  (``env.unwrapped.candidate_actions()``, plus typing the instruction's quoted phrases and an
  optional ``DONE()``), padded to a fixed ``K``, with :meth:`~CandidateActions.action_masks`
  for ``sb3_contrib.MaskablePPO``. ``action_space.sample()`` draws only real candidates.
* :class:`FeaturizedObservation`: a fixed-size ``Box`` of the instruction, the screen and
  every candidate action (hashed bag-of-words or sentence embeddings, by argument), so a
  policy can score the candidates it is offered.

The candidate list, its space and the feature layout are computed in
:mod:`gui_gym.core.candidates`; the wrappers keep them current per screen.

Typical use::

    env = make_sb3_env("GuiGym/WikiHow-v0", max_candidates=40, features="hash")
    model = sb3_contrib.MaskablePPO("MlpPolicy", env)

Both pass SB3's and Gymnasium's ``check_env`` on every simulated id; ``tests/test_sb3.py``
checks it.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gui_gym.core.actions import Action, describe, parse_action
from gui_gym.core.candidates import (
    CANDIDATE_TYPES,
    CandidateSpace,
    candidate_features,
    candidate_width,
    offered_candidates,
)
from gui_gym.models.embeddings import HashingEmbedder, SentenceEmbedder
from gui_gym.rewards.embedding import Embedder

__all__ = [
    "CANDIDATE_TYPES",
    "CandidateActions",
    "CandidateSpace",
    "FeaturizedObservation",
    "make_sb3_env",
]


class CandidateActions(
    gym.Wrapper[dict[str, Any], np.int64, dict[str, Any], Any], gym.utils.RecordConstructorArgs
):
    """A ``Discrete(max_candidates)`` action space over the current screen's candidates.

    Candidate ``i`` is the ``i``-th action of ``env.unwrapped.candidate_actions()`` (clicks,
    long-clicks, typing the task's vocabulary into fields, scrolls, back; WebShop's
    ``search[...]``/``click[...]`` list), then typing each quoted phrase of the instruction
    into every field the env already offers typing into, then ``done_action`` when given.
    A screen with more candidates than fit keeps the first ones (``done_action`` is always
    kept) and says so once with a warning; ``info["candidates"]["dropped"]`` counts them.

    ``info["candidates"] = {"chosen": "CLICK(3)", "count": n, "dropped": m}`` after a step,
    and ``info["action_mask"]`` is :meth:`action_masks` of the new screen (so vector envs,
    remote ones included, hand the masks back with the observations).

    Args:
        env: A gui-gym env (its ``unwrapped`` has ``candidate_actions()``).
        max_candidates: ``K``, the size of the action space.
        done_action: An action string always offered last, e.g. ``"DONE()"``; ``"auto"``
            (default) offers ``DONE()`` unless the env ends episodes on success by itself
            (WikiHow); None offers none.
        padding: What a padding index (``>= count``, masked out by :meth:`action_masks`)
            does: ``"wrap"`` plays candidate ``index % count``, so every index is a valid
            action (random policies of any library work); ``"invalid"`` sends the env an
            invalid action (the step counts, nothing changes, ``info["action_valid"]`` is
            False).

    Raises:
        TypeError: if the env has no ``candidate_actions()``.
        ValueError: for ``max_candidates < 2``, an unknown ``padding`` or a bad
            ``done_action``.
    """

    def __init__(
        self,
        env: gym.Env,
        max_candidates: int = 64,
        done_action: str | None = "auto",
        padding: Literal["wrap", "invalid"] = "wrap",
    ):
        if not isinstance(max_candidates, int) or isinstance(max_candidates, bool):
            raise ValueError(f"max_candidates must be an int >= 2, got {max_candidates!r}")
        if max_candidates < 2:
            raise ValueError(f"max_candidates must be >= 2, got {max_candidates}")
        if padding not in ("wrap", "invalid"):
            raise ValueError(f"padding must be 'wrap' or 'invalid', got {padding!r}")
        if not callable(getattr(env.unwrapped, "candidate_actions", None)):
            raise TypeError(
                f"{type(env.unwrapped).__name__} has no candidate_actions(); CandidateActions "
                "needs a gui-gym env"
            )
        gym.utils.RecordConstructorArgs.__init__(
            self, max_candidates=max_candidates, done_action=done_action, padding=padding
        )
        gym.Wrapper.__init__(self, env)
        if done_action == "auto":
            done_action = None if getattr(env.unwrapped, "end_on_success", False) else "DONE()"
        self.done_action: Action | None = None
        if done_action is not None:
            try:
                self.done_action = parse_action(done_action)
            except ValueError as err:
                raise ValueError(f"done_action {done_action!r} is not an action: {err}") from err
        self.max_candidates = max_candidates
        self.padding = padding
        self.action_space = CandidateSpace(max_candidates)
        self.candidates: list[Action] = []
        self.dropped = 0
        self._warned_dropped = False
        self._descriptions: list[str] | None = None

    def _refresh(self, instruction: str) -> None:
        room = self.max_candidates - (self.done_action is not None)
        found, self.dropped = offered_candidates(
            self.env.unwrapped.candidate_actions(), instruction, room, self.done_action
        )
        if self.dropped and not self._warned_dropped:
            warnings.warn(
                f"{room + self.dropped} candidate actions on this screen, more than max_candidates="
                f"{self.max_candidates}: the last {self.dropped} are dropped (raise "
                "max_candidates to keep them; warned once)",
                stacklevel=3,
            )
            self._warned_dropped = True
        self.candidates = found
        self._descriptions = None
        mask = np.zeros(self.max_candidates, dtype=bool)
        mask[: len(found)] = True
        self.action_space.current_mask = mask

    def action_masks(self) -> np.ndarray:
        """Which of the ``K`` actions are real candidates on this screen (bool array), as
        ``sb3_contrib.MaskablePPO`` asks for."""
        mask = self.action_space.current_mask
        if mask is None:
            raise gym.error.ResetNeeded("call reset() before action_masks()")
        return mask.copy()

    def candidate_descriptions(self) -> list[str]:
        """Natural-language descriptions of the candidates (``click "Search" button``)."""
        if self._descriptions is None:
            tree = self.env.unwrapped.ui_tree
            self._descriptions = [describe(a, tree) for a in self.candidates]
        return list(self._descriptions)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        if seed is not None:
            self.action_space.seed(seed)
        observation, info = self.env.reset(seed=seed, options=options)
        self._refresh(observation["instruction"])
        info["candidates"] = {"chosen": "", "count": len(self.candidates), "dropped": self.dropped}
        info["action_mask"] = self.action_masks()
        return observation, info

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if not self.candidates:
            raise gym.error.ResetNeeded("call reset() before step()")
        index = _as_index(action, self.max_candidates)
        count = len(self.candidates)
        chosen: Action | str
        padding_error = None
        if index < count:
            chosen = self.candidates[index]
        elif self.padding == "wrap":
            chosen = self.candidates[index % count]
        else:
            # An unparsable string: the env counts the step and changes nothing.
            chosen = f"PADDING({index})"
            padding_error = (
                f"action {index} is padding: only {count} candidates on this screen "
                "(pass action_masks() to the policy)"
            )
        observation, reward, terminated, truncated, info = self.env.step(chosen)
        if padding_error is not None:
            info["action_error"] = padding_error
        info["candidates"] = {
            "chosen": str(chosen) if padding_error is None else "",
            "count": count,
            "dropped": self.dropped,
        }
        self._refresh(observation["instruction"])
        info["action_mask"] = self.action_masks()
        return observation, reward, terminated, truncated, info


class FeaturizedObservation(
    gym.ObservationWrapper[np.ndarray, np.int64, dict[str, Any]], gym.utils.RecordConstructorArgs
):
    """A fixed-size ``Box`` observation: instruction, screen and candidate actions.

    Layout (``D`` = the embedder's dimension, ``K`` = ``max_candidates`` of the
    :class:`CandidateActions` below this wrapper)::

        [ e(instruction) | e(screen) | K x ( e(candidate) | cos(instruction, candidate)
          | one-hot of the candidate's type (len(CANDIDATE_TYPES) + 1) | is-real flag ) ]

    ``e`` is an L2-normalised embedding: ``features="hash"`` a hashed bag of words and
    character trigrams (:class:`~gui_gym.models.embeddings.HashingEmbedder`, no dependency),
    ``features="minilm"`` all-MiniLM-L6-v2 sentence embeddings (``gui-gym[llm]``), or any
    :class:`~gui_gym.rewards.embedding.Embedder`. A candidate is embedded by its description
    (``click "Search" button``), so its features do not depend on the per-screen index;
    padding rows are zero. Every value lies in ``[-1, 1]``.

    Args:
        env: An env wrapped in :class:`CandidateActions` (directly or further down).
        features: ``"hash"``, ``"minilm"`` or an ``Embedder`` instance.
        dim: Embedding size for ``features="hash"`` (ignored otherwise).

    Raises:
        TypeError: if no :class:`CandidateActions` is below, or ``features`` is not an
            embedder.
        ValueError: for an unknown ``features`` name.
    """

    def __init__(
        self, env: gym.Env, features: Literal["hash", "minilm"] | Embedder = "hash", dim: int = 64
    ):
        gym.utils.RecordConstructorArgs.__init__(
            self, _disable_deepcopy=not isinstance(features, str), features=features, dim=dim
        )
        gym.ObservationWrapper.__init__(self, env)
        self._candidates = _find_candidate_wrapper(env)
        self.embedder = _make_embedder(features, dim)
        self.dim = int(self.embedder.dim)
        self.max_candidates = self._candidates.max_candidates
        self.candidate_width = candidate_width(self.dim)
        size = 2 * self.dim + self.max_candidates * self.candidate_width
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(size,), dtype=np.float32)

    def action_masks(self) -> np.ndarray:
        """The masks of the :class:`CandidateActions` below (for MaskablePPO)."""
        return self._candidates.action_masks()

    def observation(self, observation: dict[str, Any]) -> np.ndarray:
        wrapper = self._candidates
        descriptions = wrapper.candidate_descriptions()
        vectors = self.embedder.encode(
            [observation["instruction"], observation["screen"], *descriptions]
        )
        return candidate_features(vectors, wrapper.candidates, self.max_candidates, self.dim)


def make_sb3_env(
    env_id: str,
    *,
    max_candidates: int = 64,
    features: Literal["hash", "minilm"] | Embedder = "hash",
    dim: int = 64,
    done_action: str | None = "auto",
    padding: Literal["wrap", "invalid"] = "wrap",
    wrappers: Sequence[Any] = (),
    **env_kwargs: Any,
) -> FeaturizedObservation:
    """``gym.make(env_id, **env_kwargs)``, the reward ``wrappers`` (callables ``env ->
    env``, innermost first), then :class:`CandidateActions` and
    :class:`FeaturizedObservation`: an env any SB3 algorithm (MaskablePPO for the masks)
    trains on directly."""
    env = gym.make(env_id, **env_kwargs)
    for wrap in wrappers:
        env = wrap(env)
    env = CandidateActions(env, max_candidates, done_action=done_action, padding=padding)
    return FeaturizedObservation(env, features=features, dim=dim)


def _as_index(action: Any, n: int) -> int:
    try:
        index = int(np.asarray(action).reshape(()))
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"CandidateActions takes an int in [0, {n}), got {action!r}; send action strings "
            "to the env without this wrapper"
        ) from err
    if not 0 <= index < n:
        raise ValueError(f"action {index} is outside the action space [0, {n})")
    return index


def _find_candidate_wrapper(env: gym.Env) -> CandidateActions:
    layer: Any = env
    while isinstance(layer, gym.Wrapper):
        if isinstance(layer, CandidateActions):
            return layer
        layer = layer.env
    raise TypeError(
        "FeaturizedObservation needs CandidateActions below it: wrap the env in it first"
    )


def _make_embedder(features: Any, dim: int) -> Embedder:
    if isinstance(features, str):
        if features == "hash":
            return HashingEmbedder(dim)
        if features == "minilm":
            return SentenceEmbedder()
        raise ValueError(f"features must be 'hash', 'minilm' or an Embedder, got {features!r}")
    if not isinstance(features, Embedder):
        raise TypeError(
            f"features must be 'hash', 'minilm' or an Embedder (dim, encode()), got "
            f"{type(features).__name__}"
        )
    return features
