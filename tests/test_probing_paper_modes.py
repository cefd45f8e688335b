"""ProRe's paper modes (issue 20 items 16, 17, 19): the reasoner's expectation reaches the
judge and revision, sequential sub-goals, trace condensing, the claim filter's criterion,
joint judgment over all probes, Table 4's ablations and Table 2's trajectory-only
baselines. Each mode is checked by hand on a small case."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.core.ui import UIElement, UITree
from gui_gym.models.judge import (
    MAX_SUB_GOALS,
    RULE_PROMPT_GOAL,
    Claim,
    LLMClaimFilter,
    LLMJudge,
    LLMTrajectoryJudge,
    PolicyTraceRecorder,
    ProbePlan,
    ProbeSession,
    ProReJudge,
    RulePromptReasoner,
    RuleRawJudge,
    RuleTrajectoryJudge,
    ScriptedReasoner,
    Trace,
    TraceStep,
    llm_components,
    parse_plan,
    parse_yes_no,
    scripted_components,
)
from gui_gym.models.llm import ScriptedLLM
from gui_gym.rewards.probing import redundant_states


def _play(env: gym.Env, actions: list[str] | None = None, seed: int = 0) -> Trace:
    """The oracle's episode (or ``actions``, formatted with the task's params)."""
    obs, _ = env.reset(seed=seed)
    base = env.unwrapped
    recorder = PolicyTraceRecorder()
    recorder.start(base, obs["instruction"])
    queue = list(actions) if actions is not None else None
    while True:
        if queue is None:
            action = base.oracle_action()
        else:
            params = dict(base.task.params)
            params["first"], params["last"] = params["name"].split(" ", 1)
            action = queue.pop(0).format(**params)
        _, _, terminated, truncated, info = env.step(action)
        recorder.record(base, info, terminated)
        if terminated or truncated or queue == []:
            assert recorder.trace is not None
            return recorder.trace


TYPED_NOT_SAVED = [
    'OPEN_APP("Contacts")',
    "CLICK(5)",
    'INPUT(4, "{first}")',
    'INPUT(5, "{last}")',
    'INPUT(6, "{number}")',
    "DONE()",
]


def _contacts(actions: list[str] | None = None) -> tuple[gym.Env, Trace]:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    return env, _play(env, actions)


# ----------------------------------------------------------- trace condensing (Sec. 3.4)


def test_redundant_states_worked_examples() -> None:
    no = [False] * 6
    # A B C B D: the excursion to C and the return to B form a loop back to state 1
    assert redundant_states("ABCBD", no[:5]) == {2: ("loop", 1), 3: ("loop", 1)}
    # a home screen, then the same app screen as before it: home, then unchanged
    assert redundant_states("AHAB", [False, True, False, False]) == {
        1: ("home", None),
        2: ("duplicate", 0),
    }
    # the last state is the outcome: kept even when it closes a loop or repeats a screen
    assert redundant_states("ABCA", no[:4]) == {1: ("loop", 0), 2: ("loop", 0)}
    assert redundant_states("ABB", no[:3]) == {}
    # a loop in which text was typed (state 2 follows an INPUT) is kept whole
    assert redundant_states("ABCAD", no[:5], [False, False, True, False, False]) == {}
    with pytest.raises(ValueError):
        redundant_states("AB", [False])


@pytest.mark.timeout(20)
def test_redundant_states_is_linear_on_long_and_looping_traces() -> None:
    keys = [i % 7 for i in range(200_000)]  # back to state 0 every seven states
    dropped = redundant_states(keys, [False] * len(keys))
    # kept: state 0, and the last loop's unfinished tail (keys 1 and 2)
    assert sorted(set(range(len(keys))) - set(dropped)) == [0, 199_998, 199_999]
    keys = list(range(100_000)) + list(range(100_000))  # one long loop back to state 0
    dropped = redundant_states(keys, [False] * len(keys))
    assert len(dropped) == 100_000 and dropped[99_999] == ("loop", 0)


def test_condensed_render_leaves_out_home_and_loops_but_keeps_numbers_and_actions() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    env.reset(seed=0)
    base = env.unwrapped
    recorder = PolicyTraceRecorder()
    trace = recorder.start(base, "task")
    for action in ('OPEN_APP("Contacts")', "HOME()", 'OPEN_APP("Contacts")', "SCROLL(down)"):
        _, _, terminated, _, info = env.step(action)
        recorder.record(base, info, terminated)
    assert trace.screens[0].name == "launcher" and trace.screens[2].name == "launcher"
    full, short = trace.render(), trace.render(condense=True)
    assert trace.redundant_screens() == {2: ("home", None), 3: ("duplicate", 1)}
    assert "--- Screen 2 --- (left out: the home screen)" in short
    assert "--- Screen 3 --- (left out: unchanged, as screen 1)" in short
    for i in range(len(trace.steps)):  # every action stays, with its number
        assert f">>> Action {i + 1}:" in short
    assert trace.screens[1].text in short and len(short) < len(full)


def test_llm_claim_components_condense_by_default() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="ContactsAddContact")
    env.reset(seed=0)
    base = env.unwrapped
    recorder = PolicyTraceRecorder()
    trace = recorder.start(base, "task")
    for action in ('OPEN_APP("Contacts")', "HOME()", 'OPEN_APP("Contacts")', "DONE()"):
        _, _, terminated, _, info = env.step(action)
        recorder.record(base, info, terminated)
    llm = ScriptedLLM(
        [(r"decisions", '{"decisions": [{"claim": 0, "keep": true, "reason": "r"}]}')],
        default='{"policy_claims": [{"steps": [0], "reasoning": "r", "claim": "c"}]}',
    )
    parts = llm_components(llm)
    parts["claim_extractor"].extract(trace.goal, trace)
    parts["claim_filter"].filter(trace.goal, trace, [Claim("policy", "c", (0,))])
    assert len(llm.calls) == 2
    assert all("--- Screen 2 --- (left out: the home screen)" in c for c in llm.calls)
    full = LLMClaimFilter(llm, condense=False)
    full.filter(trace.goal, trace, [Claim("policy", "c", (0,))])
    assert "(left out:" not in llm.calls[-1]


# ------------------------------------------------------- expectation and plans (Eq. 1)


def test_parse_plan_reads_the_expectation_and_sequential_goals() -> None:
    plan = parse_plan(
        "Analysis: the contact must be saved with its number.\n"
        "Goal 1: Find Hugo Pereira in Contacts.\n"
        "**Goal 2:** Open the contact and read its phone number."
    )
    assert plan.expectation == "the contact must be saved with its number."
    assert plan.goals == (
        "Find Hugo Pereira in Contacts.",
        "Open the contact and read its phone number.",
    )
    assert (
        plan.goal
        == "Find Hugo Pereira in Contacts.; then Open the contact and read its phone number."
    )
    assert parse_plan("Goal: Find it.").expectation == ""
    with pytest.raises(ValueError, match="at most 3"):
        parse_plan("\n".join(f"Goal: step {i}" for i in range(MAX_SUB_GOALS + 1)))
    with pytest.raises(ValueError, match="at most 20"):
        parse_plan("Goal: " + "word " * 21)
    with pytest.raises(ValueError, match="Goal"):
        parse_plan("Goals: none")
    with pytest.raises(ValueError, match="1 to 3"):
        ProbePlan(())
    with pytest.raises(TypeError):
        ProbePlan.of(3)  # type: ignore[arg-type]


@pytest.mark.timeout(20)
def test_parse_plan_and_yes_no_are_linear_on_degenerate_replies() -> None:
    blank = " " * 200_000
    with pytest.raises(ValueError):
        parse_plan(blank + "Goal" + blank)
    with pytest.raises(ValueError):
        parse_yes_no("Answer:" + blank + "\n" * 100_000)
    assert parse_yes_no("Reasoning...\n**Answer:** YES") == "success"
    assert parse_yes_no("Answer: no.") == "failure"
    with pytest.raises(ValueError, match="conflicting"):
        parse_yes_no("Answer: YES\nAnswer: NO")


def _llm(goal_reply: str, judge_reply: str = "Analysis: ok.\nStatus: success") -> ScriptedLLM:
    def claims(text: str) -> str:
        key = "policy_claims" if "Trace of the policy agent" in text else "evaluator_claims"
        if key == "policy_claims":
            return json.dumps({key: [{"steps": [0], "reasoning": "r", "claim": "it is done"}]})
        goal = text.split("Evaluator's probing goal: ", 1)[1].split("\n", 1)[0]
        return json.dumps({key: [{"steps": [0], "reasoning": "seen", "claim": f"saw: {goal}"}]})

    return ScriptedLLM(
        [
            (
                r"one decision per claim",
                '{"decisions": [{"claim": 0, "keep": true, "reason": "ok"}]}',
            ),
            (r"turn a GUI agent's trace into short", claims),
            (r"decide whether a GUI agent", judge_reply),
            (r"Improve the goal", "Analysis: look in the list.\nGoal: Scroll the Contacts list."),
            (r"write ONE short goal", goal_reply),
            (r"You are an evaluator agent", '<action>ANSWER("found it")</action>'),
        ]
    )


def test_the_expectation_reaches_the_judge_and_iterative_revision() -> None:
    env, trace = _contacts()
    llm = _llm("Analysis: a saved contact named Zoe with her number.\nGoal: Find Zoe in Contacts.")
    report = ProReJudge(**llm_components(llm), n_probes=2, mode="iterative").judge_episode(
        env.unwrapped, trace
    )
    assert report.expectation == "a saved contact named Zoe with her number."
    revise = [c for c in llm.calls if "Improve the goal" in c]
    judged = [c for c in llm.calls if "decide whether a GUI agent" in c]
    assert len(revise) == 1 and len(judged) == 2  # iterative rounds: one verdict each, voted
    for prompt in revise + judged:
        assert "a saved contact named Zoe with her number." in prompt
    assert report.aggregation == "vote" and report.vote is not None
    assert report.to_dict()["expectation"] == report.expectation


def test_sub_goals_run_in_order_on_one_fork_sharing_the_budget() -> None:
    env, trace = _contacts()
    llm = _llm("Analysis: two states.\nGoal: Find Zoe in Contacts.\nGoal: Read Zoe's number.")
    report = ProReJudge(**llm_components(llm), n_probes=1).judge_episode(env.unwrapped, trace)
    probe = report.probes[0]
    assert probe.sub_goals == ("Find Zoe in Contacts.", "Read Zoe's number.")
    assert probe.trace is not None
    # each sub-goal ended with its own ANSWER, one after the other in the same session
    assert probe.trace.segments == [(0, "Find Zoe in Contacts."), (1, "Read Zoe's number.")]
    assert [s.action for s in probe.trace.steps] == ['ANSWER("found it")'] * 2
    prompts = [c for c in llm.calls if "You are an evaluator agent" in c]
    assert "Goal: Find Zoe in Contacts." in prompts[0] and "Goal: Read Zoe's number." in prompts[1]
    assert "=== Sub-goal: Read Zoe's number. ===" in probe.trace.render()
    assert probe.to_dict()["sub_goals"] == list(probe.sub_goals)


def test_a_probe_plan_stops_when_the_shared_budget_is_spent() -> None:
    env, trace = _contacts()
    session = ProbeSession(env.unwrapped.fork(), "a; then b", max_steps=1)
    session.step("SCROLL(down)")
    session.begin("b")
    assert session.steps_left == 0 and session.trace.segments == [(1, "b")]
    session = ProbeSession(env.unwrapped.fork(), "a; then b", max_steps=3)
    session.step('ANSWER("x")')
    assert session.finished and session.steps_left == 0
    session.begin("b")  # an ANSWER ends the sub-goal, not the probe
    assert not session.finished and session.steps_left == 2


def test_scripted_reasoner_splits_a_two_app_check_into_sub_goals() -> None:
    env = gym.make("GuiGym/AndroidWorld-v0", task="MarkorCreateNoteAndSms")
    trace = _play(env)
    plan = ScriptedReasoner().schedule(trace.goal, trace, 1)[0]
    assert [g.split(",")[0] for g in plan.goals] == ["In Markor", "In Simple SMS Messenger"]
    assert plan.expectation.startswith("Stored in Markor and Simple SMS Messenger: ")
    ours = ScriptedReasoner(sub_goals=False).schedule(trace.goal, trace, 2)
    assert [len(p.goals) for p in ours] == [1, 1] and ours[1].goals[0].startswith("In Simple")
    report = ProReJudge(**scripted_components(), n_probes=1).judge_episode(env.unwrapped, trace)
    assert report.verdict == "success"
    segments = report.probes[0].trace.segments  # type: ignore[union-attr]
    assert [g for _, g in segments] == list(plan.goals) and segments[1][0] > 0


# ------------------------------------------------------------------ claim filter (Sec. 3.4)


def test_the_paper_filters_evaluator_claims_only_with_its_criterion() -> None:
    env, trace = _contacts()
    llm = _llm("Goal: Find Zoe in Contacts.")
    ProReJudge(**llm_components(llm), n_probes=1).judge_episode(env.unwrapped, trace)
    filtered = [c for c in llm.calls if "one decision per claim" in c]
    assert len(filtered) == 1  # the probe's claims; the policy's are not filtered
    assert "Discard claims about" in filtered[0] and "evaluator agent's claims" in filtered[0]
    llm = _llm("Goal: Find Zoe in Contacts.")
    parts = llm_components(llm, claim_filter=LLMClaimFilter(llm, criterion="grounded"))
    report = ProReJudge(**parts, n_probes=1, filter_policy_claims=True).judge_episode(
        env.unwrapped, trace
    )
    filtered = [c for c in llm.calls if "one decision per claim" in c]
    assert len(filtered) == 2 and all("cited screens support it" in c for c in filtered)
    assert report.policy_decisions[0].reason == "ok"
    with pytest.raises(ValueError, match="criterion"):
        LLMClaimFilter(llm, criterion="strict")


# ---------------------------------------------------------- joint judgment (Sec. 3.5)


def test_parallel_probes_are_judged_jointly_by_default_and_voted_as_an_option() -> None:
    env, trace = _contacts()
    goals = "Analysis: saved contact.\nGoal: Find Zoe in Contacts."
    llm = _llm(goals)
    report = ProReJudge(**llm_components(llm), n_probes=3).judge_episode(env.unwrapped, trace)
    judged = [c for c in llm.calls if "decide whether a GUI agent" in c]
    assert len(judged) == 1 and report.aggregation == "joint" and report.vote is None
    # one chain of claims over every probe's claims, each numbered once
    assert judged[0].count("saw: Find Zoe in Contacts.") == 3
    assert report.verdict == "success" and report.final is not None
    llm = _llm(goals)
    report = ProReJudge(**llm_components(llm), n_probes=3, aggregation="vote").judge_episode(
        env.unwrapped, trace
    )
    judged = [c for c in llm.calls if "decide whether a GUI agent" in c]
    assert len(judged) == 3 and all(c.count("saw: Find") == 1 for c in judged)
    assert report.vote is not None and report.vote.successes == 3
    with pytest.raises(ValueError, match="aggregation"):
        ProReJudge(**llm_components(llm), aggregation="pooled")


def test_joint_judgment_weighs_contradicting_probes_together() -> None:
    # The typed-but-never-saved contact: every scripted probe finds it absent; the joint
    # judgment sees all three probes' "absent" claims and fails the episode once.
    env, trace = _contacts(TYPED_NOT_SAVED)
    report = ProReJudge(**scripted_components(), n_probes=3).judge_episode(env.unwrapped, trace)
    assert report.verdict == "failure" and report.aggregation == "joint"
    assert {c.source for c in report.probes[0].kept_claims} == {"probe 0"}
    relations = report.final.relations  # type: ignore[union-attr]
    assert any(r.relation == "contradicted" for r in relations)


# -------------------------------------------------------------- Table 4 ablations


def test_rule_prompt_scheduling_asks_the_papers_fixed_question() -> None:
    assert (
        RULE_PROMPT_GOAL
        == "What are the key states to verify whether the task {task} is completed?"
    )
    reasoner = RulePromptReasoner()
    goal = reasoner.schedule("Take one photo.", Trace("policy", "Take one photo."), 2)
    assert (
        goal
        == ["What are the key states to verify whether the task Take one photo. is completed?"] * 2
    )
    env, trace = _contacts()
    report = ProReJudge(**{**scripted_components(), "reasoner": reasoner}).judge_episode(
        env.unwrapped, trace
    )
    assert report.goals == [RULE_PROMPT_GOAL.format(task=trace.goal)] and report.expectation == ""


def test_raw_observation_judge_replaces_claims() -> None:
    raw = RuleRawJudge()
    env, saved = _contacts()
    report = ProReJudge(**scripted_components(), raw_judge=raw).judge_episode(env.unwrapped, saved)
    assert report.verdict == "success" and not report.policy_claims and not report.probes[0].claims
    env, unsaved = _contacts(TYPED_NOT_SAVED)
    report = ProReJudge(**scripted_components(), raw_judge=raw).judge_episode(
        env.unwrapped, unsaved
    )
    assert report.verdict == "failure"  # the name is only in the form's fields
    with pytest.raises(TypeError, match="judge_raw"):
        ProReJudge(**scripted_components(), raw_judge=object())  # type: ignore[arg-type]
    llm = ScriptedLLM([(r"raw observations", "Analysis: fine.\nStatus: success")])
    from gui_gym.models.judge import LLMRawJudge

    report = ProReJudge(**scripted_components(), raw_judge=LLMRawJudge(llm)).judge_episode(
        env.unwrapped, unsaved
    )
    assert report.verdict == "success" and "Evaluator trace 0 (goal:" in llm.calls[0]


# -------------------------------------------------------- Table 2 trajectory baselines


def _screen(*labels: str, editable: bool = False) -> UITree:
    return UITree.build(
        [UIElement(0, "textbox" if editable else "text", text=t, editable=editable) for t in labels]
    )


def test_rule_trajectory_judges_read_screens_and_history_as_their_styles_do() -> None:
    goal = 'Create a contact named "Zoe Park".'
    typed = Trace(
        "policy",
        goal,
        screens=[_screen("Contacts"), _screen("Zoe Park", editable=True)],
        steps=[TraceStep('INPUT(0, "Zoe Park")', "type", True)],
        declared_done=True,
    )
    # The form holds the name but nothing shows it stored: DigiRL-style (screens only)
    # fails it; WebRL-style also reads the action history, where the name was typed.
    assert RuleTrajectoryJudge("digirl").judge_episode(None, typed).verdict == "failure"
    assert RuleTrajectoryJudge("webrl").judge_episode(None, typed).verdict == "success"
    shown_earlier = Trace("policy", goal, screens=[_screen("Zoe Park"), _screen("Contacts")])
    shown_earlier.steps = [TraceStep("GOBACK()", "back", True)]
    assert RuleTrajectoryJudge("digirl", 1).judge_episode(None, shown_earlier).verdict == "failure"
    assert (
        RuleTrajectoryJudge("digirl", None).judge_episode(None, shown_earlier).verdict == "success"
    )
    with pytest.raises(ValueError, match="style"):
        RuleTrajectoryJudge("gpt")


def test_llm_trajectory_judges_follow_their_baselines_structure() -> None:
    env, trace = _contacts()
    llm = ScriptedLLM(
        [(r"Answer: YES", "The contact is listed.\nAnswer: YES")], default="Status: failure"
    )
    report = LLMTrajectoryJudge(llm, style="webrl").judge_episode(None, trace)
    assert report.verdict == "success" and "Action history:" in llm.calls[0]
    digirl = LLMTrajectoryJudge(llm, style="digirl", last_states=1)
    assert digirl.judge_episode(None, trace).verdict == "failure"
    prompt = llm.calls[-1]
    assert "--- Final screen ---" in prompt and "--- Screen 0 ---" not in prompt
    LLMTrajectoryJudge(llm, style="digirl", last_states=None).judge_episode(None, trace)
    assert "--- Screen 0 ---" in llm.calls[-1]
    garbage = ScriptedLLM([], default="I am not sure.")
    report = LLMTrajectoryJudge(garbage, style="webrl", retries=1).judge_episode(None, trace)
    assert report.verdict == "invalid" and "unparseable after 2 attempts" in report.notes[0]
    with pytest.raises(ValueError, match="last_states"):
        LLMTrajectoryJudge(llm, last_states=0)


def test_llm_judge_prompt_shows_the_expectation() -> None:
    llm = ScriptedLLM([], default="Status: success")
    LLMJudge(llm).judge("task", [], [], Trace("policy", "task"), expectation="X is saved")
    assert "What the user expects (the reasoner's analysis): X is saved" in llm.calls[0]


def test_the_benchmark_runs_its_llm_arms_beside_the_scripted_ones() -> None:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "judge_accuracy.py"
    spec = importlib.util.spec_from_file_location("judge_accuracy_bench", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    def claims(text: str) -> str:
        key = "policy_claims" if "Trace of the policy agent" in text else "evaluator_claims"
        return json.dumps({key: [{"steps": [0], "reasoning": "r", "claim": "it is there"}]})

    llm = ScriptedLLM(
        [
            (r"Answer: YES \(the instruction", "The form is saved.\nAnswer: YES"),
            (r"one decision per claim", '{"decisions": [{"claim": 0, "keep": true}]}'),
            (r"turn a GUI agent's trace into short", claims),
            (r"write ONE short goal|Improve the goal", "Analysis: saved.\nGoal: Find it."),
            (r"You are an evaluator agent", '<action>ANSWER("ok")</action>'),
        ],
        default="Analysis: fine.\nStatus: success",
    )
    result = bench.judge_accuracy(1, 1, ["ContactsAddContact"], llm=llm, llm_every=2)
    summary = result["llm"]
    assert summary["episodes"] == 3 and summary["every"] == 2  # 6 episodes, every 2nd
    judges = summary["judges"]
    assert {"llm prore-1", "llm webrl-style full", "llm t4 no probing, raw judge"} <= set(judges)
    assert "prore-1" in judges  # the scripted arms on the same episodes, for comparison
    # this model calls everything a success: recall 1, and no verdict is invalid
    assert judges["llm digirl-style last-1"]["recall"] == 1.0
    assert all(m["invalid"] == 0 and m["n"] == 3 for m in judges.values())


def test_rule_judge_treats_one_probe_finding_what_another_missed_as_complementary() -> None:
    from gui_gym.models.judge import RuleJudge

    goal = 'Create a contact named "Zoe Park".'
    policy = Trace("policy", goal, screens=[_screen("Contacts")], declared_done=True)
    typed = Claim("policy", "typed Zoe Park", (0,), kind="entered", values=("Zoe Park",))
    found = Claim("probe 0", "Zoe Park is listed", (1,), kind="shown", values=("Zoe Park",))
    missed = Claim("probe 1", "Zoe Park not found", (1,), kind="absent", values=("Zoe Park",))
    judge = RuleJudge()
    # joint judgment over two probes: what was found stored decides (App. E.3 Stage 2)
    assert judge.judge(goal, [typed], [found, missed], policy).verdict == "success"
    # the same two claims from one probe contradict each other: not found wins, as before
    same = Claim("probe 0", "Zoe Park not found", (1,), kind="absent", values=("Zoe Park",))
    assert judge.judge(goal, [typed], [found, same], policy).verdict == "failure"
    assert judge.judge(goal, [typed], [missed], policy).verdict == "failure"
