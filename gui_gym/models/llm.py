"""Text generation behind one small protocol, with three interchangeable backends.

Every LLM-backed part of gui-gym (ADMIRE's milestone generator and judge, PRM judges, ProRe's
reasoner and evaluator, LLM agents) talks to an :class:`LLM`::

    llm.generate(prompts, max_new_tokens=256, temperature=0.0, n=1) -> list[list[str]]

One list of ``n`` completions per prompt, in prompt order. A prompt is either a string (sent
as one user message) or a list of chat messages (``{"role": ..., "content": ...}``); the
format and its conversions are in :mod:`gui_gym.models.chat_messages`.

* :class:`TransformersLLM`: a local Hugging Face causal LM (a folder, or a model and
  tokenizer object you built), batched, on CPU or CUDA; the tokenizer's chat template is used
  when it has one.
* :class:`OpenAICompatLLM`: any server speaking the OpenAI chat-completions API (vLLM, SGLang,
  llama.cpp, OpenAI itself), with retries and backoff on transient failures.
* :class:`ScriptedLLM`: deterministic answers from rules or a function, for tests and demos.

``temperature=0`` means greedy decoding everywhere; ``n > 1`` then returns ``n`` copies of
the same completion from the local backends (a server may or may not vary them).

Token-exact generation (what trainers need): ``generate_with_tokens`` (and, for servers,
the coroutine ``agenerate_with_tokens``) takes the same arguments and returns one list of
:class:`Generation` per prompt: the text plus, when the backend can give them, the prompt's
token ids, the sampled completion ids and each completion token's log-probability under the
distribution it was sampled from (``log_softmax(logits / temperature)``; temperature 1 for
greedy decoding). :class:`TransformersLLM` always gives all three; :class:`OpenAICompatLLM`
gives them when the server returns them (vLLM does with ``request_tokens=True``);
:class:`ScriptedLLM` gives text only.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeAlias, TypeVar, cast, runtime_checkable

from gui_gym.core.progress import library_bars_follow_the_rule
from gui_gym.core.untrusted_text import load_json, without_lone_surrogates
from gui_gym.models.chat_messages import (  # the prompt format, re-exported from here
    ChatMessage,
    Prompt,
    content_text,
    openai_messages,
    prompt_images,
    prompt_text,
    to_messages,
)
from gui_gym.models.vision_inputs import (
    ImageStore,
    VisionRef,
    placeholder_token_ids,
    processor_settings,
)

__all__ = [
    "LLM",
    "ChatMessage",
    "Generation",
    "LLMError",
    "ModelUnavailable",
    "OpenAICompatLLM",
    "ParsedReply",
    "Prompt",
    "ScriptedLLM",
    "TransformersLLM",
    "ask_until_parsed",
    "content_text",
    "openai_messages",
    "prompt_images",
    "prompt_text",
    "to_messages",
]

logger = logging.getLogger(__name__)


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
            :meth:`gui_gym.models.vision_inputs.VisionRef.to_dict` gives them: with
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

    def generate_with_tokens(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
    ) -> list[list[Generation]]:
        """As :meth:`generate`, as :class:`Generation` records with text only (no tokens)."""
        texts = self.generate(prompts, max_new_tokens, temperature, n)
        return [[Generation(t, finish_reason="stop") for t in row] for row in texts]


# ----------------------------------------------------------------------------- transformers


class TransformersLLM:
    """A local Hugging Face causal language model, or a vision-language model.

    Prompts are rendered with the tokenizer's chat template when it has one (and
    ``use_chat_template`` is not False), else as :func:`prompt_text`; they are left-padded
    and generated in batches of ``batch_size``. Only the new tokens are decoded.

    Vision-language models: a folder with a processor (``preprocessor_config.json`` or
    ``processor_config.json``) is loaded with ``AutoProcessor`` and
    ``AutoModelForImageTextToText`` (or pass ``processor=`` with a model object). Prompts
    then may hold image parts (see :func:`to_messages`); the processor's chat template
    renders them and the processor turns text and images into the model's inputs (image
    tokens, pixel values). ``prompt_ids`` of a :class:`Generation` are then the ids the
    processor made, image tokens included.

    Args:
        model: A local folder (or a hub id, if your machine can download) for
            ``AutoModelForCausalLM`` (or ``AutoModelForImageTextToText`` when the folder has
            a processor), or a model object.
        tokenizer: A tokenizer object; None loads it from ``model`` (which must then be a
            path or id), or takes the processor's.
        processor: A processor object for a vision-language model object.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``...; None picks CUDA when available.
        dtype: A torch dtype for loading from a path (e.g. ``torch.bfloat16``); None keeps the
            checkpoint's.
        system_prompt: Prepended as a system message to prompts that have none.
        batch_size: Prompts per forward pass.
        use_chat_template: True requires a chat template, False never uses one, None uses it
            when the tokenizer has one.
        generation: How text-only batches are generated (:mod:`gui_gym.models.fast_generate`):
            ``"auto"`` (default: the static KV cache with a ``torch.compile``'d decode step on
            CUDA, ``generate`` on CPU), ``"compiled"``, ``"static"``, or
            ``"hf"`` (Hugging Face ``generate``). All give the same tokens at temperature 0
            and the sampled ids' log-probs; a model or generation config the static loop
            cannot reproduce exactly (repetition penalty, forced tokens, encoder-decoder, a
            model without static-cache support) and vision-language batches use ``generate``.

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
        processor: Any | None = None,
        generation: str = "auto",
    ):
        from gui_gym.models.fast_generate import GENERATION_MODES

        if generation not in GENERATION_MODES:
            raise ValueError(
                f"generation must be one of {', '.join(GENERATION_MODES)}, got {generation!r}"
            )
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
            folder = Path(source)
            from gui_gym.models.vision_inputs import load_processor

            with library_bars_follow_the_rule():  # no "Loading weights" bar in a log
                if processor is None and any(
                    (folder / name).is_file()
                    for name in ("preprocessor_config.json", "processor_config.json")
                ):
                    processor = load_processor(source)
                    model = transformers.AutoModelForImageTextToText.from_pretrained(
                        source, **kwargs
                    )
                else:
                    model = transformers.AutoModelForCausalLM.from_pretrained(source, **kwargs)
            if tokenizer is None:
                tokenizer = getattr(processor, "tokenizer", None)
            if tokenizer is None:
                tokenizer = transformers.AutoTokenizer.from_pretrained(source)
        elif tokenizer is None:
            tokenizer = getattr(processor, "tokenizer", None)
            if tokenizer is None:
                raise ValueError("pass tokenizer= with a model object (or give a model path)")
        self.processor = processor
        # screenshots the prompts showed, once each, for token-exact scoring of VLM samples
        self.image_store = ImageStore()
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.device = device
        self.system_prompt = system_prompt
        self.batch_size = batch_size
        has_template = bool(
            getattr(processor, "chat_template", None) or getattr(tokenizer, "chat_template", None)
        )
        if use_chat_template and not has_template:
            raise ValueError("use_chat_template=True but the tokenizer has no chat_template")
        self.use_chat_template = has_template if use_chat_template is None else use_chat_template
        if tokenizer.pad_token_id is None:
            if tokenizer.eos_token is None:
                raise ValueError("the tokenizer has neither a pad token nor an eos token")
            tokenizer.pad_token = tokenizer.eos_token
        self._torch = torch
        self.generation = generation
        self._static: Any = None  # the StaticGenerator, built on first use
        # one generation at a time: a model shared by envs stepped on threads (a judge or
        # generator inside a reward wrapper) must not interleave calls on the static loop's
        # KV cache or the image store
        self._lock = threading.RLock()

    def generation_path(self) -> str:
        """The path text-only batches take now: ``"compiled"``, ``"static"`` or ``"hf"``
        (``generation="auto"`` resolved; ``"hf"`` where the static loop does not apply)."""
        from gui_gym.models.fast_generate import unsupported_reason

        if self.generation == "hf" or self.processor is not None:
            return "hf"
        if unsupported_reason(self.model) is not None:
            return "hf"
        if self.generation == "auto":
            # on CPU the eager static loop measured no steady gain over generate (docs/generation.md)
            return "compiled" if str(self.device).startswith("cuda") else "hf"
        return self.generation

    def format_prompt(self, prompt: Prompt) -> str:
        """The exact text fed to the model for ``prompt``: the chat template's rendering, or
        without a template the prompt string itself (``role: content`` lines when there is a
        conversation or a system prompt)."""
        if isinstance(prompt, str) and not self.system_prompt and not self.use_chat_template:
            return prompt
        messages = to_messages(prompt, self.system_prompt)
        if self.processor is not None and self.use_chat_template:
            # the template sees where images go, not the pixels (the processor gets those)
            shown = [
                {
                    "role": m["role"],
                    "content": m["content"]
                    if isinstance(m["content"], str)
                    else [p if p["type"] == "text" else {"type": "image"} for p in m["content"]],
                }
                for m in messages
            ]
            return self.processor.apply_chat_template(
                shown, tokenize=False, add_generation_prompt=True
            )
        if prompt_images(messages):
            if self.processor is not None:  # a VLM whose template was turned off
                raise ValueError(
                    "this prompt has images but use_chat_template=False: a vision-language "
                    "model places its image tokens through its chat template; keep it on"
                )
            raise ValueError(
                "this prompt has images but the model has no processor: use a vision-language "
                "model folder (with preprocessor_config.json), or an agent without screenshots"
            )
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
        rows = self.generate_with_tokens(prompts, max_new_tokens, temperature, n)
        return [[g.text for g in row] for row in rows]

    def generate_with_tokens(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
    ) -> list[list[Generation]]:
        """Complete each prompt ``n`` times and return the exact tokens with the text.

        Each :class:`Generation` holds the prompt's ids (its row of the left-padded batch
        without the padding), the sampled ids up to and including the first end token, and
        each sampled id's log-probability under the distribution it was drawn from:
        ``log_softmax(logits / temperature)`` with no top-k/top-p truncation (the model's
        generation-config defaults for those are overridden), ``log_softmax(logits)`` for
        greedy decoding. The log-probs are read from the logits ``generate`` computed while
        sampling, so they are the behaviour policy's, not a second forward pass.
        """
        _check_generate_args(prompts, max_new_tokens, temperature, n)
        texts = [self.format_prompt(p) for p in prompts]
        images = [prompt_images(p) for p in prompts]
        out: list[list[Generation]] = []
        with self._lock:
            for start in range(0, len(texts), self.batch_size):
                end = start + self.batch_size
                if self.processor is not None:
                    out.extend(
                        self._generate_vision_batch(
                            texts[start:end], images[start:end], max_new_tokens, temperature, n
                        )
                    )
                else:
                    out.extend(
                        self._generate_batch(texts[start:end], max_new_tokens, temperature, n)
                    )
        return out

    def encode_prompts(self, prompts: Sequence[Prompt]) -> list[Generation]:
        """Each prompt's ids exactly as :meth:`generate_with_tokens` would feed them (its row
        of the batch without padding), with the vision record for a VLM, and no completion:
        what a critic reads at a state the policy did not act in (PPO's bootstrap value of
        the last state of an episode cut by a step limit)."""
        if not prompts:
            return []
        texts = [self.format_prompt(p) for p in prompts]
        out: list[Generation] = []
        for text, prompt in zip(texts, prompts, strict=True):
            vision = None
            if self.processor is not None:
                import numpy as np
                from PIL import Image

                shown = prompt_images(prompt)
                flat = [
                    i if isinstance(i, Image.Image) else Image.fromarray(np.asarray(i, np.uint8))
                    for i in shown
                ]
                enc = self.processor(text=[text], images=flat or None, return_tensors="pt")
                settings = self.image_store.put_settings(processor_settings(self.processor))
                vision = VisionRef(tuple(self.image_store.put(i) for i in shown), settings)
                vision = vision.to_dict()
            else:
                enc = self.tokenizer(
                    [text], return_tensors="pt", add_special_tokens=not self.use_chat_template
                )
            ids = enc["input_ids"][0][enc["attention_mask"][0].bool()].tolist()
            out.append(
                Generation(text="", prompt_ids=ids, completion_ids=[], logprobs=[], vision=vision)
            )
        return out

    def _generate_vision_batch(
        self,
        texts: list[str],
        images: list[list[Any]],
        max_new_tokens: int,
        temperature: float,
        n: int,
    ) -> list[list[Generation]]:
        """A batch through the processor: the images of every prompt, in order, go with the
        rendered texts (whose image placeholders the processor expands)."""
        import numpy as np
        from PIL import Image

        tok = self.tokenizer
        flat = [
            image
            if isinstance(image, Image.Image)
            else Image.fromarray(np.asarray(image, np.uint8))
            for row in images
            for image in row
        ]
        side = tok.padding_side
        tok.padding_side = "left"
        try:
            enc = self.processor(text=texts, images=flat or None, return_tensors="pt", padding=True)
        finally:
            tok.padding_side = side
        enc = {k: v.to(self.device) if hasattr(v, "to") else v for k, v in enc.items()}
        self._check_context(enc["input_ids"].shape[1], max_new_tokens)
        rows = self._run_generate(enc, len(texts), max_new_tokens, temperature, n)
        settings = self.image_store.put_settings(processor_settings(self.processor))
        for row, shown in zip(rows, images):
            ref = VisionRef(tuple(self.image_store.put(i) for i in shown), settings).to_dict()
            for generation in row:
                generation.vision = ref
        return rows

    def _end_ids(self) -> set[int]:
        """Token ids that end a completion: the generation config's eos ids (one or a list)
        and the tokenizer's eos."""
        ids: set[int] = set()
        config = getattr(self.model, "generation_config", None)
        eos = getattr(config, "eos_token_id", None)
        if isinstance(eos, int):
            ids.add(eos)
        elif isinstance(eos, list | tuple):
            ids.update(int(e) for e in eos)
        if self.tokenizer.eos_token_id is not None:
            ids.add(int(self.tokenizer.eos_token_id))
        return ids

    def _generate_batch(
        self, texts: list[str], max_new_tokens: int, temperature: float, n: int
    ) -> list[list[Generation]]:
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
        self._check_context(enc["input_ids"].shape[1], max_new_tokens)
        return self._run_generate(enc, len(texts), max_new_tokens, temperature, n)

    def _check_context(self, prompt_tokens: int, max_new_tokens: int) -> None:
        """Raise a clear error before a prompt overflows the model's context (an embedding
        index error deep inside ``generate`` otherwise)."""
        config = getattr(self.model, "config", None)
        limit = None
        # a vision-language model keeps its context length in the text config
        for source in (config, getattr(config, "text_config", None)):
            for key in ("max_position_embeddings", "n_positions"):
                value = getattr(source, key, None)
                if isinstance(value, int) and limit is None:
                    limit = value
        if limit is not None and prompt_tokens + max_new_tokens > limit:
            raise ValueError(
                f"a prompt of {prompt_tokens} tokens plus max_new_tokens={max_new_tokens} "
                f"exceeds the model's context of {limit} tokens; shorten the prompt (fewer "
                "history turns) or use a model with a longer context"
            )

    def _run_generate(
        self,
        enc: dict[str, Any],
        prompts: int,
        max_new_tokens: int,
        temperature: float,
        n: int,
    ) -> list[list[Generation]]:
        """``model.generate`` on an encoded, left-padded batch, with the sampled ids' log-probs
        recorded on the way (see :class:`_SampledLogprobs`)."""
        torch = self._torch
        tok = self.tokenizer
        sample = temperature > 0.0
        path = self.generation_path()
        if path != "hf":
            if self._static is None or self._static.compile != (path == "compiled"):
                from gui_gym.models.fast_generate import StaticGenerator

                self._static = StaticGenerator(self.model, compile=path == "compiled")
            new_tokens, logprobs = self._static.generate(
                enc["input_ids"],
                enc["attention_mask"],
                max_new_tokens=max_new_tokens,
                temperature=temperature,
                n=n,
                pad_token_id=tok.pad_token_id,
                end_ids=self._end_ids(),
            )
            return self._generations(enc, prompts, new_tokens, logprobs, sample, n)
        recorder = _SampledLogprobs(torch, temperature if sample else 1.0)
        kwargs: dict[str, Any] = {
            "max_new_tokens": max_new_tokens,
            "do_sample": sample,
            "pad_token_id": tok.pad_token_id,
            "num_return_sequences": n if sample else 1,
            "logits_processor": [recorder],
        }
        if self.processor is not None:
            # an image placeholder is not an action token: sampled, it would be read as an
            # image slot when the step is scored (no pixels for it); the policy's distribution
            # excludes it here and in scoring (gui_gym.train.losses.score_completions)
            kwargs["suppress_tokens"] = placeholder_token_ids(self.processor)
        if sample:
            # plain temperature sampling over the whole vocabulary: the behaviour policy is
            # exactly softmax(logits / T), which a trainer can recompute
            kwargs.update(temperature=float(temperature), top_k=0, top_p=1.0)
        with torch.inference_mode():
            generated = self.model.generate(**enc, **kwargs)
        width = enc["input_ids"].shape[1]
        new_tokens = generated[:, width:]
        logprobs = recorder.finish(new_tokens)
        return self._generations(enc, prompts, new_tokens, logprobs, sample, n)

    def _generations(
        self,
        enc: dict[str, Any],
        prompts: int,
        new_tokens: Any,
        logprobs: Any,
        sample: bool,
        n: int,
    ) -> list[list[Generation]]:
        """One row of :class:`Generation` per prompt from the sampled ids (cut after the first
        end token) and their log-probs."""
        tok = self.tokenizer
        end_ids = self._end_ids()
        per_prompt = n if sample else 1
        mask = enc["attention_mask"].bool()
        out: list[list[Generation]] = []
        for i in range(prompts):
            prompt_ids = enc["input_ids"][i][mask[i]].tolist()
            row: list[Generation] = []
            for r in range(i * per_prompt, (i + 1) * per_prompt):
                ids = new_tokens[r].tolist()
                finish = "length"
                for k, token in enumerate(ids):
                    if token in end_ids:
                        ids = ids[: k + 1]
                        finish = "stop"
                        break
                row.append(
                    Generation(
                        text=tok.decode(ids, skip_special_tokens=True),
                        prompt_ids=list(prompt_ids),
                        completion_ids=ids,
                        logprobs=logprobs[r, : len(ids)].tolist(),
                        finish_reason=finish,
                    )
                )
            out.append(row if sample else row * n)
        return out


