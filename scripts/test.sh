#!/usr/bin/env bash
# The single test command, in three tiers: lint and offline tests, then every database-backed
# suite on a throwaway PostgreSQL, then the slow cross-language and cross-version steps.
#
# Usage: scripts/test.sh [quick|db|full]      (from anywhere; no argument = full)
#   quick  before a commit: fmt, clippy, the workspace's offline Rust tests, the vectors checks
#          on a debug runner, the mutant patches, the file-only doc and ADR checks. No
#          PostgreSQL, no release wheel. About 1 minute with a warm build, 2 after an edit to
#          the runner (CONTRIBUTING.md, "The quick tier").
#   db     quick's steps plus every database-backed step (Rust DB tests under cargo-nextest,
#          runner --dsn, schema SQL tests, Python bindings, fuzz, Python example producer,
#          reports, documented examples) on one throwaway cluster, with the release wheel's
#          runner. The SQL mutants in "caught" mode unless the change touches what they are
#          about (scripts/mutant-mode.sh).
#   full   everything: db plus the exact SQL kill matrix, the PostgreSQL 14-18 matrix, the
#          example producers and adapters, the ci recipe, the cross-check against released Awa,
#          the results page... What CI (.ci/run) and README.md run.
# Each tier first installs what it lacks (scripts/install-deps.sh TIER); AWA_SKIP_INSTALL=1
# skips that. PGPORT_THROWAWAY (default 55432) picks the throwaway cluster's port.
# Every step of the tier runs even when an earlier one fails; the script exits 1 if any step
# failed, 2 on a usage error.
# To add a step: one `step <tier> "<name>" <command...>` line in the STEPS section, with the
# lowest tier it belongs to (pytest suites go through `pytest_suite`, which fails on "no tests
# collected" and on an all-skipped run).
set -euo pipefail

usage() { echo "usage: scripts/test.sh [quick|db|full]   (no argument = full, what CI runs)"; }
case "$#:${1-full}" in
    [01]:quick) TIER=quick LEVEL=1 ;;
    [01]:db) TIER=db LEVEL=2 ;;
    [01]:full) TIER=full LEVEL=3 ;;
    [01]:-h | [01]:--help) usage; exit 0 ;;
    *) echo "test.sh: unknown tier '$*': the tiers are quick, db and full" >&2; usage >&2; exit 2 ;;
esac

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
# Keep the work tree clean: no __pycache__ next to the test files.
export PYTHONDONTWRITEBYTECODE=1
PG="$ROOT/scripts/pg-throwaway.sh"
# The project venv (created by install-deps.sh) first: python3, pytest, maturin and awa; then the
# pinned tools install-deps.sh builds into target/tools (cargo-nextest).
for d in /usr/local/go/bin "$HOME/.cargo/bin" "$HOME/.pyenv/shims" "$HOME/.pyenv/bin" "$ROOT/target/tools/bin" "$ROOT/.venv/bin"; do
    if [ -d "$d" ] && [[ ":$PATH:" != *":$d:"* ]]; then PATH="$d:$PATH"; fi
done
export PATH
if [ "${AWA_SKIP_INSTALL:-0}" != 1 ]; then
    bash "$ROOT/scripts/install-deps.sh" "$TIER"
fi
# install-deps.sh may have just created the venv and target/tools (on a fresh machine neither
# existed when PATH was set above, and a step that finds no cargo-nextest fails in 0 s).
for d in /usr/local/go/bin "$HOME/.cargo/bin" "$ROOT/target/tools/bin" "$ROOT/.venv/bin"; do
    if [ -d "$d" ] && [[ ":$PATH:" != *":$d:"* ]]; then PATH="$d:$PATH"; fi
done
# The venv's bin first even before it exists (a later step may create it).
[[ ":$PATH:" == *":$ROOT/.venv/bin:"* ]] || PATH="$ROOT/.venv/bin:$PATH"
# The bindings are built and installed into the same venv.
export AWA_VENV="$ROOT/.venv"

SUMMARY=()
FAILED=0
STEPS_RUN=0
STEPS_TIME=0

