#!/usr/bin/env bash
# Idempotent installer of what the kit and the test tiers need on a fresh Debian machine (run
# as root).
#
# Usage: scripts/install-deps.sh [kit|quick|db|full]      (no argument = full)
#   kit    what scripts/kit.sh needs: PostgreSQL server (Debian's package, skipped when initdb is
#          already present) and a Rust toolchain (rustup).
#   quick  what `scripts/test.sh quick` needs: the Rust toolchain with rustfmt and clippy, and the
#          project venv .venv with the pinned Python test packages of tests/requirements.txt.
#   db     quick's, plus PostgreSQL, the Python example producer's pins, the wheel build tools
#          of bindings/build-requirements.txt (maturin, ziglang) and the oldest released awa CLI
#          of tests/requirements-awa-oldest.txt (a venv under target/, for runner/tests/db_compat.rs)
#          and cargo-nextest (pinned, built into target/tools) for the DB-backed Rust tests.
#   full   db's, plus Go, Node.js, Java 17 and Maven (the example adapters and producers),
#          Chromium (the results page), actionlint (go install) and the pinned PostgreSQL 13-18
#          server binaries of the version matrix (scripts/fetch-pg.py).
# Quiet on success; every failing command shows its own output.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export DEBIAN_FRONTEND=noninteractive

# What each tier installs: quick, db and full nest; kit stands beside them (no linters, no venv).
#                 PostgreSQL  rustfmt+clippy  .venv+test pins  db's extras  full's extras
case "$#:${1-full}" in
    [01]:kit)   NEED_PG=1   NEED_LINTS=0    NEED_VENV=0      NEED_DB=0    NEED_FULL=0 ;;
    [01]:quick) NEED_PG=0   NEED_LINTS=1    NEED_VENV=1      NEED_DB=0    NEED_FULL=0 ;;
    [01]:db)    NEED_PG=1   NEED_LINTS=1    NEED_VENV=1      NEED_DB=1    NEED_FULL=0 ;;
    [01]:full)  NEED_PG=1   NEED_LINTS=1    NEED_VENV=1      NEED_DB=1    NEED_FULL=1 ;;
    *) echo "install-deps.sh: unknown tier '$*': the tiers are kit, quick, db and full (default full)" >&2
       exit 2 ;;
esac
TIER="${1-full}"

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
# kit, db and full: the runner's embedded cluster and scripts/pg-throwaway.sh run on it.
# `compgen -G` tests the glob without tripping `set -u`/nullglob differences.
log "tier $TIER"
if [ "$NEED_PG" -eq 1 ]; then
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
fi

# --- Rust components ----------------------------------------------------------------------------
# Debian's own rustc is older than the workspace's rust-version (1.85), so Rust comes from rustup.
# Every tier builds Rust; the kit needs no rustfmt or clippy.
if command -v rustup >/dev/null && [ "$NEED_LINTS" -eq 1 ]; then
    quiet rustup component add rustfmt clippy
    log "rust: $(rustc --version) with rustfmt and clippy"
elif command -v cargo >/dev/null; then
    log "rust: using $(cargo --version) as is (needs >= 1.85$([ "$NEED_LINTS" -eq 0 ] || echo ' with rustfmt and clippy'))"
else
    log "no Rust toolchain: install rustup (https://rustup.rs), then rerun this script" >&2
    exit 1
fi

