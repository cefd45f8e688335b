"""The :class:`LLM` protocol every backend implements, the errors they raise, the
:class:`Generation` record of token-exact generation, and :func:`ask_until_parsed` (ask
until a parser accepts the reply, re-asking only the prompts that failed).

The backends are in :mod:`~gui_gym.models.llm.scripted`,
:mod:`~gui_gym.models.llm.transformers_llm` and :mod:`~gui_gym.models.llm.openai_compat`;
the prompt format in :mod:`~gui_gym.models.llm.chat_messages`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

from gui_gym.models.llm.chat_messages import Prompt

__all__ = [
    "LLM",
    "Generation",
    "LLMBase",
    "LLMError",
    "ModelUnavailable",
    "ParsedReply",
    "ask_until_parsed",
]


class LLMError(RuntimeError):
    """A backend could not produce completions (server unreachable after retries, a request
    the server rejected, a scripted LLM with no rule for a prompt)."""


class ModelUnavailable(LLMError):
    """A model's server gave no answer: unreachable, dropped, past its whole-request deadline,
    or HTTP 408/409/429/5xx after the retries. Infrastructure, not the model's output: reward
    components (judge, PRM, progress model, milestone generator) let it propagate out of
    ``env.step`` instead of scoring the step, and the rollout engine ends that episode as
    ``infra_error`` (left out of groups, counted apart). A model that answered unparsably is
    not this: that is ``invalid`` / a neutral score with ``model_error`` (docs/rewards.md)."""


@dataclass
class Generation:
    """One completion with, when the backend gives them, its exact tokens.

    Attributes:
        text: The decoded completion (special tokens removed).
        prompt_ids: The token ids the model was conditioned on (no padding).
        completion_ids: The sampled token ids, up to and including the end token when the
            model emitted one (no padding after it).
        logprobs: Log-probability of each completion id under the sampling distribution.
        finish_reason: ``"stop"`` (the model ended), ``"length"`` (``max_new_tokens`` hit),
            or None when unknown.
        vision: For a vision-language model, the screenshots shown (content keys into the
            LLM's ``image_store``) and its processor settings' key, as
            :meth:`gui_gym.models.llm.vision_inputs.VisionRef.to_dict` gives them: with
            ``prompt_ids`` they rebuild exactly the inputs the sampler saw.
    """

    text: str
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    logprobs: list[float] | None = None
    finish_reason: str | None = None
    vision: dict[str, Any] | None = None


@runtime_checkable
class LLM(Protocol):
    """Anything that completes prompts: ``n`` completions for each prompt, in order."""

    def generate(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
    ) -> list[list[str]]: ...


def _check_generate_args(
    prompts: Sequence[Prompt], max_new_tokens: int, temperature: float, n: int
) -> None:
    """The checks every backend's ``generate`` makes before doing any work."""
    if isinstance(prompts, str):
        raise TypeError("generate() takes a list of prompts; wrap a single prompt in a list")
    if not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be a positive int, got {max_new_tokens!r}")
    if not temperature >= 0.0:  # also rejects NaN
        raise ValueError(f"temperature must be >= 0, got {temperature!r}")
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")


class LLMBase:
    """The front every backend shares: :meth:`generate` and :meth:`generate_with_tokens`
    check their arguments (:func:`_check_generate_args`) and hand them to the backend's
    ``_checked_generations`` hook (and ``_checked_texts``, which defaults to the texts of
    :meth:`generate_with_tokens`). A backend that has only text (a scripted LLM) overrides
    ``_checked_texts`` and builds ``_checked_generations`` from :meth:`generate`."""

    def generate(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
    ) -> list[list[str]]:
        """``n`` completions for each prompt, in prompt order.

        Raises:
            TypeError, ValueError: for a bad argument (a single prompt not in a list, a
                ``max_new_tokens`` or ``n`` that is not a positive int, a negative
                temperature).
            LLMError: when the backend cannot produce the completions.
        """
        _check_generate_args(prompts, max_new_tokens, temperature, n)
        return self._checked_texts(prompts, max_new_tokens, temperature, n)

    def generate_with_tokens(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
    ) -> list[list[Generation]]:
        """As :meth:`generate`, as :class:`Generation` records (with the token ids and
        log-probs where the backend has them)."""
        _check_generate_args(prompts, max_new_tokens, temperature, n)
        return self._checked_generations(prompts, max_new_tokens, temperature, n)

    def _checked_texts(
        self, prompts: Sequence[Prompt], max_new_tokens: int, temperature: float, n: int
    ) -> list[list[str]]:
        """The texts of :meth:`generate_with_tokens` (the arguments already checked)."""
        rows = self.generate_with_tokens(prompts, max_new_tokens, temperature, n)
        return [[g.text for g in row] for row in rows]

    def _checked_generations(
        self, prompts: Sequence[Prompt], max_new_tokens: int, temperature: float, n: int
    ) -> list[list[Generation]]:
        """The backend's work for :meth:`generate_with_tokens` (the arguments checked)."""
        raise NotImplementedError


# ------------------------------------------------------------------------ asking until parsed

T = TypeVar("T")


@dataclass(frozen=True)
class ParsedReply(Generic[T]):
    """What :func:`ask_until_parsed` got for one prompt.

    Attributes:
        value: ``parse(reply)`` of the first reply that parsed; None when none did.
        reply: The reply that parsed, or the last reply when none did.
        error: Why the last reply did not parse (the parser's ``ValueError``); None when a
            reply parsed.
        attempts: How many replies were asked for this prompt (1 to ``retries + 1``).
    """

    value: T | None
    reply: str
    error: ValueError | None
    attempts: int

    @property
    def parsed(self) -> bool:
        """Whether a reply parsed (``value`` holds its result)."""
        return self.error is None

    def result(self) -> T:
        """The parsed value.

        Raises:
            ValueError: the last parse error, when no reply parsed.
        """
        if self.error is not None:
            raise self.error
        return cast(T, self.value)


def ask_until_parsed(
    llm: LLM,
    prompts: Sequence[Prompt],
    parse: Callable[[str], T],
    retries: int,
    *,
    max_new_tokens: int = 256,
    temperature: float = 0.0,
    reprompt: Callable[[Prompt, str], Prompt] | None = None,
) -> list[ParsedReply[T]]:
    """Ask ``llm`` each prompt until ``parse`` accepts its reply, re-asking only the prompts
    whose reply did not parse, up to ``retries`` more times.

    Each round is one batched ``llm.generate`` call with one completion per prompt
    (``n=1``): the first round sends every prompt, each later round only those still
    unparsed, in their original order. A parser says no by raising ``ValueError`` (which
    ``ActionParseError`` and ``MilestoneGenerationError`` are); any other exception it raises
    propagates. To sample several answers for one prompt, repeat the prompt in ``prompts``.

    Args:
        llm: Any :class:`LLM`.
        prompts: The prompts, each a string or a list of chat messages.
        parse: Turns a reply into a value, or raises ``ValueError`` saying what is wrong.
        retries: Extra attempts for a reply that did not parse (0: ask once).
        max_new_tokens: Completion budget of each reply.
        temperature: Sampling temperature (0 is greedy).
        reprompt: ``reprompt(prompt, error)`` gives the prompt of a retry from the original
            prompt and the parser's complaint about the last reply; None re-sends the
            prompt unchanged.

    Returns:
        One :class:`ParsedReply` per prompt, in prompt order. A prompt whose replies never
        parsed is not an exception here: its entry has ``parsed`` False, ``value`` None, the
        last reply and the last parse error, so each caller decides what a failure means
        (raise, a neutral score, an ``invalid`` verdict). An empty ``prompts`` asks nothing.

    Raises:
        ValueError: for ``retries`` that is not an int >= 0.
        LLMError: when the backend fails (raised by ``llm.generate``), returns a number of
            reply lists other than the number of prompts sent, or no completion for a prompt.
    """
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries must be an int >= 0, got {retries!r}")
    results: dict[int, ParsedReply[T]] = {}
    replies = [""] * len(prompts)
    errors: list[ValueError | None] = [None] * len(prompts)
    pending = list(range(len(prompts)))
    for attempt in range(1, retries + 2):
        if not pending:
            break
        batch = [
            prompts[i]
            if reprompt is None or errors[i] is None
            else reprompt(prompts[i], str(errors[i]))
            for i in pending
        ]
        outputs = llm.generate(batch, max_new_tokens=max_new_tokens, temperature=temperature, n=1)
        if len(outputs) != len(batch):
            raise LLMError(f"the LLM returned {len(outputs)} replies for {len(batch)} prompts")
        still: list[int] = []
        for i, completions in zip(pending, outputs):
            if not completions:
                raise LLMError(f"the LLM returned no completion for prompt {i}")
            replies[i] = str(completions[0])
            try:
                value = parse(replies[i])
            except ValueError as err:
                errors[i] = err
                still.append(i)
            else:
                results[i] = ParsedReply(value, replies[i], None, attempt)
        pending = still
    for i in pending:
        results[i] = ParsedReply(None, replies[i], errors[i], retries + 1)
    return [results[i] for i in range(len(prompts))]