# step TIER NAME COMMAND...: when this run's tier includes TIER (tiers nest: full runs db's
# steps, db runs quick's), print a header, run the command and record ok/FAILED with its tier
# and duration; otherwise do nothing.
step() {
    local tier="$1" name="$2"; shift 2
    local start rc=0 took rank
    case "$tier" in
        quick) rank=1 ;; db) rank=2 ;; full) rank=3 ;;
        *) echo "test.sh: step '$name' names no tier (quick, db or full)" >&2; exit 2 ;;
    esac
    [ "$rank" -le "$LEVEL" ] || return 0
    printf '\n==================== step [%s]: %s ====================\n' "$tier" "$name"
    printf '$ %s\n' "$*"
    start=$SECONDS
    "$@" || rc=$?
    took=$((SECONDS - start))
    STEPS_RUN=$((STEPS_RUN + 1)) STEPS_TIME=$((STEPS_TIME + took))
    if [ "$rc" -eq 0 ]; then
        SUMMARY+=("$(printf 'ok      %-7s %s (%ss)' "[$tier]" "$name" "$took")")
    else
        SUMMARY+=("$(printf 'FAILED  %-7s %s (exit %s, %ss)' "[$tier]" "$name" "$rc" "$took")")
        FAILED=1
    fi
}

# pytest_suite ARGS...: pytest that must collect and pass at least one test. Exit 5 (no tests
# collected) is already non-zero; an all-skipped run exits 0, so the junit report is checked too.
pytest_suite() {
    local report rc=0
    report="$(mktemp --suffix=.xml)"
    "$PY" -m pytest -p no:cacheprovider --strict-markers -rs --junitxml="$report" "$@" || rc=$?
    if [ "$rc" -eq 0 ]; then
        "$PY" - "$report" <<'PYEOF' || rc=1
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
tests = sum(int(s.get("tests", 0)) for s in suites)
skipped = sum(int(s.get("skipped", 0)) for s in suites)
if tests - skipped <= 0:
    sys.exit(f"pytest_suite: no test passed ({tests} collected, {skipped} skipped): a suite that runs nothing fails this step")
PYEOF
    fi
    rm -f "$report"
    return "$rc"
}

# --- tier set-up --------------------------------------------------------------------------------
PG_STARTED=0 REPORTS="" WHEELS="" RESULTS_DIR=""
cleanup() {
    if [ "$PG_STARTED" -eq 1 ]; then "$PG" stop || true; fi
    rm -rf "$REPORTS" "$WHEELS" "$RESULTS_DIR"
}
trap cleanup EXIT
if [ "$LEVEL" -ge 2 ]; then
    # db and full: one throwaway PostgreSQL for every DB-backed step.
    eval "$("$PG" start)"
    PG_STARTED=1
    export DATABASE_URL
    # The database is always there in these tiers, so DB-backed suites must not skip for lack of it.
    export AWA_CROSSCHECK_REQUIRED=1
    export AWA_REQUIRE_DB=1
    REPORTS="$(mktemp -d)"
    # The reports of the runs that show each implementation green (the steps and tests below keep
    # them here: tests/page/keep.py), for the results page, badge and compatibility table.
    RESULTS_DIR="$(mktemp -d)"
    export AWA_RESULTS_DIR="$RESULTS_DIR"
    # The release wheel, built once (scripts/build-wheel.sh) and installed into the venv: its
    # `awa-conformance` console script is the runner every later step runs (the same Rust code as
    # the standalone binary, compiled once: CONTRIBUTING, "CI time budget").
    WHEELS="$(mktemp -d)"
    RUNNER="$ROOT/.venv/bin/awa-conformance"
    export AWA_CONFORMANCE_BIN="$RUNNER"
else
    # quick: no PostgreSQL, no wheel. Nothing may reach a database, and the runner is this
    # tree's debug build (`runner` below), never a release runner left by an earlier run.
    unset DATABASE_URL AWA_REQUIRE_DB AWA_CROSSCHECK_REQUIRED AWA_CONFORMANCE_BIN
    RUNNER=""
fi
# quick's runner: the debug build `cargo test` makes for the CLI tests (the same build, no second
# one with other features, as `cargo run` would make), set by cargo_test_offline only once that
# build succeeded, so a stale binary from an earlier build never answers.
DEBUG_RUNNER=""

