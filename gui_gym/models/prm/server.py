"""A PRM behind any OpenAI-compatible server (vLLM, ...), read from the label tokens'
log-probabilities (GUI-Shepherd serves its PRM with vLLM, App. B.2).

Requests go through the one model HTTP client (:func:`gui_gym.models.llm.chat_http.post_all`):
every request of a call in flight together, each under a whole-request deadline. A server
that gives no answer (unreachable, past the deadline, HTTP errors after the retries) raises
:class:`~gui_gym.models.llm.ModelUnavailable`: infrastructure, never a score. An answer
that cannot be read (no logprobs, no label token) gives a clear error or, by default, a
documented neutral score with a warning.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from gui_gym.core.untrusted_text import load_json
from gui_gym.models.llm.base import ModelUnavailable
from gui_gym.models.llm.chat_http import ResponseTooLarge, TransportError, post_all
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

    No answer: a connection error, a timeout (``timeout`` is a deadline on the whole
    request, so a server that trickles bytes is a timeout, not a hang) or an HTTP error
    after ``max_retries`` retries raises :class:`~gui_gym.models.llm.ModelUnavailable`
    whatever ``on_error`` says: the step is not scored (the rollout engine ends the episode
    as ``infra_error``). All requests of one :meth:`score` call are in flight together, so a
    batch waits for its slowest request once.

    Unusable answers: a missing ``logprobs`` field, a body that is not a completion, or no
    label token at the label position. With ``on_error="raise"`` they raise
    :class:`PRMOutputError`; with ``on_error="neutral"`` (default) the query gets
    ``neutral_score`` (0.5: no preference), a :class:`PRMResponseWarning` is issued, and the
    reason is kept in ``last_errors`` (the wrapper shows it in ``info["prm"]``).

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
        timeout: Seconds one request attempt may take in all (connect, send, answer).
        max_retries: Retries on connection errors, timeouts and HTTP 408/409/429/5xx.
        backoff: First wait before a retry, doubled each time.
        batch_size: Prompts per ``/completions`` request.
        concurrency: Requests in flight at once.
        on_error: ``"neutral"`` or ``"raise"`` (unusable answers only).
        neutral_score: Score of a query whose answer was unusable.
        max_response_bytes: Largest response body read.

    Raises:
        ValueError: for bad arguments.
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
        backoff: float = 0.5,
        max_response_bytes: int = 1 << 24,
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
        if not isinstance(max_retries, int) or max_retries < 0 or backoff < 0:
            raise ValueError("max_retries must be an int >= 0 and backoff >= 0")
        if base_url is None:
            raise ValueError("base_url is required, e.g. http://localhost:8000/v1")
        self.base_url = base_url
        self.api_key = api_key
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff = float(backoff)
        self.max_response_bytes = int(max_response_bytes)
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
        logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
        if not isinstance(logprobs, dict):
            raise PRMOutputError("the response has no logprobs (does the server support them?)")
        tokens = logprobs.get("tokens")
        tops = logprobs.get("top_logprobs")
        if not isinstance(tokens, list) or not tokens or not isinstance(tops, list):
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
        logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
        content = logprobs.get("content") if isinstance(logprobs, dict) else None
        if not isinstance(content, list) or not content:
            raise PRMOutputError(
                "the response has no logprobs.content (does the server support logprobs?)"
            )
        tokens: list[str] = []
        tops: list[dict[str, float]] = []
        for entry in content:
            if not isinstance(entry, dict) or "token" not in entry:
                raise PRMOutputError("malformed logprobs.content entry in the PRM response")
            tokens.append(str(entry["token"]))
            alternatives = {
                str(a.get("token")): _finite_logprob(a.get("logprob"))
                for a in (entry.get("top_logprobs") or [])
                if isinstance(a, dict)
            }
            alternatives.setdefault(str(entry["token"]), _finite_logprob(entry.get("logprob")))
            tops.append(alternatives)
        return tokens, tops

    # -- requests --------------------------------------------------------------------------

    def _max_tokens(self) -> int:
        return self.max_rationale_tokens + 8 if self.rationale else 1

    def _payloads(self, prompts: list[str]) -> tuple[str, list[dict[str, Any]], list[int]]:
        """The path, the request bodies and how many prompts each body carries."""
        if self.api == "completions":
            batches = [
                prompts[i : i + self.batch_size] for i in range(0, len(prompts), self.batch_size)
            ]
            payloads = [
                {
                    "model": self.model,
                    "prompt": batch,
                    "max_tokens": self._max_tokens(),
                    "temperature": 0.0,
                    "logprobs": self.top_logprobs,
                }
                for batch in batches
            ]
            return "/completions", payloads, [len(b) for b in batches]
        payloads = [
            {
                "model": self.model,
                "messages": [{"role": "user", "content": prompt}],
                "max_tokens": self._max_tokens(),
                "temperature": 0.0,
                "logprobs": True,
                "top_logprobs": self.top_logprobs,
            }
            for prompt in prompts
        ]
        return "/chat/completions", payloads, [1] * len(prompts)

    def _read(self, body: bytes, count: int) -> list[tuple[float, str] | PRMOutputError]:
        """Each prompt's ``(score, rationale)`` or the reason its answer is unusable."""
        try:
            data = load_json(body)
            choices = data.get("choices") if isinstance(data, dict) else None
            if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
                raise PRMOutputError("malformed PRM server response: no 'choices' list")
            choices = sorted(choices, key=lambda c: c.get("index", 0))
            if len(choices) != count:
                raise PRMOutputError(f"asked {count} prompts, got {len(choices)} choices")
        except PRMOutputError as err:
            return [err] * count
        except (ValueError, TypeError) as err:
            return [PRMOutputError(f"malformed PRM server response ({err})")] * count
        read = self._completion_logprobs if self.api == "completions" else self._chat_logprobs
        results: list[tuple[float, str] | PRMOutputError] = []
        for choice in choices:
            try:
                results.append(self._label_probability(*read(choice)))
            except PRMOutputError as err:
                results.append(err)
        return results

    def _request(self, prompts: list[str]) -> list[tuple[float, str] | PRMOutputError]:
        """Every prompt's result, all requests in flight together.

        Raises:
            ModelUnavailable: when a request got no answer or an HTTP error after the
                retries.
        """
        path, payloads, counts = self._payloads(prompts)
        try:
            answers = post_all(
                self.base_url,
                self.api_key,
                path,
                payloads,
                timeout=self.timeout,
                max_retries=self.max_retries,
                backoff=self.backoff,
                concurrency=self.concurrency,
                max_bytes=self.max_response_bytes,
            )
        except ResponseTooLarge as err:
            return [PRMOutputError(f"PRM server response over {err} bytes")] * len(prompts)
        results: list[tuple[float, str] | PRMOutputError] = []
        for answer, count in zip(answers, counts, strict=True):
            if isinstance(answer, TransportError):
                raise ModelUnavailable(
                    f"PRM server {self.base_url} gave no answer after "
                    f"{self.max_retries + 1} attempt(s): {answer}"
                )
            status, body = answer
            if status != 200:
                raise ModelUnavailable(
                    f"PRM server {self.base_url} answered HTTP {status} after "
                    f"{self.max_retries + 1} attempt(s): {body[:200].decode('utf-8', 'replace')}"
                )
            results.extend(self._read(body, count))
        return results

    def score(self, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None) -> np.ndarray:
        """Scores in [0, 1]; see the class docstring for failures.

        Raises:
            ModelUnavailable: when the server gives no answer (whatever ``on_error``).
            PRMOutputError: for an unusable answer when ``on_error="raise"``.
        """
        queries = check_queries(queries)
        prompts = [self.prompt(q) for q in queries]
        results = self._request(prompts) if prompts else []
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
