"""ProgRM's prompted LLM judge ("ORM-Claude", App. G Tables 9-10) as a progress model."""

from __future__ import annotations

import contextlib
import logging

import gymnasium as gym
import numpy as np
import pytest

import gui_gym  # noqa: F401
from gui_gym.models.llm import LLMError, ScriptedLLM
from gui_gym.models.progress import ProgressQuery
from gui_gym.models.progress.llm import (
    PROMPTS,
    LLMProgressJudge,
    parse_progress,
    progress_messages,
)
from gui_gym.wrappers import ProgressRewardVectorWrapper, ProgressRewardWrapper

TASK = "clean_oil_paint_brushes-bookmark"
QUERY = ProgressQuery("Bookmark the article.", ("type x",), "<button id=0>Bookmark</button>")


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("42%", 0.42),
        ("42", 0.42),
        ("0.42", 0.42),
        ("Progress: 100 %", 1.0),
        ("<think>The search is done, 2 of 3 steps.</think>\n<answer>\n0.67\n</answer>", 0.67),
        ("<think>maybe 90%</think><answer>30%</answer>", 0.3),  # the answer block wins
        ("step 1 of 3 done: 33%", 0.33),  # the last number is the answer
        ("The task is a success.", 1.0),  # Table 8's verdict form
        ("failure", 0.0),
    ],
)
def test_stated_progress_is_parsed_as_a_fraction(reply: str, value: float) -> None:
    assert parse_progress(reply) == pytest.approx(value)


@pytest.mark.parametrize("reply", ["", "I cannot tell.", "150%", "<answer>lots</answer>"])
def test_replies_without_a_usable_progress_are_errors(reply: str) -> None:
    with pytest.raises(ValueError):
        parse_progress(reply)


@pytest.mark.timeout(10)
def test_parsing_is_linear_on_degenerate_replies() -> None:
    for reply in ("9" * 64_000, "<answer>" * 16_000, " " * 64_000 + "%", "1." * 32_000):
        with contextlib.suppress(ValueError):
            parse_progress(reply)


def test_prompts_follow_the_tables_structure() -> None:
    assert set(PROMPTS) == {"progrm", "orm", "orm_llm", "orm_llm_cot"}
    system, user = progress_messages(QUERY, "orm_llm_cot")
    assert system["role"] == "system" and "WikiHow" in system["content"]
    assert "<think>" in system["content"] and "<answer>" in system["content"]
    assert user["content"].startswith("Instructions:\nBookmark the article.")
    assert "History actions:\n1. type x" in user["content"]
    assert user["content"].endswith("<button id=0>Bookmark</button>")
    with pytest.raises(ValueError, match="prompt must be one of"):
        progress_messages(QUERY, "orm-claude")


def test_judge_scores_a_batch_in_one_call_and_retries_garbage() -> None:
    replies = iter(["25%", "no idea", "0.5", "3/4 done: 75%"])
    llm = ScriptedLLM(lambda text: next(replies))
    judge = LLMProgressJudge(llm, retries=1)
    values = judge.predict([QUERY, QUERY, QUERY])
    assert values.tolist() == [0.25, 0.75, 0.5]  # the second was asked again
    assert len(llm.calls) == 4
    with pytest.raises(LLMError, match="no usable progress after 2 attempts"):
        LLMProgressJudge(ScriptedLLM(lambda text: "hmm"), retries=1).predict([QUERY])
    with pytest.raises(TypeError, match="generate"):
        LLMProgressJudge(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="retries"):
        LLMProgressJudge(llm, retries=-1)


def _milestone_judge(text: str) -> str:
    """A scripted judge that reads the screen like an LLM would: more done, more progress."""
    text = text.split("Current screen:")[-1]
    if "Bookmarked" in text or "Remove bookmark" in text:
        return "<answer>1.0</answer>"
    if "How to Clean Oil Paint Brushes" in text:
        return "<answer>0.6</answer>"
    return "<answer>0.1</answer>"


def test_the_judge_drives_the_progress_wrapper() -> None:
    env = ProgressRewardWrapper(
        gym.make("GuiGym/WikiHow-v0", task=TASK),
        LLMProgressJudge(ScriptedLLM(_milestone_judge), "orm_llm_cot"),
    )
    _, info = env.reset(seed=0)
    assert info["progress"]["value"] == 0.1
    total = 0.0
    for action in ['INPUT(0, "clean oil paint brushes")', "CLICK(4)", "CLICK(2)"]:
        _, reward, _, _, info = env.step(action)
        total += reward
        assert info["progress"]["model_error"] is None
    assert info["success"]
    assert total == pytest.approx(1.0 + (info["progress"]["value"] - 0.1))


def test_a_failing_model_earns_no_progress_reward_and_is_flagged(caplog) -> None:
    answers = iter(["0.2", "0.5", "garbage", "garbage", "0.9"])
    env = ProgressRewardWrapper(
        gym.make("GuiGym/WikiHow-v0", task=TASK),
        LLMProgressJudge(ScriptedLLM(lambda text: next(answers)), retries=1),
    )
    env.reset(seed=0)
    _, reward, _, _, info = env.step('INPUT(0, "clean oil paint brushes")')
    assert reward == pytest.approx(0.3)
    with caplog.at_level(logging.WARNING):
        _, reward, terminated, truncated, info = env.step("CLICK(4)")
    assert reward == 0.0 and info["progress"]["delta"] == 0.0
    assert info["progress"]["value"] == 0.5 and "LLMError" in info["progress"]["model_error"]
    assert "no progress reward" in caplog.text
    _, reward, _, _, info = env.step("CLICK(2)")
    assert reward == pytest.approx(1.0 + 0.4)  # the outcome, and 0.9 - 0.5


def test_the_vector_wrapper_is_neutral_for_every_env_when_the_model_fails() -> None:
    calls = {"n": 0}

    def flaky(text: str) -> str:
        calls["n"] += 1
        return "oops" if 3 <= calls["n"] <= 6 else "0.5"

    vec = ProgressRewardVectorWrapper(
        gym.make_vec("GuiGym/WikiHow-v0", num_envs=2, vectorization_mode="sync", task=TASK),
        LLMProgressJudge(ScriptedLLM(flaky), retries=1),
    )
    vec.reset(seed=0)
    _, rewards, _, _, infos = vec.step(["SCROLL(down)", "SCROLL(down)"])
    assert rewards.tolist() == [0.0, 0.0]
    assert all("LLMError" in e for e in infos["progress"]["model_error"])
    assert np.allclose(infos["progress"]["value"], 0.5)
    _, rewards, _, _, infos = vec.step(["SCROLL(up)", "SCROLL(up)"])
    assert list(infos["progress"]["model_error"]) == [None, None]
