"""ProbingJudgeWrapper's contract (reward, info["judge"], untouched policy env) and the
BestOfTrialsAgent procedure."""

from __future__ import annotations

import copy
import json
from typing import Any

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.agents import BestOfTrialsAgent, FallibleOracleAgent, OracleAgent, run_episode
from gui_gym.models.judge import JudgeReport, ProReJudge, scripted_components
from gui_gym.wrappers import ProbingJudgeWrapper


def _typed_not_saved(env: gym.Env) -> list[tuple[float, dict[str, Any]]]:
    obs, _ = env.reset(seed=0)
    name = env.unwrapped.task.params["name"]
    first, last = name.split(" ", 1)
    number = env.unwrapped.task.params["number"]
    out = []
    for action in (
        'OPEN_APP("Contacts")',
        "CLICK(5)",
        f'INPUT(4, "{first}")',
        f'INPUT(5, "{last}")',
        f'INPUT(6, "{number}")',
        "DONE()",
    ):
        _, reward, _, _, info = env.step(action)
        out.append((reward, info))
    return out


def test_wrapper_replaces_the_final_reward_with_the_verdict_and_reports_the_judge() -> None:
    env = ProbingJudgeWrapper(
        gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact"),
        n_probes=3,
        reward_map={"failure": -1.0},
    )
    steps = _typed_not_saved(env)
    assert all("judge" not in info for _, info in steps[:-1])
    reward, info = steps[-1]
    judge = info["judge"]
    assert reward == -1.0 and judge["reward"] == -1.0
    assert judge["verdict"] == "failure" and judge["task_reward"] == 0.0
    assert judge["agrees"] is True and judge["n_probes"] == 3
    assert len(judge["goals"]) == 3 and len(judge["probes"]) == 3
    probe = judge["probes"][0]
    assert {"goal", "trace", "claims", "filter", "verdict", "vote", "error"} <= set(probe)
    assert probe["trace"]["steps"] and probe["trace"]["screens"]
    # parallel probes are judged jointly (ProRe Sec. 3.5): one verdict over all claims
    assert judge["policy_claims"] and judge["aggregation"] == "joint" and judge["vote"] is None
    assert judge["final"]["verdict"] == "failure" and probe["vote"] is None
    json.dumps(judge)  # plain data, loggable as is


def test_wrapper_leaves_the_policy_env_as_it_was() -> None:
    inner = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    plain = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    wrapped = ProbingJudgeWrapper(inner, n_probes=2, mode="iterative")
    _typed_not_saved(wrapped)
    _typed_not_saved(plain)
    assert wrapped.unwrapped.state == plain.unwrapped.state
    assert wrapped.unwrapped.ui_tree == plain.unwrapped.ui_tree
    assert wrapped.unwrapped.steps_taken == plain.unwrapped.steps_taken


def test_wrapper_pays_success_on_an_oracle_episode_in_wikihow() -> None:
    env = ProbingJudgeWrapper(gym.make("GuiGym/WikiHow-v0", split="test"))
    trajectory = run_episode(env, OracleAgent(env), seed=0)
    judge = trajectory.steps[-1].info.get("judge") if trajectory.steps[-1].info else None
    assert env.last_report is not None and env.last_report.verdict == "success"
    assert trajectory.steps[-1].reward == 1.0
    assert judge is None or judge["verdict"] == "success"


def test_wrapper_records_constructor_args_and_checks_them() -> None:
    base = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    env = ProbingJudgeWrapper(base, n_probes=2, mode="iterative", vote="any")
    assert env.spec is not None
    kwargs = env.spec.additional_wrappers[-1].kwargs if env.spec.additional_wrappers else {}
    assert kwargs.get("n_probes") == 2 and kwargs.get("mode") == "iterative"
    with pytest.raises(ValueError, match="mode"):
        ProbingJudgeWrapper(base, mode="serial")
    with pytest.raises(ValueError, match="reward_map"):
        ProbingJudgeWrapper(base, reward_map={"maybe": 0.5})
    with pytest.raises(ValueError, match="vote"):
        ProbingJudgeWrapper(base, vote="pooled")


