"""GUI-Shepherd without torch: PRM data, metrics, reward arithmetic, RulePRM, the wrappers
and best-of-N."""

from __future__ import annotations

import itertools

import gymnasium as gym
import numpy as np
import pytest

import gui_gym  # noqa: F401
from gui_gym.agents import BestOfNAgent, LLMPolicy, NoisyOraclePolicy, run_episode
from gui_gym.core.actions import Action, ActionType, parse_action
from gui_gym.models.prm import PRMOutputError, RulePRM, TransformersPRM, verification_scores
from gui_gym.rewards.prm import (
    NEGATIVE_SOURCES,
    LabelledStep,
    PRMQuery,
    PromptTemplate,
    RankingState,
    balance_labels,
    binary_auc,
    binary_f1,
    classification_metrics,
    deduplicate_steps,
    perturb_action,
    prm_step_reward,
    ranking_metrics,
    select_candidate,
    split_by_task,
)
from gui_gym.train.prm_data import (
    build_prm_dataset,
    collect_prm_steps,
    collect_ranking_states,
    collect_task_steps,
    read_labelled_steps,
    write_labelled_steps,
)
from gui_gym.wrappers import PRMVectorWrapper, PRMWrapper

WIKIHOW = "GuiGym/WikiHow-v0"


def _query(
    action: str = "CLICK(1)", screen: str = "<button id=1 clickable>Go</button>"
) -> PRMQuery:
    return PRMQuery("Open the thing", screen, action, "click the thing", ("type x",), 1)


def _step(label: int, task: str = "t", action: str = "CLICK(1)", screen: str = "s") -> LabelledStep:
    source = "oracle" if label else "random_failed"
    return LabelledStep(_query(action, screen), label, task, source, "why", "E")


class ConstantPRM:
    """A text PRM that scores every action the same and records its calls."""

    requires_env = False

    def __init__(self, value: float = 0.7):
        self.value = value
        self.calls: list[list[PRMQuery]] = []

    def score(self, queries, envs=None):
        self.calls.append(list(queries))
        return np.full(len(queries), self.value)


# ------------------------------------------------------------------------------ pure math


def test_step_reward_is_prm_plus_format_with_penalty_for_invalid_actions() -> None:
    valid = prm_step_reward(0.8, parsed=True, valid=True, weight=2.0, format_weight=0.1)
    assert (valid.prm, valid.format, valid.invalid) == (1.6, 0.1, 0.0)
    assert valid.total == pytest.approx(1.7)
    rejected = prm_step_reward(None, parsed=True, valid=False, invalid_penalty=-0.3)
    assert (rejected.prm, rejected.format, rejected.invalid) == (0.0, 0.1, -0.3)
    garbage = prm_step_reward(None, parsed=False, valid=False, invalid_penalty=-0.3)
    assert garbage.total == pytest.approx(-0.3) and garbage.format == 0.0
    with pytest.raises(ValueError, match="score in"):
        prm_step_reward(1.5, parsed=True, valid=True)
    with pytest.raises(ValueError, match="score in"):
        prm_step_reward(None, parsed=True, valid=True)
    with pytest.raises(ValueError, match="implies parsed"):
        prm_step_reward(0.5, parsed=False, valid=True)


def test_select_candidate_takes_the_argmax_then_the_most_proposed_then_the_first() -> None:
    assert select_candidate([0.1, 0.9, 0.3]) == 1
    assert select_candidate([0.5, 0.5, 0.5], counts=[1, 3, 3]) == 1
    assert select_candidate([0.0, 0.0]) == 0
    with pytest.raises(ValueError, match="non-empty"):
        select_candidate([])
    with pytest.raises(ValueError, match="NaN"):
        select_candidate([0.1, float("nan")])


def test_count_weighted_selection_sums_the_scores_over_the_proposals() -> None:
    # proposed 3 times at 0.4 (1.2) beats once at 0.9; argmax takes the 0.9
    assert select_candidate([0.9, 0.4], counts=[1, 3], selection="count_weighted") == 1
    assert select_candidate([0.9, 0.4], counts=[1, 3]) == 0
    assert select_candidate([0.3, 0.6], counts=[2, 1], selection="count_weighted") == 0  # tie
    with pytest.raises(ValueError, match="selection"):
        select_candidate([0.5], selection="vote")


