#!/usr/bin/env bash
# run.sh: install schema/*.sql twice (proving idempotency) and over contract v1.0 objects (proving
# the in-place upgrade), then run smoke.sql, two_producers.py and crosscheck.py.
#
# Needs: psql, python3 with psycopg; AWA_SCHEMA_TEST_DSN = a DSN of a scratch database for a
# role that may create schemas and roles (superuser is simplest). Optional
# AWA_SCHEMA_TEST_SCHEMA (default awa_conf_test; must match ^[A-Za-z_][A-Za-z0-9_]{0,50}$).
# The test drops and recreates that schema and four roles named after it (the fourth, the
# functions' owner, is created by 005). The DSN is never
# echoed.
set -euo pipefail

: "${AWA_SCHEMA_TEST_DSN:?set AWA_SCHEMA_TEST_DSN to a DSN of a scratch database (superuser)}"
schema="${AWA_SCHEMA_TEST_SCHEMA:-awa_conf_test}"
if [[ ! "$schema" =~ ^[A-Za-z_][A-Za-z0-9_]{0,50}$ ]]; then
    echo "run.sh: AWA_SCHEMA_TEST_SCHEMA must match ^[A-Za-z_][A-Za-z0-9_]{0,50}\$" >&2
    exit 2
fi
producer="${schema}_producer"
login="${schema}_login"
outsider="${schema}_outsider"
# Two more producer logins for the job_routing scope test (two_producers.py).
producer_a="${schema}_prod_a"
producer_b="${schema}_prod_b"
upgrade="${schema}_upg"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(dirname "$here")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

pg() { psql "$AWA_SCHEMA_TEST_DSN" -X -q -v ON_ERROR_STOP=1 "$@"; }

# The documented substitution rule (schema/README.md): each token -> its double-quoted name.
# $2 overrides the schema name.
subst() {
    sed -e "s/@schema@/\"${2:-$schema}\"/g" -e "s/@producer_role@/\"$producer\"/g" \
        -e "s/@login_role@/\"$login\"/g" -e "s/@outsider_role@/\"$outsider\"/g" "$1"
}

files=()
for f in "$src"/[0-9][0-9][0-9]_*.sql; do
    subst "$f" > "$work/$(basename "$f")"
    files+=("$work/$(basename "$f")")
done

# A catalog fingerprint of everything the install owns; equal before and after a re-run.
snapshot() {
    pg -At -v s="$schema" -v r="$producer" <<'SQL'
SELECT 'proc ' || p.oid::regprocedure || ' ' || md5(p.prosrc) || ' ' || p.prosecdef || ' '
       || p.provolatile::text || ' ' || coalesce(p.proconfig::text, '') || ' ' || coalesce(p.proacl::text, '')
FROM pg_proc p WHERE p.pronamespace = quote_ident(:'s')::regnamespace
UNION ALL
SELECT 'rel ' || c.relname || ' ' || c.relkind::text || ' ' || c.relfilenode || ' '
       || coalesce(c.relacl::text, '')
       || ' ' || (SELECT string_agg(a.attname || ':' || format_type(a.atttypid, a.atttypmod), ',' ORDER BY a.attnum)
                  FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)
FROM pg_class c WHERE c.relnamespace = quote_ident(:'s')::regnamespace
UNION ALL
SELECT 'con ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
FROM pg_constraint WHERE connamespace = quote_ident(:'s')::regnamespace
UNION ALL
SELECT 'nsp ' || coalesce(nspacl::text, '') FROM pg_namespace WHERE oid = quote_ident(:'s')::regnamespace
UNION ALL
SELECT 'role ' || rolname || ' ' || rolcanlogin || ' ' || rolinherit FROM pg_roles WHERE rolname = :'r'
ORDER BY 1;
SQL
}

# The ordering-hash body in 003 must be exactly what tools/gen_ordering_hash.py generates.
python3 "$src/tools/gen_ordering_hash.py" > "$work/generated.sql"
sed -n '/^-- BEGIN GENERATED$/,/^-- END GENERATED$/p' "$src/003_routing_functions.sql" \
    | sed '1d;$d' > "$work/embedded.sql"
if ! diff -q "$work/generated.sql" "$work/embedded.sql" > /dev/null; then
    echo "run.sh: FAIL: 003's generated section differs from tools/gen_ordering_hash.py output" >&2
    exit 1
fi

