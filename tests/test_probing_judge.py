"""ProRe's judge pipeline: probing decides what the trajectory cannot, probes never disturb
the policy's env, crashes fail one probe only, LLM components parse strictly and give a
clear failure verdict on garbage."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.models.judge import (
    Claim,
    ComponentError,
    LLMClaimExtractor,
    LLMClaimFilter,
    LLMEvaluator,
    LLMJudge,
    LLMReasoner,
    PolicyTraceRecorder,
    ProbeSession,
    ProReJudge,
    RuleClaimExtractor,
    ScriptedEvaluator,
    Trace,
    analyse_task,
    llm_components,
    normalize,
    parse_claims,
    parse_decisions,
    parse_goal,
    parse_status,
    scripted_components,
)
from gui_gym.models.llm import ScriptedLLM

# ------------------------------------------------------------------------------ helpers


def _play(env: gym.Env, actions: list[str], seed: int = 0) -> Trace:
    """Reset, play ``actions`` (formatted with the task's params), return the policy trace."""
    obs, _ = env.reset(seed=seed)
    base = env.unwrapped
    recorder = PolicyTraceRecorder()
    recorder.start(base, obs["instruction"])
    for action in actions:
        _, _, terminated, truncated, info = env.step(action.format(**_params(base)))
        recorder.record(base, info, terminated)
        if terminated or truncated:
            break
    assert recorder.trace is not None
    return recorder.trace


def _params(base: Any) -> dict[str, str]:
    params = dict(base.task.params)
    if "name" in params:
        params["first"], params["last"] = params["name"].split(" ", 1)
    return params


def _oracle(env: gym.Env, seed: int = 0) -> Trace:
    obs, _ = env.reset(seed=seed)
    base = env.unwrapped
    recorder = PolicyTraceRecorder()
    recorder.start(base, obs["instruction"])
    while True:
        _, _, terminated, truncated, info = env.step(base.oracle_action())
        recorder.record(base, info, terminated)
        if terminated or truncated:
            return recorder.trace  # type: ignore[return-value]


TYPED_NOT_SAVED = [
    'OPEN_APP("Contacts")',
    "CLICK(5)",
    'INPUT(4, "{first}")',
    'INPUT(5, "{last}")',
    'INPUT(6, "{number}")',
    "DONE()",
]


def _judge(n_probes: int, **kwargs: Any) -> ProReJudge:
    return ProReJudge(**{**scripted_components(), **kwargs}, n_probes=n_probes)


# -------------------------------------------------------------- only probing decides this


def test_typed_but_never_saved_contact_is_caught_only_by_probing() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    trace = _play(env, TYPED_NOT_SAVED)
    assert env.unwrapped._task_reward == 0.0  # the truth: nothing was saved
    trajectory_only = _judge(0).judge_episode(env.unwrapped, trace)
    prore = _judge(1).judge_episode(env.unwrapped, trace)
    # The trajectory looks successful: the name and number were typed and DONE was said.
    assert trajectory_only.verdict == "success"
    # The probe opens Contacts, finds no such contact, and sees the values only as a draft.
    assert prore.verdict == "failure"
    kinds = {c.kind for c in prore.probes[0].kept_claims}
    assert "absent" in kinds
    relations = {r.relation for r in prore.final.relations}  # type: ignore[union-attr]
    assert "contradicted" in relations


def test_saved_contact_is_confirmed_by_probing() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    trace = _oracle(env)
    report = _judge(1).judge_episode(env.unwrapped, trace)
    assert report.verdict == "success"
    shown = next(c for c in report.probes[0].kept_claims if c.kind == "shown")
    assert any(normalize(env.unwrapped.task.params["name"]) == normalize(v) for v in shown.values)


def test_deleted_file_is_probed_in_its_folder() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="FilesDeleteFile")
    trace = _oracle(env, seed=1)
    report = _judge(1).judge_episode(env.unwrapped, trace)
    assert report.verdict == "success"
    probe = report.probes[0]
    folder = analyse_task(trace.goal).places[0]
    assert f"the {folder} folder" in probe.goal
    assert probe.trace is not None
    assert any(folder in s.target for s in probe.trace.steps)  # it went into the folder
    assert any(c.kind == "absent" for c in probe.kept_claims)


def test_unfinished_episode_fails_where_the_benchmark_requires_done() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact", max_steps=2)
    trace = _play(env, ['OPEN_APP("Contacts")', "CLICK(5)"])
    assert trace.completion_required and not trace.declared_done
    assert _judge(1).judge_episode(env.unwrapped, trace).verdict == "failure"


# ------------------------------------------------------------------- the policy's env


def test_probing_never_changes_the_policy_env() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    trace = _play(env, TYPED_NOT_SAVED)
    base = env.unwrapped
    state = copy.deepcopy(base.state)
    screen, steps, milestones = base.ui_tree, base.steps_taken, base.milestones
    for mode in ("parallel", "iterative"):
        report = _judge(3, mode=mode).judge_episode(base, trace)
        assert all(p.trace is not None and p.trace.steps for p in report.probes)
    assert base.state == state
    assert base.ui_tree == screen
    assert (base.steps_taken, base.milestones) == (steps, milestones)


