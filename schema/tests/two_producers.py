"""two_producers.py: job_routing (v1.1, ADR 0026) and job_stored (v1.2) are scoped to their caller.

Two LOGIN roles, both members of the producer role, connect for real (not SET ROLE: the scope
is the session user) and enqueue keyed jobs. Each must read its own jobs' routing, must get the
NULL row for the other's jobs (exactly as for an unknown id), and nobody may read a raw key:
the row carries the ordering key's digest. job_stored, which also returns the payload (kind,
args, metadata), is held to the same scope: another producer's job reads as the NULL row. The
installer's role (the runner's) reads every job through both.

Needs psycopg and env AWA_SCHEMA_TEST_DSN (the installer, superuser), AWA_SCHEMA_TEST_SCHEMA,
and AWA_SCHEMA_TEST_PRODUCERS = the two login role names, comma-separated (run.sh creates them;
the cluster must let them log in without a password, as the throwaway clusters' trust auth does).
"""

from __future__ import annotations

import hashlib
import os
import sys

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

TAG = b"awa:concurrency_key:v1\x00"
COLUMNS = (
    "job_id, queue, state, priority, enqueue_shard, route_source, concurrency_digest, "
    "ordering_key_digest, unique_key, unique_states"
)


def digest(key: bytes) -> bytes:
    return hashlib.sha256(TAG + key).digest()


def main() -> int:
    dsn = os.environ["AWA_SCHEMA_TEST_DSN"]
    schema = os.environ.get("AWA_SCHEMA_TEST_SCHEMA", "awa_conf_test")
    roles = os.environ["AWA_SCHEMA_TEST_PRODUCERS"].split(",")
    assert len(roles) == 2 and roles[0] != roles[1], "two distinct producer login roles"
    s = sql.Identifier(schema)
    failures: list[str] = []

    def check(ok: bool, what: str) -> None:
        if not ok:
            failures.append(what)

    def as_role(role: str) -> psycopg.Connection:
        params = conninfo_to_dict(dsn)
        params["user"] = role
        params.pop("password", None)
        return psycopg.connect(make_conninfo(**params), autocommit=True)

    insert = sql.SQL(
        "SELECT job_id FROM {}.insert_job(%s, p_ordering_key => %s, p_concurrency_key => %s)"
    ).format(s)
    read = sql.SQL("SELECT " + COLUMNS + " FROM {}.job_routing(%s)").format(s)
    # job_stored's row: job_id, kind, queue, args, ... (008_job_stored.sql).
    stored = sql.SQL("SELECT job_id, kind, args FROM {}.job_stored(%s)").format(s)

    conns = [as_role(r) for r in roles]
    try:
        keys = [(b"order-of-" + r.encode(), b"tenant-of-" + r.encode()) for r in roles]
        jobs = []
        for conn, role, (ok, ck) in zip(conns, roles, keys):
            user = conn.execute("SELECT session_user").fetchone()[0]
            check(user == role, f"connected as {user}, want the login role {role}")
            jobs.append(conn.execute(insert, (f"two_producers.{role}", ok, ck)).fetchone()[0])

        for i, conn in enumerate(conns):
            own = conn.execute(read, (jobs[i],)).fetchone()
            check(own[0] == jobs[i], f"{roles[i]} cannot read its own job {jobs[i]}: {own}")
            check(bytes(own[7]) == digest(keys[i][0]), f"{roles[i]}: ordering_key_digest is not SHA-256(tag || key)")
            check(bytes(own[6]) == digest(keys[i][1]), f"{roles[i]}: concurrency_digest is not SHA-256(tag || key)")
            raw = [v for v in own if isinstance(v, (bytes, memoryview)) and bytes(v) in keys[i]]
            check(not raw, f"{roles[i]}: job_routing returned a raw key {raw}")
            other = 1 - i
            theirs = conn.execute(read, (jobs[other],)).fetchone()
            unknown = conn.execute(read, (-1,)).fetchone()
            check(
                all(v is None for v in theirs),
                f"{roles[i]} reads {roles[other]}'s job {jobs[other]}: {theirs}",
            )
            check(theirs == unknown, f"{roles[i]}: another producer's job differs from an unknown id")
            # A role switch inside the session does not widen the scope: it is the session user.
            conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(roles[i])))
            check(
                conn.execute(read, (jobs[other],)).fetchone()[0] is None,
                f"{roles[i]} after SET ROLE reads {roles[other]}'s job",
            )
            conn.execute("RESET ROLE")
            mine = conn.execute(stored, (jobs[i],)).fetchone()
            check(
                mine[0] == jobs[i] and mine[1] == f"two_producers.{roles[i]}",
                f"{roles[i]} cannot read its own job's payload via job_stored: {mine}",
            )
            check(
                conn.execute(stored, (jobs[other],)).fetchone() == (None, None, None),
                f"{roles[i]} reads {roles[other]}'s payload via job_stored",
            )

        # The installer (the function owner; the runner's role) still reads every job.
        with psycopg.connect(dsn, autocommit=True) as admin:
            for job, (ok, _) in zip(jobs, keys):
                row = admin.execute(read, (job,)).fetchone()
                check(row[0] == job and bytes(row[7]) == digest(ok), f"installer cannot read job {job}: {row}")
                check(admin.execute(stored, (job,)).fetchone()[0] == job, f"installer cannot job_stored {job}")
            admin.execute(
                sql.SQL("DELETE FROM {}.contract_jobs WHERE id = ANY(%s)").format(s), (jobs,)
            )
    finally:
        for conn in conns:
            conn.close()

    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    if failures:
        print(f"two_producers.py: {len(failures)} failures", file=sys.stderr)
        return 1
    print("two_producers.py: job_routing and job_stored are scoped to each of two producer logins; no raw keys")
    return 0


if __name__ == "__main__":
    sys.exit(main())
