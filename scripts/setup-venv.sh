#!/usr/bin/env bash
# Creates .venv with the package and its dev tools; a no-op when pyproject.toml is unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "reconcile needs Python 3.11 or newer ($PYTHON is $("$PYTHON" --version 2>&1))" >&2
  exit 1
fi
stamp=".venv/.installed-$(sha1sum pyproject.toml | cut -c1-12)"
if [[ -f "$stamp" ]]; then exit 0; fi
echo "setting up .venv (packages from pyproject.toml)..." >&2
[[ -x .venv/bin/python ]] || "$PYTHON" -m venv .venv
log=.venv/install.log
if ! { .venv/bin/python -m pip install --upgrade pip &&
       .venv/bin/python -m pip install -e '.[dev]'; } >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  echo "installing the packages failed; the whole log is in $log" >&2
  exit 1
fi
rm -f .venv/.installed-*
touch "$stamp"
