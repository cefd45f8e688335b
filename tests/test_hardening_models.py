"""Issue 33, items 4 and 5: a reward model's server that gives no answer is infrastructure
(``ModelUnavailable``, the episode ``infra_error``), never a reward of 0 or a neutral score;
``invalid`` stays for a model that answered unparsably. Every model client has a
whole-request deadline, and a batch waits for its slowest request once."""

from __future__ import annotations

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.agents import OracleAgent
from gui_gym.models.judge import LLMJudge
from gui_gym.models.llm import ModelUnavailable, OpenAICompatLLM
from gui_gym.models.llm.stub_server import SlowServer as _SlowServer
from gui_gym.models.llm.stub_server import StubChatServer
from gui_gym.rewards.prm import PRMQuery
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine, as_batch_agent
from gui_gym.wrappers import ProbingJudgeWrapper

ANDROID = "GuiGym/AndroidWorld-v0"
TASK = "ContactsAddContact"


def _judged_env(url: str) -> gym.Env:
    llm = OpenAICompatLLM("judge", url, max_retries=0, timeout=5.0)
    return ProbingJudgeWrapper(gym.make(ANDROID, task=TASK), judge=LLMJudge(llm, retries=0))


def _oracle_episode(env: gym.Env) -> tuple[float, dict]:
    agent = OracleAgent(env)
    observation, info = env.reset(seed=0)
    while True:
        observation, reward, terminated, truncated, info = env.step(agent.act(observation, info))
        if terminated or truncated:
            return float(reward), info


# ------------------------------------------------------------------------- item 4: outages


@pytest.mark.timeout(60)
def test_a_judge_server_returning_500_is_infrastructure_not_a_failure() -> None:
    server = StubChatServer(latency=0.0, fail_every=1)  # every request: HTTP 500
    with server.running() as url:
        env = _judged_env(url)
        # on the old code: reward 0.0, verdict "invalid", no infra_error
        with pytest.raises(ModelUnavailable, match="500"):
            _oracle_episode(env)
        with RolloutEngine(lambda: _judged_env(url), as_batch_agent("oracle"), num_envs=2) as eng:
            trajectories = eng.run([EpisodeSpec(TASK, seed) for seed in range(3)])
            stats = eng.stats
    assert all(t.infra_error and "500" in t.infra_error for t in trajectories)
    assert stats.infra_errors == 3 and stats.episodes == 3


@pytest.mark.timeout(60)
def test_a_judge_that_answers_unparsably_stays_invalid() -> None:
    server = StubChatServer(latency=0.0, reply="I would rather not say")
    with server.running() as url:
        reward, info = _oracle_episode(_judged_env(url))
    assert info["judge"]["verdict"] == "invalid" and reward == 0.0
    assert "unparseable" in str(info["judge"]["final"])


@pytest.mark.timeout(60)
def test_the_step_judge_prm_and_the_progress_model_raise_on_an_outage() -> None:
    from gui_gym.models.prm import LLMStepJudgePRM
    from gui_gym.models.progress.llm import LLMProgressJudge
    from gui_gym.wrappers import PRMWrapper, ProgressRewardWrapper

    server = StubChatServer(latency=0.0, fail_every=1)
    with server.running() as url:
        llm = OpenAICompatLLM("m", url, max_retries=1, backoff=0.0, timeout=5.0)
        prm_env = PRMWrapper(gym.make("GuiGym/WikiHow-v0", split="test"), LLMStepJudgePRM(llm))
        prm_env.reset(seed=0)
        with pytest.raises(ModelUnavailable, match="failed 2 times"):
            prm_env.step(prm_env.unwrapped.oracle_action())
        progress_env = ProgressRewardWrapper(
            gym.make("GuiGym/WikiHow-v0", split="test"), LLMProgressJudge(llm)
        )
        with pytest.raises(ModelUnavailable):
            progress_env.reset(seed=0)


# --------------------------------------------------------------------- item 5: deadlines


@pytest.mark.timeout(30)  # the old client read a trickled byte every 2 s for ever
@pytest.mark.parametrize("mode", ["trickle", "silent"])
def test_a_prm_server_that_trickles_or_never_answers_is_cut_at_the_deadline(mode: str) -> None:
    from gui_gym.models.prm import OpenAICompatPRM

    with _SlowServer(mode, every=0.5).running() as url:
        prm = OpenAICompatPRM("prm", base_url=url, timeout=1.0, max_retries=0, api="chat")
        with pytest.raises(ModelUnavailable, match="no answer within 1s"):
            prm.score([PRMQuery("g", "s", f"CLICK({i})") for i in range(6)])


@pytest.mark.timeout(30)
def test_a_batch_of_prm_queries_is_in_flight_together() -> None:
    from gui_gym.models.prm import OpenAICompatPRM

    server = _SlowServer("silent")
    with server.running() as url:
        prm = OpenAICompatPRM("prm", base_url=url, timeout=2.0, max_retries=0, api="chat")
        with pytest.raises(ModelUnavailable):
            prm.score([PRMQuery("g", "s", f"CLICK({i})") for i in range(6)])
        peak = server.peak
    assert peak == 6  # one after the other (the old client) never had more than one open


@pytest.mark.timeout(60)
def test_a_prm_outage_inside_the_rollout_engine_ends_episodes_as_infra_errors() -> None:
    from gui_gym.models.prm import OpenAICompatPRM
    from gui_gym.wrappers import PRMWrapper

    with _SlowServer("silent").running() as url:

        def make() -> gym.Env:
            prm = OpenAICompatPRM("prm", base_url=url, timeout=0.5, max_retries=0)
            return PRMWrapper(gym.make("GuiGym/WikiHow-v0", split="test"), prm)

        with RolloutEngine(make, as_batch_agent("oracle"), num_envs=2) as engine:
            trajectories = engine.run([EpisodeSpec(None, seed) for seed in range(2)])
    assert all("no answer within 0.5s" in (t.infra_error or "") for t in trajectories)
    assert engine.stats.infra_errors == 2


def test_post_all_works_inside_a_running_event_loop() -> None:
    import asyncio

    from gui_gym.models.llm.chat_http import post_all

    server = StubChatServer(latency=0.05)
    with server.running() as url:

        async def inside() -> list:
            return post_all(url, "k", "/chat/completions", [{"model": "m"}] * 3, timeout=5.0)

        answers = asyncio.run(inside())
    assert [a[0] for a in answers] == [200, 200, 200]
    assert server.peak_in_flight == 3