echo "run.sh: clean slate for schema $schema"
PGOPTIONS="-c client_min_messages=warning" pg -c "DROP SCHEMA IF EXISTS \"$schema\" CASCADE" \
   -c "DROP SCHEMA IF EXISTS \"$upgrade\" CASCADE" \
   -c "DROP ROLE IF EXISTS \"$login\"" -c "DROP ROLE IF EXISTS \"$outsider\"" \
   -c "DROP ROLE IF EXISTS \"$producer_a\"" -c "DROP ROLE IF EXISTS \"$producer_b\"" \
   -c "DROP ROLE IF EXISTS \"$producer\"" -c "DROP ROLE IF EXISTS \"${schema}_owner\""

echo "run.sh: install 1 (psql -f per file, one transaction)"
args=()
for f in "${files[@]}"; do args+=(-f "$f"); done
pg -1 "${args[@]}"
snapshot > "$work/snap1"

echo "run.sh: install 2 (all files as ONE simple-query message, as batch_execute sends them)"
PGOPTIONS="-c client_min_messages=warning" pg -c "$(cat "${files[@]}")"
snapshot > "$work/snap2"
if ! diff -u "$work/snap1" "$work/snap2"; then
    echo "run.sh: FAIL: re-running the install changed the catalog" >&2
    exit 1
fi
[[ -s "$work/snap1" ]] || { echo "run.sh: FAIL: empty catalog snapshot" >&2; exit 1; }
echo "run.sh: re-install was a no-op ($(wc -l < "$work/snap1") catalog entries compared)"

echo "run.sh: upgrade a contract v1.0 install in place (schema $upgrade)"
subst "$here/v1_0_shapes.sql" "$upgrade" > "$work/v1_0_shapes.sql"
upgrade_args=(-f "$work/v1_0_shapes.sql")
for f in "$src"/[0-9][0-9][0-9]_*.sql; do
    subst "$f" "$upgrade" > "$work/upgrade_$(basename "$f")"
    upgrade_args+=(-f "$work/upgrade_$(basename "$f")")
done
PGOPTIONS="-c client_min_messages=warning" pg -1 "${upgrade_args[@]}"
upgraded="$(pg -At -v s="$upgrade" <<'SQL'
SELECT (SELECT string_agg(p.oid::regprocedure::text, ' ') FROM pg_proc p
        WHERE p.pronamespace = quote_ident(:'s')::regnamespace AND p.proname = 'insert_job')
    || ' | ' || (SELECT string_agg(a.attname, ',' ORDER BY a.attnum) FROM pg_attribute a
        WHERE a.attrelid = (SELECT typrelid FROM pg_type
                            WHERE oid = (quote_ident(:'s') || '.job_routing_row')::regtype)
          AND a.attnum > 0)
    || ' | ' || (SELECT pg_get_function_result(p.oid) FROM pg_proc p
        WHERE p.pronamespace = quote_ident(:'s')::regnamespace AND p.proname = 'job_routing');
SQL
)"
# (regprocedure/regtype print the schema unquoted: run.sh's schema names are lower case.)
want="$upgrade.insert_job(text,text,jsonb,smallint,smallint,timestamp with time zone,jsonb,text[],bytea,bit varying,bytea,bytea,jsonb) | job_id,queue,state,priority,enqueue_shard,route_source,concurrency_digest,ordering_key_digest,unique_key,unique_states | $upgrade.job_routing_row"
if [[ "$upgraded" != "$want" ]]; then
    printf 'run.sh: FAIL: upgrade from v1.0 left\n  %s\nwant\n  %s\n' "$upgraded" "$want" >&2
    exit 1
fi
PGOPTIONS="-c client_min_messages=warning" pg -c "DROP SCHEMA \"$upgrade\" CASCADE"

pg -c "CREATE ROLE \"$login\" LOGIN" -c "GRANT \"$producer\" TO \"$login\"" \
   -c "CREATE ROLE \"$outsider\" LOGIN" \
   -c "CREATE ROLE \"$producer_a\" LOGIN" -c "GRANT \"$producer\" TO \"$producer_a\"" \
   -c "CREATE ROLE \"$producer_b\" LOGIN" -c "GRANT \"$producer\" TO \"$producer_b\""

echo "run.sh: smoke.sql"
subst "$here/smoke.sql" > "$work/smoke.sql"
pg -f "$work/smoke.sql"

echo "run.sh: two_producers.py"
AWA_SCHEMA_TEST_SCHEMA="$schema" AWA_SCHEMA_TEST_PRODUCERS="$producer_a,$producer_b" \
    python3 "$here/two_producers.py"

echo "run.sh: crosscheck.py"
AWA_SCHEMA_TEST_SCHEMA="$schema" python3 "$here/crosscheck.py"
echo "run.sh: OK"
