#!/usr/bin/env bash
# Creates .venv with the package and its dev tools; a no-op when pyproject.toml and this script
# are unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "reconcile needs Python 3.11 or newer ($PYTHON is $("$PYTHON" --version 2>&1))" >&2
  exit 1
fi
stamp=".venv/.installed-$(cat pyproject.toml scripts/setup-venv.sh | sha1sum | cut -c1-12)"
if [[ -f "$stamp" ]]; then exit 0; fi
echo "setting up .venv (packages from pyproject.toml)..." >&2
[[ -x .venv/bin/python ]] || "$PYTHON" -m venv .venv
log=.venv/install.log

# uv (from PyPI, into the venv, at the version tested) installs the same packages from the
# same index for a third of pip's CPU: 24 CPU-s on a fresh machine, pip 59, most of the
# difference pip compiling every module of every package to bytecode up front (Python compiles
# what it imports). It is given pip's settings for the index, extra index, local wheels and
# certificates; pip installs when uv cannot be had or fails.
#
# The checkout itself goes on the venv's path (editable_mode=compat: a line naming its
# directory), not behind setuptools' import hook, which every Python process of the venv would
# import at start-up (pathlib, re, urllib.parse: `python -c pass` took 34 ms of CPU, now 15).
UV_VERSION=0.13.9
with_uv() {
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION" || return 1
  local -a settings=()
  if [[ -n "${PIP_INDEX_URL:-}" ]]; then settings+=("UV_INDEX_URL=$PIP_INDEX_URL"); fi
  if [[ -n "${PIP_EXTRA_INDEX_URL:-}" ]]; then
    settings+=("UV_EXTRA_INDEX_URL=$PIP_EXTRA_INDEX_URL")
  fi
  # pip passes over a local directory that is not there; uv refuses it
  local link links=()
  for link in ${PIP_FIND_LINKS:-}; do
    if [[ "$link" == *://* || -e "$link" ]]; then links+=("$link"); fi
  done
  if ((${#links[@]})); then settings+=("UV_FIND_LINKS=$(IFS=,; echo "${links[*]}")"); fi
  if [[ -n "${PIP_CERT:-}" && -z "${SSL_CERT_FILE:-}" ]]; then
    settings+=("SSL_CERT_FILE=$PIP_CERT")
  fi
  env "${settings[@]}" UV_SYSTEM_CERTS=1 .venv/bin/uv pip install --python .venv/bin/python \
    --config-settings editable_mode=compat -e '.[dev]'
}
with_pip() {
  .venv/bin/python -m pip install --upgrade pip &&
    .venv/bin/python -m pip install --config-settings editable_mode=compat -e '.[dev]'
}
if ! { with_uv || { echo "uv failed: installing with pip" && with_pip; }; } >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  echo "installing the packages failed; the whole log is in $log" >&2
  exit 1
fi
rm -f .venv/.installed-*
touch "$stamp"
