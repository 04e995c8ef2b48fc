#!/usr/bin/env bash
# Run the whole kit end to end on this machine: install what is missing, build the runner, and
# run every suite against a throwaway PostgreSQL cluster that the runner starts and removes.
#
# Usage: scripts/kit.sh [runner options...]      e.g. scripts/kit.sh --markdown -
# Pass --dsn URL to test an existing database instead of a throwaway cluster.
# Installs only what the kit needs (`scripts/install-deps.sh kit`: PostgreSQL and a Rust
# toolchain; none of the test tiers' Python packages, browsers or extra servers).
# Set AWA_SKIP_INSTALL=1 to skip that, AWA_CONFORMANCE_BIN=PATH to run that runner instead of
# building one. Exit codes: the runner's (see --help).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# The project venv first when there is one (install-deps.sh quick|db|full makes it): an adapter
# or producer command given to the runner finds its python3 and packages there.
for d in "$HOME/.cargo/bin" "$HOME/.pyenv/shims" "$HOME/.pyenv/bin" "$ROOT/.venv/bin"; do
    if [ -d "$d" ] && [[ ":$PATH:" != *":$d:"* ]]; then PATH="$d:$PATH"; fi
done
export PATH
if [ "${AWA_SKIP_INSTALL:-0}" != 1 ]; then
    bash scripts/install-deps.sh kit
fi
[[ ":$PATH:" == *":$ROOT/.venv/bin:"* ]] || PATH="$ROOT/.venv/bin:$PATH"
# AWA_CONFORMANCE_BIN: a runner built already (scripts/test.sh passes the release wheel's).
if [ -n "${AWA_CONFORMANCE_BIN:-}" ]; then
    exec "$AWA_CONFORMANCE_BIN" "$@"
fi
cargo build --release --quiet -p awa-conformance
exec target/release/awa-conformance "$@"
