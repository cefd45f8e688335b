"""Token-exact multimodal samples: what a vision-language policy saw, kept so that scoring
rebuilds exactly the sampler's inputs.

A VLM step's prompt ids hold the image placeholder tokens the processor expanded (16 per
image for a 32x32 LLaVA, ``grid_t*grid_h*grid_w / merge**2`` for Qwen2-VL). Scoring must feed
the same ids with the same pixels; re-tokenising the prompt, or re-processing a screenshot at
another size, changes how many placeholder tokens the text needs and gives the image-token /
feature mismatch users report in verl #4050 and TRL #5663. Here that mismatch cannot reach
the model:

* :class:`ImageStore` keeps each distinct screenshot once, under the SHA-256 of its shape,
  dtype and bytes. A step that shows the current screenshot and ``k`` earlier ones holds
  ``k + 1`` keys, not ``k + 1`` copies: a history costs one new image per step.
* :class:`VisionRef` is what a step records: the image keys in prompt order and the key of the
  processor settings (image processor config, image token, patch size...), also stored once.
* :func:`rebuild_inputs` turns stored ids + a ref back into the model's pixel inputs with the
  processor's image processor, and refuses (:class:`VisionMismatch`) when the processor's
  settings differ from the sampler's, an image is missing, or the number of image placeholder
  tokens in the stored ids differs from what the rebuilt pixels produce (counted by running the
  processor itself on a prompt of bare image tokens, so any architecture's expansion rule is
  the processor's own).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "ImageStore",
    "VisionMismatch",
    "VisionRef",
    "expected_image_tokens",
    "image_key",
    "image_only_processor",
    "image_token_id",
    "load_processor",
    "pixel_inputs",
    "placeholder_token_ids",
    "processor_settings",
    "rebuild_inputs",
    "token_type_inputs",
]

# the processor outputs that carry pixels (the rest, input_ids/attention_mask, are the ids')
_PIXEL_KEYS = ("pixel_values", "image_sizes", "image_grid_thw", "pixel_attention_mask")


class VisionMismatch(ValueError):
    """Stored ids and rebuilt pixel inputs would not be what the sampler saw."""


def _as_array(image: Any) -> np.ndarray:
    from PIL import Image

    if isinstance(image, Image.Image):
        image = np.asarray(image.convert("RGB"))
    array = np.ascontiguousarray(np.asarray(image))
    if array.dtype != np.uint8 or array.ndim != 3 or array.shape[2] != 3:
        raise ValueError(
            f"a screenshot must be an HxWx3 uint8 array, got {array.dtype} {array.shape}"
        )
    return array


def image_key(image: Any) -> str:
    """The content address of a screenshot: SHA-256 of its shape, dtype and pixels."""
    array = _as_array(image)
    digest = hashlib.sha256(f"{array.shape}|{array.dtype}|".encode())
    digest.update(array.tobytes())
    return digest.hexdigest()


class ImageStore:
    """Screenshots and processor settings stored once each, by content (thread-safe).

    ``put`` returns the key; putting the same pixels again stores nothing new. ``nbytes`` is
    the pixels held (settings are a few hundred bytes each, counted too).
    """

    def __init__(self) -> None:
        self._images: dict[str, np.ndarray] = {}
        self._settings: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def put(self, image: Any) -> str:
        array = _as_array(image)
        key = image_key(array)
        with self._lock:
            if key not in self._images:
                stored = array.copy()
                stored.flags.writeable = False
                self._images[key] = stored
        return key

    def get(self, key: str) -> np.ndarray:
        try:
            return self._images[key]
        except KeyError:
            raise VisionMismatch(
                f"screenshot {key[:12]}... is not in the image store (the step was sampled "
                "with another store, or the store was not kept with the rollouts)"
            ) from None

    def put_settings(self, settings: dict[str, Any]) -> str:
        text = json.dumps(settings, sort_keys=True, default=str)
        key = hashlib.sha256(text.encode()).hexdigest()
        with self._lock:
            self._settings.setdefault(key, json.loads(text))
        return key

    def settings(self, key: str) -> dict[str, Any]:
        try:
            return self._settings[key]
        except KeyError:
            raise VisionMismatch(f"processor settings {key[:12]}... are not in the store") from None

    def __contains__(self, key: object) -> bool:
        return key in self._images

    def __len__(self) -> int:
        return len(self._images)

    @property
    def nbytes(self) -> int:
        pixels = sum(a.nbytes for a in self._images.values())
        return pixels + sum(len(json.dumps(s)) for s in self._settings.values())


@dataclass(frozen=True)
class VisionRef:
    """What a VLM step records besides its ids: the screenshots shown, in prompt order (keys
    into an :class:`ImageStore`), and the key of the processor settings that made the ids."""

    images: tuple[str, ...]
    settings: str

    def to_dict(self) -> dict[str, Any]:
        return {"images": list(self.images), "settings": self.settings}

    @classmethod
    def from_dict(cls, data: Any) -> VisionRef:
        if isinstance(data, VisionRef):
            return data
        if (
            not isinstance(data, dict)
            or not isinstance(data.get("images"), list)
            or not isinstance(data.get("settings"), str)
            or not all(isinstance(k, str) for k in data["images"])
        ):
            raise ValueError(
                f"a step's vision record must be {{'images': [keys], 'settings': key}}, got {data!r}"
            )
        return cls(tuple(data["images"]), data["settings"])


def image_token_id(processor: Any) -> int:
    """The id of the processor's image placeholder token."""
    tokenizer = processor.tokenizer
    for owner in (processor, tokenizer):
        value = getattr(owner, "image_token_id", None)
        if isinstance(value, int):
            return value
    token = getattr(processor, "image_token", None) or getattr(tokenizer, "image_token", None)
    if not token:
        raise ValueError(f"{type(processor).__name__} names no image token")
    return int(tokenizer.convert_tokens_to_ids(token))


