#!/usr/bin/env python3
"""Database-side benchmarks: print contender/baseline ratios measured side by side in one run.

Usage: scripts/bench-db.py [--dsn URL] [--runner PATH] [--rounds 5] [--skip-runner]

Needs psycopg 3, a PostgreSQL DSN (default $DATABASE_URL) for a role that can create schemas
and roles (a superuser is simplest), and the release runner binary (build it with
`cargo build --release -p awa-conformance`). Installs the reference schema into a scratch
schema (default awa_bench) with `awa-conformance schema install`, measures, then drops the
schema and the producer role it created. Contenders and baselines alternate in interleaved
rounds so machine noise hits both; each row reports the median over the rounds.

Exit status: 0 when every measurement ran (a missed target is reported, not an error),
1 on any error. Nothing printed contains the DSN.
"""
import argparse
import hashlib
import json
import os
import pathlib
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import psycopg

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_RUNNER = ROOT / "target" / "release" / "awa-conformance"
SCHEMA_RE = re.compile(r"^[a-z_][a-z0-9_]{0,40}$")

# D1 tag: SHA-256("awa:concurrency_key:v1" || 0x00 || key).
DIGEST_TAG = b"awa:concurrency_key:v1\x00"
HASH_OFFSET = 0xCBF29CE484222325
HASH_PRIME = 0x100000001B3
BENCH_QUEUE = "bench_q"
BENCH_WIDTH = 8

INSERT_JOB_CALL = (
    "SELECT * FROM {s}.insert_job(%s::text, %s::text, %s::jsonb, %s::smallint, %s::smallint, "
    "%s::timestamptz, %s::jsonb, %s::text[], %s::bytea, %s::varbit, %s::bytea, %s::bytea, "
    "%s::jsonb)"
)
# The baseline: the same row, routing precomputed by the client, one prepared INSERT.
PLAIN_INSERT = (
    "INSERT INTO {s}.contract_jobs (kind, queue, args, state, priority, max_attempts, run_at, "
    "created_at, metadata, tags, unique_key, unique_states, ordering_key, concurrency_digest, "
    "enqueue_shard, route_source, enqueued_by) VALUES (%s::text, %s::text, %s::jsonb, "
    "'available', %s::smallint, %s::smallint, clock_timestamp(), clock_timestamp(), %s::jsonb, "
    "%s::text[], NULL, NULL, %s::bytea, %s::bytea, %s::smallint, %s::text, session_user) "
    "RETURNING id"
)

# The released ordering hash, byte by byte over NUMERIC (docs/released-awa.md R5.1). Benchmark only:
# created in the scratch schema and dropped with it; never shipped.
RELEASED_HASH_FN = """
CREATE FUNCTION {s}.bench_released_ordering_hash(p_key bytea) RETURNS numeric
LANGUAGE plpgsql IMMUTABLE STRICT AS $fn$
DECLARE
    v_hash numeric := 14695981039346656037;
BEGIN
    FOR i IN 0 .. length(p_key) - 1 LOOP
        v_hash := MOD(v_hash * 1099511628211 + get_byte(p_key, i), 18446744073709551616);
    END LOOP;
    RETURN v_hash;
END
$fn$
"""


class BenchError(Exception):
    """A measurement could not run; the message names the fix."""


def redact(text: str) -> str:
    """Hide any DSN password (scheme://user:password@host) in text we print."""
    return re.sub(r"(://[^:/@\s]*):[^@\s]*@", r"\1:***@", text)


def digest(key: bytes) -> bytes:
    return hashlib.sha256(DIGEST_TAG + key).digest()


def ordering_hash(key: bytes) -> int:
    h = HASH_OFFSET
    for b in key:
        h = (h * HASH_PRIME + b) % (1 << 64)
    return h


