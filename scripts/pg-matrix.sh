#!/usr/bin/env bash
# The PostgreSQL version matrix (docs/ci.md, "PostgreSQL versions"): every supported major, on
# pinned server binaries (scripts/fetch-pg.py, scripts/pg-servers.json), checked the way users
# run the kit there.
#
# Usage: scripts/pg-matrix.sh [MAJOR...]            default: 14 15 16 17 18
#
# Per major, on a throwaway cluster of that major (scripts/pg-throwaway.sh):
#   1. as a non-superuser (LOGIN CREATEROLE, owner of its database), as most producers' CI is:
#      `schema install`, `schema status` (same), the full `--dsn` run (every suite, the
#      reference's whole level, nothing not applicable), the Python example producer, then
#      `schema uninstall` and `schema status` (missing);
#   2. the embedded default (scripts/kit.sh) with `--pg-bin` at that major's binaries;
#   3. the compat profile on a database migrated by awa-cli (released Awa), on the majors where
#      `awa migrate` succeeds (COMPAT_MAJORS below: awa-cli 0.6.9 migrates on all five).
# Each result is read from the run's own report: its provenance must name the major, and the
# step prints each major's server version from there. Then, once: a server below the minimum
# (13) is refused with exit 4 and one line naming it, as the embedded cluster (--pg-bin) and as
# a --dsn target of `schema install`, a run and `fuzz`.
# Environment: AWA_CONFORMANCE_BIN (the runner; default: scripts/kit.sh builds one), PY (python
# with awa-cli; default .venv/bin/python), PGPORT_MATRIX (first port, default 55460; a port
# another server holds is skipped, see start_cluster).
# Exit 0 when every major passed, 1 otherwise. Clusters and temp files are removed on any exit.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PY:-$ROOT/.venv/bin/python}"
PATH="$ROOT/.venv/bin:$PATH"
RUNNER="${AWA_CONFORMANCE_BIN:-}"
if [ -z "$RUNNER" ]; then
    cargo build --release --quiet -p awa-conformance --manifest-path "$ROOT/Cargo.toml"
    RUNNER="$ROOT/target/release/awa-conformance"
fi
MAJORS=("$@")
[ "${#MAJORS[@]}" -gt 0 ] || MAJORS=(14 15 16 17 18)
COMPAT_MAJORS=" 14 15 16 17 18 "
PORT0="${PGPORT_MATRIX:-55460}"
WORK="$(mktemp -d)"
chmod 755 "$WORK"
JOBS="${MATRIX_JOBS:-3}"

