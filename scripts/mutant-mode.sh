#!/usr/bin/env bash
# Which mode of the SQL kill matrix a test tier runs (runner/tests/db_mutants.rs, AWA_MUTANTS):
# prints `exact` or `caught`. scripts/test.sh calls it; tests/scripts/test_mutant_mode.py checks it.
#
# Usage: scripts/mutant-mode.sh TIER [REPO]      (REPO: the checkout to look at; default this one)
#   `exact` in full, and in db when the checkout changes what the matrix is about (the schema,
#   the kit's SQL, the suites, the contract layer, or the mutants themselves) against its
#   upstream branch or in uncommitted work; `caught` otherwise. Without git or an upstream to
#   compare with, `exact`: the mode that proves more is the one that cannot be skipped by mistake.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 TIER [REPO]" >&2; exit 2; }
TIER="$1"
REPO="${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
[ "$TIER" = db ] || { echo exact; exit 0; }
base="$(git -C "$REPO" rev-parse -q --verify '@{upstream}' 2>/dev/null)" || { echo exact; exit 0; }
changed="$( { git -C "$REPO" diff --name-only "$base"...HEAD && git -C "$REPO" status --porcelain | cut -c4-; } 2>/dev/null)" ||
    { echo exact; exit 0; }
if grep -qE '^(schema/|runner/sql/|runner/src/suites/|runner/src/contract/|tests/mutants/sql\.json|runner/tests/db_mutants\.rs)' <<<"$changed"; then
    echo exact
else
    echo caught
fi
