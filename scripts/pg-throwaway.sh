#!/usr/bin/env bash
# Start, stop or describe a throwaway PostgreSQL cluster for tests (works as root or not).
#
# Usage: scripts/pg-throwaway.sh start|stop|env|status
#   start   initdb a new cluster (trust auth, 127.0.0.1 only), start it, wait for pg_isready,
#           create the database, and print the `export DATABASE_URL=...` line.
#   stop    stop the cluster and delete its directory.
#   env     print `export DATABASE_URL=postgres://...` (use: eval "$(scripts/pg-throwaway.sh env)").
#   status  exit 0 when the cluster answers pg_isready.
# Environment:
#   PGPORT_THROWAWAY  TCP port (default 55432)
#   PGDIR_THROWAWAY   cluster directory (default /tmp/awa-pg-throwaway-<port>)
#   PGDB_THROWAWAY    database name (default awa_test)
#   PGBIN_THROWAWAY   server bin directory (default: the newest /usr/lib/postgresql/*/bin, then
#                     PATH); scripts/pg-matrix.sh points it at each major's fetched binaries
# PostgreSQL refuses to run as root, so as root the server runs as the `postgres` OS user
# (created by Debian's package); if that user is missing a system user `awa-pg` is created.
set -euo pipefail

PORT="${PGPORT_THROWAWAY:-55432}"
DIR="${PGDIR_THROWAWAY:-/tmp/awa-pg-throwaway-${PORT}}"
DB="${PGDB_THROWAWAY:-awa_test}"
DATA="$DIR/data"
LOG="$DIR/server.log"

die() { printf 'pg-throwaway: %s\n' "$*" >&2; exit 1; }

case "$PORT" in ''|*[!0-9]*) die "PGPORT_THROWAWAY must be a port number, got '$PORT'";; esac
case "$DB" in ''|*[!a-zA-Z0-9_]*) die "PGDB_THROWAWAY must match [A-Za-z0-9_]+, got '$DB'";; esac

# Newest installed server binaries (Debian keeps them off PATH).
find_bindir() {
    local initdb
    if [ -n "${PGBIN_THROWAWAY:-}" ]; then
        [ -x "$PGBIN_THROWAWAY/initdb" ] || die "PGBIN_THROWAWAY=$PGBIN_THROWAWAY holds no initdb"
        echo "$PGBIN_THROWAWAY"; return
    fi
    initdb="$(compgen -G '/usr/lib/postgresql/*/bin/initdb' | sort -V | tail -n1 || true)"
    if [ -n "$initdb" ]; then dirname "$initdb"; return; fi
    command -v initdb >/dev/null && { dirname "$(command -v initdb)"; return; }
    die "no initdb found: run scripts/install-deps.sh first"
}

# The OS user that owns and runs the cluster.
server_user() {
    if [ "$(id -u)" -ne 0 ]; then id -un; return; fi
    if id postgres >/dev/null 2>&1; then echo postgres; return; fi
    id awa-pg >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin awa-pg
    echo awa-pg
}

# Run a command as the server user (directly when we already are that user).
as_server() {
    local user="$1"; shift
    if [ "$(id -un)" = "$user" ]; then "$@"; else runuser -u "$user" -- "$@"; fi
}

url() { printf 'postgres://postgres@127.0.0.1:%s/%s' "$PORT" "$DB"; }

ready() { pg_isready -q -h 127.0.0.1 -p "$PORT" -d postgres -U postgres; }

cmd_start() {
    local bindir user
    bindir="$(find_bindir)"
    user="$(server_user)"
    if [ -f "$DATA/postmaster.pid" ] && ready; then
        printf 'pg-throwaway: already running on port %s (%s)\n' "$PORT" "$DIR" >&2
        printf 'export DATABASE_URL=%s\n' "$(url)"
        return
    fi
    if ready; then
        die "port $PORT is already served by another PostgreSQL; set PGPORT_THROWAWAY to a free port"
    fi
    # A stale cluster left by a killed run: stop it before wiping its directory.
    [ -f "$DATA/postmaster.pid" ] && cmd_stop 2>/dev/null
    rm -rf "$DIR"
    mkdir -p "$DIR"
    chown "$user" "$DIR"
    chmod 700 "$DIR"
    # Trust auth on a loopback-only, throwaway cluster: no password exists to leak.
    as_server "$user" "$bindir/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
        >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; die "initdb failed"; }
    # fsync off: the data is thrown away, and tests run faster.
    as_server "$user" "$bindir/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 \
        -o "-p $PORT -c listen_addresses=127.0.0.1 -k $DIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
        start >/dev/null || { cat "$LOG" >&2 || true; die "pg_ctl start failed (log above)"; }
    local i
    for i in $(seq 1 60); do
        ready && break
        [ "$i" -eq 60 ] && { cat "$LOG" >&2; die "server did not become ready on port $PORT"; }
        sleep 0.5
    done
    psql -q -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 \
        -c "CREATE DATABASE $DB" >/dev/null
    printf 'pg-throwaway: started on 127.0.0.1:%s, database %s, dir %s\n' "$PORT" "$DB" "$DIR" >&2
    printf 'export DATABASE_URL=%s\n' "$(url)"
}

cmd_stop() {
    local bindir user
    if [ -f "$DATA/postmaster.pid" ]; then
        bindir="$(find_bindir)"
        user="$(stat -c %U "$DATA")"
        as_server "$user" "$bindir/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$DIR"
    printf 'pg-throwaway: stopped and removed %s\n' "$DIR" >&2
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    env) printf 'export DATABASE_URL=%s\n' "$(url)" ;;
    status) ready ;;
    *) die "usage: $0 start|stop|env|status" ;;
esac