# ------------------------------------------------------------------- best of trials


class _ScriptedVerdicts:
    """A judge that says what it is told, trial by trial (any judge works)."""

    def __init__(self, verdicts: list[str]):
        self.verdicts = list(verdicts)
        self.seen = 0

    def judge_episode(self, env: Any, policy: Any) -> JudgeReport:
        verdict = self.verdicts[self.seen]
        self.seen += 1
        return JudgeReport(verdict=verdict, mode="scripted")


def test_best_of_trials_stops_at_the_first_positive_verdict() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    judge = _ScriptedVerdicts(["failure", "success", "success"])
    agent = BestOfTrialsAgent(env, lambda e, i: OracleAgent(e), judge, n_trials=3)
    run_episode(env, agent, seed=0)
    assert [t.verdict for t in agent.trials] == ["failure", "success"]
    assert agent.chosen == 1 and judge.seen == 2


def test_best_of_trials_submits_the_last_trial_when_none_is_positive() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    agent = BestOfTrialsAgent(
        env, lambda e, i: OracleAgent(e), _ScriptedVerdicts(["failure"] * 3), n_trials=3
    )
    run_episode(env, agent, seed=0)
    assert len(agent.trials) == 3 and agent.chosen == 2


def test_best_of_trials_replays_the_chosen_trial_and_leaves_the_start_untouched() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    judge = ProReJudge(**scripted_components(), n_probes=1)
    agent = BestOfTrialsAgent(
        env, lambda e, i: FallibleOracleAgent(e, stop_prob=0.4, seed=i), judge, n_trials=4
    )
    obs, info = env.reset(seed=5)
    start = copy.deepcopy(env.unwrapped.state)
    agent.reset(obs, info)
    assert env.unwrapped.state == start  # trials ran on forks
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
        done = terminated or truncated
    chosen = agent.trials[agent.chosen]
    assert info["task_reward"] == chosen.task_reward
    assert env.unwrapped.steps_taken == chosen.steps


def test_best_of_trials_checks_its_arguments() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    with pytest.raises(ValueError):
        BestOfTrialsAgent(env, lambda e, i: OracleAgent(e), _ScriptedVerdicts([]), n_trials=0)
    with pytest.raises(TypeError, match="judge_episode"):
        BestOfTrialsAgent(env, lambda e, i: OracleAgent(e), object(), n_trials=2)  # type: ignore[arg-type]


def test_judge_accuracy_benchmark_runs_and_writes_json_and_plot(tmp_path) -> None:
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    out, plot = tmp_path / "ja.json", tmp_path / "ja.png"
    subprocess.run(
        [
            sys.executable,
            str(root / "benchmarks" / "judge_accuracy.py"),
            "--aw-tasks",
            "ContactsAddContact",
            "--aw-seeds",
            "1",
            "--wikihow-tasks",
            "1",
            "--tts-aw-seeds",
            "1",
            "--tts-wikihow-tasks",
            "1",
            "--tts-n",
            "2",
            "--out",
            str(out),
            "--plot",
            str(plot),
        ],
        check=True,
        cwd=root,
        capture_output=True,
    )
    data = json.loads(out.read_text())
    judges = set(data["accuracy"]["summary"]["all"]["judges"])
    assert {
        "trajectory-only",
        "prore-1",
        "prore-1 budget 8-15 (ours)",
        "prore-3-parallel",
        "prore-3-parallel vote (ours)",
        "prore-3-iterative",
        "t4 no probing, raw judge",
        "t4 rule-prompt probing, raw judge",
        "t4 scheduled probing, raw judge",
        "digirl-style last-1",
        "webrl-style full",
    } <= judges
    condensing = data["accuracy"]["trace_condensing"]
    assert 0 < condensing["condensed"] < condensing["full"]
    assert data["test_time_scaling"]["n"] == [1, 2]
    assert plot.stat().st_size > 0