def route(ordering_key, concurrency_key, width, backend_pid):
    """D3 routing, client side: (shard, digest, route_source) for the baseline INSERT."""
    if ordering_key is not None:
        return (ordering_hash(ordering_key) % width,
                digest(concurrency_key if concurrency_key is not None else ordering_key),
                "ordering_key")
    if concurrency_key is not None:
        d = digest(concurrency_key)
        return int.from_bytes(d[:8], "big") % width, d, "concurrency_key"
    return backend_pid % width, None, "rotor"


# ----------------------------------------------------------------------------------------
# 1. insert_job per job vs a prepared single-row INSERT
# ----------------------------------------------------------------------------------------

def job_keys(kind: str, i: int):
    """(ordering_key, concurrency_key) of job i for a key kind."""
    if kind == "none":
        return None, None
    if kind == "concurrency":
        return None, f"tenant-{i % 97}".encode()
    return f"order-{i % 97}".encode(), None


def insert_job_rows(kind, n):
    args = json.dumps({"n": 1})
    return [("bench.job", BENCH_QUEUE, args, 2, 25, None, "{}", [], None, None,
             *job_keys(kind, i), "{}") for i in range(n)]


def plain_rows(kind, n, pid):
    # Routing is precomputed outside the timed loop: the baseline is the bare insert.
    args = json.dumps({"n": 1})
    rows = []
    for i in range(n):
        ok, ck = job_keys(kind, i)
        shard, dig, src = route(ok, ck, BENCH_WIDTH, pid)
        rows.append(("bench.job", BENCH_QUEUE, args, 2, 25, "{}", [], ok, dig, shard, src))
    return rows


def time_calls(conn, q, rows):
    """Total seconds for one prepared, autocommitted call per row (the producer pattern)."""
    t0 = time.perf_counter()
    for row in rows:
        conn.execute(q, row, prepare=True).fetchone()
    return time.perf_counter() - t0


def time_per_job(conn, s, kind, n, pid, chunk=50):
    """(insert_job, plain INSERT) seconds per job, alternating chunks of `chunk` calls so that
    load changes during the round hit both sides alike."""
    qc, qb = INSERT_JOB_CALL.format(s=s), PLAIN_INSERT.format(s=s)
    rc, rb = insert_job_rows(kind, n), plain_rows(kind, n, pid)
    tc = tb = 0.0
    for k, i in enumerate(range(0, n, chunk)):
        if k % 2 == 0:
            tc += time_calls(conn, qc, rc[i:i + chunk])
            tb += time_calls(conn, qb, rb[i:i + chunk])
        else:
            tb += time_calls(conn, qb, rb[i:i + chunk])
            tc += time_calls(conn, qc, rc[i:i + chunk])
    return tc / n, tb / n


def time_set_insert_job(conn, s, n):
    q = (f"SELECT count(r.job_id) FROM generate_series(1, %s) AS g "
         f"CROSS JOIN LATERAL {s}.insert_job('bench.job', '{BENCH_QUEUE}', "
         f"jsonb_build_object('n', g)) AS r")
    t0 = time.perf_counter()
    got = conn.execute(q, (n,)).fetchone()[0]
    dt = time.perf_counter() - t0
    if got != n:
        raise BenchError(f"set-based insert_job returned {got} rows, expected {n}")
    return dt / n


def time_set_plain(conn, s, n, pid):
    q = (f"INSERT INTO {s}.contract_jobs (kind, queue, args, state, priority, max_attempts, "
         f"run_at, created_at, metadata, tags, enqueue_shard, route_source, enqueued_by) "
         f"SELECT 'bench.job', '{BENCH_QUEUE}', jsonb_build_object('n', g), 'available', 2, 25, "
         f"clock_timestamp(), clock_timestamp(), '{{}}'::jsonb, '{{}}'::text[], %s, 'rotor', "
         f"session_user FROM generate_series(1, %s) AS g")
    t0 = time.perf_counter()
    cur = conn.execute(q, (pid % BENCH_WIDTH, n))
    dt = time.perf_counter() - t0
    if cur.rowcount != n:
        raise BenchError(f"multi-row INSERT wrote {cur.rowcount} rows, expected {n}")
    return dt / n