class _SampledLogprobs:
    """A logits processor that keeps the log-probability of each sampled token without
    holding every step's logits.

    ``generate`` runs custom processors after its own processors (repetition penalty and
    the like) and before its warpers (temperature, top-k, top-p), so this one divides by the
    temperature itself; top-k and top-p are switched off by the caller, so the result is
    the distribution sampled from. At step ``t`` it sees the ids so far, whose last column
    is the token sampled at step ``t - 1``: it gathers that token's log-prob from the
    previous step's log-softmax (one ``batch x vocab`` array kept). :meth:`finish` gathers
    the last step's from the returned ids.
    """

    def __init__(self, torch: Any, temperature: float):
        self._torch = torch
        self._temperature = float(temperature)
        self._previous: Any = None
        self._columns: list[Any] = []

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self._previous is not None:
            token = input_ids[:, -1:]
            self._columns.append(self._previous.gather(-1, token).squeeze(-1))
        self._previous = self._torch.log_softmax(scores.float() / self._temperature, dim=-1)
        return scores

    def finish(self, new_tokens: Any) -> Any:
        """A ``rows x new_tokens`` float tensor of the sampled tokens' log-probs (on CPU)."""
        torch = self._torch
        columns = list(self._columns)
        if self._previous is not None and len(columns) < new_tokens.shape[1]:
            token = new_tokens[:, len(columns) : len(columns) + 1]
            columns.append(self._previous.gather(-1, token).squeeze(-1))
        self._previous = None
        if not columns:
            return torch.zeros(new_tokens.shape, dtype=torch.float32)
        return torch.stack(columns, dim=1).cpu()


