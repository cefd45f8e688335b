"""Text generation behind one small protocol, with three interchangeable backends.

Every LLM-backed part of gui-gym (ADMIRE's milestone generator and judge, PRM judges, ProRe's
reasoner and evaluator, LLM agents) talks to an :class:`LLM`::

    llm.generate(prompts, max_new_tokens=256, temperature=0.0, n=1) -> list[list[str]]

One list of ``n`` completions per prompt, in prompt order. A prompt is either a string (sent
as one user message) or a list of chat messages (``{"role": ..., "content": ...}``).

* :class:`TransformersLLM`: a local Hugging Face causal LM (a folder, or a model and
  tokenizer object you built), batched, on CPU or CUDA; the tokenizer's chat template is used
  when it has one.
* :class:`OpenAICompatLLM`: any server speaking the OpenAI chat-completions API (vLLM, SGLang,
  llama.cpp, OpenAI itself), with retries and backoff on transient failures.
* :class:`ScriptedLLM`: deterministic answers from rules or a function, for tests and demos.

``temperature=0`` means greedy decoding everywhere; ``n > 1`` then returns ``n`` copies of
the same completion from the local backends (a server may or may not vary them).
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeAlias, runtime_checkable

from gui_gym.core.untrusted_text import load_json, without_lone_surrogates

__all__ = [
    "LLM",
    "ChatMessage",
    "LLMError",
    "OpenAICompatLLM",
    "Prompt",
    "ScriptedLLM",
    "TransformersLLM",
    "prompt_text",
    "to_messages",
]

logger = logging.getLogger(__name__)

ChatMessage: TypeAlias = Mapping[str, str]
"""One chat message: ``{"role": "system" | "user" | "assistant", "content": "..."}``."""
Prompt: TypeAlias = str | Sequence[ChatMessage]
"""A plain string (one user message) or a whole conversation."""


class LLMError(RuntimeError):
    """A backend could not produce completions (server unreachable after retries, a request
    the server rejected, a scripted LLM with no rule for a prompt)."""


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


def to_messages(prompt: Prompt, system_prompt: str | None = None) -> list[dict[str, str]]:
    """A prompt as a list of chat messages (a string becomes one user message), with
    ``system_prompt`` prepended when given and the conversation has no system message.

    Raises:
        TypeError: for a prompt that is neither a string nor a list of messages.
        ValueError: for a message without a string ``role`` and ``content``.
    """
    if isinstance(prompt, str):
        messages = [{"role": "user", "content": prompt}]
    elif isinstance(prompt, Sequence):
        messages = []
        for i, message in enumerate(prompt):
            if not isinstance(message, Mapping):
                raise TypeError(
                    f"prompt message {i} must be a mapping with 'role' and 'content', "
                    f"got {type(message).__name__}"
                )
            role, content = message.get("role"), message.get("content")
            if not isinstance(role, str) or not isinstance(content, str):
                raise ValueError(
                    f"prompt message {i} needs string 'role' and 'content', got {dict(message)!r}"
                )
            messages.append({"role": role, "content": content})
    else:
        raise TypeError(f"a prompt is a str or a list of messages, got {type(prompt).__name__}")
    if system_prompt and not any(m["role"] == "system" for m in messages):
        messages.insert(0, {"role": "system", "content": system_prompt})
    return messages


def prompt_text(prompt: Prompt) -> str:
    """The prompt as plain text: a string unchanged, a conversation as ``role: content``
    lines (what :class:`ScriptedLLM` rules and tokenizers without a chat template see)."""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(f"{m['role']}: {m['content']}" for m in to_messages(prompt))


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


# --------------------------------------------------------------------------------- scripted

Response: TypeAlias = str | Callable[[str], str]


class ScriptedLLM:
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

    def generate(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
    ) -> list[list[str]]:
        """``n`` copies of the scripted completion for each prompt (no truncation)."""
        _check_generate_args(prompts, max_new_tokens, temperature, n)
        out = []
        for prompt in prompts:
            text = self.complete(prompt_text(prompt))
            out.append([text] * n)
        return out


# ----------------------------------------------------------------------------- transformers


class TransformersLLM:
    """A local Hugging Face causal language model.

    Prompts are rendered with the tokenizer's chat template when it has one (and
    ``use_chat_template`` is not False), else as :func:`prompt_text`; they are left-padded
    and generated in batches of ``batch_size``. Only the new tokens are decoded.

    Args:
        model: A local folder (or a hub id, if your machine can download) for
            ``AutoModelForCausalLM``, or a model object.
        tokenizer: A tokenizer object; None loads it from ``model`` (which must then be a
            path or id).
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``...; None picks CUDA when available.
        dtype: A torch dtype for loading from a path (e.g. ``torch.bfloat16``); None keeps the
            checkpoint's.
        system_prompt: Prepended as a system message to prompts that have none.
        batch_size: Prompts per forward pass.
        use_chat_template: True requires a chat template, False never uses one, None uses it
            when the tokenizer has one.

    Raises:
        gymnasium.error.DependencyNotInstalled: without torch/transformers (``gui-gym[llm]``).
        ValueError: for a model object without a tokenizer, or ``use_chat_template=True``
            with a tokenizer that has no template.

    Seeding: sampling draws from torch's global generator; call ``torch.manual_seed`` for
    reproducible samples.
    """

    def __init__(
        self,
        model: str | Path | Any,
        tokenizer: Any | None = None,
        *,
        device: str | None = None,
        dtype: Any | None = None,
        system_prompt: str | None = None,
        batch_size: int = 8,
        use_chat_template: bool | None = None,
    ):
        try:
            import torch
            import transformers
        except ImportError as err:
            import gymnasium as gym

            raise gym.error.DependencyNotInstalled(
                f"TransformersLLM needs torch and transformers ({err}); pip install 'gui-gym[llm]'"
            ) from err
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if isinstance(model, str | Path):
            source = str(model)
            kwargs: dict[str, Any] = {}
            if dtype is not None:
                kwargs["dtype"] = dtype
            model = transformers.AutoModelForCausalLM.from_pretrained(source, **kwargs)
            if tokenizer is None:
                tokenizer = transformers.AutoTokenizer.from_pretrained(source)
        elif tokenizer is None:
            raise ValueError("pass tokenizer= with a model object (or give a model path)")
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.device = device
        self.system_prompt = system_prompt
        self.batch_size = batch_size
        has_template = bool(getattr(tokenizer, "chat_template", None))
        if use_chat_template and not has_template:
            raise ValueError("use_chat_template=True but the tokenizer has no chat_template")
        self.use_chat_template = has_template if use_chat_template is None else use_chat_template
        if tokenizer.pad_token_id is None:
            if tokenizer.eos_token is None:
                raise ValueError("the tokenizer has neither a pad token nor an eos token")
            tokenizer.pad_token = tokenizer.eos_token
        self._torch = torch

    def format_prompt(self, prompt: Prompt) -> str:
        """The exact text fed to the model for ``prompt``: the chat template's rendering, or
        without a template the prompt string itself (``role: content`` lines when there is a
        conversation or a system prompt)."""
        if isinstance(prompt, str) and not self.system_prompt and not self.use_chat_template:
            return prompt
        messages = to_messages(prompt, self.system_prompt)
        if self.use_chat_template:
            return self.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
        return prompt_text(messages)

    def generate(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
    ) -> list[list[str]]:
        """Complete each prompt ``n`` times (greedy when ``temperature == 0``)."""
        _check_generate_args(prompts, max_new_tokens, temperature, n)
        texts = [self.format_prompt(p) for p in prompts]
        out: list[list[str]] = []
        for start in range(0, len(texts), self.batch_size):
            out.extend(
                self._generate_batch(
                    texts[start : start + self.batch_size], max_new_tokens, temperature, n
                )
            )
        return out

    def _generate_batch(
        self, texts: list[str], max_new_tokens: int, temperature: float, n: int
    ) -> list[list[str]]:
        torch = self._torch
        tok = self.tokenizer
        side = tok.padding_side
        tok.padding_side = "left"  # generation continues from the right end of every row
        try:
            # chat templates already contain the special tokens they need
            enc = tok(
                texts,
                return_tensors="pt",
                padding=True,
                add_special_tokens=not self.use_chat_template,
            )
        finally:
            tok.padding_side = side
        enc = {k: v.to(self.device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        sample = temperature > 0.0
        kwargs: dict[str, Any] = {
            "max_new_tokens": max_new_tokens,
            "do_sample": sample,
            "pad_token_id": tok.pad_token_id,
            "num_return_sequences": n if sample else 1,
        }
        if sample:
            kwargs["temperature"] = float(temperature)
            kwargs["top_k"] = 0  # plain temperature sampling over the whole vocabulary
        with torch.inference_mode():
            generated = self.model.generate(**enc, **kwargs)
        new_tokens = generated[:, enc["input_ids"].shape[1] :]
        decoded = tok.batch_decode(new_tokens, skip_special_tokens=True)
        per_prompt = n if sample else 1
        out = []
        for i in range(len(texts)):
            completions = decoded[i * per_prompt : (i + 1) * per_prompt]
            out.append(completions if sample else completions * n)
        return out


# ---------------------------------------------------------------------------- OpenAI-compat


class _DeadlineExceeded(Exception):
    """One request attempt ran past its whole-request deadline (retried like a timeout)."""


class OpenAICompatLLM:
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
        max_concurrency: Requests in flight at once.
        extra_body: Extra JSON fields for every request (e.g. vLLM's ``top_k``).
        max_response_bytes: Largest response body read; None allows 1 MiB plus 64 bytes per
            requested token (``n * max_new_tokens``), far above what a server honouring
            ``max_tokens`` sends.

    Raises:
        gymnasium.error.DependencyNotInstalled: without the ``openai`` package.
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
    ):
        try:
            import openai
        except ImportError as err:
            import gymnasium as gym

            raise gym.error.DependencyNotInstalled(
                f"OpenAICompatLLM needs the openai package ({err}); pip install 'gui-gym[llm]'"
            ) from err
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
        self._openai = openai
        # retries are ours (so they are logged and tested); the client makes one attempt
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
            timeout=timeout,
            max_retries=0,
        )

    def _is_transient(self, err: Exception) -> bool:
        if isinstance(err, _DeadlineExceeded):
            return True
        openai = self._openai
        if isinstance(err, openai.APIConnectionError | openai.APITimeoutError):
            return True
        if isinstance(err, openai.APIStatusError):
            return err.status_code in (408, 409, 429) or err.status_code >= 500
        return False

    def _body_limit(self, max_new_tokens: int, n: int) -> int:
        if self.max_response_bytes is not None:
            return self.max_response_bytes
        return (1 << 20) + 64 * n * max_new_tokens

    def _post(
        self, messages: list[dict[str, str]], max_new_tokens: int, temperature: float, n: int
    ) -> bytes:
        """One attempt: the raw response body, read within the deadline and the size cap.

        The request runs in a daemon thread that the caller waits for at most ``timeout``
        seconds: httpx's own timeout is per read, so a trickling server would otherwise hold
        the caller for as long as it keeps sending.
        """
        limit = self._body_limit(max_new_tokens, n)
        outcome: dict[str, Any] = {}
        abandoned = threading.Event()

        def attempt() -> None:
            try:
                with self._client.chat.completions.with_streaming_response.create(
                    model=self.model,
                    messages=messages,  # type: ignore[arg-type]
                    max_tokens=max_new_tokens,
                    temperature=temperature,
                    n=n,
                    extra_body=self.extra_body or None,
                ) as response:
                    chunks: list[bytes] = []
                    size = 0
                    for chunk in response.iter_bytes():
                        if abandoned.is_set():
                            return
                        size += len(chunk)
                        if size > limit:
                            raise LLMError(
                                f"{self.base_url} sent a response body over {limit} bytes for "
                                f"max_tokens={max_new_tokens}, n={n} (max_response_bytes)"
                            )
                        chunks.append(chunk)
                    outcome["body"] = b"".join(chunks)
            except Exception as err:  # handed to the caller's thread as is
                outcome["error"] = err

        worker = threading.Thread(target=attempt, name="gui-gym-llm-request", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            abandoned.set()
            raise _DeadlineExceeded(
                f"no complete response within the {self.timeout:g}s deadline (timeout)"
            )
        if "error" in outcome:
            raise outcome["error"]
        return outcome["body"]

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

    def _request(
        self, messages: list[dict[str, str]], max_new_tokens: int, temperature: float, n: int
    ) -> list[str]:
        last: Exception | None = None
        for attempt in range(self.max_retries + 1):
            try:
                body = self._post(messages, max_new_tokens, temperature, n)
            except (self._openai.OpenAIError, _DeadlineExceeded) as err:
                if not self._is_transient(err):
                    raise LLMError(
                        f"{self.base_url} rejected the request for model {self.model!r}: {err}"
                    ) from err
                last = err
                if attempt < self.max_retries:
                    wait = min(self.backoff * 2**attempt, self.max_backoff)
                    logger.warning(
                        "%s: %s (attempt %d of %d); retrying in %.2fs",
                        self.base_url,
                        err,
                        attempt + 1,
                        self.max_retries + 1,
                        wait,
                    )
                    time.sleep(wait)
                continue
            return self._texts(body)
        raise LLMError(
            f"{self.base_url} failed {self.max_retries + 1} times for model {self.model!r}; "
            f"last error: {last}"
        ) from last

    def _complete(
        self, prompt: Prompt, max_new_tokens: int, temperature: float, n: int
    ) -> list[str]:
        messages = to_messages(prompt, self.system_prompt)
        out: list[str] = []
        while len(out) < n:  # some servers ignore n and answer once
            out.extend(self._request(messages, max_new_tokens, temperature, n - len(out)))
        return out[:n]

    def generate(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
    ) -> list[list[str]]:
        """``n`` completions per prompt, requested concurrently.

        Raises:
            LLMError: when a request is rejected, or still fails after the retries.
        """
        _check_generate_args(prompts, max_new_tokens, temperature, n)
        prompts = list(prompts)
        if len(prompts) <= 1 or self.max_concurrency == 1:
            return [self._complete(p, max_new_tokens, temperature, n) for p in prompts]
        workers = min(self.max_concurrency, len(prompts))
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            futures = [
                pool.submit(self._complete, p, max_new_tokens, temperature, n) for p in prompts
            ]
            return [f.result() for f in futures]
