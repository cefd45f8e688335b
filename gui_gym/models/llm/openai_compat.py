"""OpenAICompatLLM: any server speaking the OpenAI chat-completions API (vLLM, SGLang,
llama.cpp, OpenAI itself), through the one asyncio HTTP client of
:mod:`~gui_gym.models.llm.chat_http`, with retries and backoff on transient failures.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

from gui_gym.core.untrusted_text import load_json, without_lone_surrogates
from gui_gym.models.llm.base import (
    Generation,
    LLMBase,
    LLMError,
    ModelUnavailable,
    _check_generate_args,
)
from gui_gym.models.llm.chat_messages import Prompt, openai_messages, to_messages

__all__ = ["OpenAICompatLLM"]

logger = logging.getLogger(__name__)


_BLOCKING_CLIENT: contextvars.ContextVar[tuple[Any, Any, asyncio.Semaphore] | None] = (
    contextvars.ContextVar("gui_gym_blocking_llm_client", default=None)
)
"""(llm, client, semaphore) of the blocking call running in this context."""


class OpenAICompatLLM(LLMBase):
    """A model served behind the OpenAI chat-completions API (vLLM, SGLang, OpenAI, ...).

    Transient failures (connection errors, timeouts, HTTP 408/409/429 and 5xx) are retried
    ``max_retries`` times with exponential backoff (``backoff * 2**attempt`` seconds, capped at
    ``max_backoff``); other HTTP errors (a wrong model name, a bad key, a malformed request)
    raise at once. Prompts are sent concurrently, up to ``max_concurrency`` at a time. When
    the server returns fewer than ``n`` choices, the missing ones are requested again.

    Each attempt has a whole-request deadline of ``timeout`` seconds (a server that trickles
    its body a byte at a time is a timeout, not a hang) and a body size cap,
    ``max_response_bytes``. A body that is not the chat-completions JSON (an HTML page,
    malformed ``choices``, a non-string ``content``) or is over the cap raises
    :class:`LLMError` at once, naming what was wrong; so does every other failure: callers
    handle one error type.

    Args:
        model: The model name the server knows.
        base_url: The API root, e.g. ``http://localhost:8000/v1``.
        api_key: The key; None reads ``OPENAI_API_KEY`` and falls back to ``"EMPTY"`` (what
            vLLM accepts without auth).
        system_prompt: Prepended as a system message to prompts that have none.
        max_retries: Retries of one request after its first failure.
        backoff: First backoff in seconds.
        max_backoff: Longest single wait.
        timeout: Seconds one attempt may take in all (connecting, waiting, reading the body).
        max_concurrency: Requests in flight at once (per event loop for the async methods).
        extra_body: Extra JSON fields for every request (e.g. vLLM's ``top_k``).
        max_response_bytes: Largest response body read; None allows 1 MiB plus 64 bytes per
            requested token (``n * max_new_tokens``), far above what a server honouring
            ``max_tokens`` sends.
        request_tokens: Ask the server for token ids and log-probs (``logprobs: true`` and
            vLLM's ``return_token_ids: true``) so ``agenerate_with_tokens`` can fill them;
            a server that ignores the request gives text only.

    One client: every request, blocking or not, goes through the small asyncio HTTP client
    of :mod:`gui_gym.models.llm.chat_http` (the one the PRM, judges, progress models and
    milestone generators use too), with its one retry policy
    (:func:`~gui_gym.models.llm.chat_http.post_retrying`) and one whole-request deadline; the
    ``openai`` package is not needed. :meth:`agenerate` and :meth:`agenerate_with_tokens`
    are coroutines for one event loop with many requests in flight (the rollout engine
    keeps one per env); at most ``max_concurrency`` run at once, the rest wait on a
    semaphore. :meth:`generate` and :meth:`generate_with_tokens` run the same coroutines to
    their end on a fresh event loop (from any thread; inside a running loop, on a helper
    thread), so the prompts of one call are in flight together and the call waits for its
    slowest request once. Each blocking call has its own connections, so one instance can
    be called from several threads at once (the judges of envs stepped concurrently).

    Raises:
        ValueError: for a bad argument, or a ``base_url`` that is not ``http(s)://host...``.
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str | None = None,
        *,
        system_prompt: str | None = None,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 16.0,
        timeout: float = 120.0,
        max_concurrency: int = 8,
        extra_body: Mapping[str, Any] | None = None,
        max_response_bytes: int | None = None,
        request_tokens: bool = False,
    ):
        if not model:
            raise ValueError("model must name the served model")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be an int >= 0, got {max_retries!r}")
        if backoff < 0 or max_backoff < 0:
            raise ValueError(f"backoff and max_backoff must be >= 0, got {backoff}, {max_backoff}")
        if not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise ValueError(f"max_concurrency must be a positive int, got {max_concurrency!r}")
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if max_response_bytes is not None and (
            not isinstance(max_response_bytes, int) or max_response_bytes < 1
        ):
            raise ValueError(
                f"max_response_bytes must be a positive int or None, got {max_response_bytes!r}"
            )
        self.model = model
        self.timeout = float(timeout)
        self.max_response_bytes = max_response_bytes
        self.base_url = base_url
        self.system_prompt = system_prompt
        self.max_retries = max_retries
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.max_concurrency = max_concurrency
        self.extra_body = dict(extra_body or {})
        self.request_tokens = bool(request_tokens)
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        from gui_gym.models.llm.chat_http import AsyncJSONClient

        AsyncJSONClient(base_url, self._api_key, self.timeout)  # a bad URL fails here
        self._async: tuple[Any, Any, Any] | None = None  # (loop, client, semaphore)

    def _body_limit(self, max_new_tokens: int, n: int) -> int:
        if self.max_response_bytes is not None:
            return self.max_response_bytes
        return (1 << 20) + 64 * n * max_new_tokens

    def _texts(self, body: bytes) -> list[str]:
        """The completions of a chat-completions body, or LLMError saying what is wrong."""
        where = f"{self.base_url} (model {self.model!r})"
        try:
            data = load_json(body)
        except ValueError as err:
            preview = body[:80].decode("utf-8", "replace")
            raise LLMError(
                f"{where} returned a body that is not JSON ({err}): {preview!r}"
            ) from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list):
            raise LLMError(f"{where} returned JSON without a 'choices' list")
        indexed: list[tuple[int, str]] = []
        for position, choice in enumerate(choices):
            message = choice.get("message") if isinstance(choice, dict) else None
            if not isinstance(message, dict):
                raise LLMError(f"{where}: choice {position} has no 'message' object")
            content = message.get("content")
            if content is not None and not isinstance(content, str):
                raise LLMError(
                    f"{where}: choice {position} content is a {type(content).__name__}, "
                    "not a string"
                )
            index = choice.get("index", position)
            if not isinstance(index, int) or isinstance(index, bool):
                raise LLMError(f"{where}: choice {position} has a non-integer 'index'")
            indexed.append((index, without_lone_surrogates(content or "")))
        if not indexed:
            raise LLMError(f"{self.base_url} returned no choices for model {self.model!r}")
        return [text for _, text in sorted(indexed, key=lambda pair: pair[0])]

    def _async_client(self) -> tuple[Any, asyncio.Semaphore]:
        """The async HTTP client and semaphore of the running event loop (connections and an
        asyncio semaphore belong to one loop, so a new loop gets new ones)."""
        from gui_gym.models.llm.chat_http import AsyncJSONClient

        own = _BLOCKING_CLIENT.get()
        if own is not None and own[0] is self:  # a blocking call's own client and loop
            return own[1], own[2]
        loop = asyncio.get_running_loop()
        if self._async is None or self._async[0] is not loop:
            if self._async is not None and self._async[0].is_closed():
                # a loop that ended without adisconnect(): its connections cannot be closed
                # through it any more (close() would raise "Event loop is closed")
                self._async[1].abandon()
            client = AsyncJSONClient(self.base_url, self._api_key, self.timeout)
            self._async = (loop, client, asyncio.Semaphore(self.max_concurrency))
        return self._async[1], self._async[2]

    async def adisconnect(self) -> None:
        """Close this model's connections of the running event loop and wait until they are
        closed; a later call opens new ones. Call it before a loop you run ends (the rollout
        engine does so at the end of each ``run``): connections belong to their loop, and
        once it has closed they can only be left for the garbage collector."""
        if self._async is not None and self._async[0] is asyncio.get_running_loop():
            client, self._async = self._async[1], None
            await client.aclose()

    async def _arequest(
        self, messages: list[dict[str, Any]], max_new_tokens: int, temperature: float, n: int
    ) -> list[Generation]:
        from gui_gym.models.llm.chat_http import ResponseTooLarge, TransportError, post_retrying

        client, semaphore = self._async_client()
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_new_tokens,
            "temperature": temperature,
            "n": n,
            **self.extra_body,
        }
        if self.request_tokens:
            payload.update(logprobs=True, return_token_ids=True)

        def on_retry(reason: str, attempt: int, wait: float) -> None:
            logger.warning(
                "%s: %s (attempt %d of %d); retrying in %.2fs",
                self.base_url,
                reason,
                attempt + 1,
                self.max_retries + 1,
                wait,
            )

        try:
            outcome = await post_retrying(
                client,
                "/chat/completions",
                payload,
                max_retries=self.max_retries,
                backoff=self.backoff,
                max_backoff=self.max_backoff,
                max_bytes=self._body_limit(max_new_tokens, n),
                gate=semaphore,
                on_retry=on_retry,
            )
        except ResponseTooLarge as err:
            raise LLMError(
                f"{self.base_url} sent a response body over {err} bytes for "
                f"max_tokens={max_new_tokens}, n={n} (max_response_bytes)"
            ) from None
        if isinstance(outcome, TransportError):
            last = str(outcome)
        else:
            status, body = outcome
            if status == 200:
                return self._generations(body)
            message = _error_message(body)
            if not (status in (408, 409, 429) or status >= 500):
                raise LLMError(
                    f"{self.base_url} rejected the request for model {self.model!r}: "
                    f"HTTP {status}: {message}"
                )
            last = f"HTTP {status}: {message}"
        raise ModelUnavailable(
            f"{self.base_url} failed {self.max_retries + 1} times for model {self.model!r}; "
            f"last error: {last}"
        )

    def _generations(self, body: bytes) -> list[Generation]:
        """The choices of a chat-completions body (checked as :meth:`_texts` checks them), in
        index order, with vLLM's token fields when present: ``prompt_token_ids`` and each
        choice's ``token_ids`` and ``logprobs.content``. Log-probs are kept only when they
        pair one to one with the ids."""
        texts = self._texts(body)
        if not self.request_tokens:  # no token fields asked for: skip a second parse
            return [Generation(text=text) for text in texts]
        data = load_json(body)
        choices = sorted(enumerate(data["choices"]), key=lambda pair: pair[1].get("index", pair[0]))
        prompt_ids = _int_list(data.get("prompt_token_ids"))
        out = []
        for text, (_, choice) in zip(texts, choices, strict=True):
            ids = _int_list(choice.get("token_ids"))
            logprobs = None
            entries = (choice.get("logprobs") or {}).get("content")
            if isinstance(entries, list) and entries:
                try:
                    logprobs = [float(e["logprob"]) for e in entries]
                except (KeyError, TypeError, ValueError):
                    logprobs = None
            if ids is None or logprobs is None or len(ids) != len(logprobs):
                logprobs = None  # never store log-probs that do not pair with the ids
            finish = choice.get("finish_reason")
            out.append(
                Generation(
                    text=text,
                    prompt_ids=prompt_ids,
                    completion_ids=ids,
                    logprobs=logprobs,
                    finish_reason=finish if isinstance(finish, str) else None,
                )
            )
        return out

    async def _acomplete(
        self, prompt: Prompt, max_new_tokens: int, temperature: float, n: int
    ) -> list[Generation]:
        messages = openai_messages(to_messages(prompt, self.system_prompt))
        out: list[Generation] = []
        while len(out) < n:  # some servers ignore n and answer once
            out.extend(await self._arequest(messages, max_new_tokens, temperature, n - len(out)))
        return out[:n]

    async def agenerate_with_tokens(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
    ) -> list[list[Generation]]:
        """``n`` :class:`Generation` s per prompt, all requests in flight together (bounded
        by ``max_concurrency``). Token ids and log-probs are filled when the server returns
        them (``request_tokens=True`` with vLLM), else None.

        Raises:
            LLMError: when a request is rejected, still fails after the retries, or the
                server's answer is not a chat completion.
        """
        _check_generate_args(prompts, max_new_tokens, temperature, n)
        if len(prompts) == 1:  # the rollout engine's case: no task to wrap it in
            return [await self._acomplete(prompts[0], max_new_tokens, temperature, n)]
        return list(
            await asyncio.gather(
                *(self._acomplete(p, max_new_tokens, temperature, n) for p in prompts)
            )
        )

    async def agenerate(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
    ) -> list[list[str]]:
        """The coroutine form of :meth:`generate` (see :meth:`agenerate_with_tokens`)."""
        rows = await self.agenerate_with_tokens(prompts, max_new_tokens, temperature, n)
        return [[g.text for g in row] for row in rows]

    def _checked_generations(
        self, prompts: Sequence[Prompt], max_new_tokens: int, temperature: float, n: int
    ) -> list[list[Generation]]:
        """The blocking form of :meth:`agenerate_with_tokens`: runs it to its end on a fresh
        event loop (:func:`~gui_gym.models.llm.chat_http.run_blocking`; from any thread, and from
        inside a running loop on a helper thread) and closes that loop's connections."""
        from gui_gym.models.llm.chat_http import run_blocking

        async def run() -> list[list[Generation]]:
            from gui_gym.models.llm.chat_http import AsyncJSONClient

            # this call's own client (a context variable, so that calls from several threads
            # at once, e.g. the judges of concurrently stepped envs, never share a loop's
            # connections), closed when it ends
            client = AsyncJSONClient(self.base_url, self._api_key, self.timeout)
            token = _BLOCKING_CLIENT.set((self, client, asyncio.Semaphore(self.max_concurrency)))
            try:
                return await self.agenerate_with_tokens(prompts, max_new_tokens, temperature, n)
            finally:
                _BLOCKING_CLIENT.reset(token)
                await client.aclose()

        return run_blocking(run)


def _error_message(body: bytes) -> str:
    """The ``error.message`` of an OpenAI-style error body, else its first bytes."""
    try:
        data = json.loads(body)
        return str(data["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return body[:200].decode("utf-8", "replace")


def _int_list(value: Any) -> list[int] | None:
    if isinstance(value, list) and all(isinstance(t, int) for t in value):
        return list(value)
    return None