def test_probe_session_shows_only_the_ui_and_ignores_episode_end() -> None:
    env = gym.make("GuiGym/WikiHow-v0", split="test")
    trace = _oracle(env)  # WikiHow ends episodes on success; a probe must still be able to act
    session = ProbeSession(env.unwrapped.fork(), "look around", max_steps=3)
    assert {"screen", "step", "trace", "steps_left"} <= set(dir(session))
    assert not any(hasattr(session, name) for name in ("task", "state", "env"))
    first = session.step("GOBACK()")
    assert first.valid
    bad = session.step("CLICK(999)")
    assert not bad.valid and "no element" in (bad.error or "")
    session.step('ANSWER("done looking")')
    assert session.finished and session.trace.answer == "done looking"
    assert len(session.trace.screens) == len(session.trace.steps) + 1
    assert trace.steps  # the policy's trace is untouched by the session


def test_scripted_evaluator_never_presses_data_changing_controls() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ExpenseDeleteSingle")
    trace = _play(env, ["DONE()"])
    report = _judge(3).judge_episode(env.unwrapped, trace)
    forbidden = re.compile(r"\b(delete|save|send|remove|add)\b", re.I)
    for probe in report.probes:
        assert probe.trace is not None
        for step in probe.trace.steps:
            assert not forbidden.search(step.target), step


# ------------------------------------------------------------------ crashes and votes


class _FlakyEvaluator:
    """The scripted evaluator, except that chosen probes (by goal index) crash."""

    def __init__(self, crash_on: set[int]):
        self.inner = ScriptedEvaluator()
        self.crash_on = crash_on
        self.calls = 0

    def probe(self, goal: str, session: ProbeSession) -> None:
        index = self.calls
        self.calls += 1
        if index in self.crash_on:
            session.step("GOBACK()")
            raise RuntimeError("emulator lost")
        self.inner.probe(goal, session)


def test_a_crashing_probe_fails_alone_and_the_vote_goes_on() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    trace = _play(env, TYPED_NOT_SAVED)
    report = _judge(3, evaluator=_FlakyEvaluator({1}), aggregation="vote").judge_episode(
        env.unwrapped, trace
    )
    assert [p.vote for p in report.probes] == ["failure", "invalid", "failure"]
    assert "RuntimeError: emulator lost" in (report.probes[1].error or "")
    assert report.vote is not None and report.vote.abstained == 1
    assert report.verdict == "failure"
    assert any("1 of 3 probes gave no vote" in n for n in report.notes)


def test_when_every_probe_crashes_the_policy_trace_alone_decides() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    trace = _oracle(env)
    report = _judge(2, evaluator=_FlakyEvaluator({0, 1})).judge_episode(env.unwrapped, trace)
    assert report.verdict == "success"
    assert any("judged on the policy trace alone" in n for n in report.notes)


def test_iterative_goals_are_revised_from_the_previous_round() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    trace = _oracle(env)
    report = _judge(3, mode="iterative").judge_episode(env.unwrapped, trace)
    assert len(report.goals) == 3 and len(set(report.goals)) > 1
    assert all(len(g.split()) <= 20 for g in report.goals)
    assert report.verdict == "success"


def test_pipeline_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="mode"):
        _judge(1, mode="serial")
    with pytest.raises(ValueError, match="vote"):
        _judge(1, vote="pooled")
    with pytest.raises(ValueError, match="n_probes"):
        _judge(-1)


# --------------------------------------------------------------------- rule-based parts


def test_task_analysis_reads_intents_and_targets() -> None:
    a = analyse_task("Create a new contact for Hugo Pereira. Their number is +13920741751.")
    assert a.intent == "create" and a.targets == ("Hugo Pereira", "+13920741751")
    a = analyse_task(
        "Delete the following recipes from Broccoli app: Classic Margherita Pizza, "
        'Cauliflower Fried "Rice", BBQ Chicken Quesadillas.'
    )
    assert a.intent == "delete"
    assert set(a.targets) == {
        "Classic Margherita Pizza",
        "Cauliflower Fried Rice",
        "BBQ Chicken Quesadillas",
    }
    a = analyse_task(
        "In Markor, move the note shy_king_copy.md from StudyGuides to MeetingMinutes."
    )
    assert a.intent == "move" and a.destination == "MeetingMinutes"
    assert analyse_task("Turn off WiFi, then enable bluetooth").toggles == (
        ("wifi", "off"),
        ("bluetooth", "on"),
    )
    a = analyse_task('Then, answer my question: How many tips does "How to Clean Squid" give?')
    assert a.intent == "answer" and a.count_of == "tip"
    assert analyse_task(
        'Search an article to learn how to remove grease stains. Then, access "How to X".'
    ).intent == ("create")


def test_rule_claims_stay_within_four_and_cite_real_screens() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ExpenseAddMultiple")
    trace = _oracle(env)
    claims = RuleClaimExtractor().extract(trace.goal, trace)
    assert 1 <= len(claims) <= 4
    assert all(0 <= s < len(trace.screens) for c in claims for s in c.steps)


# ------------------------------------------------------------------------ LLM components


