#!/usr/bin/env bash
# Idempotent set-up on a Debian machine: system packages, the virtual environment and the
# Python dependencies. A second run downloads nothing (uv's cache, a stamp of the lock file).
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "error: $*" >&2; exit 1; }

# --- tools that must exist ----------------------------------------------------------------
command -v python3 >/dev/null || die "python3 not found: install Python 3.11+ (apt-get install python3)"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || die "Python 3.11+ needed, found $(python3 -V 2>&1): install a newer python3"

apt_missing=()
for pkg in tesseract-ocr tesseract-ocr-eng tesseract-ocr-jpn poppler-utils graphviz chromium chromium-driver postgresql; do
  dpkg -s "$pkg" >/dev/null 2>&1 || apt_missing+=("$pkg")
done
command -v java >/dev/null || apt_missing+=(openjdk-17-jdk-headless)
command -v javac >/dev/null || apt_missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || apt_missing+=(maven)
python3 -c 'import ensurepip' 2>/dev/null || apt_missing+=(python3-venv)

if ((${#apt_missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    die "missing Debian packages: ${apt_missing[*]} (run as root or: sudo apt-get install ${apt_missing[*]})"
  fi
  echo "installing Debian packages: ${apt_missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || die "apt-get update failed: check the network and the apt sources"
  apt-get install -y -qq --no-install-recommends "${apt_missing[@]}" >/dev/null \
    || die "apt-get install ${apt_missing[*]} failed"
fi

# --- virtual environment -----------------------------------------------------------------
if [[ ! -x .venv/bin/python ]]; then
  echo "creating .venv"
  python3 -m venv .venv || die "python3 -m venv failed: install python3-venv"
fi
if [[ ! -x .venv/bin/uv ]]; then
  .venv/bin/python -m pip --version >/dev/null 2>&1 || .venv/bin/python -m ensurepip --default-pip >/dev/null
  .venv/bin/python -m pip install -q --disable-pip-version-check "uv>=0.5,<1" \
    || die "could not install uv into .venv (is the package index reachable?)"
fi
stamp=$(cat pyproject.toml requirements.lock | sha256sum | cut -c1-16)
if [[ "$(cat .venv/.dkg-stamp 2>/dev/null)" != "$stamp" ]]; then
  echo "installing Python dependencies (cached after the first time)"
  # --compile-bytecode: a process that may not write __pycache__ (PYTHONDONTWRITEBYTECODE, a read-only
  # venv) otherwise compiles ~1,000 modules from source on every start: 3 s of each cold `dkg ask`.
  .venv/bin/uv pip install -q --compile-bytecode --python .venv/bin/python -r requirements.lock \
    || die "installing requirements.lock failed (see the message above)"
  .venv/bin/uv pip install -q --python .venv/bin/python --no-deps -e . \
    || die "installing the dkg package failed"
  echo "$stamp" > .venv/.dkg-stamp
fi
# the project's own modules, whatever changed since the last run (a fraction of a second)
.venv/bin/python -m compileall -q -j 0 dkg dkg_cli flows tasks >/dev/null || die "compiling the dkg package failed"
echo "setup ok: $(.venv/bin/python -V), java $(java -version 2>&1 | head -1 | cut -d'"' -f2)"
