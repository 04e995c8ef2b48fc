#!/usr/bin/env bash
# Build the release wheel (scripts/build-wheel.sh), install that wheel into a venv, then run the Python tests.
#
# Usage: bindings/run-tests.sh [pytest args...]
# Env:   DATABASE_URL  PostgreSQL DSN for the database tests (they skip, with a reason, without it)
#        AWA_WHEEL_DIR directory with an already built release wheel (default: build one)
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
python -c 'import ziglang' 2>/dev/null || need+=(-r "$here/build-requirements.txt")
python -c 'import pytest' 2>/dev/null || need+=("pytest>=8")
python -c 'import psycopg' 2>/dev/null || need+=("psycopg[binary]>=3.1")
if ((${#need[@]})); then
    python -m pip install --quiet "${need[@]}"
fi

# Install exactly the release wheel users install (scripts/build-wheel.sh: manylinux2014,
# stripped): the one in AWA_WHEEL_DIR when the caller built it already (scripts/test.sh
# builds it once for every step), else a fresh build.
if [[ -n "${AWA_WHEEL_DIR:-}" ]]; then
    wheels="$AWA_WHEEL_DIR"
else
    wheels="$(mktemp -d)"
    trap 'rm -rf "$wheels"' EXIT
    PYTHON="$(command -v python)" "$here/../scripts/build-wheel.sh" "$wheels" >/dev/null
fi
wheel="$(ls -t "$wheels"/awa_conformance-*-abi3-*manylinux_2_17_*.whl | head -n1)"
python -m pip install --quiet --force-reinstall --no-deps "$wheel"
# tests/test_wheel.py inspects the file itself (size, tag, metadata, linked libraries).
export AWA_WHEEL="$wheel"

cd "$here"
python -m pytest "$@"
