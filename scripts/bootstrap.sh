#!/usr/bin/env bash
# Create .venv and install swamp with the given extras. Idempotent: reinstalls
# only when pyproject.toml changed since the last successful install.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=".venv/.swamp-installed${extras:+-$extras}"
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e ".${extras:+[$extras]}"
  # An editable install is not byte-compiled; where PYTHONDONTWRITEBYTECODE
  # is set it never would be, and every command would recompile swamp.
  .venv/bin/python -m compileall -q src >/dev/null
  echo "$want" > "$stamp"
fi