# runner ARGS...: the tier's runner: the release wheel's in db and full, the debug build in quick.
runner() {
    if [ -n "$RUNNER" ]; then
        "$RUNNER" "$@"
    elif [ -n "$DEBUG_RUNNER" ]; then
        "$DEBUG_RUNNER" "$@"
    else
        echo "test.sh: no debug runner: its build failed in the step cargo test (offline)" >&2
        return 1
    fi
}

# Build the release wheel and install it into the venv; the runner steps use its console script.
build_wheel() {
    local wheel
    "$ROOT/scripts/build-wheel.sh" "$WHEELS" >/dev/null &&
        wheel="$(ls -t "$WHEELS"/awa_conformance-*-abi3-*manylinux_2_17_*.whl | head -n1)" &&
        "$PY" -m pip install --quiet --force-reinstall --no-deps "$wheel" &&
        "$RUNNER" --version
}

# The runner end to end against the throwaway database, reference schema installed by the runner.
runner_dsn() {
    "$RUNNER" schema install --dsn "$DATABASE_URL" --schema awa_ci --producer-role awa_ci_producer &&
    "$RUNNER" --dsn "$DATABASE_URL" --schema awa_ci --producer-role awa_ci_producer -q \
        --report-json "$REPORTS/report.json" --junit "$REPORTS/junit.xml" --markdown "$REPORTS/summary.md" &&
        cp "$REPORTS/report.json" "$RESULTS_DIR/reference.json"
}
# The kit's default path (scripts/kit.sh): no DSN, so the runner starts its own throwaway cluster.
runner_embedded() {
    env -u DATABASE_URL AWA_SKIP_INSTALL=1 "$ROOT/scripts/kit.sh" -q
}
# The SQL files' own tests (idempotent install, smoke.sql, Python cross-check of the SQL hash).
schema_sql_tests() {
    AWA_SCHEMA_TEST_DSN="$DATABASE_URL" "$ROOT/schema/tests/run.sh"
}

# The Go example adapter (written from docs/contract.md alone) passes its declared families,
# and a deliberately broken copy of it (tests/mutants/adapter-go/off_by_one_shard.patch) fails
# the run with exit 1.
go_adapter() {
    local dir rc=0 broken=0 mutant
    dir="$(mktemp -d)"
    (cd "$ROOT/examples/adapters/go" && test -z "$(gofmt -l .)" && go vet ./... && go test ./... &&
        go build -o "$dir/adapter" .) || return 1
    "$RUNNER" --no-embedded --adapter "$dir/adapter" adapter:: -q || rc=$?
    mutant="$("$PY" "$ROOT/tests/mutants/materialise.py" adapter-go off_by_one_shard)" || return 1
    "$RUNNER" --no-embedded --adapter "$mutant" adapter::concurrency_shard:: -q >/dev/null 2>&1 || broken=$?
    if [ "$broken" -ne 1 ]; then
        echo "go_adapter: a deliberately broken adapter exited $broken, not 1" >&2
        rc=1
    fi
    rm -rf "$dir"
    return "$rc"
}

# The Python bindings: run-tests.sh builds and installs the wheel into the venv (collecting only),
# then every test runs under pytest_suite; AWA_REQUIRE_DB=1 fails database tests that would skip.
python_bindings() {
    local wheel
    AWA_WHEEL_DIR="$WHEELS" "$ROOT/bindings/run-tests.sh" -p no:cacheprovider --collect-only -q >/dev/null &&
        wheel="$(ls -t "$WHEELS"/awa_conformance-*-abi3-*manylinux_2_17_*.whl | head -n1)" &&
        (cd "$ROOT/bindings" && AWA_WHEEL="$wheel" pytest_suite -q tests)
}