def bench_insert_job(dsn, s, rounds, n, n_set):
    results = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        # The cluster default may differ; both sides run under the same setting, and "off"
        # removes WAL flush time that would otherwise dilute the ratio.
        conn.execute("SET synchronous_commit = off")
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        conn.execute(f"INSERT INTO {s}.queue_meta (queue, enqueue_shards) VALUES (%s, %s) "
                     f"ON CONFLICT (queue) DO UPDATE SET enqueue_shards = EXCLUDED.enqueue_shards",
                     (BENCH_QUEUE, BENCH_WIDTH))
        # Correctness guard: the baseline row must be the row insert_job writes.
        for kind in ("none", "concurrency", "ordering"):
            ok, ck = job_keys(kind, 5)
            row = conn.execute(INSERT_JOB_CALL.format(s=s),
                               ("bench.job", BENCH_QUEUE, "{}", 2, 25, None, "{}", [], None,
                                None, ok, ck, "{}")).fetchone()
            shard, dig, src = route(ok, ck, BENCH_WIDTH, pid)
            if (row[4], row[5], row[6]) != (shard, src, dig):
                raise BenchError(f"baseline routing for key kind {kind} differs from insert_job: "
                                 f"{(row[4], row[5], row[6])!r} vs {(shard, src, dig)!r}")
        for kind in ("none", "concurrency", "ordering"):
            time_per_job(conn, s, kind, 300, pid)  # warm: plans, PL/pgSQL compile, caches
            c, b = [], []
            for _ in range(rounds):
                conn.execute(f"TRUNCATE {s}.contract_jobs")
                tc, tb = time_per_job(conn, s, kind, n, pid)
                c.append(tc)
                b.append(tb)
            results.append((f"insert_job per job, {kind} key (µs/job)", c, b, 1.5, "le", 1e6))
        time_set_insert_job(conn, s, 200)
        time_set_plain(conn, s, 200, pid)
        c, b = [], []
        for r in range(rounds):
            conn.execute(f"TRUNCATE {s}.contract_jobs")
            if r % 2 == 0:
                c.append(time_set_insert_job(conn, s, n_set))
                b.append(time_set_plain(conn, s, n_set, pid))
            else:
                b.append(time_set_plain(conn, s, n_set, pid))
                c.append(time_set_insert_job(conn, s, n_set))
        results.append((f"insert_job set-based, {n_set} jobs/stmt, no key (µs/job)", c, b, None,
                        "info", 1e6))
        conn.execute(f"TRUNCATE {s}.contract_jobs")
    return results


# ----------------------------------------------------------------------------------------
# 2. ordering hash on 1 KiB keys vs the released NUMERIC loop
# ----------------------------------------------------------------------------------------

def bench_ordering_hash(dsn, s, rounds, n_keys):
    keys = [secrets.token_bytes(1024) for _ in range(n_keys)]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(RELEASED_HASH_FN.format(s=s))
        conn.execute(f"CREATE TABLE {s}.bench_keys (k bytea NOT NULL)")
        with conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {s}.bench_keys (k) VALUES (%s)", [(k,) for k in keys])
        rows = conn.execute(
            f"SELECT k, {s}.ordering_key_hash64(k), {s}.bench_released_ordering_hash(k) "
            f"FROM {s}.bench_keys").fetchall()
        for k, ours, released in rows:
            if ours != released or int(ours) != ordering_hash(bytes(k)):
                raise BenchError(f"ordering hash mismatch on a 1 KiB key: contract {ours}, "
                                 f"released {released}, python {ordering_hash(bytes(k))}")
        fast = f"SELECT sum({s}.ordering_key_hash64_i64(k)::numeric) FROM {s}.bench_keys"
        slow = f"SELECT sum({s}.bench_released_ordering_hash(k)) FROM {s}.bench_keys"
        c, b = [], []
        for r in range(rounds):
            for which in ((0, 1) if r % 2 == 0 else (1, 0)):
                t0 = time.perf_counter()
                conn.execute(fast if which == 0 else slow).fetchone()
                (c if which == 0 else b).append((time.perf_counter() - t0) / n_keys)
        conn.execute(f"DROP TABLE {s}.bench_keys")
        conn.execute(f"DROP FUNCTION {s}.bench_released_ordering_hash(bytea)")
    return [(f"ordering hash, 1 KiB key, {len(rows)} keys verified equal (µs/key)", c, b, 10.0,
             "ge", 1e6)]


