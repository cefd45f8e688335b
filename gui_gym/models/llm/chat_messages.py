"""The prompt format every LLM backend takes: a string (one user message) or a list of chat
messages whose content is text or a list of text and image parts, with the conversions the
backends share (to chat messages, to plain text, to the OpenAI wire format).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

__all__ = [
    "MAX_IMAGE_BYTES",
    "MAX_IMAGE_PIXELS",
    "ChatMessage",
    "Prompt",
    "bounded_image",
    "content_text",
    "openai_messages",
    "prompt_images",
    "prompt_text",
    "to_messages",
]

ChatMessage: TypeAlias = Mapping[str, Any]
"""One chat message: ``{"role": "system" | "user" | "assistant", "content": "..."}`` (content
may be a list of text and image parts, see :func:`to_messages`)."""
Prompt: TypeAlias = str | Sequence[ChatMessage]
"""A plain string (one user message) or a whole conversation."""


def _check_content(i: int, content: Any) -> str | list[dict[str, Any]]:
    """A message's content: a string, or a list of text and image parts (checked)."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, bytes):
        parts = []
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, Mapping) else None
            if kind == "text" and isinstance(part.get("text"), str):
                parts.append({"type": "text", "text": part["text"]})
            elif kind == "image" and part.get("image") is not None:
                parts.append({"type": "image", "image": part["image"]})
            else:
                raise ValueError(
                    f"prompt message {i}, part {j}: expected {{'type': 'text', 'text': str}} or "
                    f"{{'type': 'image', 'image': array}}, got {part!r:.120}"
                )
        return parts
    raise ValueError(
        f"prompt message {i} needs string 'content' or a list of text/image parts, "
        f"got {type(content).__name__}"
    )


def to_messages(prompt: Prompt, system_prompt: str | None = None) -> list[dict[str, Any]]:
    """A prompt as a list of chat messages (a string becomes one user message), with
    ``system_prompt`` prepended when given and the conversation has no system message.

    A message's ``content`` is a string or, for vision-language models, a list of parts:
    ``{"type": "text", "text": str}`` and ``{"type": "image", "image": img}`` (an HxWx3
    uint8 array or a PIL image).

    Raises:
        TypeError: for a prompt that is neither a string nor a list of messages.
        ValueError: for a message without a string ``role`` and valid ``content``.
    """
    if isinstance(prompt, str):
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    elif isinstance(prompt, Sequence):
        messages = []
        for i, message in enumerate(prompt):
            if not isinstance(message, Mapping):
                raise TypeError(
                    f"prompt message {i} must be a mapping with 'role' and 'content', "
                    f"got {type(message).__name__}"
                )
            role, content = message.get("role"), message.get("content")
            if not isinstance(role, str) or content is None:
                raise ValueError(
                    f"prompt message {i} needs string 'role' and 'content', got {dict(message)!r}"
                )
            messages.append({"role": role, "content": _check_content(i, content)})
    else:
        raise TypeError(f"a prompt is a str or a list of messages, got {type(prompt).__name__}")
    if system_prompt and not any(m["role"] == "system" for m in messages):
        messages.insert(0, {"role": "system", "content": system_prompt})
    return messages


def content_text(content: str | Sequence[Mapping[str, Any]]) -> str:
    """A message content as text: a string unchanged, parts joined with images as
    ``<image>``."""
    if isinstance(content, str):
        return content
    return "".join(p["text"] if p["type"] == "text" else "<image>" for p in content)


def prompt_images(prompt: Prompt) -> list[Any]:
    """The images of a prompt, in order of appearance."""
    if isinstance(prompt, str):
        return []
    return [
        part["image"]
        for m in to_messages(prompt)
        if not isinstance(m["content"], str)
        for part in m["content"]
        if part["type"] == "image"
    ]


def prompt_text(prompt: Prompt) -> str:
    """The prompt as plain text: a string unchanged, a conversation as ``role: content``
    lines (what :class:`ScriptedLLM` rules and tokenizers without a chat template see;
    images appear as ``<image>``)."""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(f"{m['role']}: {content_text(m['content'])}" for m in to_messages(prompt))


MAX_IMAGE_PIXELS = 12_845_056
"""Largest image (width x height) sent to a server: Qwen2.5-VL's processor default
``max_pixels`` (16384 patches of 28x28). A larger screenshot is downscaled to fit, aspect kept
(:func:`bounded_image`), so a request never carries more pixels than such a model reads."""

MAX_IMAGE_BYTES = 16 * 1024 * 1024
"""Largest PNG sent for one image; an image still over it after downscaling is an error."""


def bounded_image(image: Any, max_pixels: int = MAX_IMAGE_PIXELS) -> Any:
    """``image`` (HxWx3 uint8 array or PIL image) as a PIL RGB image of at most
    ``max_pixels`` pixels: unchanged when it fits, else downscaled (Lanczos) with its aspect
    ratio kept.

    Raises:
        ValueError: for an array that is not HxWx3 uint8, or ``max_pixels`` below 1.
    """
    import math

    import numpy as np
    from PIL import Image

    if max_pixels < 1:
        raise ValueError(f"max_pixels must be >= 1, got {max_pixels}")
    if not isinstance(image, Image.Image):
        array = np.asarray(image)
        if array.dtype != np.uint8 or array.ndim != 3 or array.shape[2] != 3:
            raise ValueError(
                f"an image part must be an HxWx3 uint8 array or a PIL image, got "
                f"{array.dtype} {array.shape}"
            )
        image = Image.fromarray(array)
    image = image.convert("RGB")
    width, height = image.size
    if width * height > max_pixels:
        scale = math.sqrt(max_pixels / (width * height))
        size = (max(1, math.floor(width * scale)), max(1, math.floor(height * scale)))
        image = image.resize(size, Image.Resampling.LANCZOS)
    return image


def _image_data_url(image: Any) -> str:
    """An image (HxWx3 uint8 array or PIL image) as a ``data:image/png;base64,...`` URL, at
    most :data:`MAX_IMAGE_PIXELS` pixels (downscaled when larger).

    Raises:
        ValueError: when the PNG is still over :data:`MAX_IMAGE_BYTES`.
    """
    import base64
    import io

    buffer = io.BytesIO()
    bounded_image(image).save(buffer, format="PNG")
    if buffer.tell() > MAX_IMAGE_BYTES:
        raise ValueError(
            f"an image part is {buffer.tell()} bytes as PNG, over the {MAX_IMAGE_BYTES}-byte "
            "limit of one image in a request"
        )
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def openai_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages in the OpenAI wire format: image parts become ``image_url`` parts with
    base64 PNG data URLs (what vLLM and OpenAI accept for vision models), each at most
    :data:`MAX_IMAGE_PIXELS` pixels (a larger one is downscaled, aspect kept)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        content = m["content"]
        if not isinstance(content, str):
            content = [
                {"type": "text", "text": p["text"]}
                if p["type"] == "text"
                else {"type": "image_url", "image_url": {"url": _image_data_url(p["image"])}}
                for p in content
            ]
        out.append({"role": m["role"], "content": content})
    return out
