"""The policy being trained: :class:`Policy` holds a Hugging Face causal LM loaded from a
folder (safetensors only), its tokenizer and its reference model for KL (the LoRA adapter
switched off under LoRA, else a frozen copy); :func:`apply_lora` wraps a model in peft
adapters; the weights' dtype and :func:`autocast_context` give bf16 where the device computes
it natively (a CUDA GPU, or a CPU with AMX-BF16/AVX512-BF16:
:mod:`gui_gym.models.llm.precision`).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from gui_gym.core.progress import library_bars_follow_the_rule
from gui_gym.train.config import TrainConfig, require_torch, resolve_device

__all__ = ["Policy", "apply_lora", "autocast_context", "uses_autocast"]


class Policy:
    """A causal LM being trained, its tokenizer and its reference for KL.

    Args:
        model: A ``transformers`` causal LM (or a peft model around one).
        tokenizer: Its tokenizer (needs a pad or eos token).
        device: Where the model lives.
        reference: A frozen reference model; None means "the model with its LoRA adapter
            switched off" when ``model`` is a peft model, else no reference.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        device: str,
        reference: Any = None,
        processor: Any = None,
    ):
        self.model = model
        self.tokenizer = tokenizer
        # a vision-language policy's processor (image processor + tokenizer), else None
        self.processor = processor
        self.device = device
        self.reference = reference
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else None
        if pad is None:
            pad = tokenizer.eos_token_id
        if pad is None:
            raise ValueError("the tokenizer has neither a pad nor an eos token to pad with")
        self.pad_id = int(pad)
        # RL on LLMs runs without dropout (as verl and OpenRLHF do): the sampling policy
        # and the scored policy must be the same function
        self.model.eval()

    @property
    def is_lora(self) -> bool:
        return hasattr(self.model, "disable_adapter")

    @classmethod
    def load(
        cls, config: TrainConfig, *, need_reference: bool, device: str | None = None
    ) -> Policy:
        """Load ``config.model`` (safetensors only), wrap it in LoRA when asked, and make the
        reference model when ``need_reference``; on ``device`` when given (a data-parallel
        process's own GPU), else ``config.device``.

        Raises:
            FileNotFoundError: when the folder or its safetensors weights are missing.
        """
        torch = require_torch()
        import transformers

        from gui_gym.models.llm.vision_inputs import load_processor

        path = Path(config.model)
        if not path.is_dir():
            raise FileNotFoundError(f"no model folder at {path}")
        if not any(path.glob("*.safetensors")):
            raise FileNotFoundError(
                f"{path} has no .safetensors weights (pickled checkpoints are not loaded)"
            )
        device = device or resolve_device(config.device)
        dtype = _dtype(config.dtype, device, config.lora)
        processor = None
        if config.screenshot:
            if not is_vision_folder(path):
                raise ValueError(
                    f"--screenshot needs a vision-language model folder (with "
                    f"preprocessor_config.json); {path} is a text-only model"
                )
            processor = load_processor(path)
            tokenizer = processor.tokenizer
            with library_bars_follow_the_rule():
                model = transformers.AutoModelForImageTextToText.from_pretrained(
                    path, use_safetensors=True, dtype=dtype
                ).to(device)
        else:
            tokenizer = transformers.AutoTokenizer.from_pretrained(path)
            with library_bars_follow_the_rule():  # no "Loading weights" bar in a log
                model = transformers.AutoModelForCausalLM.from_pretrained(
                    path, use_safetensors=True, dtype=dtype
                ).to(device)
        reference = None
        if config.lora:
            model = apply_lora(model, config)
        elif need_reference:
            reference = copy.deepcopy(model).eval()
            for p in reference.parameters():
                p.requires_grad_(False)
        del torch
        return cls(model, tokenizer, device=device, reference=reference, processor=processor)

    def trainable_named_parameters(self) -> list[tuple[str, Any]]:
        return [(n, p) for n, p in self.model.named_parameters() if p.requires_grad]

    def reference_context(self) -> Any:
        """A context in which :attr:`model` computes the reference policy (LoRA off), or
        None when a separate reference model exists or there is none."""
        if self.reference is None and self.is_lora:
            return self.model.disable_adapter()
        return None

    def save_pretrained(self, folder: Path) -> None:
        """Write the policy as a plain Hugging Face folder (LoRA merged in), safetensors."""
        model = self.model
        if self.is_lora:
            model = copy.deepcopy(model).merge_and_unload()
        with library_bars_follow_the_rule():  # no "Writing model shards" bar in a log
            model.save_pretrained(folder, safe_serialization=True)
        (self.processor or self.tokenizer).save_pretrained(folder)


def is_vision_folder(path: Path) -> bool:
    """Whether a model folder holds a processor (a vision-language model)."""
    return any(
        (Path(path) / n).is_file() for n in ("preprocessor_config.json", "processor_config.json")
    )


def _dtype(name: str, device: str, lora: bool = False) -> Any:
    """The dtype the weights load in (see ``TrainConfig.dtype``): under ``auto`` a LoRA
    run's frozen base is bf16 where the device computes bf16 natively, a full fine-tune's
    weights fp32 (its forward passes autocast instead, :func:`autocast_context`)."""
    from gui_gym.models.llm.precision import resolve_dtype, torch_dtype

    require_torch()
    resolved = resolve_dtype(name, device)
    if name == "auto" and not lora:
        resolved = "float32"
    return torch_dtype(resolved)


def uses_autocast(config: TrainConfig, device: str) -> bool:
    """Whether the policy's forward passes (rollout generation, scoring, the loss) run under
    bf16 autocast: a full fine-tune (fp32 master weights) under ``dtype="auto"`` on a device
    that computes bf16 natively."""
    from gui_gym.models.llm.precision import bf16_available

    return config.dtype == "auto" and not config.lora and bf16_available(device)


def autocast_context(config: TrainConfig, device: str) -> Any:
    """bf16 autocast for the forward passes of an fp32 model where :func:`uses_autocast`
    says so; a no-op context elsewhere. The rollout's sampler runs under the same one
    (``TransformersLLM(autocast=...)``), so sampled and scored log-probs share a precision."""
    from gui_gym.models.llm.precision import autocast

    return autocast(device, uses_autocast(config, device))


def apply_lora(model: Any, config: TrainConfig) -> Any:
    """Wrap ``model`` in peft LoRA adapters (only the adapters train)."""
    import peft

    target: str | list[str] = config.lora_target_modules
    if target != "all-linear":
        target = [t.strip() for t in target.split(",") if t.strip()]
    lora = peft.LoraConfig(
        r=config.lora_r,
        lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout,
        target_modules=target,
        task_type="CAUSAL_LM",
    )
    return peft.get_peft_model(model, lora)