# The Python example adapter implements all nine families itself (own canonical JSON, blake3 from
# PyPI, no kit import): every vector of every family passes, and a deliberately broken copy
# (tests/mutants/adapter-python/separators.patch) fails adapter::canonical_json with exit 1.
python_adapter() {
    local cmd="$PY $ROOT/examples/adapters/python/adapter.py" rc=0 broken=0
    "$RUNNER" --no-embedded --adapter "$cmd" adapter:: -q --report-json "$REPORTS/adapter.json" || rc=$?
    "$PY" - "$REPORTS/adapter.json" <<'PYEOF' || rc=1
import json, sys
report = json.load(open(sys.argv[1], encoding="utf-8"))
families = {}
for case in report["cases"]:
    # adapter::<family>::<id>, plus the one whole-adapter trial adapter::coverage.
    family = case["name"].split("::")[1]
    families.setdefault(family, set()).add(case["status"])
wrong = {f: sorted(s) for f, s in families.items() if s != {"passed"}}
if "coverage" not in families:
    sys.exit("python_adapter: no adapter::coverage case in the report")
families.pop("coverage")
if len(families) != 9 or wrong:
    sys.exit(f"python_adapter: expected all nine families passed, got {sorted(families)}; not passed: {wrong}")
PYEOF
    "$RUNNER" --no-embedded --adapter "$PY $ROOT/tests/mutants/materialise.py --exec adapter-python separators" \
        adapter::canonical_json:: -q >/dev/null 2>&1 || broken=$?
    if [ "$broken" -ne 1 ]; then
        echo "python_adapter: a deliberately broken adapter exited $broken, not 1" >&2
        rc=1
    fi
    return "$rc"
}

# Every supported PostgreSQL major, 14 to 18, on pinned server binaries (scripts/pg-matrix.sh:
# schema install/status/uninstall and the full --dsn run as a non-superuser, the Python example
# producer, the embedded default on that major's binaries, the compat profile on a database
# awa-cli migrated; each major's server version printed from its run's own provenance; a server
# below 14 refused with exit 4). Then the matrix's own test: a runner refusing a major it should
# accept fails it (tests/matrix).
pg_matrix() {
    "$ROOT/scripts/pg-matrix.sh" && AWA_CONFORMANCE_BIN="$RUNNER" pytest_suite -q tests/matrix
}

# The cross-check against released Awa 0.6.9 (tests/crosscheck): the vectors equal what the
# released packages compute, the advisories still reproduce, and the released SDK's enqueue paths
# run through the runner's producer engine (the release runner built above).
crosscheck() {
    AWA_CONFORMANCE_BIN="$RUNNER" pytest_suite tests/crosscheck
}

# A short seeded fuzz (docs/fuzz.md): random vectors beyond the frozen ones against the reference
# schema, the Python example adapter and the Python example producer find no disagreement (runner/tests/db_fuzz.rs shows that
# the same runs find a wrong database and a wrong adapter). A fixed seed keeps CI reproducible.
fuzz_smoke() {
    local rc=0
    "$RUNNER" schema install --dsn "$DATABASE_URL" --schema awa_fuzz --producer-role awa_fuzz_producer &&
    "$RUNNER" fuzz --dsn "$DATABASE_URL" --schema awa_fuzz --seed 1 --cases 40 &&
    "$RUNNER" fuzz --adapter "$PY $ROOT/examples/adapters/python/adapter.py" --seed 1 --cases 100 &&
    "$RUNNER" fuzz --dsn "$DATABASE_URL" --schema awa_fuzz --producer-role awa_fuzz_producer \
        --producer "$ROOT/examples/producers/python/run" --seed 1 --cases 30 || rc=1
    "$RUNNER" schema uninstall --dsn "$DATABASE_URL" --schema awa_fuzz --producer-role awa_fuzz_producer >/dev/null || rc=1
    return "$rc"
}

# The example producers (examples/producers/{go,go/bulk,java,node}): each one's own vector self-test,
# built once (npm ci, go build, mvn package; the run scripts reuse the builds), then every example
# and every deliberately broken variant through the runner's --producer (tests/producers: the
# examples pass >= 100 cases, each mutant fails, docs/producer-kill-matrix.md is current).
example_producers() {
    local d="$ROOT/examples/producers"
    (cd "$d/node" && npm ci --no-audit --no-fund --loglevel=error && node --test canonical.test.mjs) &&
        (cd "$d/go" && test -z "$(gofmt -l .)" && go vet ./... && go test ./...) &&
        (cd "$d/java" && mvn -q -B -Dstyle.color=never package && touch target/.built) &&
        "$d/node/run" --build && "$d/go/run" --build && "$d/java/run" --build && "$d/go/bulk/run" --build &&
        AWA_CONFORMANCE_BIN="$RUNNER" pytest_suite -q tests/producers
}

