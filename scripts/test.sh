#!/usr/bin/env bash
# The single test command: lint, unit tests, and every database-backed suite on a throwaway PostgreSQL.
#
# Usage: scripts/test.sh            (from anywhere; installs what is missing first, see
#                                    scripts/install-deps.sh; AWA_SKIP_INSTALL=1 skips that)
# Environment: PGPORT_THROWAWAY (default 55432) picks the throwaway cluster's port.
# Every step runs even when an earlier one fails; the script exits 1 if any step failed.
# To add a step: one `step "<name>" <command...>` line in the STEPS section (pytest suites go
# through `pytest_suite`, which fails on "no tests collected" and on an all-skipped run).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
# Keep the work tree clean: no __pycache__ next to the test files.
export PYTHONDONTWRITEBYTECODE=1
PG="$ROOT/scripts/pg-throwaway.sh"
# The project venv (created by install-deps.sh) first: python3, pytest, maturin and awa.
for d in /usr/local/go/bin "$HOME/.cargo/bin" "$HOME/.pyenv/shims" "$HOME/.pyenv/bin" "$ROOT/.venv/bin"; do
    if [ -d "$d" ] && [[ ":$PATH:" != *":$d:"* ]]; then PATH="$d:$PATH"; fi
done
export PATH
if [ "${AWA_SKIP_INSTALL:-0}" != 1 ]; then
    bash "$ROOT/scripts/install-deps.sh"
fi
# install-deps.sh may have just created the venv.
[[ ":$PATH:" == *":$ROOT/.venv/bin:"* ]] || PATH="$ROOT/.venv/bin:$PATH"
# The bindings are built and installed into the same venv.
export AWA_VENV="$ROOT/.venv"

RESULTS=()
FAILED=0

