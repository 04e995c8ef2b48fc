#!/usr/bin/env bash
# Build the abi3 wheel with maturin, install that wheel into a venv, then run the Python tests.
#
# Usage: bindings/run-tests.sh [pytest args...]
# Env:   DATABASE_URL  PostgreSQL DSN for the database tests (they skip, with a reason, without it)
#        AWA_VENV      venv directory (default: bindings/.venv)
#        PYTHON        interpreter used to create the venv (default: python3)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${AWA_VENV:-$here/.venv}"

if [[ ! -x "$venv/bin/python" ]]; then
    # System site-packages: reuse an installed maturin/pytest/psycopg when present.
    "${PYTHON:-python3}" -m venv --system-site-packages "$venv"
fi
# shellcheck disable=SC1091
source "$venv/bin/activate"

need=()
python -c 'import maturin' 2>/dev/null || need+=("maturin>=1.9.4,<2")
python -c 'import pytest' 2>/dev/null || need+=("pytest>=8")
python -c 'import psycopg' 2>/dev/null || need+=("psycopg[binary]>=3.1")
if ((${#need[@]})); then
    python -m pip install --quiet "${need[@]}"
fi

# Build the abi3 wheel users install, and install exactly that wheel (release build: the
# benchmark and the plugin subprocess tests use the same install).
wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT
(cd "$here" && maturin build --release --quiet --out "$wheels")
python -m pip install --quiet --force-reinstall --no-deps "$wheels"/awa_conformance-*-abi3-*.whl

cd "$here"
python -m pytest "$@"