# --- db and full: cargo-nextest, pinned, for the DB-backed Rust tests ------------------------------
# scripts/test.sh runs the DB tests under cargo-nextest (.config/nextest.toml: each test a process
# of its own, the whole-cluster checks alone, a slow-test timeout). Built from crates.io without
# its self-updater (the registries reach no release binaries) into target/tools, kept between
# runs. A debug build without debug info: it only starts test processes and reads their output,
# and it builds in 2 minutes on 2 cores (3 with debug info, over 5 as a release build;
# CONTRIBUTING, step times). It builds in the background while the downloads below run (they
# wait on the network, the build on the CPU); the script waits for it before it ends, and a
# failed build fails the script with the build's output.
NEXTEST_VERSION=0.9.151
TOOLS="$ROOT/target/tools"
NEXTEST_BUILD=""
if [ "$NEED_DB" -eq 1 ]; then
    if [ "$("$TOOLS/bin/cargo-nextest" nextest --version 2>/dev/null | head -n1 | cut -d' ' -f2)" = "$NEXTEST_VERSION" ]; then
        log "cargo-nextest: $NEXTEST_VERSION present in target/tools"
    else
        log "cargo-nextest: building $NEXTEST_VERSION (cargo install) into target/tools, in the background"
        NEXTEST_LOG="$(mktemp)"
        # A process group of its own (setsid), so an install that fails before the end stops the
        # whole build (cargo and its rustc jobs): nothing keeps running after this script.
        setsid env CARGO_PROFILE_DEV_DEBUG=0 cargo install --debug --locked --quiet --root "$TOOLS" \
            --version "$NEXTEST_VERSION" --no-default-features --features default-no-update cargo-nextest \
            >"$NEXTEST_LOG" 2>&1 &
        NEXTEST_BUILD=$!
        trap '[ -z "$NEXTEST_BUILD" ] || kill -- -"$NEXTEST_BUILD" 2>/dev/null; rm -f "$NEXTEST_LOG"' EXIT
    fi
fi

# --- full only from here to the Python section: the example adapters and producers, the results page
if [ "$NEED_FULL" -eq 1 ]; then

# --- Go (the example adapter in examples/adapters/go is built and checked by the tests) -------
if [ -x /usr/local/go/bin/go ] || command -v go >/dev/null; then
    log "go: present"
else
    log "go: installing golang-go (apt-get)"
    quiet as_root apt-get update -q
    quiet as_root apt-get install -y -q --no-install-recommends golang-go
fi

# --- Node.js, Java 17 and Maven (the example producers in examples/producers) ----------------------
# The polyglot machine has them; a plain Debian one gets them from apt (Node.js >= 20 and Go >= 1.25
# are needed by the Node and Go examples: Debian's older packages build but fail their tests).
for tool in node:nodejs npm:npm javac:openjdk-17-jdk-headless mvn:maven; do
    if command -v "${tool%%:*}" >/dev/null; then
        log "${tool%%:*}: present"
    else
        log "${tool%%:*}: installing ${tool#*:} (apt-get)"
        quiet as_root apt-get update -q
        quiet as_root apt-get install -y -q --no-install-recommends "${tool#*:}"
    fi
done

# --- Chromium (the results page's browser test drives Debian's chromium through playwright) -------
# playwright (PyPI, pinned in tests/requirements.txt) never downloads a browser here: the test
# points it at /usr/bin/chromium.
if command -v chromium >/dev/null; then
    log "chromium: present ($(chromium --version 2>/dev/null | head -n1))"
else
    log "chromium: installing (apt-get)"
    quiet as_root apt-get update -q
    quiet as_root apt-get install -y -q --no-install-recommends chromium
fi

fi # NEED_FULL

# --- Python test dependencies -------------------------------------------------------------------
# A project venv (.venv at the repository root), so the pins never touch a system Python
# (Debian's python3 refuses `pip install` outside a venv: PEP 668). test.sh and kit.sh put
# .venv/bin first on PATH; the Python bindings are built into the same venv.
# quick, db and full (the kit runs no Python).
if [ "$NEED_VENV" -eq 1 ]; then
PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null || { log "no $PY found; install python3 (>= 3.10)" >&2; exit 1; }
VENV="$ROOT/.venv"
if [ ! -x "$VENV/bin/python" ]; then
    if ! "$PY" -m venv --help >/dev/null 2>&1 || ! "$PY" -c 'import ensurepip' >/dev/null 2>&1; then
        log "python: installing python3-venv (apt-get)"
        quiet as_root apt-get update -q
        quiet as_root apt-get install -y -q --no-install-recommends python3-venv
    fi
    quiet "$PY" -m venv "$VENV"
fi
quiet "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$ROOT/tests/requirements.txt"
if [ "$NEED_DB" -eq 1 ]; then
    # The example producer's own pins (examples/producers/python/run uses this venv's python3).
    quiet "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$ROOT/examples/producers/python/requirements.txt"
    # The release wheel's build tools (scripts/build-wheel.sh): zig links against glibc 2.17.
    quiet "$VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$ROOT/bindings/build-requirements.txt"