# ---------------------------------------------------------------------------- OpenAI-compat


_BLOCKING_CLIENT: contextvars.ContextVar[tuple[Any, Any, asyncio.Semaphore] | None] = (
    contextvars.ContextVar("gui_gym_blocking_llm_client", default=None)
)
"""(llm, client, semaphore) of the blocking call running in this context."""


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
        max_concurrency: Requests in flight at once (per event loop for the async methods).
        extra_body: Extra JSON fields for every request (e.g. vLLM's ``top_k``).
        max_response_bytes: Largest response body read; None allows 1 MiB plus 64 bytes per
            requested token (``n * max_new_tokens``), far above what a server honouring
            ``max_tokens`` sends.
        request_tokens: Ask the server for token ids and log-probs (``logprobs: true`` and
            vLLM's ``return_token_ids: true``) so ``agenerate_with_tokens`` can fill them;
            a server that ignores the request gives text only.

    One client: every request, blocking or not, goes through the small asyncio HTTP client
    of :mod:`gui_gym.models.chat_http` (the one the PRM, judges, progress models and
    milestone generators use too), with its one retry policy
    (:func:`~gui_gym.models.chat_http.post_retrying`) and one whole-request deadline; the
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
        from gui_gym.models.chat_http import AsyncJSONClient

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

    def generate(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
    ) -> list[list[str]]:
        """``n`` completions per prompt, all requested together (bounded by
        ``max_concurrency``); the blocking form of :meth:`agenerate`.

        Raises:
            LLMError: when a request is rejected, or still fails after the retries
                (:class:`ModelUnavailable`), or the answer is not a chat completion.
        """
        rows = self.generate_with_tokens(prompts, max_new_tokens, temperature, n)
        return [[g.text for g in row] for row in rows]

    # ------------------------------------------------------------------------------ async

    def _async_client(self) -> tuple[Any, asyncio.Semaphore]:
        """The async HTTP client and semaphore of the running event loop (connections and an
        asyncio semaphore belong to one loop, so a new loop gets new ones)."""
        from gui_gym.models.chat_http import AsyncJSONClient

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
        from gui_gym.models.chat_http import ResponseTooLarge, TransportError, post_retrying

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

    def generate_with_tokens(
        self,
        prompts: Sequence[Prompt],
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
    ) -> list[list[Generation]]:
        """The blocking form of :meth:`agenerate_with_tokens`: runs it to its end on a fresh
        event loop (:func:`~gui_gym.models.chat_http.run_blocking`; from any thread, and from
        inside a running loop on a helper thread) and closes that loop's connections."""
        from gui_gym.models.chat_http import run_blocking

        async def run() -> list[list[Generation]]:
            from gui_gym.models.chat_http import AsyncJSONClient

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
