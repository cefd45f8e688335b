"""A PRM behind any OpenAI-compatible server (vLLM, ...), read from the label tokens'
log-probabilities (GUI-Shepherd serves its PRM with vLLM, App. B.2).

Bad responses (no logprobs, no label token, timeouts) give a clear error, or, by default,
a documented neutral score with a warning, so a rollout never dies mid-episode. The
``openai`` package is imported when a client is built.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from gui_gym.models.prm.protocol import (
    PRMOutputError,
    PRMResponseWarning,
    check_on_error,
    check_queries,
)
from gui_gym.rewards.prm import PRMQuery, PromptTemplate

__all__ = [
    "OpenAICompatPRM",
]


class OpenAICompatPRM:
    """A PRM served by any OpenAI-compatible endpoint, scored from token log-probabilities.

    The prompt (same template as :class:`~gui_gym.models.prm.TransformersPRM`) is sent to
    ``/completions`` (``api="completions"``, batched: one request per ``batch_size``
    prompts) or ``/chat/completions`` (``api="chat"``, one request per prompt,
    ``concurrency`` at a time) with ``temperature=0`` and the top ``top_logprobs``
    log-probabilities per token. At the label position, the probabilities of all returned
    token variants whose text, stripped of spaces, equals a label are summed: ``p_pos`` and
    ``p_neg``; the score is ``p_pos / (p_pos + p_neg)``. When only one label is among the
    top tokens, the other is bounded by the smallest listed probability and that bound is
    used (a conservative score). The label position is the first generated token without a
    rationale, and the first label token after the verdict marker with one.

    Bad responses: a timeout, a connection or HTTP error, a missing ``logprobs`` field, or
    no label token at the label position. With ``on_error="raise"`` they raise
    :class:`PRMOutputError`; with ``on_error="neutral"`` (default) the query gets
    ``neutral_score`` (0.5: no preference), a :class:`PRMResponseWarning` is issued, and the
    reason is kept in ``last_errors`` (the wrapper shows it in ``info["prm"]``), so a
    rollout is never interrupted by the server.

    Args:
        model: Model name on the server.
        base_url: Server URL including ``/v1`` (e.g. ``http://localhost:8000/v1``).
        api_key: Key sent to the server (``"EMPTY"`` for local vLLM).
        api: ``"completions"`` or ``"chat"``.
        positive_token, negative_token: Label texts (matched after stripping spaces).
        rationale: Let the model reason before the label.
        template: The prompt template.
        max_rationale_tokens: Completion budget with a rationale.
        top_logprobs: How many alternatives per token to ask for (the API allows up to 20).
        timeout: Seconds per request.
        max_retries: Retries of the client on connection errors and 5xx.
        batch_size: Prompts per ``/completions`` request.
        concurrency: Parallel ``/chat/completions`` requests.
        on_error: ``"neutral"`` or ``"raise"``.
        neutral_score: Score of a query whose response was unusable.
        client: An ``openai.OpenAI`` client to use instead of building one.

    Raises:
        ValueError: for bad arguments.
        gymnasium.error.DependencyNotInstalled: without the ``openai`` package.
    """

    requires_env = False

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str = "EMPTY",
        *,
        api: str = "completions",
        positive_token: str = " True",
        negative_token: str = " False",
        rationale: bool = False,
        template: PromptTemplate | None = None,
        max_rationale_tokens: int = 256,
        top_logprobs: int = 20,
        timeout: float = 30.0,
        max_retries: int = 2,
        batch_size: int = 16,
        concurrency: int = 8,
        on_error: str = "neutral",
        neutral_score: float = 0.5,
        client: Any = None,
    ):
        if api not in ("completions", "chat"):
            raise ValueError(f"api must be 'completions' or 'chat', got {api!r}")
        check_on_error(on_error, neutral_score)
        if not 1 <= top_logprobs <= 20:
            raise ValueError(f"top_logprobs must be in 1..20, got {top_logprobs}")
        if positive_token.strip() == negative_token.strip() or not positive_token.strip():
            raise ValueError(
                f"positive_token {positive_token!r} and negative_token {negative_token!r} "
                "must be distinct, non-blank texts"
            )
        if batch_size < 1 or concurrency < 1 or timeout <= 0:
            raise ValueError("batch_size and concurrency must be >= 1 and timeout > 0")
        if client is None:
            try:
                import openai
            except ImportError as err:
                import gymnasium as gym

                raise gym.error.DependencyNotInstalled(
                    f"OpenAICompatPRM needs the openai package ({err}); pip install 'gui-gym[llm]'"
                ) from err
            client = openai.OpenAI(
                base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries
            )
        self.client = client
        self.model = model
        self.api = api
        self.positive_token = positive_token
        self.negative_token = negative_token
        self.rationale = bool(rationale)
        self.template = template or PromptTemplate()
        self.max_rationale_tokens = int(max_rationale_tokens)
        self.top_logprobs = int(top_logprobs)
        self.batch_size = int(batch_size)
        self.concurrency = int(concurrency)
        self.on_error = on_error
        self.neutral_score = float(neutral_score)
        self.last_errors: list[str | None] = []
        self.last_rationales: list[str] = []

    def prompt(self, query: PRMQuery) -> str:
        """The text sent for ``query``."""
        return self.template.render(
            query, self.positive_token, self.negative_token, rationale=self.rationale
        )

    # -- response parsing ------------------------------------------------------------------

    def _label_probability(
        self, tokens: list[str], tops: list[dict[str, float]]
    ) -> tuple[float, str]:
        """``(score, rationale)`` from one completion's tokens and top log-probabilities.

        Raises:
            PRMOutputError: when no label token is found where the label should be.
        """
        pos, neg = self.positive_token.strip(), self.negative_token.strip()
        if not tokens:
            raise PRMOutputError("the completion has no tokens")
        index = 0
        if self.rationale:
            marker = self.template.verdict_marker.strip()
            text = ""
            index = -1
            for i, tok in enumerate(tokens):
                if tok.strip() in (pos, neg) and text.rstrip().endswith(marker):
                    index = i
                    break
                text += tok
            if index < 0:
                raise PRMOutputError(
                    f"no {pos!r}/{neg!r} token after {marker!r} in the completion "
                    f"{''.join(tokens)[:200]!r}"
                )
        top = tops[index] if index < len(tops) else None
        if not top:
            raise PRMOutputError(f"no top log-probabilities at the label position {index}")
        p_pos = sum(math.exp(lp) for t, lp in top.items() if t.strip() == pos)
        p_neg = sum(math.exp(lp) for t, lp in top.items() if t.strip() == neg)
        if p_pos == 0.0 and p_neg == 0.0:
            listed = ", ".join(repr(t) for t in list(top)[:8])
            raise PRMOutputError(
                f"neither {pos!r} nor {neg!r} among the top tokens at the label position "
                f"({listed}); is the server running a PRM with these label tokens?"
            )
        floor = min(math.exp(lp) for lp in top.values())
        if p_pos == 0.0:
            p_pos = floor
        if p_neg == 0.0:
            p_neg = floor
        rationale = "".join(tokens[:index]).split(self.template.verdict_marker)[0].strip()
        return p_pos / (p_pos + p_neg), rationale

    @staticmethod
    def _completion_logprobs(choice: Any) -> tuple[list[str], list[dict[str, float]]]:
        logprobs = getattr(choice, "logprobs", None)
        if logprobs is None:
            raise PRMOutputError("the response has no logprobs (does the server support them?)")
        tokens = getattr(logprobs, "tokens", None)
        tops = getattr(logprobs, "top_logprobs", None)
        if not tokens or tops is None:
            raise PRMOutputError("the response's logprobs lack tokens or top_logprobs")
        clean: list[dict[str, float]] = []
        for top in tops:
            if top is None:
                clean.append({})
                continue
            if not isinstance(top, dict):
                raise PRMOutputError(
                    f"top_logprobs entries must be objects, got {type(top).__name__}"
                )
            clean.append({str(k): _finite_logprob(v) for k, v in top.items()})
        return [str(t) for t in tokens], clean

    @staticmethod
    def _chat_logprobs(choice: Any) -> tuple[list[str], list[dict[str, float]]]:
        logprobs = getattr(choice, "logprobs", None)
        content = getattr(logprobs, "content", None) if logprobs is not None else None
        if not content:
            raise PRMOutputError(
                "the response has no logprobs.content (does the server support logprobs?)"
            )
        tokens: list[str] = []
        tops: list[dict[str, float]] = []
        for entry in content:
            tokens.append(str(entry.token))
            alternatives = {
                str(a.token): _finite_logprob(a.logprob) for a in (entry.top_logprobs or [])
            }
            alternatives.setdefault(str(entry.token), _finite_logprob(entry.logprob))
            tops.append(alternatives)
        return tokens, tops

    # -- requests --------------------------------------------------------------------------

    def _max_tokens(self) -> int:
        return self.max_rationale_tokens + 8 if self.rationale else 1

    def _complete_batch(self, prompts: list[str]) -> list[tuple[float, str] | PRMOutputError]:
        try:
            response = self.client.completions.create(
                model=self.model,
                prompt=prompts,
                max_tokens=self._max_tokens(),
                temperature=0.0,
                logprobs=self.top_logprobs,
            )
            choices = sorted(response.choices, key=lambda c: c.index)
            if len(choices) != len(prompts):
                raise PRMOutputError(f"asked {len(prompts)} prompts, got {len(choices)} choices")
        except Exception as err:
            return [_as_output_error(err)] * len(prompts)
        results: list[tuple[float, str] | PRMOutputError] = []
        for choice in choices:
            try:
                results.append(self._label_probability(*self._completion_logprobs(choice)))
            except PRMOutputError as err:
                results.append(err)
        return results

    def _chat_one(self, prompt: str) -> tuple[float, str] | PRMOutputError:
        try:
            response = self.client.chat.completions.create(
                model=self.model,
                messages=[{"role": "user", "content": prompt}],
                max_tokens=self._max_tokens(),
                temperature=0.0,
                logprobs=True,
                top_logprobs=self.top_logprobs,
            )
            if not response.choices:
                raise PRMOutputError("the response has no choices")
            return self._label_probability(*self._chat_logprobs(response.choices[0]))
        except Exception as err:
            return _as_output_error(err)

    def score(self, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None) -> np.ndarray:
        """Scores in [0, 1]; see the class docstring for bad responses.

        Raises:
            PRMOutputError: for an unusable response when ``on_error="raise"``.
        """
        queries = check_queries(queries)
        prompts = [self.prompt(q) for q in queries]
        results: list[tuple[float, str] | PRMOutputError] = []
        if self.api == "completions":
            for start in range(0, len(prompts), self.batch_size):
                results.extend(self._complete_batch(prompts[start : start + self.batch_size]))
        elif prompts:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(prompts))) as pool:
                results = list(pool.map(self._chat_one, prompts))
        scores = np.empty(len(prompts), dtype=np.float64)
        self.last_errors = []
        self.last_rationales = []
        for i, result in enumerate(results):
            if isinstance(result, PRMOutputError):
                if self.on_error == "raise":
                    raise result
                warnings.warn(
                    f"PRM server response unusable ({result}); using neutral score "
                    f"{self.neutral_score}",
                    PRMResponseWarning,
                    stacklevel=2,
                )
                scores[i] = self.neutral_score
                self.last_errors.append(str(result))
                self.last_rationales.append("")
            else:
                scores[i] = result[0]
                self.last_errors.append(None)
                self.last_rationales.append(result[1])
        return scores


def _finite_logprob(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise PRMOutputError(f"log-probability {value!r} is not a number") from None
    if math.isnan(number) or number > 1e-6:
        raise PRMOutputError(f"log-probability {value!r} is not <= 0")
    return number


def _as_output_error(err: Exception) -> PRMOutputError:
    if isinstance(err, PRMOutputError):
        return err
    name = type(err).__name__
    with contextlib.suppress(ImportError):
        import openai

        if isinstance(err, openai.APITimeoutError):
            return PRMOutputError(f"PRM server timed out ({name})")
        if isinstance(err, openai.APIConnectionError):
            return PRMOutputError(f"cannot reach the PRM server ({name}: {err})")
        if isinstance(err, openai.APIStatusError):
            return PRMOutputError(f"PRM server answered HTTP {err.status_code} ({name})")
        if isinstance(err, openai.APIResponseValidationError):
            return PRMOutputError(f"PRM server sent a malformed response ({name})")
        if isinstance(err, openai.OpenAIError):
            return PRMOutputError(f"PRM request failed ({name}: {err})")
    if isinstance(err, AttributeError | TypeError | KeyError | ValueError):
        return PRMOutputError(f"malformed PRM server response ({name}: {err})")
    raise err