def placeholder_token_ids(processor: Any) -> list[int]:
    """The ids the model reads as media slots: the image token and, where the processor has
    them, its video/audio tokens (Qwen2-VL's ``<|video_pad|>``). The sampler never draws
    them and scoring masks them: a sampled one would be a slot with no pixels (a Qwen2-VL
    completion holding ``<|video_pad|>`` breaks its M-RoPE index)."""
    ids = [image_token_id(processor)]
    for name in ("video_token_id", "audio_token_id"):
        value = getattr(processor, name, None)
        if isinstance(value, int) and value >= 0 and value not in ids:
            ids.append(value)
    return ids


def processor_settings(processor: Any) -> dict[str, Any]:
    """Everything of a processor that decides the image tokens and pixels: its class, the image
    processor's config, the image token and the expansion parameters (JSON-safe)."""
    images = processor.image_processor
    config = images.to_dict() if hasattr(images, "to_dict") else dict(vars(images))
    config.pop("processor_class", None)
    out: dict[str, Any] = {
        "processor": type(processor).__name__,
        "image_processor": json.loads(json.dumps(config, sort_keys=True, default=str)),
        "image_token_id": image_token_id(processor),
    }
    for name in (
        "patch_size",
        "num_additional_image_tokens",
        "vision_feature_select_strategy",
        "num_image_tokens",
    ):
        value = getattr(processor, name, None)
        if value is not None:
            out[name] = value
    return out


def pixel_inputs(processor: Any, images: list[Any]) -> dict[str, Any]:
    """The model's pixel inputs for ``images`` (in prompt order), as the processor makes them."""
    from PIL import Image

    pil = [Image.fromarray(_as_array(i)) for i in images]
    out = processor.image_processor(images=pil, return_tensors="pt")
    return {k: out[k] for k in _PIXEL_KEYS if k in out}


def expected_image_tokens(processor: Any, images: list[Any]) -> int:
    """How many image placeholder tokens a prompt showing ``images`` holds once the processor
    expanded them (the processor's own rule: it is run on a prompt of bare image tokens)."""
    from PIL import Image

    if not images:
        return 0
    token = getattr(processor, "image_token", None) or processor.tokenizer.image_token
    pil = [Image.fromarray(_as_array(i)) for i in images]
    enc = processor(text=[" ".join([token] * len(pil))], images=pil, return_tensors="pt")
    return int((enc["input_ids"][0] == image_token_id(processor)).sum())


def token_type_inputs(processor: Any, ids: Any) -> dict[str, Any]:
    """The per-token modality types some VLMs need next to the ids (Qwen2-VL's and
    Qwen2.5-VL's M-RoPE reads ``mm_token_type_ids``: 1 at image tokens, 0 elsewhere), made by
    the processor's own rule from a padded ``ids`` tensor; ``{}`` for a processor that makes
    none (LLaVA)."""
    if not getattr(processor, "return_mm_token_type_ids", False):
        return {}
    import torch

    types = processor.create_mm_token_type_ids(ids.tolist())
    return {"mm_token_type_ids": torch.tensor(types, dtype=torch.long, device=ids.device)}


