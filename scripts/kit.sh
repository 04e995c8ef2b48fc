#!/usr/bin/env bash
# Run the whole kit end to end on this machine: install what is missing, build the runner, and
# run every suite against a throwaway PostgreSQL cluster that the runner starts and removes.
#
# Usage: scripts/kit.sh [runner options...]      e.g. scripts/kit.sh --markdown -
# Pass --dsn URL to test an existing database instead of a throwaway cluster.
# Set AWA_SKIP_INSTALL=1 to skip scripts/install-deps.sh, AWA_CONFORMANCE_BIN=PATH to run that
# runner instead of building one. Exit codes: the runner's (see --help).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# The project venv (created by install-deps.sh) first: python3, pytest, maturin and awa.
for d in "$HOME/.cargo/bin" "$HOME/.pyenv/shims" "$HOME/.pyenv/bin" "$ROOT/.venv/bin"; do
    if [ -d "$d" ] && [[ ":$PATH:" != *":$d:"* ]]; then PATH="$d:$PATH"; fi
done
export PATH
if [ "${AWA_SKIP_INSTALL:-0}" != 1 ]; then
    bash scripts/install-deps.sh
fi
[[ ":$PATH:" == *":$ROOT/.venv/bin:"* ]] || PATH="$ROOT/.venv/bin:$PATH"
# AWA_CONFORMANCE_BIN: a runner built already (scripts/test.sh passes the release wheel's).
if [ -n "${AWA_CONFORMANCE_BIN:-}" ]; then
    exec "$AWA_CONFORMANCE_BIN" "$@"
fi
cargo build --release --quiet -p awa-conformance
exec target/release/awa-conformance "$@"
