"""GPU check of issue 29 item 8: SFT steps and one GRPO iteration of a Qwen2.5-VL-3B-sized
model built from a config (random weights, bf16) on one GPU: images/s, tokens/s, peak memory.

Run by ``benchmarks/gpu_vlm.sh`` (JSON into ``$OUT``). Needs only torch with CUDA, transformers
(>= 5) and Pillow (the GPU machine has no gymnasium for ``import gui_gym``): the GRPO update is
gui-gym's computation written inline (log-softmax at the completion positions with the media
placeholders masked, the clipped surrogate with DAPO's 0.28 upper clip, token-mean over the
batch), not a call into ``gui_gym.train``.

The inputs are built as transformers' Qwen2.5-VL processor builds them, without a tokenizer
(none can be downloaded): the image processor's PIL path makes ``pixel_values`` and
``image_grid_thw`` for a 1080x2400 phone screenshot, the prompt ids are random text ids
around ``<|vision_start|>`` + ``grid_t*grid_h*grid_w/4`` ``<|image_pad|>`` + ``<|vision_end|>``,
and ``mm_token_type_ids`` marks the image tokens (M-RoPE).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

IMAGE_PAD, VIDEO_PAD, VISION_START, VISION_END = 151655, 151656, 151652, 151653


def qwen25_vl_3b_config() -> Any:
    """Qwen2.5-VL-3B-Instruct's published config.json, as a transformers config."""
    from transformers import Qwen2_5_VLConfig

    return Qwen2_5_VLConfig(
        text_config={
            "vocab_size": 151936,
            "hidden_size": 2048,
            "intermediate_size": 11008,
            "num_hidden_layers": 36,
            "num_attention_heads": 16,
            "num_key_value_heads": 2,
            "max_position_embeddings": 128000,
            "rms_norm_eps": 1e-6,
            "tie_word_embeddings": True,
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 1000000.0,
                "mrope_section": [16, 24, 24],
            },
            "bos_token_id": 151643,
            "eos_token_id": 151645,
        },
        vision_config={
            "depth": 32,
            "hidden_size": 1280,
            "intermediate_size": 3420,
            "num_heads": 16,
            "out_hidden_size": 2048,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "window_size": 112,
            "fullatt_block_indexes": [7, 15, 23, 31],
            "in_chans": 3,
        },
        image_token_id=IMAGE_PAD,
        video_token_id=VIDEO_PAD,
        vision_start_token_id=VISION_START,
        vision_end_token_id=VISION_END,
        tie_word_embeddings=True,
    )


