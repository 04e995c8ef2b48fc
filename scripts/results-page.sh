#!/usr/bin/env bash
# CI's results page, badge and compatibility table, from the reports of CI's own runs
# (docs/ci.md, "Publishing results"; issue: one page comparing implementations side by side).
#
# Usage: scripts/results-page.sh RESULTS_DIR OUT_DIR [--bless]
#   RESULTS_DIR  the reports scripts/test.sh kept (AWA_RESULTS_DIR): one per implementation,
#                named as in IMPLEMENTATIONS below; a missing one fails (a page that silently
#                lacks an implementation is not a pass).
#   OUT_DIR      where the page (OUT_DIR/page/index.html), the badge (OUT_DIR/badge/) and the
#                browser test's screenshot (OUT_DIR/page.png) go.
#   --bless      rewrite docs/compatibility.md from these reports instead of checking it.
# Then the page is opened in headless Chromium (tests/page/test_results_page.py): the counts
# shown equal the reports', a failing case expands to expected/actual, the filters work, no
# console error, nothing fetched.
# Environment: AWA_CONFORMANCE_BIN (the runner), PY (python with pytest and playwright).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PY:-$ROOT/.venv/bin/python}"
RUNNER="${AWA_CONFORMANCE_BIN:-$ROOT/target/release/awa-conformance}"
[ $# -ge 2 ] || { echo "usage: $0 RESULTS_DIR OUT_DIR [--bless]" >&2; exit 3; }
RESULTS="$1" OUT="$2" BLESS="${3:-}"

# label:file, in the page's row order.
IMPLEMENTATIONS=(
    "reference schema (contract v1):reference"
    "released Awa 0.6.9 (compat profile):compat"
    "Python example producer:python"
    "Node example producer:node"
    "Go example producer:go"
    "Go staged bulk example producer:go-bulk"
    "Java example producer:java"
    "awa-pg 0.6.9 (insert):awa-pg-insert"
    "awa-pg 0.6.9 (insert_many_copy):awa-pg-insert_many_copy"
    "awa-pg 0.6.9 (enqueue_many_copy):awa-pg-enqueue_many_copy"
    "awa-model 0.6.9 (Rust, insert_with):awa-rs-insert_with"
    "awa-model 0.6.9 (Rust, insert_many):awa-rs-insert_many"
)
args=()
for entry in "${IMPLEMENTATIONS[@]}"; do
    file="$RESULTS/${entry##*:}.json"
    [ -f "$file" ] || { echo "results-page: no report $file (${entry%%:*}): the step that runs it did not keep it" >&2; exit 1; }
    args+=("${entry%%:*}=$file")
done
mkdir -p "$OUT"
"$RUNNER" report html --out "$OUT/page" --kill-matrix "$ROOT/docs/kill-matrix.md" \
    --kill-matrix "$ROOT/docs/producer-kill-matrix.md" "${args[@]}"
"$RUNNER" report badge --out "$OUT/badge" "$RESULTS/python.json"
if [ "$BLESS" = --bless ]; then
    "$RUNNER" report compatibility "${args[@]}" >"$ROOT/docs/compatibility.md"
    echo "results-page: rewrote docs/compatibility.md"
else
    "$RUNNER" report compatibility --check "$ROOT/docs/compatibility.md" "${args[@]}"
fi
AWA_RESULTS_DIR="$RESULTS" AWA_PAGE="$OUT/page/index.html" AWA_BADGE_DIR="$OUT/badge" \
    AWA_SCREENSHOT="$OUT/page.png" "$PY" -m pytest -q -p no:cacheprovider "$ROOT/tests/page"
echo "results-page: screenshot of the page for review: $OUT/page.png"
