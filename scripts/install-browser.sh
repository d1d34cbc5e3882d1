#!/usr/bin/env bash
# Installs what the Memory Console browser tests (tests/test_console_browser.py) need
# outside Python: Debian's `chromium` at /usr/bin/chromium, plus a CJK font so the
# zh_Hans screenshots are readable. Idempotent: does nothing when both are present.
# The Python side (`playwright`, which drives this chromium; `playwright install` is
# never run) comes from the test extras in pyproject.toml.
# Needs root (or sudo) and Debian's package archive; set LTM_SKIP_BROWSER_INSTALL=1 to skip.
set -euo pipefail

if [ "${LTM_SKIP_BROWSER_INSTALL:-}" = "1" ]; then
  echo "install-browser: skipped (LTM_SKIP_BROWSER_INSTALL=1)"
  exit 0
fi

missing=()
if [ ! -x /usr/bin/chromium ]; then
  missing+=(chromium)
fi
if ! dpkg-query -W -f='${Status}' fonts-wqy-zenhei 2>/dev/null | grep -q "install ok installed"; then
  missing+=(fonts-wqy-zenhei)
fi
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install-browser: need root to apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-browser: apt-get not found; install ${missing[*]} by hand" >&2
  exit 1
fi

echo "install-browser: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
/usr/bin/chromium --version 2>/dev/null || true
