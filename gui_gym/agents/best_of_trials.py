"""``BestOfTrialsAgent``: ProRe's test-time scaling of a policy with any judge (App. B.1)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from gui_gym.core.actions import Action
from gui_gym.models.judge import EpisodeJudge, JudgeReport, PolicyTraceRecorder
from gui_gym.rewards.probing import select_submitted_trial

__all__ = ["BestOfTrialsAgent", "Trial"]

PolicyFactory = Callable[[gym.Env, int], Any]
"""``(env, trial index) -> agent``: a fresh policy bound to the env it will act in."""


@dataclass
class Trial:
    """One rollout of the policy on a fork of the episode's start.

    Attributes:
        actions: The actions it took, as sent.
        verdict: The judge's verdict on it.
        report: The judge's full report.
        task_reward: The env's true outcome of the trial (for analysis only; the procedure
            never reads it).
        steps: Steps it took.
    """

    actions: list[Any] = field(default_factory=list)
    verdict: str = "invalid"
    report: JudgeReport | None = None
    task_reward: float = 0.0
    steps: int = 0

    @property
    def positive(self) -> bool:
        return self.verdict == "success"


class BestOfTrialsAgent:
    """Retry the policy up to ``n_trials`` times, stop at the first trial the judge calls a
    success, and submit it; if none is, submit the last trial (ProRe App. B.1, the
    procedure behind Lemma 1; :func:`gui_gym.rewards.probing.test_time_scaling_success`
    gives its exact success rate).

    At the start of each episode the agent rolls the policy out on forks of the env's start
    state (``env.unwrapped.fork()``), judges each finished trial on its own fork, picks the
    trial, then replays that trial's actions in the real env through :meth:`act`. Simulated
    envs step deterministically from a state, so the replay reproduces the chosen trial.

    Args:
        env: The env the agent acts in (forked, never stepped by the trials).
        make_policy: ``(env, trial index) -> agent`` making the policy for one trial, bound
            to the fork it acts in (e.g. ``lambda e, i: FallibleOracleAgent(e, seed=i)``); an
            env-independent policy can ignore the arguments and return the same agent.
        judge: Any object with ``judge_episode(env, trace) -> JudgeReport`` (e.g. a
            :class:`~gui_gym.models.judge.ProReJudge`).
        n_trials: The trial budget ``N``.
        run_all: Roll out and judge all ``n_trials`` trials even after a positive one (for
            measuring the policy's success rate and the judge's accuracy on the same
            trials); the submitted trial is the same either way.

    Attributes:
        trials: The trials of the current episode, in order.
        chosen: Index of the submitted trial.
    """

    name = "best-of-trials"

    def __init__(
        self,
        env: gym.Env,
        make_policy: PolicyFactory,
        judge: EpisodeJudge,
        n_trials: int = 3,
        run_all: bool = False,
    ):
        if isinstance(n_trials, bool) or not isinstance(n_trials, int) or n_trials < 1:
            raise ValueError(f"n_trials must be a positive int, got {n_trials!r}")
        if not callable(make_policy):
            raise TypeError("make_policy must be a callable (env, trial index) -> agent")
        if not callable(getattr(judge, "judge_episode", None)):
            raise TypeError(
                f"judge must have judge_episode(env, trace); got {type(judge).__name__}"
            )
        self._env = env.unwrapped
        if not hasattr(self._env, "fork"):
            raise TypeError(f"{type(self._env).__name__} has no fork(); is it a gui-gym env?")
        self.make_policy = make_policy
        self.judge = judge
        self.n_trials = n_trials
        self.run_all = bool(run_all)
        self.trials: list[Trial] = []
        self.chosen = -1
        self._replay: list[Any] = []

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        """Run the trials from the episode's start and choose the one to submit."""
        self.trials = []
        for i in range(self.n_trials):
            trial = self._rollout(i, observation, info)
            self.trials.append(trial)
            if trial.positive and not self.run_all:
                break
        self.chosen = select_submitted_trial([t.positive for t in self.trials])
        self._replay = list(self.trials[self.chosen].actions)

    def _rollout(self, index: int, observation: dict[str, Any], info: dict[str, Any]) -> Trial:
        fork = self._env.fork()
        policy = self.make_policy(fork, index)
        policy.reset(observation, info)
        recorder = PolicyTraceRecorder()
        # screenshots only for a judge that may show them (an LLM one on an image-text model)
        keep = getattr(self.judge, "reads_screenshots", False) is True
        recorder.start(
            fork,
            observation.get("instruction", ""),
            observation.get("screenshot") if keep else None,
        )
        trial = Trial()
        obs, step_info = observation, info
        while True:
            action = policy.act(obs, step_info)
            trial.actions.append(action)
            obs, _reward, terminated, truncated, step_info = fork.step(action)
            recorder.record(fork, step_info, terminated, obs.get("screenshot") if keep else None)
            if terminated or truncated:
                break
        assert recorder.trace is not None
        trial.steps = len(trial.actions)
        trial.task_reward = float(step_info.get("task_reward", 0.0))
        trial.report = self.judge.judge_episode(fork, recorder.trace)
        trial.verdict = trial.report.verdict
        return trial

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action | str:
        """The next action of the chosen trial (``DONE()`` if the env asks for more)."""
        if not self._replay:
            return "DONE()"
        return self._replay.pop(0)