# The Python example producer: its own protocol tests (stored jobs judged from the vector
# files, each deliberate mistake caught), then the runner's producer engine on it (schema awa_ci
# of runner_dsn): every producer:: case passes (at least 100), and the deliberately broken copies
# of tests/mutants/python-runs.json (tests/mutants/python/<mistake>.patch, made by
# tests/mutants/materialise.py) each fail the cases their row names with exit 1; one more
# (skip_refusals) fails producer::coverage alone, and another (skip_concurrency_keys) fails on
# the features rule with no case failed.
python_producer() {
    local cmd="$ROOT/examples/producers/python/run" rc=0 code broken
    local run=("$RUNNER" --dsn "$DATABASE_URL" --schema awa_ci --producer-role awa_ci_producer --producer "$cmd" -q)
    AWA_CONFORMANCE_BIN="$RUNNER" pytest_suite -q "$ROOT/examples/producers/python/tests" || rc=1
    "${run[@]}" --report-json "$REPORTS/producer.json" producer:: || rc=1
    cp "$REPORTS/producer.json" "$RESULTS_DIR/python.json" || rc=1
    "$PY" - "$REPORTS/producer.json" <<'PYEOF' || rc=1
import json, sys
cases = [c for c in json.load(open(sys.argv[1], encoding="utf-8"))["cases"] if c["name"].startswith("producer::")]
# It declares no `bulk` capability: the staged-batch cases are not applicable, nothing else.
bad = [(c["name"], c["status"]) for c in cases if c["status"] != "passed"
       and not (c["status"] == "not_applicable" and c["name"].startswith("producer::bulk::"))]
if len(cases) < 100 or bad:
    sys.exit(f"python_producer: {len(cases)} producer cases (need >= 100), not passed: {bad[:10]}")
PYEOF
    # Every deliberately broken copy of tests/mutants/python-runs.json: each fails the cases its
    # row names, with exit 1 (the field rows are docs/input-space.md's producer column).
    "$PY" "$ROOT/scripts/python-mutants.py" "$RUNNER" "$DATABASE_URL" awa_ci awa_ci_producer "$REPORTS" || rc=1
    # A copy that declares `errors` and skips every refusal: no case fails, producer::coverage does.
    broken="$("$PY" "$ROOT/tests/mutants/materialise.py" python skip_refusals)" || return 1
    code=0
    "$RUNNER" --dsn "$DATABASE_URL" --schema awa_ci --producer-role awa_ci_producer --producer "$broken" -q \
        --report-json "$REPORTS/skip.json" producer:: >/dev/null 2>&1 || code=$?
    "$PY" - "$REPORTS/skip.json" "$code" <<'PYEOF' || rc=1
import json, sys
failed = [c["name"] for c in json.load(open(sys.argv[1], encoding="utf-8"))["cases"] if c["status"] == "failed"]
if sys.argv[2] != "1" or failed != ["producer::coverage"]:
    sys.exit(f"python_producer: mutant skip_refusals exited {sys.argv[2]} (want 1) with failed cases {failed[:5]} (want only producer::coverage)")
PYEOF
    # A copy that skips every concurrency-key request (a mandatory feature): no case fails, and
    # the run fails on the features rule, naming the feature and the count (ADR 0062).
    broken="$("$PY" "$ROOT/tests/mutants/materialise.py" python skip_concurrency_keys)" || return 1
    code=0
    "$RUNNER" --dsn "$DATABASE_URL" --schema awa_ci --producer-role awa_ci_producer --producer "$broken" -q \
        --report-json "$REPORTS/skip-ck.json" producer::concurrency_shard:: >/dev/null 2>&1 || code=$?
    "$PY" - "$REPORTS/skip-ck.json" "$code" <<'PYEOF' || rc=1
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
failed = [c["name"] for c in r["cases"] if c["status"] == "failed"]
finding = (r.get("features") or {}).get("finding") or ""
if sys.argv[2] != "1" or failed or "concurrency-key (" not in finding or r["features"]["core"]:
    sys.exit(f"python_producer: mutant skip_concurrency_keys exited {sys.argv[2]} (want 1), failed {failed[:5]} (want none), finding {finding!r}")
PYEOF
    return "$rc"
}

