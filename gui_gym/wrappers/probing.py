"""``ProbingJudgeWrapper``: ProRe's proactive outcome reward (seed 004) as a Gymnasium wrapper."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from gui_gym.models.judge import (
    ClaimExtractor,
    ClaimFilter,
    ClaimJudge,
    PolicyTraceRecorder,
    ProbeEvaluator,
    ProbeReasoner,
    ProReJudge,
    RawObservationJudge,
    RuleClaimExtractor,
    RuleClaimFilter,
    RuleJudge,
    ScriptedEvaluator,
    ScriptedReasoner,
    check_component_screenshots,
)
from gui_gym.rewards.probing import VERDICTS, verdict_reward

__all__ = ["ProbingJudgeWrapper"]


class ProbingJudgeWrapper(
    gym.Wrapper[dict[str, Any], Any, dict[str, Any], Any], gym.utils.RecordConstructorArgs
):
    """Replace the terminal reward with ProRe's verdict on the episode (ProRe Sec. 3).

    When the policy's episode ends, a reasoner schedules probing goals from the task and
    what the policy did; an evaluator carries each goal out on ``env.unwrapped.fork()`` of
    the final state (``parallel``: one fork per probe, goals scheduled up front;
    ``iterative``: one probe after another, each goal revised from the previous claims,
    Eq. 5); claims are extracted from the policy's trace and each probe trace and filtered;
    a judge reasons over them (chain of claims): over every probe's claims at once for
    parallel probes, one verdict per round combined by ``vote`` for iterative ones (the
    paper's, Sec. 3.5; ``aggregation`` picks either for both modes).
    The verdict, mapped through ``reward_map``, becomes the reward of the final step. The
    policy's env is only forked, never stepped by a probe.

    ``info["judge"]`` (final step only) holds the goals, each probe's trace, claims, filter
    decisions and vote, the policy's claims, the verdict, the reward, and the env's own
    ``task_reward`` beside it with ``agrees`` (verdict equals the true outcome), so judge
    accuracy can be measured on any run. A probe that crashes fails alone: its vote
    abstains and a note says so. Non-final steps are passed through unchanged.

    A judge (or reasoner, evaluator, extractor, filter) whose model server gives no answer
    is infrastructure, not a verdict: :class:`~gui_gym.models.llm.ModelUnavailable`
    propagates out of the final ``step`` (the rollout engine then ends the episode as
    ``infra_error``, left out of groups and counted apart by the trainers); ``invalid``
    stays for a model that answered but unparsably.

    Put it directly around the base env (inside shaping wrappers): it replaces the final
    step's reward with the verdict's reward.

    Screenshots: on an env made with ``screenshot=True`` the policy's trace and every probe
    keep each screen's screenshot, and the LLM components built on an image-text model show
    them (the evaluator the current screen, the claim extractor and filter the trace's
    screens, the judge the final screen; :mod:`gui_gym.models.llm.vision_prompts`). A text-only
    LLM component on such an env is refused here unless built with ``screenshots=False``,
    and one built with ``screenshots=True`` is refused on an env without screenshots.

    Args:
        env: A gui-gym env whose ``unwrapped`` supports ``fork()`` and ``ui_tree``.
        judge: The chain-of-claims judge (default: :class:`~gui_gym.models.judge.RuleJudge`).
        n_probes: Probes per episode; 0 judges the policy's trace alone (no probing).
        mode: ``parallel`` or ``iterative``.
        reasoner: Goal scheduler (default: :class:`~gui_gym.models.judge.ScriptedReasoner`).
        evaluator: Evaluator agent (default: :class:`~gui_gym.models.judge.ScriptedEvaluator`).
        claim_extractor: Default :class:`~gui_gym.models.judge.RuleClaimExtractor`.
        claim_filter: Default :class:`~gui_gym.models.judge.RuleClaimFilter`.
        vote: ``majority``, ``any`` or ``all`` (see :func:`gui_gym.rewards.probing.combine_votes`).
        reward_map: Reward per verdict (``success``/``failure``/``invalid``); missing keys
            keep the defaults 1.0 / 0.0 / 0.0.
        probe_steps: Cap on the step budget per probe; None (the default, ProRe Sec. 4.1)
            gives each probe as many steps as the policy's episode took. See
            :class:`~gui_gym.models.judge.ProReJudge`.
        probe_steps_min: Floor of the budget (1 by default; ours: 8).
        aggregation: ``joint``, ``vote``, or None (the paper's: joint for parallel, vote
            for iterative); see :data:`~gui_gym.models.judge.AGGREGATIONS`.
        filter_policy_claims: Also filter the policy's claims (ours; the paper's filter
            examines the evaluator's claims only).
        raw_judge: Judge from the raw traces instead of claims (ProRe Table 4's ablation).

    Raises:
        ValueError: for an unknown mode, vote rule or verdict key, or a negative ``n_probes``.
        TypeError: when the env cannot be forked or read as UI trees.
        ValueError: also for an LLM component whose backend cannot read the env's
            screenshots (or that asks for screenshots the env does not make).
    """

    def __init__(
        self,
        env: gym.Env,
        judge: ClaimJudge | None = None,
        n_probes: int = 1,
        mode: str = "parallel",
        *,
        reasoner: ProbeReasoner | None = None,
        evaluator: ProbeEvaluator | None = None,
        claim_extractor: ClaimExtractor | None = None,
        claim_filter: ClaimFilter | None = None,
        vote: str = "majority",
        reward_map: Mapping[str, float] | None = None,
        probe_steps: int | None = None,
        probe_steps_min: int = 1,
        aggregation: str | None = None,
        filter_policy_claims: bool = False,
        raw_judge: RawObservationJudge | None = None,
    ):
        gym.utils.RecordConstructorArgs.__init__(
            self,
            n_probes=n_probes,
            mode=mode,
            vote=vote,
            reward_map=None if reward_map is None else dict(reward_map),
            probe_steps=probe_steps,
            probe_steps_min=probe_steps_min,
            aggregation=aggregation,
            filter_policy_claims=filter_policy_claims,
        )
        gym.Wrapper.__init__(self, env)
        # the pipeline checks n_probes, mode, vote, aggregation and the probe budget
        self.pipeline = ProReJudge(
            reasoner=reasoner if reasoner is not None else ScriptedReasoner(),
            evaluator=evaluator if evaluator is not None else ScriptedEvaluator(),
            claim_extractor=claim_extractor
            if claim_extractor is not None
            else RuleClaimExtractor(),
            claim_filter=claim_filter if claim_filter is not None else RuleClaimFilter(),
            judge=judge if judge is not None else RuleJudge(),
            n_probes=n_probes,
            mode=mode,
            vote=vote,
            probe_steps=probe_steps,
            probe_steps_min=probe_steps_min,
            aggregation=aggregation,
            filter_policy_claims=filter_policy_claims,
            raw_judge=raw_judge,
        )
        if reward_map is not None:
            unknown = set(reward_map) - set(VERDICTS)
            if unknown:
                raise ValueError(f"reward_map keys must be among {VERDICTS}, got {sorted(unknown)}")
        base = env.unwrapped
        for attr in ("fork", "ui_tree"):
            if not hasattr(type(base), attr):
                raise TypeError(
                    f"{type(base).__name__} has no {attr}; ProbingJudgeWrapper needs a gui-gym env"
                )
        spaces = getattr(env.observation_space, "spaces", None) or {}
        check_component_screenshots(
            [reasoner, evaluator, claim_extractor, claim_filter, judge, raw_judge],
            env_screenshots="screenshot" in spaces,
        )
        self.reward_map = dict(reward_map) if reward_map is not None else None
        self._recorder = PolicyTraceRecorder()
        self.last_report = None

    def _shot(self, observation: dict[str, Any]) -> Any:
        """The observation's screenshot when a component may show it (else None: the trace
        keeps UI trees only)."""
        shot = observation.get("screenshot") if self.pipeline.reads_screenshots else None
        return None if shot is None else np.array(shot, dtype=np.uint8, copy=True)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        observation, info = self.env.reset(seed=seed, options=options)
        self._recorder.start(
            self.env.unwrapped, observation.get("instruction", ""), self._shot(observation)
        )
        self.last_report = None
        return observation, info

    def step(self, action: Any):
        observation, reward, terminated, truncated, info = self.env.step(action)
        if self._recorder.trace is None:
            return observation, reward, terminated, truncated, info
        base = self.env.unwrapped
        self._recorder.record(base, info, terminated, self._shot(observation))
        if terminated or truncated:
            report = self.pipeline.judge_episode(base, self._recorder.trace)
            self.last_report = report
            reward = verdict_reward(report.verdict, self.reward_map)
            task_reward = float(info.get("task_reward", 0.0))
            judged = report.to_dict()
            judged.update(
                reward=reward,
                task_reward=task_reward,
                task_success=bool(info.get("success", False)),
                agrees=(report.verdict == "success") == bool(info.get("success", False)),
                n_probes=self.pipeline.n_probes,
            )
            info = dict(info)
            info["judge"] = judged
            self._recorder.trace = None
        return observation, reward, terminated, truncated, info
