#!/usr/bin/env bash
# Run docs/ci.md's shell recipe as a user would: a fresh venv, `pip install awa-conformance==<version>`
# (served from the built wheel, no index), the reference schema on a fresh database, a full run.
#
# Usage: scripts/test-ci-recipe.sh WHEEL_DIR
#   WHEEL_DIR  directory holding the wheel scripts/build-wheel.sh built
# Env:   DATABASE_URL  a PostgreSQL DSN with CREATEDB (the throwaway cluster in scripts/test.sh);
#                      the recipe runs in a new database, dropped afterwards.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
wheels="$(cd "${1:?usage: scripts/test-ci-recipe.sh WHEEL_DIR}" && pwd)"
: "${DATABASE_URL:?DATABASE_URL must name the PostgreSQL to create the recipe database in}"
PY="${PYTHON:-python3}"
[ -x "$ROOT/.venv/bin/python" ] && PY="$ROOT/.venv/bin/python"
compgen -G "$wheels/awa_conformance-*manylinux_2_17*.whl" >/dev/null ||
    { echo "test-ci-recipe: no manylinux_2_17 wheel in $wheels (run scripts/build-wheel.sh)" >&2; exit 1; }

work="$(mktemp -d)"
db="awa_ci_recipe_$$"
# The recipe gets its own database, so it never meets another step's schema.
admin() { "$PY" - "$@" <<'PYEOF'
import sys, psycopg
dsn, action, name = sys.argv[1:4]
with psycopg.connect(dsn, autocommit=True) as c:
    if action == "create":
        c.execute(f'CREATE DATABASE "{name}"')
    else:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
PYEOF
}
cleanup() { admin "$DATABASE_URL" drop "$db" || true; rm -rf "$work"; }
trap cleanup EXIT
admin "$DATABASE_URL" create "$db"
recipe_dsn="$("$PY" -c '
import sys
from psycopg.conninfo import conninfo_to_dict, make_conninfo
d = conninfo_to_dict(sys.argv[1]); d["dbname"] = sys.argv[2]
print(make_conninfo(**d))' "$DATABASE_URL" "$db")"

# The recipe, byte for byte from the docs.
sed -n '/<!-- ci-recipe:shell:begin -->/,/<!-- ci-recipe:shell:end -->/p' "$ROOT/docs/ci.md" |
    sed '1,2d;$d' | sed '$d' >"$work/recipe.sh"
head -n1 "$work/recipe.sh" | grep -qx '#!/bin/sh' ||
    { echo "test-ci-recipe: cannot find the shell recipe between the markers in docs/ci.md" >&2; exit 1; }

# A user's environment: no project venv on PATH, pip served from the wheel directory only.
rc=0
(cd "$work" && env -u VIRTUAL_ENV -u PYTHONPATH \
    PATH="$(dirname "$(command -v python3)"):/usr/bin:/bin" \
    PIP_NO_INDEX=1 PIP_FIND_LINKS="$wheels" PIP_DISABLE_PIP_VERSION_CHECK=1 \
    AWA_INSTALL_REFERENCE_SCHEMA=1 DATABASE_URL="$recipe_dsn" sh ./recipe.sh) || rc=$?
if [ "$rc" -ne 0 ]; then
    echo "test-ci-recipe: the docs/ci.md shell recipe exited $rc" >&2
    exit 1
fi
# A green run must have checked something: a conformant verdict with SQL cases passed.
"$PY" - "$work/conformance.json" "$work/conformance.xml" <<'PYEOF'
import json, sys, xml.etree.ElementTree as ET
report = json.load(open(sys.argv[1]))
assert report["verdict"] == "conformant", report["verdict"]
sql = [c for c in report["cases"] if c["name"].startswith("sql::") and c["status"] == "passed"]
assert sql, "the recipe's run passed no SQL case: it did not check the database"
root = ET.parse(sys.argv[2]).getroot()
tests = sum(int(s.get("tests", 0)) for s in root.iter("testsuite"))
assert tests > 0, "empty JUnit report"
print(f"test-ci-recipe: docs/ci.md shell recipe green: {len(sql)} SQL cases passed, {tests} JUnit tests")
PYEOF
