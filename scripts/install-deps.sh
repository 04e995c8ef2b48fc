#!/usr/bin/env bash
# Idempotent installer of everything the test suite needs on a fresh Debian machine (run as root).
#
# Installs: PostgreSQL server (Debian's package, skipped when initdb is already present), the
# rustfmt and clippy components, and the pinned Python test dependencies of tests/requirements.txt.
# Quiet on success; every failing command shows its own output.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export DEBIAN_FRONTEND=noninteractive

log() { printf '[install-deps] %s\n' "$*"; }

# Run a command quietly; on failure print its captured output and fail.
quiet() {
    local out
    if ! out="$("$@" 2>&1)"; then
        printf '%s\n' "$out" >&2
        log "FAILED: $*" >&2
        return 1
    fi
}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# --- PostgreSQL server --------------------------------------------------------------------------
# `compgen -G` tests the glob without tripping `set -u`/nullglob differences.
if compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
    log "postgresql: present ($(compgen -G '/usr/lib/postgresql/*/bin/initdb' | head -n1))"
else
    log "postgresql: installing (apt-get)"
    quiet as_root apt-get update -q
    # The Debian package starts a default cluster on 5432 in some images; we never use it, but
    # we do not stop it either: our throwaway clusters listen on their own port.
    quiet as_root apt-get install -y -q --no-install-recommends postgresql postgresql-contrib
fi
for tool in pg_isready psql runuser; do
    command -v "$tool" >/dev/null || { log "missing $tool after install" >&2; exit 1; }
done

# --- Rust components ----------------------------------------------------------------------------
if command -v rustup >/dev/null; then
    quiet rustup component add rustfmt clippy
    log "rust: $(rustc --version) with rustfmt and clippy"
else
    command -v cargo >/dev/null || { log "no Rust toolchain (cargo) found; install rustup" >&2; exit 1; }
    log "rust: rustup absent; using $(cargo --version) as is"
fi

# --- Python test dependencies -------------------------------------------------------------------
PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null || { log "no $PY found" >&2; exit 1; }
quiet "$PY" -m pip install --disable-pip-version-check --root-user-action=ignore -q \
    -r "$ROOT/tests/requirements.txt"
log "python: $("$PY" --version) with $(tr -d '\r' <"$ROOT/tests/requirements.txt" | grep -cv '^\s*\(#\|$\)') pinned packages"
# pyenv only sees console scripts of newly installed packages (the `awa` CLI) after a rehash.
if command -v pyenv >/dev/null; then quiet pyenv rehash; fi
command -v awa >/dev/null || { log "the awa CLI (awa-cli) is not on PATH after pip install" >&2; exit 1; }
log "done"