# ----------------------------------------------------------------------------------------
# 2b. the staged bulk path (docs/contract.md §14) vs insert_job once per row
# ----------------------------------------------------------------------------------------

BULK_COLUMNS = ("batch_id, row_no, kind, queue, args, priority, max_attempts, metadata, tags, "
                "ordering_key, concurrency_key, concurrency_digest, enqueue_shard, route_source")
MULTI_ROW_COLUMNS = ("kind, queue, args, state, priority, max_attempts, run_at, created_at, "
                     "metadata, tags, ordering_key, concurrency_digest, enqueue_shard, "
                     "route_source, enqueued_by")


def mixed_keys(i):
    """Job i's keys: a third unkeyed, a third with a concurrency key, a third ordered."""
    return job_keys(("none", "concurrency", "ordering")[i % 3], i)


def time_bulk(conn, s, n):
    """Seconds per job: COPY n staged rows (routing computed client-side), publish_batch, commit."""
    batch = str(uuid.uuid4())
    args = json.dumps({"n": 1})
    rows = []
    for i in range(n):
        ok, ck = mixed_keys(i)
        shard, dig, src = route(ok, ck, BENCH_WIDTH, 0)
        rows.append((batch, i + 1, "bench.job", BENCH_QUEUE, args, 2, 25, "{}", [], ok, ck, dig,
                     None if src == "rotor" else shard, src))
    t0 = time.perf_counter()
    with conn.transaction():
        with conn.cursor() as cur:
            with cur.copy(f"COPY {s}.bulk_staging ({BULK_COLUMNS}) FROM STDIN") as cp:
                for row in rows:
                    cp.write_row(row)
            ids = cur.execute(f"SELECT {s}.publish_batch(%s::uuid)", (batch,)).fetchone()[0]
    dt = time.perf_counter() - t0
    if len(ids) != n:
        raise BenchError(f"publish_batch returned {len(ids)} job ids, expected {n}")
    return dt / n


def time_insert_job_each(conn, s, n):
    """Seconds per job: one prepared, autocommitted insert_job call per row (same rows)."""
    args = json.dumps({"n": 1})
    rows = [("bench.job", BENCH_QUEUE, args, 2, 25, None, "{}", [], None, None, *mixed_keys(i),
             "{}") for i in range(n)]
    return time_calls(conn, INSERT_JOB_CALL.format(s=s), rows) / n


def time_multi_row_insert(conn, s, n, pid):
    """Seconds per job: the same rows, client-routed, as ONE multi-row INSERT (no validation)."""
    args = json.dumps({"n": 1})
    values, params = [], []
    for i in range(n):
        ok, ck = mixed_keys(i)
        shard, dig, src = route(ok, ck, BENCH_WIDTH, pid)
        values.append("(%s, %s, %s::jsonb, 'available', 2, 25, clock_timestamp(), "
                      "clock_timestamp(), '{}'::jsonb, '{}'::text[], %s::bytea, %s::bytea, "
                      "%s::smallint, %s, session_user)")
        params += ["bench.job", BENCH_QUEUE, args, ok, dig, shard, src]
    q = f"INSERT INTO {s}.contract_jobs ({MULTI_ROW_COLUMNS}) VALUES " + ", ".join(values)
    t0 = time.perf_counter()
    cur = conn.execute(q, params)
    dt = time.perf_counter() - t0
    if cur.rowcount != n:
        raise BenchError(f"multi-row INSERT wrote {cur.rowcount} rows, expected {n}")
    return dt / n


