#!/usr/bin/env bash
# Generation speed on one GPU, for the lead to run in ONE short device call:
#   run(command="bash benchmarks/gpu_generation.sh", timeout_s=540)
# Qwen2.5-0.5B's shape built from a config (random weights, nothing downloaded), bf16, ragged
# prompts of 16-48 tokens, 64 new tokens sampled at temperature 1, batch 1/8/64/256, each of
# TransformersLLM's paths on the same card in the same run: hf (Hugging Face generate, today's
# path), static (static KV cache, eager step), compiled (static cache + torch.compile with
# CUDA graphs). JSON in $OUT (the device tool's folder) or benchmarks/results/.
# Expected time: hf about 85 ms/token -> ~45 s for all batches; compile ~1 min per batch bucket.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD
OUT_DIR=${OUT:-benchmarks/results}
mkdir -p "$OUT_DIR"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
python - <<'PY'
import importlib, sys
missing = []
for name in ("torch", "transformers", "tokenizers", "gymnasium", "numpy"):
    try:
        importlib.import_module(name)
    except ImportError as err:
        missing.append(f"{name} ({err})")
if missing:
    sys.exit("gpu_generation.sh: missing on this machine: " + ", ".join(missing)
             + "; carry their wheels (under 64 MiB) and pip install them first")
import torch, transformers
print("torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__)
PY
PATHS=${PATHS:-"hf static compiled"}
BATCHES=${BATCHES:-"1 8 64 256"}
timeout 500 python benchmarks/bench_generation.py --device cuda --dtype bfloat16 --model 0.5b \
  --batches $BATCHES --paths $PATHS --new-tokens 64 --repeats 1 \
  --out "$OUT_DIR/bench_generation_gpu.json" 2>&1 | grep -v FutureWarning
