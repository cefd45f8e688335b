"""TransformersLLM: a local Hugging Face causal LM or vision-language model, batched, on CPU
or CUDA, with token-exact generation (prompt ids, sampled ids and their log-probs).

Text-only batches go through the static-KV-cache loop of
:mod:`~gui_gym.models.llm.fast_generate` where it applies; vision-language batches through
the processor, with the screenshots kept in an
:class:`~gui_gym.models.llm.vision_inputs.ImageStore`.
torch and transformers are imported when a model is built (``pip install 'gui-gym[llm]'``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gui_gym.core.progress import library_bars_follow_the_rule
from gui_gym.models.llm.base import Generation, LLMBase
from gui_gym.models.llm.chat_messages import Prompt, prompt_images, prompt_text, to_messages
from gui_gym.models.llm.vision_inputs import (
    ImageStore,
    VisionRef,
    placeholder_token_ids,
    processor_settings,
)

__all__ = ["TransformersLLM"]


class TransformersLLM(LLMBase):
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
        model: A local folder, a registry name (``"smollm2-135m-instruct"``) or a ``.gguf``
            file (:func:`~gui_gym.models.llm.local.resolve_model`), or a hub id if your
            machine can download, for
            ``AutoModelForCausalLM`` (or ``AutoModelForImageTextToText`` when the folder has
            a processor), or a model object.
        tokenizer: A tokenizer object; None loads it from ``model`` (which must then be a
            path or id), or takes the processor's.
        processor: A processor object for a vision-language model object.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``...; None picks CUDA when available.
        dtype: The weights' dtype when loading from a path: ``"auto"`` (default: bf16 where
            the device computes it natively, :mod:`~gui_gym.models.llm.precision`; else fp32),
            ``"float32"``, ``"bfloat16"``, a torch dtype, or None (the checkpoint's).
        autocast: Run generation (prefill and decode) under bf16 autocast: for a model object
            with fp32 weights that a trainer scores under the same autocast, so the sampler's
            log-probs come from the precision the trainer's do.
        system_prompt: Prepended as a system message to prompts that have none.
        batch_size: Prompts per forward pass.
        use_chat_template: True requires a chat template, False never uses one, None uses it
            when the tokenizer has one.
        generation: How text-only batches are generated (:mod:`gui_gym.models.llm.fast_generate`):
            ``"auto"`` (default: the static KV cache with a ``torch.compile``'d decode step on
            CUDA, on CPU the path measured fastest, :func:`~gui_gym.models.llm.fast_generate.
            auto_path`), ``"compiled"``, ``"static"``, or
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
        dtype: Any | None = "auto",
        autocast: bool = False,
        system_prompt: str | None = None,
        batch_size: int = 8,
        use_chat_template: bool | None = None,
        processor: Any | None = None,
        generation: str = "auto",
    ):
        from gui_gym.models.llm.fast_generate import GENERATION_MODES

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
            from gui_gym.models.llm.local import MODELS, resolve_model

            # a registry name or a .gguf file: its converted folder (gui_gym.models.llm.local)
            named = str(model) in MODELS or str(model).lower().endswith(".gguf")
            source = str(resolve_model(model) if named else model)
            kwargs: dict[str, Any] = {}
            if isinstance(dtype, str):
                from gui_gym.models.llm.precision import resolve_dtype, torch_dtype

                dtype = torch_dtype(resolve_dtype(dtype, device))
            if dtype is not None:
                kwargs["dtype"] = dtype
            folder = Path(source)
            from gui_gym.models.llm.vision_inputs import load_processor

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
        self.autocast = bool(autocast)
        self.generation = generation
        self._static: Any = None  # the StaticGenerator, built on first use
        # one generation at a time: a model shared by envs stepped on threads (a judge or
        # generator inside a reward wrapper) must not interleave calls on the static loop's
        # KV cache or the image store
        self._lock = threading.RLock()

    def generation_path(self) -> str:
        """The path text-only batches take now: ``"compiled"``, ``"static"`` or ``"hf"``
        (``generation="auto"`` resolved; ``"hf"`` where the static loop does not apply)."""
        from gui_gym.models.llm.fast_generate import auto_path, unsupported_reason

        if self.generation == "hf" or self.processor is not None:
            return "hf"
        if unsupported_reason(self.model) is not None:
            return "hf"
        if self.generation == "auto":
            return auto_path(str(self.device))  # measured per device (fast_generate)
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

    def _checked_generations(
        self, prompts: Sequence[Prompt], max_new_tokens: int, temperature: float, n: int
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
        texts = [self.format_prompt(p) for p in prompts]
        images = [prompt_images(p) for p in prompts]
        out: list[list[Generation]] = []
        from gui_gym.models.llm.precision import autocast as bf16_autocast

        with self._lock, bf16_autocast(self.device, self.autocast):
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
                from gui_gym.models.llm.fast_generate import StaticGenerator

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
