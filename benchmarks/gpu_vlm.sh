#!/usr/bin/env bash
# Issue 29 item 8 on one GPU (< 10 min on an H100): SFT steps and one GRPO iteration of a
# Qwen2.5-VL-3B-sized model from a config (random weights, bf16); images/s, tokens/s and peak
# memory into $OUT/gpu_vlm.json. From the repository root, on the device machine:
#   run(command="bash benchmarks/gpu_vlm.sh", timeout_s=600)
set -euo pipefail
OUT="${OUT:-benchmarks/results}"
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total --format=csv > "$OUT/gpu.txt" 2>&1 || true
python -c "import torch, transformers; print(torch.__version__, transformers.__version__, torch.cuda.is_available())" | tee "$OUT/versions.txt"
timeout 540 python benchmarks/gpu_vlm.py --out "$OUT" "$@" 2>&1 | tail -c 20000 | tee "$OUT/gpu_vlm.log"