# step NAME COMMAND...: print a header, run the command, record ok/FAILED with duration.
step() {
    local name="$1"; shift
    local start rc=0
    printf '\n==================== step: %s ====================\n' "$name"
    printf '$ %s\n' "$*"
    start=$SECONDS
    "$@" || rc=$?
    if [ "$rc" -eq 0 ]; then
        RESULTS+=("ok      $name ($((SECONDS - start))s)")
    else
        RESULTS+=("FAILED  $name (exit $rc, $((SECONDS - start))s)")
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

# --- throwaway PostgreSQL for every DB-backed step ----------------------------------------------
cleanup() { "$PG" stop || true; rm -rf "${REPORTS:-}" "${WHEELS:-}" "${RESULTS:-}"; }
trap cleanup EXIT
eval "$("$PG" start)"
export DATABASE_URL
# The database is always there in this script, so DB-backed suites must not skip for lack of it.
export AWA_CROSSCHECK_REQUIRED=1
export AWA_REQUIRE_DB=1
REPORTS="$(mktemp -d)"
# The reports of the runs that show each implementation green (the steps and tests below keep
# them here: tests/page/keep.py), for the results page, badge and compatibility table.
RESULTS="$(mktemp -d)"
export AWA_RESULTS_DIR="$RESULTS"
# The release wheel, built once (scripts/build-wheel.sh) and installed into the venv: its
# `awa-conformance` console script is the runner every later step runs (the same Rust code as
# the standalone binary, compiled once: CONTRIBUTING, "CI time budget").
WHEELS="$(mktemp -d)"
RUNNER="$ROOT/.venv/bin/awa-conformance"
export AWA_CONFORMANCE_BIN="$RUNNER"

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
        cp "$REPORTS/report.json" "$RESULTS/reference.json"
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
# of runner_dsn): every producer:: case passes (at least 100), and four deliberately broken
# copies (tests/mutants/python/<mistake>.patch, made by tests/mutants/materialise.py) each fail
# their family with exit 1; a fifth (skip_refusals) fails producer::coverage alone.
python_producer() {
    local cmd="$ROOT/examples/producers/python/run" rc=0 code mistake family broken
    local run=("$RUNNER" --dsn "$DATABASE_URL" --schema awa_ci --producer-role awa_ci_producer --producer "$cmd" -q)
    AWA_CONFORMANCE_BIN="$RUNNER" pytest_suite -q "$ROOT/examples/producers/python/tests" || rc=1
    "${run[@]}" --report-json "$REPORTS/producer.json" producer:: || rc=1
    cp "$REPORTS/producer.json" "$RESULTS/python.json" || rc=1
    "$PY" - "$REPORTS/producer.json" <<'PYEOF' || rc=1
import json, sys
cases = [c for c in json.load(open(sys.argv[1], encoding="utf-8"))["cases"] if c["name"].startswith("producer::")]
# It declares no `bulk` capability: the staged-batch cases are not applicable, nothing else.
bad = [(c["name"], c["status"]) for c in cases if c["status"] != "passed"
       and not (c["status"] == "not_applicable" and c["name"].startswith("producer::bulk::"))]
if len(cases) < 100 or bad:
    sys.exit(f"python_producer: {len(cases)} producer cases (need >= 100), not passed: {bad[:10]}")
PYEOF
    for mistake in drop_ordering_key:routing_precedence drop_concurrency_key:concurrency_shard json_dumps:unique_key bit8_cast:refusal \
        drop_tags:payload drop_metadata:payload; do
        family="${mistake#*:}" mistake="${mistake%%:*}" code=0
        broken="$("$PY" "$ROOT/tests/mutants/materialise.py" python "$mistake")" || { rc=1; continue; }
        "$RUNNER" --dsn "$DATABASE_URL" --schema awa_ci --producer-role awa_ci_producer --producer "$broken" -q \
            "producer::$family::" >/dev/null 2>&1 || code=$?
        if [ "$code" -ne 1 ]; then
            echo "python_producer: mutant $mistake exited $code on producer::$family::, not 1" >&2
            rc=1
        fi
    done
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
    return "$rc"
}

# The released Rust crate awa-model 0.6.9 as a producer (a standalone Cargo project, outside the
# workspace steps above): its formatting, then its release build for tests/crosscheck.
awa_rs_producer() {
    cargo fmt --check --manifest-path "$ROOT/examples/producers/awa-rs/Cargo.toml" &&
        "$ROOT/examples/producers/awa-rs/run" --build
}

# Every worked example of README.md, docs/contract.md, docs/adapter-protocol.md and
# bindings/README.md, checked against the runner and the installed Python module (tests/docs).
doc_examples() {
    AWA_CONFORMANCE_BIN="$RUNNER" pytest_suite -q tests/docs
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

# The workspace's tests. The DB-backed ones spawn the runner (db_support::spawn): they are given
# the wheel's runner installed just before (AWA_CONFORMANCE_BIN), which is what users run and
# leaves the two cores to PostgreSQL, where the mutation tests spend their time (CONTRIBUTING,
# "CI time budget"); unit tests and the CLI tests still use the debug build.
cargo_test() {
    [ -x "$RUNNER" ] || { echo "cargo test: no release runner at $RUNNER (the wheel step failed)" >&2; return 1; }
    cargo test --workspace --no-fail-fast
}

# --- STEPS --------------------------------------------------------------------------------------
step "cargo fmt"                 cargo fmt --all -- --check
step "cargo clippy"              cargo clippy --workspace --all-targets -- -D warnings
step "build wheel (release)"     build_wheel
step "cargo test"                cargo_test
step "vectors verify"            "$RUNNER" vectors verify
step "vectors freeze guard"      "$RUNNER" vectors regenerate --check --vectors-dir "$ROOT/vectors"
step "runner --dsn (all suites)" runner_dsn
step "runner embedded cluster"   runner_embedded
step "postgres 14-18 matrix"     pg_matrix
step "schema SQL tests"          schema_sql_tests
step "python bindings"           python_bindings
step "ci recipe (docs/ci.md)"    "$ROOT/scripts/test-ci-recipe.sh" "$WHEELS"
step "go example adapter"        go_adapter
step "python example adapter"    python_adapter
step "fuzz (seeded, short)"      fuzz_smoke
step "python example producer"  python_producer
step "examples use no kit"       pytest_suite -q tests/examples
step "mutant patches apply"      pytest_suite -q tests/mutants
step "reports read by consumers" reports_consumers
step "example producers"        example_producers
step "documented examples"       doc_examples
step "workflow lint (actionlint)" workflow_lint
step "build awa-rs producer"     awa_rs_producer
step "crosscheck vs awa 0.6.9"   crosscheck
step "results page (browser)"    "$ROOT/scripts/results-page.sh" "$RESULTS" "$ROOT/target/results-page"

# --- summary ------------------------------------------------------------------------------------
printf '\n==================== summary ====================\n'
printf '%s\n' "${RESULTS[@]}"
if [ "$FAILED" -ne 0 ]; then
    printf 'test.sh: at least one step FAILED\n'
    exit 1
fi
printf 'test.sh: all steps ok\n'