def test_auc_matches_pairwise_counting_with_ties() -> None:
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 60)
    scores = rng.integers(0, 5, 60) / 4.0  # many ties
    pos, neg = scores[labels == 1], scores[labels == 0]
    pairs = [(p > n) + 0.5 * (p == n) for p, n in itertools.product(pos, neg)]
    assert binary_auc(labels, scores) == pytest.approx(np.mean(pairs))
    assert binary_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == pytest.approx(0.75)
    assert np.isnan(binary_auc([1, 1], [0.2, 0.3]))
    with pytest.raises(ValueError, match="0 or 1"):
        binary_auc([0, 2], [0.1, 0.2])


def test_f1_and_metrics_per_step_position() -> None:
    assert binary_f1([1, 1, 0, 0], [1, 0, 1, 0]) == pytest.approx(0.5)
    assert binary_f1([0, 0], [0, 0]) == 0.0
    report = classification_metrics(
        [1, 0, 1, 0, 1, 0], [0.9, 0.2, 0.4, 0.6, 0.8, 0.1], positions=[0, 0, 1, 1, 7, 9]
    )
    assert report["n"] == 6 and report["accuracy"] == pytest.approx(4 / 6)
    # predicted positive: 0.9 (y=1), 0.6 (y=0), 0.8 (y=1): precision 2/3, recall 2/3 (0.4
    # missed), false positives 1 of 3 negatives
    assert report["precision"] == pytest.approx(2 / 3) and report["recall"] == pytest.approx(2 / 3)
    assert report["false_positive_rate"] == pytest.approx(1 / 3)
    assert list(report["by_position"]) == ["0", "1", "5+"]
    assert report["by_position"]["0"]["accuracy"] == 1.0
    assert report["by_position"]["1"]["accuracy"] == 0.0
    assert report["by_position"]["5+"]["n"] == 2


# ------------------------------------------------------------------------------ records


def test_ranking_metrics_count_per_state_top1_and_pairwise_order_with_ties() -> None:
    def state(actions: list[str], correct: list[bool], on_path: bool = True) -> RankingState:
        return RankingState(tuple(_query(a) for a in actions), tuple(correct), on_path=on_path)

    states = [
        state(["CLICK(1)", "CLICK(2)", "GOBACK()"], [True, False, False]),  # right on top
        state(["GOBACK()", "CLICK(2)", "SCROLL(down)"], [True, False, False], on_path=False),
        state(["CLICK(1)", "CLICK(2)"], [True, False]),  # tied: half a hit
    ]
    scores = [[0.9, 0.2, 0.1], [0.3, 0.8, 0.1], [0.5, 0.5]]
    m = ranking_metrics(states, scores)
    assert m["n_states"] == 3 and (m["n_on_path"], m["n_off_path"]) == (2, 1)
    assert m["top1"] == pytest.approx((1 + 0 + 0.5) / 3)
    assert m["top1_on_path"] == pytest.approx(0.75) and m["top1_off_path"] == 0.0
    # per state: 2/2 wrong ones below, 1/2, a tie (1/2)
    assert m["pairwise"] == pytest.approx((1.0 + 0.5 + 0.5) / 3)
    assert m["wrong_top_types"] == {"CLICK": 2}
    assert m["wrong_over"] == {"CLICK over GOBACK": 1, "CLICK over CLICK": 1}
    with pytest.raises(ValueError, match="at least one correct"):
        state(["CLICK(1)"], [False])
    with pytest.raises(ValueError, match="candidates"):
        ranking_metrics(states[:1], [[0.1, 0.2]])


def test_ranking_states_hold_the_expert_first_and_every_proposable_action() -> None:
    env = gym.make(WIKIHOW, split="test", max_steps=6)
    states = collect_ranking_states(WIKIHOW, split="test", max_tasks=2, p=0.4, max_steps=6)
    assert states and all(s.correct[0] for s in states)  # the expert's action leads
    assert not states[0].queries[0].history and states[0].on_path
    assert any(not s.on_path for s in states)  # the noisy expert strays off the path
    for s in states:
        actions = [q.action for q in s.queries]
        assert len(set(actions)) == len(actions)
        assert len({(q.screen, q.history, q.step) for q in s.queries}) == 1
    # the first state's candidates are the expert's plus everything the env proposes there
    env.reset(seed=0, options={"task": states[0].task_id})
    proposable = {str(a) for a in env.unwrapped.candidate_actions()}
    assert proposable <= {q.action for q in states[0].queries}
    env.close()