def bench_bulk(dsn, s, rounds, n):
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET synchronous_commit = off")
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        conn.execute(f"INSERT INTO {s}.queue_meta (queue, enqueue_shards) VALUES (%s, %s) "
                     f"ON CONFLICT (queue) DO UPDATE SET enqueue_shards = EXCLUDED.enqueue_shards",
                     (BENCH_QUEUE, BENCH_WIDTH))
        # Warm: plans, PL/pgSQL compile, caches.
        time_bulk(conn, s, 200)
        time_insert_job_each(conn, s, 200)
        time_multi_row_insert(conn, s, 200, pid)
        # Correctness guard: bulk rows are stored with the routing insert_job gives them.
        conn.execute(f"TRUNCATE {s}.contract_jobs")
        time_bulk(conn, s, 30)
        time_insert_job_each(conn, s, 30)
        differ = conn.execute(
            f"SELECT count(*) FROM (SELECT ordering_key, concurrency_digest, enqueue_shard, "
            f"route_source, count(*) AS n FROM {s}.contract_jobs WHERE route_source <> 'rotor' "
            f"GROUP BY 1, 2, 3, 4) AS g WHERE g.n <> 2").fetchone()[0]
        if differ:
            raise BenchError(f"{differ} keyed routings differ between publish_batch and insert_job")
        bulk, each, multi = [], [], []
        for r in range(rounds):
            conn.execute(f"TRUNCATE {s}.contract_jobs")
            order = (0, 1, 2) if r % 2 == 0 else (2, 1, 0)
            for which in order:
                if which == 0:
                    bulk.append(time_bulk(conn, s, n))
                elif which == 1:
                    each.append(time_insert_job_each(conn, s, n))
                else:
                    multi.append(time_multi_row_insert(conn, s, n, pid))
        conn.execute(f"TRUNCATE {s}.contract_jobs")
    return [
        (f"bulk: COPY + publish_batch of {n} rows vs insert_job once per row (µs/job)",
         bulk, each, 5.0, "ge", 1e6),
        (f"bulk: COPY + publish_batch vs one multi-row INSERT of the {n} rows, unvalidated "
         f"(µs/job)", bulk, multi, None, "info", 1e6),
    ]


# ----------------------------------------------------------------------------------------
# 3. the runner
# ----------------------------------------------------------------------------------------

