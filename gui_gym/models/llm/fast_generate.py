"""Fast batched generation for :class:`gui_gym.models.llm.TransformersLLM`: a static KV cache,
one prefill, and a decode loop whose per-token step is a fixed-shape (optionally compiled)
forward.

Hugging Face ``generate`` spends most of a decode step in Python when the model is small or
the batch is: it rebuilds masks, runs its processor and stopping-criteria objects, and grows
the cache by concatenation, so its per-token time is flat across batch sizes. Here:

* the prompt batch (left-padded, exactly as ``generate`` gets it) is prefilled once into a
  :class:`transformers.StaticCache` whose length is rounded up to a bucket, so a training run
  sees a handful of shapes, not one per prompt width;
* every decode step calls the model on one token per row with the same tensor shapes (the
  attention mask covers the whole cache from the start: slots not yet written are hidden by
  the causal mask), so ``torch.compile`` traces it once per bucket; on CUDA the step is
  compiled with ``mode="reduce-overhead"`` (CUDA graphs);
* the sampling is ``generate``'s own arithmetic: float32 logits, ``argmax`` for greedy,
  ``softmax(logits / T)`` and ``torch.multinomial`` for sampling (no top-k/top-p, as
  :class:`TransformersLLM` asks of ``generate``), a finished row emits the pad id, and every
  sampled id's log-probability (``log_softmax(logits / T)``; T = 1 for greedy) is recorded from
  the logits it was drawn from.

:func:`unsupported_reason` says when a model or its generation config needs something this
loop does not do (repetition penalty, forced tokens, an encoder-decoder, a model that cannot
use a static cache...): :class:`TransformersLLM` then uses ``generate``. When ``torch.compile``
fails (no C++ compiler for the CPU backend, an unsupported op), the step runs eagerly, with
one warning.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

__all__ = [
    "CPU_AUTO_PATH",
    "GENERATION_MODES",
    "StaticGenerator",
    "auto_path",
    "unsupported_reason",
]

#: ``TransformersLLM(generation=...)``: ``"auto"`` (:func:`auto_path`; ``generate`` where the
#: loop does not apply), ``"compiled"``, ``"static"`` (no compile), ``"hf"`` (Hugging Face
#: ``generate``, the reference path).
GENERATION_MODES = ("auto", "compiled", "static", "hf")

#: What ``generation="auto"`` takes on a CPU. Measured with SmolLM2-135M-Instruct in fp32
#: (``benchmarks/bench_smollm2.py``, docs/models.md): the eager static loop 1.06x ``generate``
#: at batch 1 and 1.6x at batch 8; the compiled loop 1.25x at batch 1 after minutes of
#: compiling per shape, which a rollout's changing shapes would pay again and again. So the
#: static loop, uncompiled.
CPU_AUTO_PATH = "static"


def auto_path(device: str) -> str:
    """The path ``generation="auto"`` takes on ``device``: the compiled static loop on CUDA
    (CUDA graphs), :data:`CPU_AUTO_PATH` elsewhere."""
    return "compiled" if str(device).startswith("cuda") else CPU_AUTO_PATH


# generation-config fields whose non-default values change the distribution sampled from;
# the static loop does not apply them, so a config that sets one falls back to ``generate``
_NEUTRAL: dict[str, tuple[Any, ...]] = {
    "repetition_penalty": (None, 1.0),
    "encoder_repetition_penalty": (None, 1.0),
    "no_repeat_ngram_size": (None, 0),
    "encoder_no_repeat_ngram_size": (None, 0),
    "bad_words_ids": (None,),
    "min_length": (None, 0),
    "min_new_tokens": (None, 0),
    "suppress_tokens": (None,),
    "begin_suppress_tokens": (None,),
    "forced_bos_token_id": (None,),
    "forced_eos_token_id": (None,),
    "sequence_bias": (None,),
    "exponential_decay_length_penalty": (None,),
    "typical_p": (None, 1.0),
    "min_p": (None, 0.0),
    "epsilon_cutoff": (None, 0.0),
    "eta_cutoff": (None, 0.0),
    "diversity_penalty": (None, 0.0),
    "num_beams": (None, 1),
    "penalty_alpha": (None,),
    "guidance_scale": (None, 1.0),
    "watermarking_config": (None,),
    "prompt_lookup_num_tokens": (None,),
    "assistant_model": (None,),
}


def _base_model(model: Any) -> Any:
    """The transformers model under a PEFT wrapper (or the model itself)."""
    get = getattr(model, "get_base_model", None)
    return get() if callable(get) else model


def unsupported_reason(model: Any) -> str | None:
    """Why the static-cache loop cannot stand in for ``model.generate`` exactly, or None."""
    base = _base_model(model)
    config = getattr(base, "config", None)
    if config is None:
        return "the model has no config"
    if getattr(config, "is_encoder_decoder", False):
        return "encoder-decoder models are generated with generate()"
    if not getattr(base, "_can_compile_fullgraph", False):
        return f"{type(base).__name__} does not support a static KV cache"
    if getattr(base, "_is_stateful", False):
        return f"{type(base).__name__} is a stateful (recurrent) model"
    gen = getattr(base, "generation_config", None)
    for key, neutral in _NEUTRAL.items():
        value = getattr(gen, key, None)
        if value not in neutral:
            return f"its generation config sets {key}={value!r}"
    return None


def _bucket(value: int, floor: int) -> int:
    """``value`` rounded up to a power of two (at least ``floor``); past 2,048 to a multiple
    of 1,024: few distinct shapes, at most about twice the memory."""
    if value > 2048:
        return -(-value // 1024) * 1024
    size = floor
    while size < value:
        size *= 2
    return size


def _in_inference_mode(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` run under ``torch.inference_mode()`` (the instance's ``_torch``): the
    static cache is made and reset in inference mode too, so its tensors are inference
    tensors."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._torch.inference_mode():
            return method(self, *args, **kwargs)

    return wrapper


class StaticGenerator:
    """The static-cache decode loop for one model (see the module docstring).

    Args:
        model: A transformers causal LM (or a PEFT model around one) on its device.
        compile: Compile the decode step with ``torch.compile`` (CUDA graphs on CUDA).
        backend: ``torch.compile``'s backend (tests use ``"eager"`` to check the step traces
            as one graph without waiting for code generation).
        row_floor / length_floor: The smallest batch and cache-length buckets.
    """

    def __init__(
        self,
        model: Any,
        *,
        compile: bool,
        backend: str = "inductor",
        row_floor: int = 1,
        length_floor: int = 64,
    ):
        import inspect

        import torch

        self._torch = torch
        self.backend = backend
        # transformers 5.24 renamed forward's past_key_values to cache (5.17 has only the old)
        forward = inspect.signature(_base_model(model).forward).parameters
        self._cache_arg = "cache" if "cache" in forward else "past_key_values"
        self._keep = {"logits_to_keep": 1} if "logits_to_keep" in forward else {}
        self.model = model
        self.compile = bool(compile)
        self.row_floor = row_floor
        self.length_floor = length_floor
        self._cache: Any = None
        self._cache_key: tuple[Any, ...] | None = None
        self._compiled: Any = None
        self.compile_failed: str | None = None

    # -- the pieces --------------------------------------------------------------------------

    def _forward(self, ids: Any, positions: Any, mask: Any, cache: Any) -> Any:
        out = self.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            use_cache=True,
            **{self._cache_arg: cache},
        )
        return out.logits[:, -1, :].float()

    def _step(self, ids: Any, positions: Any, mask: Any, cache: Any) -> Any:
        """One decode step: compiled when asked and possible, else eager."""
        if self.compile and self.compile_failed is None:
            torch = self._torch
            if self._compiled is None:
                on_cuda = ids.device.type == "cuda" and self.backend == "inductor"
                self._compiled = torch.compile(
                    self._forward,
                    backend=self.backend,
                    mode="reduce-overhead" if on_cuda else None,
                    fullgraph=True,
                    dynamic=False,
                )
            try:
                # one graph per (rows, cache length) bucket: allow more than dynamo's default 8
                with torch._dynamo.config.patch(recompile_limit=64):
                    logits = self._compiled(ids, positions, mask, cache)
                return logits.clone() if ids.device.type == "cuda" else logits
            except Exception as err:  # a backend that cannot compile: the eager step is exact
                self.compile_failed = f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"
                logger.warning(
                    "torch.compile of the decode step failed (%s); generating without compile",
                    self.compile_failed,
                )
        return self._forward(ids, positions, mask, cache)

    def _cache_for(self, rows: int, length: int, dtype: Any, device: Any) -> Any:
        """A static cache of ``rows x length`` (reused across calls of the same shape)."""
        from transformers import StaticCache

        key = (rows, length, dtype, str(device))
        if self._cache_key != key:
            self._cache = None  # free the old one before allocating
            config = _base_model(self.model).config
            self._cache = StaticCache(config=config, max_cache_len=length)
            self._cache_key = key
        else:
            self._cache.reset()
        return self._cache

    # -- the loop ----------------------------------------------------------------------------

    @_in_inference_mode
    def generate(
        self,
        input_ids: Any,
        attention_mask: Any,
        *,
        max_new_tokens: int,
        temperature: float,
        n: int,
        pad_token_id: int,
        end_ids: set[int],
    ) -> tuple[Any, Any]:
        """Complete a left-padded batch; returns ``(new_tokens, logprobs)``: a ``rows x T``
        id tensor (on the model's device; rows are the prompts expanded ``n`` times when
        sampling, as ``generate(num_return_sequences=n)`` orders them; a finished row holds
        the pad id after its end token) and the sampled ids' log-probs (float32, on CPU).
        """
        torch = self._torch
        sample = temperature > 0.0
        if sample and n > 1:
            input_ids = input_ids.repeat_interleave(n, dim=0)
            attention_mask = attention_mask.repeat_interleave(n, dim=0)
        rows, width = input_ids.shape
        device = input_ids.device
        padded_rows = _bucket(rows, self.row_floor)
        if padded_rows > rows:  # filler rows copy the first; their outputs are dropped
            extra = padded_rows - rows
            input_ids = torch.cat([input_ids, input_ids[:1].expand(extra, -1)], dim=0)
            attention_mask = torch.cat([attention_mask, attention_mask[:1].expand(extra, -1)])
        length = _bucket(width + max_new_tokens, self.length_floor)
        mask = torch.ones(padded_rows, length, dtype=attention_mask.dtype, device=device)
        mask[:, :width] = attention_mask
        # generate()'s positions for a left-padded row: count of real tokens before it
        positions = attention_mask.long().cumsum(-1) - 1
        positions.masked_fill_(attention_mask == 0, 1)
        dtype = next(self.model.parameters()).dtype
        cache = self._cache_for(padded_rows, length, dtype, device)
        ends = torch.tensor(sorted(end_ids), dtype=torch.long, device=device)
        tokens = torch.full(
            (padded_rows, max_new_tokens), pad_token_id, dtype=torch.long, device=device
        )
        logprobs = torch.zeros(padded_rows, max_new_tokens, dtype=torch.float32, device=device)
        done = torch.zeros(padded_rows, dtype=torch.bool, device=device)
        pad = torch.tensor(pad_token_id, dtype=torch.long, device=device)
        scale = float(temperature) if sample else 1.0
        steps = max_new_tokens
        out = self.model(
            input_ids=input_ids,
            attention_mask=mask,
            position_ids=positions,
            use_cache=True,
            **self._keep,
            **{self._cache_arg: cache},
        )
        scores = out.logits[:, -1, :].float()
        del out
        position = positions[:, -1:] + 1
        for t in range(max_new_tokens):
            if sample:
                scaled = scores / scale
                logp = torch.log_softmax(scaled, dim=-1)
                probs = torch.softmax(scaled, dim=-1)
                token = torch.multinomial(probs, num_samples=1).squeeze(1)
            else:
                logp = torch.log_softmax(scores, dim=-1)
                token = torch.argmax(scores, dim=-1)
            token = torch.where(done, pad, token)
            tokens[:, t] = token
            logprobs[:, t] = logp.gather(-1, token[:, None]).squeeze(-1)
            done = done | torch.isin(token, ends)
            if t + 1 == max_new_tokens:
                break
            # a device sync every 8 steps, not every step, to stop when all rows ended
            if t % 8 == 7 and bool(done[:rows].all()):
                steps = t + 1
                break
            scores = self._step(token[:, None], position, mask, cache)
            position = position + 1
        return tokens[:rows, :steps], logprobs[:rows, :steps].cpu()