fi
log "python: $("$VENV/bin/python" --version) in .venv with $(tr -d '\r' <"$ROOT/tests/requirements.txt" | grep -cv '^\s*\(#\|$\)') pinned packages"
[ -x "$VENV/bin/awa" ] || { log "the awa CLI (awa-cli) is missing from .venv after pip install" >&2; exit 1; }
fi # NEED_VENV

# --- db and full: the oldest released awa CLI -----------------------------------------------------
# The oldest released awa CLI the compat profile checks (runner/tests/db_compat.rs migrates a
# database with it besides 0.6.9's). awa-cli installs one `awa` binary, so the pin gets a venv of
# its own under target/, named by its version: kept between runs, made again only when the pin
# changes (or after `cargo clean`).
if [ "$NEED_DB" -eq 1 ]; then
OLDEST_PINS="$ROOT/tests/requirements-awa-oldest.txt"
OLDEST="$(sed -n 's/^awa-cli==\([0-9.]*\)[[:space:]]*$/\1/p' "$OLDEST_PINS")"
[ -n "$OLDEST" ] || { log "no awa-cli==VERSION line in $OLDEST_PINS" >&2; exit 1; }
OLDEST_VENV="$ROOT/target/awa-cli-$OLDEST"
if [ -x "$OLDEST_VENV/bin/awa" ]; then
    log "awa-cli $OLDEST (oldest checked): present in target/awa-cli-$OLDEST"
else
    log "awa-cli $OLDEST (oldest checked): installing into target/awa-cli-$OLDEST"
    mkdir -p "$ROOT/target"
    quiet "$PY" -m venv "$OLDEST_VENV"
    quiet "$OLDEST_VENV/bin/python" -m pip install --disable-pip-version-check -q -r "$OLDEST_PINS"
    [ -x "$OLDEST_VENV/bin/awa" ] || { log "the awa CLI is missing from target/awa-cli-$OLDEST after pip install" >&2; exit 1; }
fi

fi # NEED_DB

# --- full only: actionlint and the version matrix's servers ----------------------------------------
if [ "$NEED_FULL" -eq 1 ]; then
# --- actionlint (scripts/test.sh lints .github/workflows with it), a Go module, pinned ------------
ACTIONLINT_VERSION=1.7.7
if [ "$("$VENV/bin/actionlint" -version 2>/dev/null | head -n1)" = "v$ACTIONLINT_VERSION" ]; then
    log "actionlint: $ACTIONLINT_VERSION present"
else
    log "actionlint: installing $ACTIONLINT_VERSION (go install) into .venv/bin"
    quiet env GOBIN="$VENV/bin" "$(command -v go || echo /usr/local/go/bin/go)" install \
        "github.com/rhysd/actionlint/cmd/actionlint@v$ACTIONLINT_VERSION"
fi
# --- PostgreSQL 13-18 server binaries for the version matrix (scripts/pg-matrix.sh) -------------
# Pinned by version and sha512 in scripts/pg-servers.json, cached outside the checkout (the
# throwaway clusters run as the `postgres` OS user); a cached major is not fetched again.
log "postgres servers: $("$VENV/bin/python" "$ROOT/scripts/fetch-pg.py" 13 14 15 16 17 18 | cut -d' ' -f2 | xargs -n1 dirname | xargs -n1 basename | tr '\n' ' ')"
fi # NEED_FULL
if [ -n "$NEXTEST_BUILD" ]; then
    log "cargo-nextest: waiting for its build"
    if ! wait "$NEXTEST_BUILD"; then
        NEXTEST_BUILD=""
        cat "$NEXTEST_LOG" >&2
        log "FAILED: cargo install cargo-nextest $NEXTEST_VERSION (its output is above)" >&2
        exit 1
    fi
    NEXTEST_BUILD=""
    log "cargo-nextest: $("$TOOLS/bin/cargo-nextest" nextest --version | head -n1)"
fi
log "done ($TIER)"