def test_parsers_are_strict() -> None:
    assert parse_goal("Analysis: look.\nGoal: Find Hugo in Contacts.") == "Find Hugo in Contacts."
    with pytest.raises(ValueError, match="20"):
        parse_goal("Goal: " + " ".join(["word"] * 21))
    with pytest.raises(ValueError, match="Goal"):
        parse_goal("Find Hugo")
    assert parse_status("Analysis: fine\nStatus: success") == "success"
    with pytest.raises(ValueError, match="conflicting"):
        parse_status("Status: success\nStatus: failure")
    with pytest.raises(ValueError):
        parse_status("Status: probably")
    ok = '{"policy_claims": [{"steps": [0, 2], "reasoning": "r", "claim": "c"}]}'
    assert parse_claims(ok, "policy_claims", 3, "policy")[0].steps == (0, 2)
    with pytest.raises(ValueError, match="cites screens"):
        parse_claims(ok, "policy_claims", 2, "policy")
    with pytest.raises(ValueError, match="1 to 4"):
        parse_claims('{"policy_claims": []}', "policy_claims", 3, "policy")
    with pytest.raises(ValueError, match="twice"):
        parse_decisions(
            '{"decisions": [{"claim": 0, "keep": true}, {"claim": 0, "keep": false}]}', 1
        )
    with pytest.raises(ValueError, match="no decision"):
        parse_decisions('{"decisions": []}', 1)


def _fake_llm(trace_name: str = "Zoe") -> ScriptedLLM:
    """A scripted LLM answering every ProRe prompt in the expected format."""

    def claims(text: str) -> str:
        key = "policy_claims" if "Trace of the policy agent" in text else "evaluator_claims"
        return json.dumps({key: [{"steps": [0], "reasoning": "seen", "claim": "it is there"}]})

    return ScriptedLLM(
        [
            (
                r"Reply with JSON only, one decision",
                '{"decisions": [{"claim": 0, "keep": true, "reason": "ok"}]}',
            ),
            (r"turn a GUI agent's trace into short", claims),
            (
                r"decide whether a GUI agent",
                "Analysis: the evaluator confirms it.\nStatus: success",
            ),
            (r"Improve the goal", "Analysis: try the list.\nGoal: Scroll the Contacts list."),
            (
                r"write ONE short goal",
                "Analysis: the contact list.\nGoal: Find the contact in Contacts.",
            ),
            (r"You are an evaluator agent", '<action>ANSWER("found it")</action>'),
        ]
    )


def test_llm_pipeline_runs_end_to_end_with_a_scripted_model() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    trace = _oracle(env)
    for mode in ("parallel", "iterative"):
        judge = ProReJudge(**llm_components(_fake_llm()), n_probes=2, mode=mode)
        report = judge.judge_episode(env.unwrapped, trace)
        assert report.verdict == "success", report.notes
        assert report.probes[0].trace is not None
        assert report.probes[0].trace.answer == "found it"
        assert report.probes[0].claims[0].text == "it is there"
    assert report.goals[1] == "Scroll the Contacts list."


class _Garbage:
    """An LLM that always answers nonsense."""

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, prompts, max_new_tokens=256, temperature=0.0, n=1):
        self.calls += len(prompts)
        return [["lorem ipsum dolor"] * n for _ in prompts]


def test_garbage_from_the_judge_model_gives_a_clear_failure_verdict() -> None:
    llm = _Garbage()
    verdict = LLMJudge(llm, retries=2).judge(
        "task", [Claim("policy", "x", (0,))], [], Trace("policy", "t")
    )
    assert verdict.verdict == "invalid"
    assert "unparseable after 3 attempts" in verdict.reasoning
    assert verdict.raw == "lorem ipsum dolor" and llm.calls == 3


def test_garbage_from_other_components_raises_component_errors() -> None:
    trace = Trace("policy", "task", screens=[], steps=[])
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    real = _oracle(env)
    with pytest.raises(ComponentError, match="goal"):
        LLMReasoner(_Garbage(), retries=1).schedule("task", trace, 1)
    with pytest.raises(ComponentError, match="claims"):
        LLMClaimExtractor(_Garbage(), retries=1).extract("task", real)
    with pytest.raises(ComponentError, match="filter"):
        LLMClaimFilter(_Garbage(), retries=1).filter("task", real, [Claim("policy", "x", (0,))])
    session = ProbeSession(env.unwrapped.fork(), "goal", max_steps=3)
    with pytest.raises(ComponentError, match="action"):
        LLMEvaluator(_Garbage(), retries=1).probe("goal", session)


def test_garbage_everywhere_yields_an_invalid_verdict_not_a_reward_guess() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    trace = _oracle(env)
    report = ProReJudge(**llm_components(_Garbage()), n_probes=2).judge_episode(
        env.unwrapped, trace
    )
    assert report.verdict == "invalid"
    assert report.notes and "claims about the policy trace failed" in report.notes[0]


def test_llm_components_reject_objects_without_generate() -> None:
    with pytest.raises(TypeError, match="generate"):
        LLMJudge(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown component"):
        llm_components(_Garbage(), judges=None)