def run_measured(argv, env=None):
    """Run argv; return (wall seconds, peak RSS KiB, exit code). RSS from GNU time if present."""
    gnu_time = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        full = [gnu_time, "-f", "%M", "-o", tf.name, *argv] if gnu_time else argv
        t0 = time.perf_counter()
        proc = subprocess.run(full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        wall = time.perf_counter() - t0
        rss = None
        if gnu_time:
            text = tf.read().strip().splitlines()
            rss = int(text[-1]) if text and text[-1].isdigit() else None
    return wall, rss, proc.returncode, proc.stderr.decode(errors="replace")


def bench_runner(dsn, s, role, runner, rounds, naive_n):
    results, facts = [], {}
    walls, sql_walls, rsses = [], [], []
    report_dir = pathlib.Path(tempfile.mkdtemp())
    base = [str(runner), "--dsn", dsn, "--schema", s, "--producer-role", role]
    # Count what the runner really checks: every insert_job call checks one vector at one
    # width (or one rejection/uniqueness case), the same unit as one naive psql call below.
    # track_functions is superuser-only; the runner's sessions inherit it from the database.
    with psycopg.connect(dsn, autocommit=True) as conn:
        db = conn.execute("SELECT current_database()").fetchone()[0]
        conn.execute(f'ALTER DATABASE "{db}" SET track_functions = \'pl\'')
    calls_per_run = []

    def insert_job_calls():
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("SELECT pg_stat_clear_snapshot()")
            row = conn.execute(
                "SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions "
                "WHERE schemaname = %s AND funcname = 'insert_job'", (s,)).fetchone()
            return int(row[0])

    for _ in range(rounds):
        # The full default run, then the SQL suites alone (filter "sql::") for the rate.
        wall, rss, rc, err = run_measured([*base, "--report-json", str(report_dir / "all.json")])
        if rc != 0:
            raise BenchError(f"runner run against the DSN exited {rc}: {err.strip()[-400:]}")
        walls.append(wall)
        rsses.append(rss)
        full = json.loads((report_dir / "all.json").read_text())
        before = insert_job_calls()
        wall, rss, rc, err = run_measured([*base, "--report-json", str(report_dir / "sql.json"),
                                           "sql::"])
        if rc != 0:
            raise BenchError(f"runner SQL-suite run exited {rc}: {err.strip()[-400:]}")
        # Statistics reach shared memory when the runner's backends exit; allow a moment.
        time.sleep(1.0)
        calls_per_run.append(insert_job_calls() - before)
        sql_walls.append(wall)
        rsses.append(rss)
    report = json.loads((report_dir / "sql.json").read_text())
    shutil.rmtree(report_dir, ignore_errors=True)
    passed_db = [c for c in report["cases"]
                 if c.get("suite") == "sql" and c.get("status") == "passed"]
    if not passed_db:
        raise BenchError("the runner's SQL-suite report holds no passed sql case")
    facts["runner_cases_full_run"] = full["summary"]
    facts["runner_db_cases_passed"] = len(passed_db)
    facts["runner_wall_dsn_s"] = walls

    # Embedded run: no DSN, the runner starts (and removes) its own cluster.
    # DATABASE_URL and PG* would point it at a server: drop them for this run.
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL" and not k.startswith("PG")}
    emb_wall, emb_rss, rc, err = run_measured([str(runner)], env=env)
    if rc != 0:
        raise BenchError(f"embedded runner run exited {rc}: {err.strip()[-400:]}")
    facts["runner_wall_embedded_s"] = emb_wall

    # Naive baseline: one psql process per routing vector, expectations in opts.
    vectors = json.loads((ROOT / "vectors" / "v1" / "routing_precedence.json").read_text())
    sample = [v for v in vectors["vectors"] if v["status"] == "normative"][:naive_n]
    with psycopg.connect(dsn, autocommit=True) as conn:
        for w in sorted({v["input"]["width"] for v in sample}):
            conn.execute(f"INSERT INTO {s}.queue_meta (queue, enqueue_shards) VALUES (%s, %s) "
                         f"ON CONFLICT (queue) DO UPDATE SET enqueue_shards = EXCLUDED.enqueue_shards",
                         (f"bench_w{w}", w))
    cmds = []
    for v in sample:
        inp, exp = v["input"], v["expected"]
        opts = {"expected_route_source": exp["route_source"],
                "expected_concurrency_digest": exp["concurrency_digest_hex"]}
        if exp["enqueue_shard"] is not None:
            opts["expected_enqueue_shard"] = exp["enqueue_shard"]

        def lit(hexkey):
            return "NULL" if hexkey is None else f"'\\x{hexkey}'::bytea"
        sql = (f"SELECT job_id FROM {s}.insert_job('bench.naive', 'bench_w{inp['width']}', "
               f"p_ordering_key => {lit(inp['ordering_key_hex'])}, "
               f"p_concurrency_key => {lit(inp['concurrency_key_hex'])}, "
               f"p_opts => '{json.dumps(opts)}'::jsonb)")
        cmds.append(sql)
    psql = shutil.which("psql")
    if psql is None:
        raise BenchError("psql not found: install postgresql-client for the naive baseline")
    t0 = time.perf_counter()
    for sql in cmds:
        p = subprocess.run([psql, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c", sql],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if p.returncode != 0:
            raise BenchError(f"naive psql vector check failed: {p.stderr.decode().strip()[:300]}")
    naive_wall = time.perf_counter() - t0
    naive_rate = len(cmds) / naive_wall
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{db}" RESET track_functions')
    checks = statistics.median(calls_per_run)
    if checks <= 0:
        raise BenchError("pg_stat_user_functions counted no insert_job call during the runner run")
    runner_rate = checks / statistics.median(sql_walls)
    facts["runner_wall_sql_only_s"] = sql_walls
    facts["runner_insert_job_calls_per_sql_run"] = calls_per_run

    results.append(("runner full run, --dsn (s)", walls, None, 5.0, "abs_le", 1))
    results.append(("runner full run, embedded cluster (s)", [emb_wall], None, None, "info", 1))
    peak = max(r for r in [*rsses, emb_rss] if r is not None) if any(
        r is not None for r in [*rsses, emb_rss]) else None
    if peak is None:
        raise BenchError("peak RSS unavailable: install GNU time (apt-get install -y time)")
    results.append(("runner peak RSS, max of all runs (MiB)", [peak / 1024], None, 64.0, "abs_le", 1))
    facts["runner_peak_rss_kib"] = {"dsn_runs": rsses, "embedded": emb_rss}
    facts["naive"] = {"vectors": len(cmds), "wall_s": naive_wall}
    results.append((f"vector checks/s (insert_job calls): runner `sql::` run ({int(checks)} calls, "
                    f"{len(passed_db)} cases) vs one psql per vector ({len(cmds)} sampled)",
                    [runner_rate], [naive_rate], 20.0, "rate_ge", 1))
    return results, facts


# ----------------------------------------------------------------------------------------

def print_table(results):
    print(f"{'measurement':<88} {'contender':>11} {'baseline':>11} {'ratio':>8} {'target':>9}  result")
    for name, c, b, target, mode, scale in results:
        cm = statistics.median(c) * scale
        if b is None:
            ok = target is None or cm <= target
            tgt = "-" if target is None else f"≤ {target:g}"
            print(f"{name:<88} {cm:>11.2f} {'-':>11} {'-':>8} {tgt:>9}  "
                  f"{'info' if target is None else ('PASS' if ok else 'MISS')}")
            continue
        bm = statistics.median(b) * scale
        if mode == "le":  # time ratio contender/baseline, lower is better
            ratio = cm / bm
            ok, tgt = ratio <= target, f"≤ {target:g}×"
        elif mode == "ge":  # speed-up baseline/contender, higher is better
            ratio = bm / cm
            ok, tgt = ratio >= target, f"≥ {target:g}×"
        elif mode == "rate_ge":  # rates: contender/baseline
            ratio = cm / bm
            ok, tgt = ratio >= target, f"≥ {target:g}×"
        else:  # info: time ratio
            ratio, ok, tgt = cm / bm, None, "-"
        res = "info" if ok is None else ("PASS" if ok else "MISS")
        print(f"{name:<88} {cm:>11.2f} {bm:>11.2f} {ratio:>7.2f}× {tgt:>9}  {res}")


def machine_facts(dsn):
    with psycopg.connect(dsn, autocommit=True) as conn:
        ver = conn.execute("SHOW server_version").fetchone()[0]
        settings = {k: conn.execute(f"SHOW {k}").fetchone()[0]
                    for k in ("fsync", "synchronous_commit", "shared_buffers")}
    return {"nproc": os.cpu_count(), "pg_version": ver, "loadavg": os.getloadavg(),
            "server_settings": settings}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn", default=os.environ.get("DATABASE_URL"),
                    help="PostgreSQL DSN (default: $DATABASE_URL)")
    ap.add_argument("--schema", default="awa_bench", help="scratch schema (dropped at the end)")
    ap.add_argument("--runner", default=str(DEFAULT_RUNNER), help="awa-conformance binary")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds per measurement")
    ap.add_argument("--jobs", type=int, default=2000, help="jobs per round, per-job insert")
    ap.add_argument("--set-jobs", type=int, default=5000, help="jobs per set-based statement")
    ap.add_argument("--hash-keys", type=int, default=300, help="1 KiB keys for the hash bench")
    ap.add_argument("--naive-sample", type=int, default=100, help="vectors sent through psql")
    ap.add_argument("--skip-runner", action="store_true", help="skip the runner measurements")
    ap.add_argument("--bulk-jobs", type=int, default=2000, help="rows per batch, bulk bench")
    ap.add_argument("--only", choices=["insert", "hash", "bulk", "runner"], help="run one group")
    a = ap.parse_args()
    if not a.dsn:
        print("bench-db: no DSN: pass --dsn or set DATABASE_URL "
              "(scripts/pg-throwaway.sh start prints one)", file=sys.stderr)
        return 1
    if not SCHEMA_RE.match(a.schema):
        print(f"bench-db: --schema must match {SCHEMA_RE.pattern}", file=sys.stderr)
        return 1
    runner = pathlib.Path(a.runner)
    if not runner.is_file():
        print(f"bench-db: runner binary {runner} missing: run "
              f"`cargo build --release -p awa-conformance`", file=sys.stderr)
        return 1
    s = f'"{a.schema}"'
    role = f"{a.schema}_producer"
    facts = machine_facts(a.dsn)
    results = []
    try:
        # Fresh scratch schema and producer role, installed by the runner itself.
        with psycopg.connect(a.dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {s} CASCADE")
        p = subprocess.run([str(runner), "schema", "install", "--dsn", a.dsn, "--schema",
                            a.schema, "--producer-role", role],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if p.returncode != 0:
            raise BenchError(f"schema install exited {p.returncode}: "
                             f"{p.stderr.decode(errors='replace').strip()[-400:]}")
        if a.only in (None, "insert"):
            results += bench_insert_job(a.dsn, s, a.rounds, a.jobs, a.set_jobs)
        if a.only in (None, "hash"):
            results += bench_ordering_hash(a.dsn, s, a.rounds, a.hash_keys)
        if a.only in (None, "bulk"):
            results += bench_bulk(a.dsn, s, a.rounds, a.bulk_jobs)
        if a.only in (None, "runner") and not a.skip_runner:
            r, f = bench_runner(a.dsn, a.schema, role, runner, a.rounds, a.naive_sample)
            results += r
            facts.update(f)
    except (BenchError, psycopg.Error, OSError) as e:
        print(f"bench-db: error: {redact(str(e))}", file=sys.stderr)
        return 1
    finally:
        cleanup(a.dsn, s, role)
    facts["loadavg_end"] = os.getloadavg()
    print_table(results)
    print()
    print("facts: " + json.dumps(facts, default=str))
    return 0


def cleanup(dsn, s, role):
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {s} CASCADE")
            # Undo the per-database statistics setting of bench_runner, even after an error.
            db = conn.execute("SELECT current_database()").fetchone()[0]
            conn.execute(f'ALTER DATABASE "{db}" RESET track_functions')
            # The producer role and the bounded owner that install derives from its name.
            for r in (role, re.sub(r"_producer$", "", role) + "_owner"):
                exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s",
                                      (r,)).fetchone()
                if exists:
                    conn.execute(f'DROP OWNED BY "{r}"')
                    conn.execute(f'DROP ROLE "{r}"')
    except psycopg.Error as e:
        print(f"bench-db: cleanup failed: {redact(str(e))}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
