"""A tiny GPT-2 and a word-level tokenizer built in memory: no download, milliseconds on CPU.

Tests of anything that takes a :class:`gui_gym.models.llm.TransformersLLM` build one here.
"""

from __future__ import annotations

from typing import Any

_WORD_TEXT = (
    "the a an to of and in on click tap open search type scroll go back button link input "
    "app article bookmark share yes no answer milestone milestones step steps task done "
    'settings note contact name [ ] " , : . user assistant system hello world'
)
WORDS: list[str] = _WORD_TEXT.split()

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)


def tiny_tokenizer(chat_template: bool = False) -> Any:
    """A whitespace word-level fast tokenizer over :data:`WORDS` plus special tokens."""
    from gui_gym.models.llm.tiny import word_tokenizer

    specials = ("<pad>", "<eos>", "<unk>", "<|user|>", "<|assistant|>", "<|system|>")
    tokenizer = word_tokenizer(WORDS, specials=specials)
    if chat_template:
        tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def tiny_gpt2(vocab_size: int, seed: int = 0, n_positions: int = 256) -> Any:
    """A 2-layer, 32-dim GPT-2 (about 40k parameters) with random weights; ``n_positions``
    is its context length (agent prompts with a whole screen need about 1,024)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=vocab_size,
        n_positions=n_positions,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=1,
        eos_token_id=1,
        pad_token_id=0,
    )
    return GPT2LMHeadModel(config).eval()


def bpe_tokenizer(texts: list[str], vocab_size: int = 3000) -> Any:
    """A byte-level BPE tokenizer trained on ``texts`` in milliseconds: any text encodes, and
    decodes back exactly, so a model can learn to write gui-gym actions with it."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<pad>", "<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    core.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>")


def small_gpt2(vocab_size: int, seed: int = 0, n_positions: int = 1024) -> Any:
    """A 2-layer, 32-dim GPT-2 without dropout and with a context for whole agent prompts."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=vocab_size,
        n_positions=n_positions,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=1,
        eos_token_id=1,
        pad_token_id=0,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    return GPT2LMHeadModel(config).eval()


def tiny_llava(folder: Any) -> None:
    """Save a tiny LLaVA (CLIP vision tower, 2-layer Llama) and its processor to ``folder``:
    32x32 images in 8x8 patches, 16 image tokens each; loads with ``AutoProcessor`` and
    ``AutoModelForImageTextToText`` (:func:`gui_gym.models.llm.tiny.save_tiny_llava`)."""
    from gui_gym.models.llm.tiny import save_tiny_llava, word_tokenizer

    template = (
        "{% for m in messages %}<|{{ m['role'] }}|> {% if m['content'] is string %}"
        "{{ m['content'] }}{% else %}{% for p in m['content'] %}{% if p['type'] == 'image' %}"
        "<image> {% else %}{{ p['text'] }} {% endif %}{% endfor %}{% endif %} {% endfor %}"
        "{% if add_generation_prompt %}<|assistant|> {% endif %}"
    )
    specials = ("<pad>", "<eos>", "<unk>", "<image>", "<|user|>", "<|assistant|>", "<|system|>")
    tokenizer = word_tokenizer(WORDS, specials=specials)
    save_tiny_llava(folder, tokenizer, chat_template=template, max_positions=2048)


def tiny_qwen2_vl(
    folder: Any,
    words: list[str] | None = None,
    seed: int = 0,
    *,
    lines: bool = False,
    chat_template: str | None = None,
) -> None:
    """Save a tiny Qwen2-VL (1-block vision tower with 14x14 patches merged 2x2, 2-layer Qwen2
    text model with M-RoPE) and its processor to ``folder``.

    Images are resized to multiples of 28 pixels between 4 and 16 merged patches
    (``min_pixels``/``max_pixels``), so the number of image tokens depends on the screenshot's
    size, as in Qwen2-VL (``grid_t * grid_h * grid_w / merge**2``). The processor is the
    image-only Qwen2-VL processor of :func:`gui_gym.models.llm.vision_inputs.load_processor`: the
    image processor's slow (PIL) path, no video processor (both fast processors need
    torchvision, which has no CPU wheel here). ``words`` replaces the default vocabulary;
    ``lines=True`` makes each line one token (an action string is one token) and
    ``chat_template`` replaces the default template."""
    import torch
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration
    from transformers.models.qwen2_vl import Qwen2VLImageProcessorPil

    from gui_gym.models.llm.tiny import word_tokenizer
    from gui_gym.models.llm.vision_inputs import image_only_processor

    specials = (
        "<pad>",
        "<eos>",
        "<unk>",
        "<|image_pad|>",
        "<|vision_start|>",
        "<|vision_end|>",
        "<|video_pad|>",
        "<|user|>",
        "<|assistant|>",
        "<|system|>",
    )
    tokenizer = word_tokenizer(
        WORDS if words is None else words,
        specials=specials,
        split="line" if lines else "whitespace",
        extra_special_tokens={"image_token": "<|image_pad|>", "video_token": "<|video_pad|>"},
    )
    template = chat_template or (
        "{% for m in messages %}<|{{ m['role'] }}|> {% if m['content'] is string %}"
        "{{ m['content'] }}{% else %}{% for p in m['content'] %}{% if p['type'] == 'image' %}"
        "<|vision_start|> <|image_pad|> <|vision_end|> {% else %}{{ p['text'] }} {% endif %}"
        "{% endfor %}{% endif %} {% endfor %}"
        "{% if add_generation_prompt %}<|assistant|> {% endif %}"
    )
    images = Qwen2VLImageProcessorPil(
        min_pixels=4 * 28 * 28,
        max_pixels=16 * 28 * 28,
        patch_size=14,
        merge_size=2,
        temporal_patch_size=2,
    )
    processor = image_only_processor("Qwen2VLProcessor", images, tokenizer, template)
    torch.manual_seed(seed)
    config = Qwen2VLConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "num_key_value_heads": 2,
            "max_position_embeddings": 2048,
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 10000.0,
                "mrope_section": [2, 3, 3],
            },
            "pad_token_id": 0,
            "eos_token_id": 1,
            "bos_token_id": 1,
        },
        vision_config={
            "depth": 1,
            "embed_dim": 32,
            "hidden_size": 32,
            "num_heads": 2,
            "mlp_ratio": 2,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "in_channels": 3,
        },
        image_token_id=tokenizer.convert_tokens_to_ids("<|image_pad|>"),
        video_token_id=tokenizer.convert_tokens_to_ids("<|video_pad|>"),
        vision_start_token_id=tokenizer.convert_tokens_to_ids("<|vision_start|>"),
        vision_end_token_id=tokenizer.convert_tokens_to_ids("<|vision_end|>"),
    )
    Qwen2VLForConditionalGeneration(config).save_pretrained(folder)
    processor.save_pretrained(folder)
