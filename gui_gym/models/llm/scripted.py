"""ScriptedLLM: deterministic answers from rules or a function, for tests and demos."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeAlias

from gui_gym.models.llm.base import Generation, LLMBase, LLMError
from gui_gym.models.llm.chat_messages import Prompt, prompt_text

__all__ = ["ScriptedLLM"]

Response: TypeAlias = str | Callable[[str], str]


class ScriptedLLM(LLMBase):
    """Answers from rules: the first rule whose regular expression is found in the prompt
    (``re.search`` over :func:`prompt_text`) gives the completion.

    Args:
        rules: ``(pattern, response)`` pairs in priority order, or a single function
            ``prompt_text -> completion``. A response is a string or a function of the prompt
            text.
        default: The completion when no rule matches; None raises :class:`LLMError` instead.

    Attributes:
        calls: Every prompt text received, in order (for tests).

    Example:
        >>> llm = ScriptedLLM([(r"milestone", '["Open the app"]')], default="no")
        >>> llm.generate(["Give the milestones"], n=2)
        [['["Open the app"]', '["Open the app"]']]
    """

    def __init__(
        self,
        rules: Sequence[tuple[str | re.Pattern[str], Response]] | Callable[[str], str],
        default: str | None = None,
    ):
        if callable(rules):
            self._rules: list[tuple[re.Pattern[str], Response]] = [(re.compile(""), rules)]
        else:
            self._rules = []
            for i, rule in enumerate(rules):
                if not (isinstance(rule, tuple) and len(rule) == 2):
                    raise TypeError(f"rule {i} must be a (pattern, response) pair, got {rule!r}")
                pattern, response = rule
                if not (isinstance(response, str) or callable(response)):
                    raise TypeError(f"rule {i}: response must be a str or callable")
                self._rules.append(
                    (re.compile(pattern) if isinstance(pattern, str) else pattern, response)
                )
        self.default = default
        self.calls: list[str] = []

    def complete(self, text: str) -> str:
        """The completion for one prompt text.

        Raises:
            LLMError: when no rule matches and there is no default.
        """
        self.calls.append(text)
        for pattern, response in self._rules:
            if pattern.search(text):
                out = response(text) if callable(response) else response
                if not isinstance(out, str):
                    raise TypeError(f"a scripted response must be a str, got {type(out).__name__}")
                return out
        if self.default is None:
            raise LLMError(f"ScriptedLLM has no rule for prompt: {text[:200]!r}")
        return self.default

    def _checked_texts(
        self, prompts: Sequence[Prompt], max_new_tokens: int, temperature: float, n: int
    ) -> list[list[str]]:
        """``n`` copies of the scripted completion for each prompt (no truncation)."""
        out = []
        for prompt in prompts:
            text = self.complete(prompt_text(prompt))
            out.append([text] * n)
        return out

    def _checked_generations(
        self, prompts: Sequence[Prompt], max_new_tokens: int, temperature: float, n: int
    ) -> list[list[Generation]]:
        """As :meth:`generate`, as :class:`Generation` records with text only (no tokens)."""
        texts = self.generate(prompts, max_new_tokens, temperature, n)
        return [[Generation(t, finish_reason="stop") for t in row] for row in texts]