def rebuild_inputs(
    processor: Any, store: ImageStore, ref: VisionRef | dict[str, Any], prompt_ids: list[int]
) -> dict[str, Any]:
    """The pixel inputs that go with ``prompt_ids``, rebuilt from the stored screenshots.

    Raises:
        VisionMismatch: when the processor's settings are not the sampler's, a screenshot is
            not in ``store``, or ``prompt_ids`` hold another number of image tokens than the
            rebuilt pixels need (a re-tokenised prompt, a re-processed image).
    """
    ref = VisionRef.from_dict(ref)
    recorded = store.settings(ref.settings)
    current = processor_settings(processor)
    if current != recorded:
        changed = sorted(
            k for k in set(recorded) | set(current) if recorded.get(k) != current.get(k)
        )
        raise VisionMismatch(
            f"the processor's settings differ from the sampler's ({', '.join(changed)}): the "
            "stored ids would not match re-processed images"
        )
    images = [store.get(k) for k in ref.images]
    have = sum(1 for t in prompt_ids if t == current["image_token_id"])
    need = expected_image_tokens(processor, images)
    if have != need:
        raise VisionMismatch(
            f"the prompt ids hold {have} image tokens but its {len(images)} screenshot(s) need "
            f"{need}: the ids are not the ones the processor made for these images "
            "(re-tokenised prompt or re-processed image); score the stored ids"
        )
    return pixel_inputs(processor, images) if images else {}


# processors whose AutoProcessor also builds a video processor that needs torchvision (no CPU
# wheel works with the CPU torch here): on such a machine they are built without it
_VIDEO_PROCESSORS = ("Qwen2VLProcessor", "Qwen2_5_VLProcessor")


def image_only_processor(
    name: str, image_processor: Any, tokenizer: Any, chat_template: Any
) -> Any:
    """The ``transformers`` processor class ``name`` (Qwen2-VL's or Qwen2.5-VL's) built with
    only its image processor and tokenizer: the same ``__call__``, the same image-token
    expansion (``grid_t * grid_h * grid_w / merge**2``), no video processor. It saves as
    ``name`` (a machine with torchvision loads the folder with ``AutoProcessor``)."""
    import transformers
    from transformers.processing_utils import ProcessorMixin

    if name not in _VIDEO_PROCESSORS:
        raise ValueError(f"no image-only build for {name}; allowed: {', '.join(_VIDEO_PROCESSORS)}")
    base = getattr(transformers, name)

    def __init__(  # noqa: N807
        self: Any,
        image_processor: Any = None,
        tokenizer: Any = None,
        chat_template: Any = None,
        **kwargs: Any,
    ) -> None:
        self.image_token = getattr(tokenizer, "image_token", None) or "<|image_pad|>"
        self.video_token = getattr(tokenizer, "video_token", None) or "<|video_pad|>"
        self.image_token_id = tokenizer.convert_tokens_to_ids(self.image_token)
        self.video_token_id = tokenizer.convert_tokens_to_ids(self.video_token)
        ProcessorMixin.__init__(self, image_processor, tokenizer, chat_template=chat_template)

    cls = type(name, (base,), {"__init__": __init__, "__module__": __name__})
    return cls(image_processor=image_processor, tokenizer=tokenizer, chat_template=chat_template)


def load_processor(path: Any) -> Any:
    """``AutoProcessor.from_pretrained(path)``; for a Qwen2-VL / Qwen2.5-VL folder on a machine
    where that fails for want of torchvision (its video processor), the image-only processor
    (:func:`image_only_processor`) from the folder's image processor (slow PIL path) and
    tokenizer: images are processed exactly as the full processor does."""
    import transformers

    try:
        return transformers.AutoProcessor.from_pretrained(path)
    except Exception as err:
        from pathlib import Path

        folder = Path(path)
        name = None
        for file in ("processor_config.json", "preprocessor_config.json"):
            if (folder / file).is_file():
                try:
                    name = json.loads((folder / file).read_text()).get("processor_class")
                except (OSError, ValueError):
                    continue
                if name:
                    break
        if name not in _VIDEO_PROCESSORS:
            raise
        try:
            images = transformers.AutoImageProcessor.from_pretrained(path, backend="pil")
            tokenizer = transformers.AutoTokenizer.from_pretrained(path)
        except Exception:
            raise err from None
        template = getattr(tokenizer, "chat_template", None)
        if (folder / "chat_template.jinja").is_file():
            template = (folder / "chat_template.jinja").read_text()
        return image_only_processor(name, images, tokenizer, template)