# The released Rust crate awa-model 0.6.9 as a producer (a standalone Cargo project, outside the
# workspace steps above): its formatting, then its release build for tests/crosscheck.
awa_rs_producer() {
    cargo fmt --check --manifest-path "$ROOT/examples/producers/awa-rs/Cargo.toml" &&
        "$ROOT/examples/producers/awa-rs/run" --build
}

# Every worked example of README.md, docs/contract.md, docs/adapter-protocol.md and
# bindings/README.md, checked against the runner and the installed Python module: the tests of
# tests/docs marked needs_kit (its conftest.py); the file-only ones run in quick's doc step.
doc_examples() {
    AWA_CONFORMANCE_BIN="$RUNNER" pytest_suite -q tests/docs -m needs_kit
}

# The runner's JUnit and JSON reports of a run failing every vector with hostile values, read by
# junitparser, ElementTree and the report's JSON Schema (tests/reports).
reports_consumers() {
    AWA_CONFORMANCE_BIN="$RUNNER" pytest_suite -q tests/reports
}

# The release workflow (.github/workflows/release.yml) is linted here, where CI runs: a missing
# actionlint fails the step (install-deps.sh installs it), never skips it.
workflow_lint() {
    local files=("$ROOT"/.github/workflows/*.yml)
    command -v actionlint >/dev/null ||
        { echo "workflow lint: actionlint not found; run scripts/install-deps.sh" >&2; return 1; }
    [ -f "${files[0]}" ] || { echo "workflow lint: no workflow in .github/workflows" >&2; return 1; }
    actionlint "${files[@]}"
}

# cargo_selection offline|postgres: the `cargo test` arguments (one a line) of one half of the
# workspace's tests, from `cargo metadata`. The tests that need PostgreSQL are the integration
# tests named db_* (libtest-mimic mains on DATABASE_URL) and those of NEEDS_POSTGRES (tls starts
# its own cluster on the server binaries); every other test target is offline. Selecting by
# subtraction keeps it so: a new offline test file runs in quick by itself, a new db_*.rs never
# runs there. Packages with no test target at all (the bindings' cdylib) are left out, as a
# plain `cargo test --workspace` leaves them.
NEEDS_POSTGRES="tls"
cargo_selection() {
    local meta
    meta="$(cargo metadata --no-deps --format-version 1)" || return 1
    "$PY" -c '
import json, sys
half, needs_pg = sys.argv[1], set(sys.argv[2].split())
packages = json.load(sys.stdin)["packages"]
pg = lambda t: t["name"].startswith("db_") or t["name"] in needs_pg
args = ["--workspace"] + [a for p in packages if not any(t["test"] for t in p["targets"])
                          for a in ("--exclude", p["name"])]
args += ["--lib", "--bins"] if half == "offline" else []
tests = sorted(t["name"] for p in packages for t in p["targets"]
               if "test" in t["kind"] and t["test"] and pg(t) == (half == "postgres"))
if not tests:
    sys.exit(f"cargo_selection: no {half} test target in the workspace")
print("\n".join(args + [a for name in tests for a in ("--test", name)]))
' "$1" "$NEEDS_POSTGRES" <<<"$meta"
}

# The workspace's unit tests, offline integration tests and doc tests (cargo_selection offline).
# In quick they run the debug runner; in db and full, as before the tiers, the release runner of
# AWA_CONFORMANCE_BIN where a test spawns one through it. The build comes first, alone: once it
# succeeded, its debug runner is quick's (DEBUG_RUNNER).
cargo_test_offline() {
    local sel args target rc=0
    sel="$(cargo_selection offline)" || return 1
    mapfile -t args <<<"$sel"
    echo "+ cargo test --no-fail-fast ${args[*]}"
    cargo test --no-run "${args[@]}" || return $?
    target="$(cargo metadata --no-deps --format-version 1 | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')" &&
        DEBUG_RUNNER="$target/debug/awa-conformance" || rc=1
    cargo test --no-fail-fast "${args[@]}" || rc=$?
    cargo test --workspace --doc || rc=$?
    return "$rc"
}

# The workspace's DB-backed tests (cargo_selection postgres), under cargo-nextest
# (.config/nextest.toml, profile ci: each test its own process and its own world, the
# whole-cluster checks alone). They spawn the runner (support::spawn): they are given the
# wheel's runner installed just before (AWA_CONFORMANCE_BIN), which is what users run and leaves
# the two cores to PostgreSQL, where the mutation tests spend their time (CONTRIBUTING, "CI time
# budget"). The producer tests run target/debug/examples/test_producer, which only a plain
# `cargo test` builds by itself.
cargo_test_postgres() {
    local sel args mode
    [ -x "$RUNNER" ] || { echo "cargo test: no release runner at $RUNNER (the wheel step failed)" >&2; return 1; }
    command -v cargo-nextest >/dev/null ||
        { echo "cargo test: cargo-nextest not found; run scripts/install-deps.sh db" >&2; return 1; }
    sel="$(cargo_selection postgres)" || return 1
    mapfile -t args <<<"$sel"
    # How much of the SQL kill matrix the DB tests prove: exact or caught (scripts/mutant-mode.sh).
    mode="$("$ROOT/scripts/mutant-mode.sh" "$TIER" "$ROOT")"
    echo "+ AWA_MUTANTS=$mode cargo nextest run --profile ci --no-fail-fast ${args[*]}"
    cargo build -q --workspace --examples &&
        AWA_MUTANTS="$mode" cargo nextest run --profile ci --no-fail-fast "${args[@]}"
}

# --- STEPS: tier (the lowest that runs it; tiers nest), name, command ------------------------------
step quick "cargo fmt"                  cargo fmt --all -- --check
step quick "cargo clippy"               cargo clippy --workspace --all-targets -- -D warnings
step db    "build wheel (release)"      build_wheel
step quick "cargo test (offline)"       cargo_test_offline
step db    "cargo nextest (database)"   cargo_test_postgres
step quick "vectors verify"             runner vectors verify
step quick "vectors freeze guard"       runner vectors regenerate --check --vectors-dir "$ROOT/vectors"
step db    "runner --dsn (all suites)"  runner_dsn
step full  "runner embedded cluster"    runner_embedded
step full  "postgres 14-18 matrix"      pg_matrix
step db    "schema SQL tests"           schema_sql_tests
step db    "python bindings"            python_bindings
step full  "ci recipe (docs/ci.md)"     "$ROOT/scripts/test-ci-recipe.sh" "$WHEELS"
step full  "go example adapter"         go_adapter
step full  "python example adapter"     python_adapter
step db    "fuzz (seeded, short)"       fuzz_smoke
step db    "python example producer"    python_producer
step quick "examples use no kit"        pytest_suite -q tests/examples
step quick "mutant patches apply"       pytest_suite -q tests/mutants
step db    "reports read by consumers"  reports_consumers
step full  "example producers"          example_producers
step quick "doc and ADR checks (files)" pytest_suite -q tests/docs -m "not needs_kit"
step quick "scripts' own tests"         pytest_suite -q tests/scripts
step db    "documented examples"        doc_examples
step full  "workflow lint (actionlint)" workflow_lint
step full  "build awa-rs producer"      awa_rs_producer
step full  "crosscheck vs awa 0.6.9"    crosscheck
step full  "results page (browser)"     "$ROOT/scripts/results-page.sh" "$RESULTS_DIR" "$ROOT/target/results-page"

# --- summary ------------------------------------------------------------------------------------
printf '\n==================== summary (tier %s) ====================\n' "$TIER"
printf '%s\n' "${SUMMARY[@]}"
printf 'total   [%s] %s steps in %ss (%dm %02ds); %ss with installs and set-up\n' "$TIER" "$STEPS_RUN" \
    "$STEPS_TIME" "$((STEPS_TIME / 60))" "$((STEPS_TIME % 60))" "$SECONDS"
if [ "$FAILED" -ne 0 ]; then
    printf 'test.sh %s: at least one step FAILED\n' "$TIER"
    exit 1
fi
printf 'test.sh %s: all steps ok\n' "$TIER"
