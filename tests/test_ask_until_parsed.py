"""``ask_until_parsed``: the one retry loop every LLM-backed component asks through."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from gui_gym.models.llm import LLMError, ask_until_parsed


class _Replies:
    """An LLM whose reply to a prompt is the next of that prompt's scripted replies; it
    records the prompts of each ``generate`` call."""

    def __init__(self, replies: dict[str, list[str]]):
        self.replies = {prompt: list(answers) for prompt, answers in replies.items()}
        self.calls: list[list[str]] = []

    def generate(self, prompts, max_new_tokens=256, temperature=0.0, n=1):
        self.calls.append(list(prompts))
        return [[self.replies[p.split("\n")[0]].pop(0)] * n for p in prompts]


def _number(text: str) -> int:
    if not text.strip().isdigit():
        raise ValueError(f"expected a number, got {text!r}")
    return int(text)


def test_a_reply_that_fails_to_parse_is_asked_again_until_one_parses() -> None:
    llm = _Replies({"count": ["many", "three", "3"]})
    [answer] = ask_until_parsed(llm, ["count"], _number, retries=2)
    assert answer.parsed and answer.value == 3 and answer.result() == 3
    assert answer.reply == "3" and answer.error is None and answer.attempts == 3
    assert len(llm.calls) == 3


def test_a_prompt_that_never_parses_gives_its_last_reply_and_error_not_an_exception() -> None:
    llm = _Replies({"count": ["many", "lots"]})
    [answer] = ask_until_parsed(llm, ["count"], _number, retries=1)
    assert not answer.parsed and answer.value is None
    assert answer.reply == "lots" and answer.attempts == 2
    assert isinstance(answer.error, ValueError) and "'lots'" in str(answer.error)
    with pytest.raises(ValueError, match="expected a number"):
        answer.result()


def test_retries_zero_asks_once() -> None:
    llm = _Replies({"count": ["many", "3"]})
    [answer] = ask_until_parsed(llm, ["count"], _number, retries=0)
    assert not answer.parsed and answer.attempts == 1 and llm.calls == [["count"]]


def test_only_the_prompts_that_failed_are_asked_again_in_one_batch() -> None:
    llm = _Replies({"a": ["1"], "b": ["x", "2"], "c": ["y", "z", "3"], "d": ["4"]})
    answers = ask_until_parsed(llm, ["a", "b", "c", "d"], _number, retries=2)
    assert [a.value for a in answers] == [1, 2, 3, 4]
    assert [a.attempts for a in answers] == [1, 2, 3, 1]
    assert llm.calls == [["a", "b", "c", "d"], ["b", "c"], ["c"]]


def test_reprompt_builds_a_retry_from_the_prompt_and_the_parse_error() -> None:
    llm = _Replies({"count": ["many", "3"]})

    def retry(prompt: str, error: str) -> str:
        return f"{prompt}\n(last time: {error})"

    [answer] = ask_until_parsed(llm, ["count"], _number, retries=1, reprompt=retry)
    assert answer.value == 3
    assert llm.calls[1] == ["count\n(last time: expected a number, got 'many')"]


def test_generation_settings_reach_the_backend() -> None:
    seen: list[tuple[int, float, int]] = []

    class Recording:
        def generate(self, prompts, max_new_tokens=256, temperature=0.0, n=1):
            seen.append((max_new_tokens, temperature, n))
            return [["1"] for _ in prompts]

    ask_until_parsed(Recording(), ["p"], _number, 0, max_new_tokens=7, temperature=0.5)
    assert seen == [(7, 0.5, 1)]


def test_no_prompts_ask_nothing() -> None:
    llm = _Replies({})
    assert ask_until_parsed(llm, [], _number, retries=3) == [] and llm.calls == []


@pytest.mark.parametrize("retries", [-1, 1.5, True, None])
def test_retries_must_be_a_non_negative_int(retries: object) -> None:
    with pytest.raises(ValueError, match="retries"):
        ask_until_parsed(_Replies({}), ["p"], _number, retries)  # type: ignore[arg-type]


class _Broken:
    def __init__(self, outputs: Sequence[list[str]]):
        self.outputs = list(outputs)

    def generate(self, prompts, max_new_tokens=256, temperature=0.0, n=1):
        return self.outputs


def test_a_backend_that_answers_the_wrong_number_of_prompts_is_an_llm_error() -> None:
    with pytest.raises(LLMError, match="1 replies for 2 prompts"):
        ask_until_parsed(_Broken([["1"]]), ["a", "b"], _number, retries=1)


def test_a_backend_that_gives_no_completion_is_an_llm_error() -> None:
    with pytest.raises(LLMError, match="no completion for prompt 1"):
        ask_until_parsed(_Broken([["1"], []]), ["a", "b"], _number, retries=1)