def image_inputs(count: int, max_pixels: int, seed: int) -> tuple[Any, Any, list[int]]:
    """pixel_values, image_grid_thw and image tokens per image for ``count`` screenshots."""
    import numpy as np
    from PIL import Image
    from transformers.models.qwen2_vl import Qwen2VLImageProcessorPil

    processor = Qwen2VLImageProcessorPil(
        min_pixels=4 * 28 * 28, max_pixels=max_pixels, patch_size=14, merge_size=2
    )
    rng = np.random.default_rng(seed)
    shots = [
        Image.fromarray(rng.integers(0, 256, (2400, 1080, 3), dtype=np.uint8)) for _ in range(count)
    ]
    out = processor(images=shots, return_tensors="pt")
    tokens = [int(g.prod()) // 4 for g in out["image_grid_thw"]]
    return out["pixel_values"], out["image_grid_thw"], tokens


def prompt_ids(image_tokens: int, text: int, rng: Any) -> list[int]:
    words = rng.integers(1000, 150000, text).tolist()
    half = text // 2
    return [*words[:half], VISION_START, *([IMAGE_PAD] * image_tokens), VISION_END, *words[half:]]


def batch(rows: list[list[int]], pad: int = 151643) -> tuple[Any, Any, Any]:
    import torch

    width = max(map(len, rows))
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row)
        mask[i, : len(row)] = 1
    types = (ids == IMAGE_PAD).long()
    return ids.cuda(), mask.cuda(), types.cuda()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    parser.add_argument("--max-pixels", type=int, default=1024 * 28 * 28)
    parser.add_argument("--sft-batch", type=int, default=4)
    parser.add_argument("--sft-steps", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=4, help="GRPO prompts (one screenshot each)")
    parser.add_argument("--group", type=int, default=8, help="GRPO samples per prompt")
    parser.add_argument("--new-tokens", type=int, default=48)
    args = parser.parse_args()

    import numpy as np
    import torch
    from transformers import Qwen2_5_VLForConditionalGeneration

    report: dict[str, Any] = {
        "benchmark": "gpu_vlm",
        "model": "Qwen2.5-VL-3B-sized, random weights from a config, bf16",
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "settings": {k: v for k, v in vars(args).items() if k != "out"},
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def save() -> None:
        (out / "gpu_vlm.json").write_text(json.dumps(report, indent=1) + "\n")

    started = time.perf_counter()
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = Qwen2_5_VLForConditionalGeneration(qwen25_vl_3b_config()).to(torch.bfloat16)
    report["parameters"] = sum(p.numel() for p in model.parameters())
    report["build_s"] = round(time.perf_counter() - started, 1)
    model.gradient_checkpointing_enable()
    model.config.use_cache = False
    rng = np.random.default_rng(0)

    # -- SFT: completion-only loss, full fine-tune, AdamW (bf16 weights and states) ----------
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    pixels, grid, tokens = image_inputs(args.sft_batch, args.max_pixels, 0)
    rows = [prompt_ids(t, 200, rng) + rng.integers(1000, 150000, 64).tolist() for t in tokens]
    ids, mask, types = batch(rows)
    labels = ids.clone()
    labels[:, :-64] = -100
    report["image_tokens_per_screenshot"] = tokens[0]
    report["sft_sequence_tokens"] = int(mask.sum()) // len(rows)
    torch.cuda.reset_peak_memory_stats()
    times = []
    model.train()
    for _ in range(args.sft_steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = model(
            input_ids=ids,
            attention_mask=mask,
            mm_token_type_ids=types,
            pixel_values=pixels.cuda().to(torch.bfloat16),
            image_grid_thw=grid.cuda(),
            labels=labels,
        ).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        report["sft_loss"] = float(loss)
    steady = times[1:] or times
    per_step = sum(steady) / len(steady)
    report["sft"] = {
        "step_s": round(per_step, 3),
        "first_step_s": round(times[0], 3),
        "images_per_s": round(args.sft_batch / per_step, 2),
        "tokens_per_s": round(int(mask.sum()) / per_step, 1),
        "peak_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
    }
    save()

    # -- one GRPO iteration: sample a group per screenshot, score, one clipped update --------
    model.eval()
    model.config.use_cache = True
    pixels, grid, tokens = image_inputs(args.tasks, args.max_pixels, 1)
    prompts = [prompt_ids(t, 200, rng) for t in tokens]
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    samples: list[tuple[int, list[int], list[int]]] = []
    offsets = np.cumsum([0, *[int(g.prod()) for g in grid]])
    with torch.no_grad():
        for task, prompt in enumerate(prompts):
            rows = [prompt] * args.group
            ids, mask, types = batch(rows)
            patch = pixels[offsets[task] : offsets[task + 1]]
            generated = model.generate(
                input_ids=ids,
                attention_mask=mask,
                mm_token_type_ids=types,
                pixel_values=patch.repeat(args.group, 1).cuda().to(torch.bfloat16),
                image_grid_thw=grid[task : task + 1].repeat(args.group, 1).cuda(),
                max_new_tokens=args.new_tokens,
                min_new_tokens=args.new_tokens,
                do_sample=True,
                temperature=1.0,
                top_k=0,
                top_p=1.0,
                suppress_tokens=[IMAGE_PAD, VIDEO_PAD],
            )
            for row in generated[:, ids.shape[1] :].tolist():
                samples.append((task, prompt, row))
    torch.cuda.synchronize()
    generate_s = time.perf_counter() - t0
    new_tokens = sum(len(s[2]) for s in samples)

    model.config.use_cache = False
    model.train()
    rewards = rng.random(len(samples))
    advantages = []
    for task in range(args.tasks):
        group = rewards[task * args.group : (task + 1) * args.group]
        advantages.extend(((group - group.mean()) / (group.std() + 1e-6)).tolist())
    micro = args.group
    t1 = time.perf_counter()
    for start in range(0, len(samples), micro):
        chunk = samples[start : start + micro]
        task_ids = [s[0] for s in chunk]
        patch = torch.cat([pixels[offsets[t] : offsets[t + 1]] for t in task_ids])
        pixel_kwargs = {
            "pixel_values": patch.cuda().to(torch.bfloat16),
            "image_grid_thw": grid[task_ids].cuda(),
        }
        rows = [p + c for _, p, c in chunk]
        ids, mask, types = batch(rows)
        logits = model(
            input_ids=ids, attention_mask=mask, mm_token_type_ids=types, **pixel_kwargs
        ).logits
        loss = 0.0
        for i, (_, prompt, completion) in enumerate(chunk):
            begin = len(prompt) - 1
            rows_logits = logits[i, begin : begin + len(completion)].float()
            rows_logits[:, [IMAGE_PAD, VIDEO_PAD]] = -torch.inf
            target = ids[i, begin + 1 : begin + 1 + len(completion)]
            logp = torch.log_softmax(rows_logits, -1).gather(-1, target[:, None]).squeeze(-1)
            ratio = torch.exp(logp - logp.detach())  # pi / pi_old at the first epoch
            advantage = advantages[start + i]
            surrogate = -torch.minimum(ratio * advantage, ratio.clamp(0.8, 1.28) * advantage)
            loss = loss + surrogate.sum() / new_tokens
        loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    update_s = time.perf_counter() - t1
    report["grpo"] = {
        "samples": len(samples),
        "images": len(samples),
        "new_tokens": new_tokens,
        "generate_s": round(generate_s, 2),
        "generate_tokens_per_s": round(new_tokens / generate_s, 1),
        "update_s": round(update_s, 2),
        "update_images_per_s": round(len(samples) / update_s, 2),
        "update_tokens_per_s": round(sum(len(p) + len(c) for _, p, c in samples) / update_s, 1),
        "iteration_s": round(generate_s + update_s, 2),
        "peak_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
    }
    report["total_s"] = round(time.perf_counter() - started, 1)
    save()
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