def test_queries_and_labelled_steps_validate_and_round_trip(tmp_path) -> None:
    step = _step(1)
    assert LabelledStep.from_dict(step.to_dict()) == step
    with pytest.raises(TypeError, match="action must be a str"):
        PRMQuery("g", "s", 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-negative"):
        PRMQuery("g", "s", "CLICK(1)", step=-1)
    with pytest.raises(ValueError, match="label must be 0 or 1"):
        LabelledStep(_query(), 2, "t", "oracle")
    with pytest.raises(ValueError, match="cannot carry label"):
        LabelledStep(_query(), 0, "t", "oracle")
    with pytest.raises(ValueError, match="unknown source"):
        LabelledStep(_query(), 1, "t", "annotator")
    with pytest.raises(ValueError, match="missing 'label'"):
        LabelledStep.from_dict({k: v for k, v in step.to_dict().items() if k != "label"})
    path = tmp_path / "steps.jsonl"
    write_labelled_steps(path, [step, _step(0)])
    assert read_labelled_steps(path) == [step, _step(0)]
    path.write_text('{"instruction": "g"}\n')
    with pytest.raises(ValueError, match="record 1"):
        read_labelled_steps(path)


def test_prompt_keeps_the_question_and_label_position_and_cuts_long_screens() -> None:
    template = PromptTemplate(max_screen_chars=50, max_history=1)
    query = PRMQuery("Find X", "y" * 500, "CLICK(2)", "click X", ("first", "second"), 2)
    head, screen, tail = template.parts(query, " True", " False")
    assert "Find X" in head and "second" in head and "first" not in head
    assert len(screen) < 80 and "screen cut" in screen
    assert "CLICK(2) (click X)" in tail and "True" in tail and tail.endswith("Verdict:")
    assert template.render(query, " True", " False", rationale=True).endswith("Reasoning:")


def test_perturbations_differ_from_the_action_and_cover_each_kind() -> None:
    env = gym.make(WIKIHOW, split="train")
    env.reset(seed=0)
    base = env.unwrapped
    tree = base.ui_tree
    rng = np.random.default_rng(0)
    first = base.oracle_action()  # INPUT into the search box
    out = perturb_action(first, tree, rng, texts=("pasta", "lobster"), per_kind=2)
    kinds = [kind for kind, _ in out]
    assert set(kinds) == {"other_element", "wrong_text", "premature_end", "detour"}
    assert kinds.count("wrong_text") == 2 and kinds.count("other_element") == 2
    assert all(str(a) != str(first) for _, a in out)
    texts = {a.text for kind, a in out if kind == "wrong_text"}
    assert all(a.type is ActionType.INPUT for kind, a in out if kind == "wrong_text")
    assert first.text not in texts
    taps = [a for kind, a in out if kind == "other_element"]
    assert all(a.type is ActionType.CLICK and tree.elements[a.index].clickable for a in taps)
    detour = next(a for kind, a in out if kind == "detour")
    assert detour.type in (ActionType.GOBACK, ActionType.SCROLL)
    click = Action(ActionType.CLICK, index=3)
    other = dict(perturb_action(click, tree, rng))["other_element"]
    assert (
        other.type is ActionType.CLICK and other.index != 3 and tree.elements[other.index].clickable
    )
    scroll = dict(perturb_action(Action(ActionType.SCROLL, direction="down"), tree, rng))
    assert scroll["wrong_direction"].direction == "up"
    done = dict(perturb_action(Action(ActionType.DONE), tree, rng))
    assert done["premature_end"].type is ActionType.ANSWER
    answer = dict(perturb_action(Action(ActionType.ANSWER, text="3"), tree, rng))
    assert "premature_end" not in answer and answer["wrong_text"].text != "3"
    with pytest.raises(ValueError, match="unknown perturbation"):
        perturb_action(click, tree, rng, kinds=["swap"])
    with pytest.raises(ValueError, match="per_kind"):
        perturb_action(click, tree, rng, per_kind=0)


def test_deduplication_keeps_first_copies_and_drops_conflicting_queries() -> None:
    steps = [_step(1, screen="a"), _step(1, screen="a"), _step(0, screen="b"), _step(1, screen="b")]
    kept, report = deduplicate_steps(steps)
    assert kept == [steps[0]]
    assert (report.kept, report.duplicates, report.conflicts) == (1, 1, 1)


def test_balance_within_action_types_before_pairing_leftovers() -> None:
    steps = [_step(1, action="GOBACK()", screen=f"g{i}") for i in range(10)]
    steps += [_step(0, action="GOBACK()", screen=f"h{i}") for i in range(2)]
    steps += [_step(1, action="CLICK(1)", screen=f"c{i}") for i in range(3)]
    steps += [_step(0, action="CLICK(2)", screen=f"d{i}") for i in range(9)]
    balanced = balance_labels(steps, np.random.default_rng(0))
    counts = {
        (t, label): sum(1 for s in balanced if s.query.action.startswith(t) and s.label == label)
        for t in ("GOBACK", "CLICK")
        for label in (0, 1)
    }
    # 2+2 GOBACK and 3+3 CLICK first, then 6 leftover GOBACK positives paired with 6 clicks
    assert counts == {("GOBACK", 0): 2, ("GOBACK", 1): 8, ("CLICK", 0): 9, ("CLICK", 1): 3}
    plain = balance_labels(steps, np.random.default_rng(0), group=None)
    assert sum(s.label for s in plain) == 11 and len(plain) == 22


def test_balance_and_task_split() -> None:
    steps = [_step(1, task=f"t{i % 5}", screen=str(i)) for i in range(30)]
    steps += [_step(0, task=f"t{i % 5}", screen=str(i)) for i in range(12)]
    balanced = balance_labels(steps, np.random.default_rng(0))
    assert sum(s.label for s in balanced) == 12 and len(balanced) == 24
    train, held = split_by_task(steps, 0.4, seed=1)
    train_tasks, held_tasks = {s.task_id for s in train}, {s.task_id for s in held}
    assert len(held_tasks) == 2 and not train_tasks & held_tasks
    assert len(train) + len(held) == len(steps)
    with pytest.raises(ValueError, match="eval_fraction"):
        split_by_task(steps, 1.0)


# ------------------------------------------------------------------------------ env-backed


def test_rule_prm_agrees_with_the_oracle_along_expert_and_random_rollouts() -> None:
    env = gym.make(WIKIHOW, split="test")
    base = env.unwrapped
    prm = RulePRM()
    rng = np.random.default_rng(0)
    for seed in range(4):
        env.reset(seed=seed)
        done = False
        while not done:
            expert = base.oracle_action()
            candidates = base.candidate_actions()
            queries = [PRMQuery("", "", str(a)) for a in [expert, *candidates]]
            scores = prm.score(queries, envs=[base] * len(queries))
            assert scores[0] == 1.0 and prm.last_reasons[0] == "expert"
            for action, score, reason in zip(candidates, scores[1:], prm.last_reasons[1:]):
                if str(action) != str(expert):
                    assert (score == 1.0) == (reason in ("milestone", "success"))
            # a random detour first, sometimes: the expert must still be recognised after it
            action = (
                candidates[int(rng.integers(len(candidates)))] if rng.random() < 0.3 else expert
            )
            _, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
    assert prm.score([PRMQuery("", "", "not an action")], envs=[base])[0] == 0.0
    with pytest.raises(ValueError, match="pass envs"):
        prm.score([PRMQuery("", "", "CLICK(1)")])
    with pytest.raises(TypeError, match="wrap a single query"):
        prm.score(PRMQuery("", "", "CLICK(1)"), envs=[base])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must be in"):
        RulePRM(milestone_score=2.0)


def test_rule_prm_judges_by_the_probe_where_the_expert_has_no_answer(monkeypatch) -> None:
    """ALFWorld's planner can hit its bound off the expert's path: the PRM then judges the
    step by trying it on a fork (it used to raise, and the rollout lost the episode)."""
    from gui_gym.core.env import ExpertUnavailable

    env = gym.make(WIKIHOW, split="test")
    env.reset(seed=0)
    base = env.unwrapped
    expert = str(base.oracle_action())
    wrong = next(str(a) for a in base.candidate_actions() if str(a) != expert)

    def no_answer() -> Action:
        raise ExpertUnavailable("the planner hit its memory bound")

    monkeypatch.setattr(base, "oracle_action", no_answer)
    prm = RulePRM()
    scores = prm.score([PRMQuery("", "", expert), PRMQuery("", "", wrong)], envs=[base, base])
    # the expert's action still makes progress on the fork; the other one does not
    assert list(scores) == [1.0, 0.0]
    assert prm.last_reasons[0] in ("milestone", "success") and prm.last_reasons[1] != "expert"


def test_collected_steps_are_labelled_as_the_rule_prm_judges_them() -> None:
    env = gym.make(WIKIHOW, split="train", max_steps=12)
    rng = np.random.default_rng(3)
    steps = collect_task_steps(
        env, "measure_your_bra_size-tips_count", seed=0, rng=rng, env_id=WIKIHOW
    )
    sources = {s.source for s in steps}
    assert "oracle" in sources and "random_failed" in sources
    assert any(s.startswith("perturb:") for s in sources)
    assert all(s.label == (s.source in ("oracle", "milestone")) for s in steps)
    # Replaying the expert path, every label there matches the rule-based judge.
    base = env.unwrapped
    base.reset(seed=0, options={"task": "measure_your_bra_size-tips_count"})
    prm = RulePRM()
    on_path = [s for s in steps if s.query.step == 0 and s.query.history == ()]
    scores = prm.score([s.query for s in on_path], envs=[base] * len(on_path))
    assert [int(v) for v in scores] == [s.label for s in on_path]
    assert {s.source for s in on_path if s.label == 0} <= set(NEGATIVE_SOURCES)


def test_collection_goes_on_where_the_expert_has_no_answer_off_its_path(monkeypatch) -> None:
    """Random and noisy rollouts meet states the expert cannot answer (ALFWorld's planner at
    its bound): those are labelled without the expert, or end the noisy rollout."""
    from gui_gym.core.env import ExpertUnavailable

    env = gym.make(WIKIHOW, split="train", max_steps=12)
    base = env.unwrapped
    resets = []
    reset, oracle = base.reset, base.oracle_action

    def counting_reset(*args, **kwargs):
        resets.append(1)
        return reset(*args, **kwargs)

    def expert_on_its_path_only() -> Action:
        if len(resets) > 1 and base.steps_taken > 0:  # a random or noisy rollout, moved on
            raise ExpertUnavailable("the planner hit its bound")
        return oracle()

    monkeypatch.setattr(base, "reset", counting_reset)
    monkeypatch.setattr(base, "oracle_action", expert_on_its_path_only)
    task = "measure_your_bra_size-tips_count"
    steps = collect_task_steps(
        env, task, seed=0, rng=np.random.default_rng(3), noisy_rollouts=2, env_id=WIKIHOW
    )
    assert len(resets) == 1 + 2 + 2  # every rollout ran
    assert {"oracle", "random_failed"} <= {s.source for s in steps}
    off_path = [s for s in steps if s.source == "random_failed" and s.query.step > 0]
    assert off_path and all(s.rationale == "This action does not help." for s in off_path)
    assert all(s.label == (s.source in ("oracle", "milestone")) for s in steps)


def test_replayed_expert_datasets_give_single_step_states_with_one_step_rollouts() -> None:
    # GUI-Shepherd's second data source: single-step states of recorded (AndroidControl-style)
    # episodes, the expert action positive and other proposable actions negative.
    from gui_gym.envs.replay import SAMPLE_DATASET, ExpertDataset
    from gui_gym.rewards.action_match import get_matcher

    steps = collect_prm_steps(
        "GuiGym/SemiOnlineReplay-v0", dataset=SAMPLE_DATASET, proposals_per_state=2, seed=1
    )
    data = ExpertDataset.load(SAMPLE_DATASET)
    positives = [s for s in steps if s.label == 1]
    assert len(positives) == sum(len(t.steps) for t in data)
    assert {s.source for s in steps} == {"oracle", "proposal"}
    negatives = [s for s in steps if s.label == 0]
    assert len(positives) < len(negatives) <= 2 * len(positives)
    expert = {(t.instruction, i): t.steps[i] for t in data for i in range(len(t.steps))}
    strict = get_matcher("strict")
    for s in steps:
        step = expert[(s.query.instruction, s.query.step)]
        matched = strict(parse_action(s.query.action), step.action, step.tree).exact
        assert matched == (s.label == 1)
    second = next(s for s in positives if s.query.step == 1)
    assert second.query.history == (
        next(
            p for p in positives if p.query.step == 0 and p.task_id == second.task_id
        ).query.action_description,
    )
    with pytest.raises(ValueError, match="pass dataset=DIR"):
        collect_prm_steps("GuiGym/SemiOnlineReplay-v0")
    with pytest.raises(ValueError, match="makes its own episodes"):
        collect_prm_steps(WIKIHOW, dataset=SAMPLE_DATASET)


def test_dataset_builder_balances_dedups_and_splits_by_task() -> None:
    steps = collect_prm_steps(WIKIHOW, split="train", max_tasks=6, random_rollouts=1, seed=1)
    dataset = build_prm_dataset(steps, eval_fraction=0.34, seed=0)
    for part in (dataset.train, dataset.eval):
        assert part and sum(s.label for s in part) * 2 == len(part)
        keys = [s.query.key() for s in part]
        assert len(keys) == len(set(keys))
    assert not {s.task_id for s in dataset.train} & {s.task_id for s in dataset.eval}
    assert dataset.report["eval_tasks"] == 2 and dataset.report["train_tasks"] == 4
    assert dataset.report["collected"] == len(steps)


def test_wrapper_adds_prm_and_format_rewards_and_reports_components() -> None:
    prm = ConstantPRM(0.7)
    env = PRMWrapper(
        gym.make(WIKIHOW, split="test"), prm, weight=2.0, format_weight=0.1, invalid_penalty=-0.5
    )
    obs, _ = env.reset(seed=0)
    expert = env.unwrapped.oracle_action()
    _, reward, _, _, info = env.step(expert)
    assert reward == pytest.approx(2.0 * 0.7 + 0.1)
    assert info["prm"]["score"] == 0.7
    assert info["prm"]["components"] == pytest.approx(
        {"prm": 1.4, "format": 0.1, "invalid": 0.0, "outcome": 0.0}
    )
    query = prm.calls[-1][0]
    assert query.screen == obs["screen"] and query.instruction == obs["instruction"]
    assert query.action == str(expert) and query.action_description.startswith("type")
    assert query.step == 0 and query.history == ()
    _, reward, _, _, info = env.step("CLICK(999)")  # parses, but no such element
    assert reward == pytest.approx(0.1 - 0.5) and info["prm"]["score"] is None
    _, reward, _, _, info = env.step("make me a sandwich")
    assert reward == pytest.approx(-0.5) and info["prm"]["components"]["format"] == 0.0
    assert len(prm.calls) == 1  # rejected actions are never judged
    env.step(env.unwrapped.oracle_action())
    assert prm.calls[-1][0].history == (query.action_description,)
    assert env.spec is not None and env.spec.kwargs  # the inner env spec survives
    with pytest.raises(ValueError, match="weight must be a finite"):
        PRMWrapper(gym.make(WIKIHOW), prm, weight=float("nan"))
    with pytest.raises(TypeError, match="score"):
        PRMWrapper(gym.make(WIKIHOW), object())  # type: ignore[arg-type]


def _expert_rewards(env: gym.Env) -> tuple[list[float], dict]:
    env.reset(seed=1)
    done = False
    rewards = []
    while not done:
        _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        rewards.append(reward)
        done = terminated or truncated
    return rewards, info


def test_wrapper_follows_eq3_by_default_prm_plus_format_without_the_outcome() -> None:
    # GUI-Shepherd Eq. 3: r_t = r_PRM + r_format; the task outcome is not part of it.
    env = PRMWrapper(gym.make(WIKIHOW, split="test"), RulePRM(), weight=1.0, format_weight=0.1)
    assert env.outcome_weight == 0.0
    rewards, info = _expert_rewards(env)
    assert info["success"] and info["task_reward"] == 1.0  # the outcome stays in info
    assert rewards == pytest.approx([1.1] * len(rewards))
    assert info["prm"]["components"]["outcome"] == 0.0


def test_outcome_weight_adds_the_task_outcome_to_the_process_reward() -> None:
    env = PRMWrapper(gym.make(WIKIHOW, split="test"), RulePRM(), outcome_weight=1.0)
    rewards, info = _expert_rewards(env)
    assert rewards == pytest.approx([1.1] * (len(rewards) - 1) + [2.1])
    assert info["prm"]["components"]["outcome"] == 1.0
    with pytest.raises(ValueError, match="outcome_weight must be a finite"):
        PRMWrapper(gym.make(WIKIHOW), RulePRM(), outcome_weight=float("inf"))


class BadPRM(ConstantPRM):
    def score(self, queries, envs=None):
        return np.full(len(queries), 1.7)


def test_wrapper_rejects_scores_outside_the_unit_interval() -> None:
    env = PRMWrapper(gym.make(WIKIHOW), BadPRM())
    env.reset(seed=0)
    with pytest.raises(PRMOutputError, match=r"outside \[0, 1\]"):
        env.step(env.unwrapped.oracle_action())


def test_vector_wrapper_scores_all_envs_in_one_call_and_matches_the_single_wrapper() -> None:
    prm = ConstantPRM(0.25)
    vec = PRMVectorWrapper(
        gym.make_vec(WIKIHOW, num_envs=3, vectorization_mode="sync", split="test", max_steps=2), prm
    )
    vec.reset(seed=0)
    _, reward, terminated, truncated, info = vec.step(['INPUT(0, "x")', "CLICK(999)", "gibberish"])
    assert len(prm.calls) == 1 and len(prm.calls[0]) == 1
    assert reward == pytest.approx([0.35, 0.0, -0.1])
    assert info["_prm"].all() and np.isnan(info["prm"]["score"][1:]).all()
    _, reward, terminated, truncated, info = vec.step(["SCROLL(down)"] * 3)
    assert truncated.all() and len(prm.calls[-1]) == 3
    assert prm.calls[-1][0].history == ('type "x" into "Search wikiHow" input',)
    # next-step autoreset: this step only resets, and earns nothing
    calls = len(prm.calls)
    _, reward, _, _, info = vec.step(["SCROLL(down)"] * 3)
    assert len(prm.calls) == calls and (reward == 0).all() and not info["_prm"].any()
    _, reward, _, _, info = vec.step(["SCROLL(down)"] * 3)
    assert prm.calls[-1][0].history == () and prm.calls[-1][0].step == 0

    single = PRMWrapper(gym.make(WIKIHOW, split="test"), RulePRM())
    vec_rule = PRMVectorWrapper(
        gym.make_vec(WIKIHOW, num_envs=2, vectorization_mode="sync", split="test"), RulePRM()
    )
    single.reset(seed=5)
    observations, _ = vec_rule.reset(seed=[5, 6])
    assert observations["instruction"][0] == single.unwrapped.task.instruction
    for _ in range(3):
        action = single.unwrapped.oracle_action()
        _, r_single, *_ = single.step(action)
        _, r_vec, *_ = vec_rule.step([action, "GOBACK()"])
        assert r_vec[0] == pytest.approx(r_single) == pytest.approx(1.1)
        assert r_vec[1] == pytest.approx(0.1)
    assert (vec_rule.outcome_weight, single.outcome_weight) == (0.0, 0.0)


def test_vector_wrapper_refuses_env_judges_on_async_envs() -> None:
    vec = gym.make_vec(WIKIHOW, num_envs=2, vectorization_mode="async")
    try:
        with pytest.raises(TypeError, match="SyncVectorEnv"):
            PRMVectorWrapper(vec, RulePRM())
    finally:
        vec.close()


# ------------------------------------------------------------------------------ best-of-N


def _success_rate(n: int, prm, seeds: range, p: float = 0.4) -> float:
    env = gym.make(WIKIHOW, split="test", max_steps=10)
    wins = 0
    for seed in seeds:
        policy = NoisyOraclePolicy(env, p=p, seed=seed)
        agent = BestOfNAgent(policy, prm, n, env=env)
        wins += run_episode(env, agent, seed=seed).success
    return wins / len(seeds)


def test_best_of_n_with_rule_prm_beats_the_noisy_policy_alone() -> None:
    seeds = range(12)
    alone = _success_rate(1, RulePRM(), seeds)
    best = _success_rate(4, RulePRM(), seeds)
    assert best > alone
    assert best >= 0.9


def test_best_of_n_reports_candidates_scores_and_counts() -> None:
    env = gym.make(WIKIHOW, split="test")
    obs, info = env.reset(seed=0)

    class Scripted:
        def sample(self, observation, info, n):
            return ["CLICK(3)", "click(3)", env.unwrapped.oracle_action(), "nonsense"][:n]

    agent = BestOfNAgent(Scripted(), RulePRM(), 4, env=env)
    agent.reset(obs, info)
    action = agent.act(obs, info)
    assert action == env.unwrapped.oracle_action()
    assert agent.last_info["counts"] == [2, 1, 1]
    assert agent.last_info["candidates"][agent.last_info["chosen"]] == str(action)
    assert agent.last_info["scores"][2] == -np.inf  # never chosen over a judged candidate
    with pytest.raises(ValueError, match="pass env"):
        BestOfNAgent(Scripted(), RulePRM(), 2)
    with pytest.raises(ValueError, match="positive int"):
        BestOfNAgent(Scripted(), RulePRM(), 0, env=env)
    with pytest.raises(TypeError, match="sample"):
        BestOfNAgent(object(), RulePRM(), 2, env=env)  # type: ignore[arg-type]


class TwoLabelPRM:
    """A text PRM with fixed label logits ``(negative, positive)`` per action."""

    requires_env = False

    def __init__(self, logits: dict[str, tuple[float, float]]):
        self.logits = logits

    def label_logits(self, queries):
        return np.array([self.logits[q.action] for q in queries], dtype=np.float64)

    def score(self, queries, envs=None):
        z = self.label_logits(queries)
        return 1.0 / (1.0 + np.exp(z[:, 0] - z[:, 1]))

    def positive_logits(self, queries, envs=None):
        return self.label_logits(queries)[:, 1]


def test_best_of_n_ranks_by_the_positive_logit_as_the_paper_and_softmax_on_request() -> None:
    # GUI-Shepherd Sec. 4.2: rank by the logit of "positive". Logits (neg, pos) = (4, 5)
    # beat (0, 3) by that logit, while the two-way softmax prefers (0, 3): 0.95 > 0.73.
    env = gym.make(WIKIHOW, split="test")
    obs, info = env.reset(seed=0)
    prm = TwoLabelPRM({"CLICK(1)": (4.0, 5.0), "CLICK(2)": (0.0, 3.0)})

    class Both:
        def sample(self, observation, info, n):
            return ["CLICK(1)", "CLICK(2)"]

    assert str(BestOfNAgent(Both(), prm, 2, env=env).act(obs, info)) == "CLICK(1)"
    softmax = BestOfNAgent(Both(), prm, 2, env=env, selection="softmax")
    assert str(softmax.act(obs, info)) == "CLICK(2)"
    assert softmax.last_info["scores"] == pytest.approx([1 / (1 + np.e**-1), 1 / (1 + np.e**-3)])
    with pytest.raises(ValueError, match="positive_logit"):
        BestOfNAgent(Both(), prm, 2, env=env, selection="argmax")


def test_transformers_prm_positive_logits_are_the_positive_label_column() -> None:
    queries = [_query("CLICK(1)"), _query("CLICK(2)")]
    prm = TransformersPRM.tiny(
        [q.instruction + " " + q.screen + " " + q.action for q in queries], vocab_size=300
    )
    logits = prm.label_logits(queries)
    assert prm.positive_logits(queries) == pytest.approx(logits[:, 1])
    assert verification_scores(prm, queries) == pytest.approx(logits[:, 1])
    assert verification_scores(RulePRMLike(0.3), queries) == pytest.approx([0.3, 0.3])


class RulePRMLike(ConstantPRM):
    """A PRM without logits: best-of-N falls back to its score."""


def test_best_of_n_over_an_llm_policy_picks_the_verified_completion() -> None:
    from gui_gym.models.llm import ScriptedLLM

    env = gym.make(WIKIHOW, split="test")
    obs, info = env.reset(seed=0)
    expert = str(env.unwrapped.oracle_action())
    completions = iter(["<action>GOBACK()</action>", f"I will search. <action>{expert}</action>"])

    class TwoAnswers(ScriptedLLM):
        def generate(self, prompts, max_new_tokens=256, temperature=0.0, n=1):
            return [[next(completions) for _ in range(n)] for _ in prompts]

    agent = BestOfNAgent(LLMPolicy(TwoAnswers(lambda text: "")), RulePRM(), 2, env=env)
    agent.reset(obs, info)
    assert parse_action(agent.act(obs, info)) == parse_action(expert)
    assert agent.last_info["scores"] == [0.0, 1.0]
