"""Tiny image-text models built from a config: no download, seconds on CPU.

Tests, examples and benchmarks that need a vision-language policy or reward model build one
here (a real :class:`~transformers.LlavaForConditionalGeneration` with its processor, random
weights), so every VLM path runs on this machine exactly as it runs a Qwen2.5-VL or LLaVA
checkpoint on a GPU.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

__all__ = ["save_tiny_llava", "word_tokenizer"]


def word_tokenizer(
    words: Sequence[str],
    *,
    specials: Sequence[str] = ("<pad>", "<eos>", "<unk>", "<image>"),
    split: Literal["whitespace", "line"] = "whitespace",
    extra_special_tokens: Mapping[str, str] | None = None,
) -> Any:
    """A word-level fast tokenizer: one id per special token, then one per word.

    Args:
        words: The vocabulary after ``specials`` (a word not in it encodes as ``<unk>``).
        specials: Special tokens first; ``<pad>``, ``<eos>`` and ``<unk>`` must be among them.
        split: ``whitespace`` splits on spaces and decodes words joined by spaces; ``line``
            makes each line one token (a whole action can then be one token).
        extra_special_tokens: Named special tokens a processor looks up (default
            ``{"image_token": "<image>"}`` when ``<image>`` is among ``specials``; Qwen2-VL
            also names its ``video_token``).
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate([*specials, *words])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    if split == "line":
        core.pre_tokenizer = pre_tokenizers.Split(Regex("\n"), behavior="removed")
    else:
        core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        core.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    if extra_special_tokens is None:
        extra_special_tokens = {"image_token": "<image>"} if "<image>" in specials else {}
    extra = {"extra_special_tokens": dict(extra_special_tokens)} if extra_special_tokens else {}
    return PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>", **extra
    )


def save_tiny_llava(
    folder: str | Path,
    tokenizer: Any,
    *,
    chat_template: str,
    seed: int = 0,
    max_positions: int = 256,
) -> Path:
    """Save a tiny LLaVA (a 1-layer CLIP vision tower, a 2-layer 32-wide Llama) and its
    processor to ``folder``: 32x32 images in 8x8 patches, 16 image tokens each (plus CLIP's
    class token); loads with ``AutoProcessor`` and ``AutoModelForImageTextToText``.

    Args:
        tokenizer: A tokenizer with an ``<image>`` token (:func:`word_tokenizer`).
        chat_template: The processor's Jinja chat template (it places the ``<image>`` tokens).
        seed: Seeds the random weights.
        max_positions: The language model's context length.
    """
    import torch
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    image_token_id = tokenizer.convert_tokens_to_ids("<image>")
    if image_token_id is None or image_token_id == tokenizer.unk_token_id:
        raise ValueError("save_tiny_llava needs a tokenizer with an <image> token")
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(
            size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}, do_center_crop=True
        ),
        tokenizer=tokenizer,
        patch_size=8,
        vision_feature_select_strategy="default",
        chat_template=chat_template,
        num_additional_image_tokens=1,
    )
    torch.manual_seed(seed)
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=32,
            patch_size=8,
            projection_dim=32,
        ),
        text_config=LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=max_positions,
            pad_token_id=0,
            eos_token_id=1,
            bos_token_id=1,
        ),
        image_token_id=image_token_id,
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    folder = Path(folder)
    LlavaForConditionalGeneration(config).save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder
