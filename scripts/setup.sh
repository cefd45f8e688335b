#!/usr/bin/env bash
# Creates the project's virtual environment: every extra (default), or with `demo` only the
# core and what `make demo` uses (WebShop's search; no torch, Ray or browser drivers).
# Usage: bash scripts/setup.sh [VENV_DIR] [all|demo]
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-.venv}"
profile="${2:-all}"

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
py="$venv/bin/python"
"$py" -m pip install --quiet --upgrade pip setuptools wheel

if [ "$profile" = "demo" ]; then
  "$py" -m pip install --quiet -e ".[webshop]"
  "$py" -m pip check
  echo "gui-gym: core environment ready in $venv (make test installs every extra)"
  exit 0
fi

# torch first, pinned: 2.13.0 is the CPU wheel on this kind of machine; an unpinned torch
# (asked for by transformers or sentence-transformers) would pull a multi-GB CUDA build.
if ! "$py" -c "import torch" >/dev/null 2>&1; then
  "$py" -m pip install --quiet "torch==${GUI_GYM_TORCH_VERSION:-2.13.0}"
fi

"$py" -m pip install --quiet -e ".[all]"
"$py" -m pip check
echo "gui-gym: environment ready in $venv"
