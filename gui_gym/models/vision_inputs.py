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
    "image_token_id",
    "pixel_inputs",
    "processor_settings",
    "rebuild_inputs",
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