# Stop the majors still running, then every cluster they started, then remove the work dir.
stop_all() {
    local pids d port
    pids="$(jobs -p)"
    [ -z "$pids" ] || { kill $pids 2>/dev/null || true; wait 2>/dev/null || true; }
    for d in "$WORK"/pg-*; do
        [ -d "$d" ] || continue
        port="${d##*/pg-}"
        PGBIN_THROWAWAY="$(cat "$d.bin")" PGPORT_THROWAWAY="$port" PGDIR_THROWAWAY="$d" \
            "$ROOT/scripts/pg-throwaway.sh" stop 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say() { printf 'pg-matrix: %s\n' "$*"; }
fail() { printf 'pg-matrix: FAILED: %s\n' "$*" >&2; return 1; }

# check_report MAJOR REPORT KIND: the run's verdict and what its provenance says it ran on.
check_report() {
    "$PY" - "$@" <<'PYEOF'
import json, sys
major, path, kind = sys.argv[1:4]
r = json.load(open(path, encoding="utf-8"))
p = r["provenance"]
cases = r["cases"]
def done(msg):
    print(msg)
    sys.exit(0)
problems = []
if not p["server_version"].split(".")[0] == major:
    problems.append(f"provenance server_version is {p['server_version']!r}, not PostgreSQL {major}")
if r["verdict"] != "conformant" or r["exit_code"] != 0:
    problems.append(f"verdict {r['verdict']} (exit {r['exit_code']})")
bad = [(c["name"], c["status"]) for c in cases if c["status"] not in ("passed",)]
if kind in ("dsn", "dsn-superuser"):
    # The reference installs the whole contract: every suite runs. As a non-superuser, the
    # cases that switch session users are not applicable (they say so); the superuser run of
    # just those (below) must pass them, so together nothing is left unchecked.
    if p["level"] != "core+uniqueness+move_shard+bulk+payload":
        problems.append(f"level {p['level']}")
    sql = [c for c in cases if c["name"].startswith("sql::")]
    if kind == "dsn":
        bad = [b for b in bad if not (b[1] == "not_applicable" and "superuser" in next(
            c.get("reason") or c.get("message") or "" for c in cases if c["name"] == b[0]))]
    if len(sql) < (700 if kind == "dsn" else 1) or bad:
        problems.append(f"{len(sql)} sql cases, not passed: {bad[:5]}")
elif kind == "producer":
    prod = [c for c in cases if c["name"].startswith("producer::")]
    bad = [b for b in bad if not (b[1] == "not_applicable" and b[0].startswith("producer::bulk::"))]
    if len(prod) < 100 or bad:
        problems.append(f"{len(prod)} producer cases, not passed: {bad[:5]}")
elif kind == "embedded":
    if not p["database"].startswith(f"embedded (PostgreSQL {major}."):
        problems.append(f"provenance database is {p['database']!r}, not an embedded PostgreSQL {major}")
    if bad:
        problems.append(f"not passed: {bad[:5]}")
elif kind == "compat":
    passed = [c for c in cases if c["status"] == "passed" and c["name"].startswith("sql::compat::")]
    if len(passed) < 200 or p["level"] != "compat":
        problems.append(f"{len(passed)} compat cases passed (need 200), level {p['level']}")
if problems:
    sys.exit(f"PostgreSQL {major} {kind}: " + "; ".join(problems))
done(f"{kind}: server {p['server_version']}, {sum(c['status'] == 'passed' for c in cases)} passed")
PYEOF
}

# start_cluster BINDIR FIRST LOG [DB]: a throwaway cluster of BINDIR on the first port of FIRST,
# FIRST+10, ... FIRST+90 that no other server holds; sets CL_PORT, CL_DIR and CL_ENV (the
# `export DATABASE_URL=` line of pg-throwaway.sh). A port held by another server (the suite's own
# cluster at PGPORT_THROWAWAY, a second run's matrix beside this one) moves on to the next; any
# other failure to start is returned at once, with pg-throwaway's lines in LOG. Each major's
# first port is PORT0 + its index (< 10), so the majors' port sets stay disjoint.
start_cluster() {
    local bindir="$1" first="$2" log="$3" db="${4:-}" try
    CL_ENV=""
    for try in 0 1 2 3 4 5 6 7 8 9; do
        CL_PORT="$((first + 10 * try))" CL_DIR="$WORK/pg-$((first + 10 * try))"
        printf '%s' "$bindir" >"$CL_DIR.bin"
        CL_ENV="$(env PGBIN_THROWAWAY="$bindir" PGPORT_THROWAWAY="$CL_PORT" PGDIR_THROWAWAY="$CL_DIR" \
            ${db:+"PGDB_THROWAWAY=$db"} "$ROOT/scripts/pg-throwaway.sh" start 2>"$log")" && [ -n "$CL_ENV" ] && return 0
        CL_ENV=""
        grep -qE 'already served by another PostgreSQL|already in use|could not bind' "$log" || return 1
        echo "port $CL_PORT is held by another server: trying $((CL_PORT + 10))"
        [ -d "$CL_DIR" ] || rm -f "$CL_DIR.bin"
    done
    return 1
}

# One major, start to end; returns non-zero at its first failure.
run_major() {
    local major="$1" bindir="$2" port dir url db out
    out="$WORK/$major"
    mkdir -p "$out"
    # The cluster's own lines go to a log, shown when it does not start (a run once lost the
    # reason: the start printed nothing and the next line read an unset DATABASE_URL).
    start_cluster "$bindir" "$3" "$out/start.log" postgres_matrix ||
        { cat "$out/start.log" >&2; fail "PostgreSQL $major: the throwaway cluster on port $CL_PORT did not start (log above)"; return 1; }
    port="$CL_PORT" dir="$CL_DIR"
    local env_line="$CL_ENV"
    eval "$env_line"
    local su="$DATABASE_URL"
    # A non-superuser that owns its database and may create roles: what `schema install`
    # needs (README, "What a run needs from the database").
    psql -X -q -v ON_ERROR_STOP=1 -d "$su" \
        -c "CREATE ROLE awa_matrix LOGIN CREATEROLE" -c "CREATE DATABASE awa_matrix OWNER awa_matrix" || return 1
    url="postgres://awa_matrix@127.0.0.1:$port/awa_matrix"
    local s=(--dsn "$url" --schema awa_m --producer-role awa_m_producer)
    "$RUNNER" schema install "${s[@]}" >/dev/null || fail "PostgreSQL $major: schema install" || return 1
    "$RUNNER" schema status "${s[@]}" >/dev/null || fail "PostgreSQL $major: schema status after install" || return 1
    "$RUNNER" "${s[@]}" -q --report-json "$out/dsn.json" >/dev/null 2>"$out/dsn.log" || true
    check_report "$major" "$out/dsn.json" dsn || { cat "$out/dsn.log" >&2; return 1; }
    # The cases a non-superuser cannot run (they need to switch session users), as a superuser.
    local na name
    na="$("$PY" -c 'import json,sys; print(*[c["name"] for c in json.load(open(sys.argv[1]))["cases"] if c["status"] == "not_applicable"])' "$out/dsn.json")"
    for name in $na; do
        "$RUNNER" --dsn "${su%/*}/awa_matrix" --schema awa_m --producer-role awa_m_producer -q --exact "$name" \
            --report-json "$out/su.json" >/dev/null 2>"$out/su.log" || true
        check_report "$major" "$out/su.json" dsn-superuser >/dev/null || { cat "$out/su.log" >&2; return 1; }
        say "PostgreSQL $major: $name passed as a superuser"
    done
    "$RUNNER" "${s[@]}" -q --producer "$ROOT/examples/producers/python/run" --report-json "$out/producer.json" \
        producer:: >/dev/null 2>"$out/producer.log" || true
    check_report "$major" "$out/producer.json" producer || { cat "$out/producer.log" >&2; return 1; }
    "$RUNNER" schema uninstall "${s[@]}" >/dev/null || fail "PostgreSQL $major: schema uninstall" || return 1
    "$RUNNER" schema status "${s[@]}" 2>/dev/null | grep -q '^missing' ||
        fail "PostgreSQL $major: schema status after uninstall is not 'missing'" || return 1
    # The embedded default, on this major's binaries (the README's kit command).
    env -u DATABASE_URL -u AWA_PG_BIN AWA_SKIP_INSTALL=1 AWA_CONFORMANCE_BIN="$RUNNER" \
        "$ROOT/scripts/kit.sh" --pg-bin "$bindir" -q --report-json "$out/embedded.json" >/dev/null 2>"$out/embedded.log" || true
    check_report "$major" "$out/embedded.json" embedded || { cat "$out/embedded.log" >&2; return 1; }
    if [[ "$COMPAT_MAJORS" == *" $major "* ]]; then
        db="awa_compat_m"
        psql -X -q -v ON_ERROR_STOP=1 -d "$su" -c "CREATE DATABASE $db" || return 1
        local curl="${su%/*}/$db" before after
        DATABASE_URL="$curl" NO_COLOR=1 awa migrate >/dev/null || fail "PostgreSQL $major: awa migrate (awa-cli)" || return 1
        [ "$(psql -X -qAt -d "$curl" -c "SELECT awa.storage_auto_finalize_if_fresh('awa')")" = t ] ||
            fail "PostgreSQL $major: activating released Awa's queue storage" || return 1
        before="$(psql -X -qAt -d "$curl" -c 'SELECT count(*) FROM awa.jobs')"
        "$RUNNER" --dsn "$curl" -q --report-json "$out/compat.json" >/dev/null 2>"$out/compat.log" || true
        after="$(psql -X -qAt -d "$curl" -c 'SELECT count(*) FROM awa.jobs')"
        [ "$before" = "$after" ] || fail "PostgreSQL $major: compat run changed awa.jobs from $before to $after rows" || return 1
        check_report "$major" "$out/compat.json" compat || { cat "$out/compat.log" >&2; return 1; }
        # CI's results page shows released Awa's compat profile from the Debian-era major.
        if [ "$major" = 15 ] && [ -n "${AWA_RESULTS_DIR:-}" ]; then cp "$out/compat.json" "$AWA_RESULTS_DIR/compat.json"; fi
    fi
    PGBIN_THROWAWAY="$bindir" PGPORT_THROWAWAY="$port" PGDIR_THROWAWAY="$dir" "$ROOT/scripts/pg-throwaway.sh" stop 2>/dev/null
}

rc=0
mapfile -t FETCHED < <("$PY" "$ROOT/scripts/fetch-pg.py" "${MAJORS[@]}" 13)
declare -A BIN
for line in "${FETCHED[@]}"; do BIN["${line%% *}"]="${line#* }"; done
# The majors run side by side, MATRIX_JOBS at a time (default 3): most of a major's time is
# waiting on its own server and producer, so two cores serve three. Each one's lines are
# printed together when it ends.
i=0
declare -A PIDS
for major in "${MAJORS[@]}"; do
    [ -n "${BIN[$major]:-}" ] || { fail "PostgreSQL $major: no binaries fetched" || true; rc=1; continue; }
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
    (
        t0=$SECONDS
        if run_major "$major" "${BIN[$major]}" "$((PORT0 + i))" >"$WORK/$major.out" 2>&1; then
            say "PostgreSQL $major: ok in $((SECONDS - t0)) s" >>"$WORK/$major.out"
        else
            fail "PostgreSQL $major (after $((SECONDS - t0)) s)" 2>>"$WORK/$major.out" || true
            exit 1
        fi
    ) &
    PIDS[$major]=$!
    i=$((i + 1))
done
for major in "${MAJORS[@]}"; do
    [ -n "${PIDS[$major]:-}" ] || continue
    wait "${PIDS[$major]}" || rc=1
    say "PostgreSQL $major (${BIN[$major]})"
    sed 's/^/    /' "$WORK/$major.out"
done

# Below the minimum: refused at once, exit 4, one line naming the oldest supported major.
code=0
msg="$(env -u DATABASE_URL "$RUNNER" --pg-bin "${BIN[13]}" -q 2>&1 >/dev/null)" || code=$?
if [ "$code" -ne 4 ] || [ "$(printf '%s\n' "$msg" | wc -l)" -ne 1 ] || [[ "$msg" != *"oldest major the kit runs on is 14"* ]]; then
    fail "PostgreSQL 13 via --pg-bin: exit $code (want 4) with: $msg" || true
    rc=1
else
    say "PostgreSQL 13: refused (exit 4): $msg"
fi
# The same server as a --dsn target: every command that talks to a database refuses it at once
# (exit 4, one line), before it installs, runs or fuzzes anything.
url13=""
if start_cluster "${BIN[13]}" "$((PORT0 + 9))" "$WORK/start13.log" >/dev/null; then
    url13="$(sed -n 's/^export DATABASE_URL=//p' <<<"$CL_ENV")"
fi
refused13() {
    local what="$1" code=0 msg
    shift
    msg="$(env -u DATABASE_URL "$@" 2>&1 >/dev/null)" || code=$?
    if [ "$code" -ne 4 ] || [ "$(printf '%s\n' "$msg" | wc -l)" -ne 1 ] || [[ "$msg" != *"oldest major the kit runs on is 14"* ]]; then
        fail "PostgreSQL 13 via --dsn, $what: exit $code (want 4) with: $msg" || true
        return 1
    fi
    say "PostgreSQL 13 via --dsn, $what: refused (exit 4)"
}
refused13 "schema install" "$RUNNER" schema install --dsn "$url13" || rc=1
refused13 "a run" "$RUNNER" --dsn "$url13" -q || rc=1
refused13 "fuzz" "$RUNNER" fuzz --dsn "$url13" --seed 1 --cases 1 || rc=1
exit "$rc"
