#!/usr/bin/env bash
# Makes sure Chromium and ChromeDriver are present for the MiniWoB++ envs.
# Installs Debian's packages when running as root and they are missing; otherwise only says
# what is missing (never fails: the rest of gui-gym works without a browser, and the first
# MiniWoB reset explains what to install).
set -uo pipefail

have() { command -v "$1" >/dev/null 2>&1; }
chrome_ok() { have chromium || have chromium-browser || have google-chrome || [ -n "${MINIWOB_CHROME_BINARY:-}" ]; }
driver_ok() { have chromedriver || [ -n "${MINIWOB_CHROMEDRIVER:-}" ]; }

if chrome_ok && driver_ok; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && have apt-get; then
  echo "gui-gym: installing chromium and chromium-driver (for MiniWoB++)"
  export DEBIAN_FRONTEND=noninteractive
  if apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; then
    echo "gui-gym: chromium $(chromium --version 2>/dev/null | awk '{print $2}') installed"
    exit 0
  fi
  echo "gui-gym: WARNING: installing chromium failed; MiniWoB++ envs will not start" >&2
  exit 0
fi
echo "gui-gym: WARNING: Chromium/ChromeDriver not found and not root; MiniWoB++ envs need" \
  "them: apt-get install -y chromium chromium-driver (or set MINIWOB_CHROME_BINARY and" \
  "MINIWOB_CHROMEDRIVER)" >&2
exit 0
