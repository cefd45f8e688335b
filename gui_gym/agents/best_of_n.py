"""``BestOfNAgent``: GUI-Shepherd's PRM as an inference-time verifier (Sec. 4.2, Alg. 2)."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym

from gui_gym.agents.sampling import SamplingPolicy
from gui_gym.core.actions import Action, ActionParseError, describe, parse_action
from gui_gym.models.prm import ProcessRewardModel, verification_scores
from gui_gym.rewards.prm import PRMQuery, select_candidate

__all__ = ["SELECTIONS", "BestOfNAgent"]

SELECTIONS = ("positive_logit", "softmax", "count_weighted")
"""How :class:`BestOfNAgent` picks among scored candidates; the first is the paper's."""


class BestOfNAgent:
    """Sample ``n`` candidate actions, score each with a PRM on the current state, act with
    the best (GUI-Shepherd Eq. 6: ``a_t = argmax_i PRM(g, s_t, a_t^i)``, where the score is
    the positive label's logit, Sec. 4.2).

    Identical candidates are scored once; ties go to the candidate proposed most often, then
    to the first proposed (:func:`~gui_gym.rewards.prm.select_candidate`). Candidates that do
    not parse are never chosen over one that does (scored -inf by logit, 0 by probability)
    and are not sent to the PRM. After each :meth:`act`, ``last_info``
    holds the candidates, how often each was proposed, their scores and the chosen index.

    Args:
        policy: Anything with ``sample(observation, info, n)`` (see
            :class:`~gui_gym.agents.sampling.SamplingPolicy`): an LLM agent sampling with
            temperature, or :class:`~gui_gym.agents.sampling.NoisyOraclePolicy`.
        prm: The verifier (:class:`~gui_gym.models.prm.ProcessRewardModel`).
        n: Candidates per step (``n=1`` is the policy alone).
        env: The env the agent acts in. Required by PRMs that inspect the env (``RulePRM``);
            with it, candidates also get the natural-language description the PRM prompt
            shows (as ``info["action_description"]`` does for the action taken).
        history_length: Earlier action descriptions kept for the PRM prompt.
        selection: ``"positive_logit"`` (default, the paper's rule: the highest logit of the
            positive label token, :func:`~gui_gym.models.prm.verification_scores`; PRMs
            without logits rank by their score), ``"softmax"`` (ours: the highest two-way
            softmax probability ``PRM.score``; it can pick differently, e.g. logits
            ``(neg, pos) = (4, 5)`` beat ``(0, 3)`` by logit but not by probability) or
            ``"count_weighted"`` (ours: the highest probability times the number of times
            the candidate was proposed, see :func:`~gui_gym.rewards.prm.select_candidate`).

    Raises:
        ValueError: for ``n < 1``, an unknown selection or a PRM that needs the env when
            none is given.
        TypeError: when ``policy`` cannot sample or ``prm`` is not a PRM.
    """

    def __init__(
        self,
        policy: SamplingPolicy,
        prm: ProcessRewardModel,
        n: int,
        *,
        env: gym.Env | None = None,
        history_length: int = 4,
        selection: str = "positive_logit",
    ):
        if not callable(getattr(policy, "sample", None)):
            raise TypeError(
                f"{type(policy).__name__} has no sample(observation, info, n); best-of-N needs "
                "a policy that can propose several actions"
            )
        if not callable(getattr(prm, "score", None)):
            raise TypeError(f"{type(prm).__name__} is not a PRM (it has no score(queries))")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"n must be a positive int, got {n!r}")
        if getattr(prm, "requires_env", False) and env is None:
            raise ValueError(f"{type(prm).__name__} judges with the env: pass env=<the env>")
        if history_length < 0:
            raise ValueError(f"history_length must be >= 0, got {history_length}")
        if selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}")
        self.selection = selection
        self.policy = policy
        self.prm = prm
        self.n = n
        self.env = env
        self.history_length = history_length
        how = "" if selection == "positive_logit" else f", {selection}"
        self.name = (
            f"best-of-{n}({getattr(policy, 'name', type(policy).__name__)}, "
            f"{type(prm).__name__}{how})"
        )
        self.history: list[str] = []
        self.last_info: dict[str, Any] = {}

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        """Start an episode: clear the history and reset the policy if it can."""
        self.history = []
        self.last_info = {}
        reset = getattr(self.policy, "reset", None)
        if callable(reset):
            reset(observation, info)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action | str:
        """Propose ``n`` candidates, score them, return the best one."""
        if info.get("step", 0) > 0 and info.get("action_valid", False):
            # info describes the previous step: keep the same history the PRM was trained on
            self.history.append(str(info.get("action_description", "")))
        proposals = self.policy.sample(observation, info, self.n)
        if not proposals:
            raise ValueError(f"{type(self.policy).__name__}.sample returned no candidates")
        candidates: list[Action | str] = []
        texts: list[str] = []
        counts: list[int] = []
        where: dict[str, int] = {}
        for proposal in proposals:
            try:
                parsed: Action | str = parse_action(proposal)
                text = str(parsed)
            except ActionParseError:
                parsed = proposal if isinstance(proposal, str) else repr(proposal)
                text = "\0unparsable\0" + str(parsed)
            if text in where:
                counts[where[text]] += 1
                continue
            where[text] = len(candidates)
            candidates.append(parsed)
            texts.append(text)
            counts.append(1)
        by_logit = self.selection == "positive_logit"
        scores = [-math.inf if by_logit else 0.0] * len(candidates)
        judged = [i for i, c in enumerate(candidates) if isinstance(c, Action)]
        if judged:
            tree = self._tree()
            history = tuple(self.history[-self.history_length :]) if self.history_length else ()
            queries = [
                PRMQuery(
                    instruction=str(observation.get("instruction", "")),
                    screen=str(observation.get("screen", "")),
                    action=texts[i],
                    action_description=describe(candidates[i], tree) if tree is not None else "",
                    history=history,
                    step=int(info.get("step", 0)),
                )
                for i in judged
            ]
            envs = [self.env.unwrapped] * len(queries) if self.prm.requires_env else None
            if by_logit:
                values = verification_scores(self.prm, queries, envs=envs)
            else:
                values = self.prm.score(queries, envs=envs)
            if len(values) != len(queries):
                raise ValueError(
                    f"the PRM returned {len(values)} scores for {len(queries)} candidates"
                )
            for i, value in zip(judged, values):
                scores[i] = float(value)
        chosen = select_candidate(
            scores, counts, "count_weighted" if self.selection == "count_weighted" else "argmax"
        )
        self.last_info = {
            "candidates": [str(c) for c in candidates],
            "counts": counts,
            "scores": scores,
            "chosen": chosen,
        }
        return candidates[chosen]

    def _tree(self) -> Any:
        if self.env is None:
            return None
        return getattr(self.env.unwrapped, "ui_tree", None)
