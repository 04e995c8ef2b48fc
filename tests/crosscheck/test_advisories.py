"""Reproduce every advisory of docs/advisories.md on the released packages (awa-pg / awa-cli 0.6.9).

Each test is the advisory's minimal reproduction, run on the database the released CLI migrated
and promoted to queue storage (conftest.py), or on a canonical one of its own. If released Awa
stops behaving as an advisory says, its test fails: fix the advisory (or retire it), never the
expectation alone. Kinds and queues are this file's own (`xc.adv*`, `xc_adv*`).
"""

from __future__ import annotations

import datetime as dt
import math
import os
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import awa
import blake3
import psycopg
import pytest
from conftest import Released

FUTURE = dt.datetime(2099, 1, 1, tzinfo=dt.timezone.utc)


def stored_key(conn: psycopg.Connection, job_id: int) -> bytes:
    row = conn.execute("SELECT unique_key FROM awa.jobs WHERE id = %s", (job_id,)).fetchone()
    assert row is not None and row[0] is not None
    return bytes(row[0])


def released_key(kind: str, canonical_args: bytes) -> bytes:
    """blake3(kind || 0x00 || canonical args)[:16]: the released framing with by_args only."""
    return blake3.blake3(kind.encode() + b"\x00" + canonical_args).digest()[:16]


def test_a1_python_insert_hashes_big_integers_as_floats(released: Released) -> None:
    """A1: Client.insert hashes ints beyond i64 as floats; cancel_by_unique_key hashes them exactly."""
    kind, big = "xc.adv1", 2**64 - 1
    job = released.client.insert({"n": big}, kind=kind, queue="xc_adv1", run_at=FUTURE, unique_opts={"states": 0})
    key = stored_key(released.conn, job.id)
    assert key == released_key(kind, b'{"n":1.8446744073709552e+19}')
    assert key != released_key(kind, b'{"n":18446744073709551615}')
    # The same logical request through the cancel path computes the exact-integer key, so it
    # cannot find the job the insert path stored.
    assert released.client.cancel_by_unique_key(kind, args={"n": big}) is None
    # Two different integers that round to the same float share one key.
    other = released.client.insert(
        {"n": big - 1}, kind=kind, queue="xc_adv1", run_at=FUTURE, unique_opts={"states": 0}
    )
    assert stored_key(released.conn, other.id) == key


def test_a2_queue_names_over_59_bytes_fail_for_available_jobs(released: Released) -> None:
    """A2: under queue storage an available insert NOTIFYs on 'awa:' || queue (63-byte limit)."""
    for queue in ("q" * 60, "é" * 30):  # 60 bytes each
        with pytest.raises(awa.DatabaseError, match="channel name too long"):
            released.client.insert({}, kind="xc.adv2", queue=queue)
        with pytest.raises(psycopg.errors.InvalidParameterValue):  # 22023
            with released.conn.transaction():
                released.conn.execute("SELECT awa.insert_job_compat('xc.adv2', %s)", (queue,))
        # Scheduled inserts do not notify: the same name is accepted.
        assert released.client.insert({}, kind="xc.adv2", queue=queue, run_at=FUTURE).queue == queue
    assert released.client.insert({}, kind="xc.adv2", queue="q" * 59).queue == "q" * 59


def test_a3_nan_and_infinities_become_null_in_key_and_stored_args(released: Released) -> None:
    """A3: NaN, +inf and -inf are hashed as null and stored as null: one key, and the value is lost."""
    keys = set()
    for value in (math.nan, math.inf, -math.inf, None):
        job = released.client.insert(
            {"x": value}, kind="xc.adv3", queue="xc_adv3", run_at=FUTURE, unique_opts={"states": 0}
        )
        keys.add(stored_key(released.conn, job.id))
        args = released.conn.execute("SELECT args FROM awa.jobs WHERE id = %s", (job.id,)).fetchone()
        assert args == ({"x": None},)
    assert keys == {released_key("xc.adv3", b'{"x":null}')}


def test_a4_unique_key_fields_are_ambiguous(released: Released) -> None:
    """A4: fields are neither tagged nor length-prefixed, so different requests share a key."""
    client, kind = released.client, "xc.adv4"
    # The first request claims the key; the second, a different logical request, is refused.
    client.insert({"z": 1}, kind=kind, queue='{"a":1}', run_at=FUTURE, unique_opts={"by_queue": True, "by_args": False})
    with pytest.raises(awa.UniqueConflict):
        client.insert({"a": 1}, kind=kind, queue="xc_adv4", run_at=FUTURE, unique_opts={})
    # by_queue "AAAAAAAA" and by_period 0x4141414141414141 (little-endian bytes "AAAAAAAA").
    a = client.insert(
        {}, kind=kind, queue="AAAAAAAA", run_at=FUTURE, unique_opts={"by_queue": True, "by_args": False, "states": 0}
    )
    b = client.insert(
        {},
        kind=kind,
        queue="xc_adv4",
        run_at=FUTURE,
        unique_opts={"by_args": False, "by_period": 0x4141414141414141, "states": 0},
    )
    assert stored_key(released.conn, a.id) == stored_key(released.conn, b.id)


def _canonical_database(base: str) -> tuple[str, str]:
    """A fresh database migrated by the released CLI and left in the canonical engine."""
    name = f"awa_xadv_{os.getpid()}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    url = urllib.parse.urlunsplit(urllib.parse.urlsplit(base)._replace(path="/" + name))
    beside = Path(sys.executable).parent / "awa"
    cli = str(beside) if beside.is_file() else shutil.which("awa")
    assert cli, "the awa CLI: pip install -r tests/requirements.txt"
    env = {**os.environ, "DATABASE_URL": url, "NO_COLOR": "1"}
    subprocess.run([cli, "migrate"], env=env, capture_output=True, check=True)
    return name, url


def test_a5_ordering_key_is_dropped_for_scheduled_jobs_and_in_the_canonical_engine(released: Released) -> None:
    """A5: a scheduled job keeps no ordering key and no shard; the canonical engine keeps neither."""
    conn = released.conn
    conn.execute(
        "INSERT INTO awa.queue_meta (queue, enqueue_shards) VALUES ('xc_adv5', 8) "
        "ON CONFLICT (queue) DO UPDATE SET enqueue_shards = EXCLUDED.enqueue_shards"
    )
    job = released.client.insert({}, kind="xc.adv5", queue="xc_adv5", run_at=FUTURE, ordering_key=b"tenant-42")
    deferred = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'awa' "
        "AND table_name = 'deferred_jobs' AND column_name IN ('ordering_key', 'enqueue_shard')"
    ).fetchall()
    assert deferred == []
    assert conn.execute("SELECT count(*) FROM awa.deferred_jobs WHERE job_id = %s", (job.id,)).fetchone() == (1,)
    # The same key on an available job is routed (shard 0 at width 8 for "tenant-42").
    ready = released.client.insert({}, kind="xc.adv5", queue="xc_adv5", ordering_key=b"tenant-42")
    shard = conn.execute("SELECT enqueue_shard FROM awa.ready_entries WHERE job_id = %s", (ready.id,)).fetchone()
    assert shard == (0,)

    base = os.environ["DATABASE_URL"]
    name, url = _canonical_database(base)
    try:
        with psycopg.connect(url, autocommit=True) as canon:
            assert canon.execute("SELECT awa.active_queue_storage_schema()").fetchone() == (None,)
            row = canon.execute(
                "SELECT (awa.insert_job_compat('xc.adv5', 'xc_adv5', p_ordering_key => 'tenant-42'::bytea)).id"
            ).fetchone()
            assert row is not None
            cols = canon.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = 'awa' "
                "AND table_name = 'jobs_hot' AND column_name IN ('ordering_key', 'enqueue_shard')"
            ).fetchall()
            assert cols == []
    finally:
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_a6_unkeyed_sql_inserts_use_one_shard_per_connection(released: Released) -> None:
    """A6: without an ordering key, insert_job_compat picks pg_backend_pid() mod width, not a rotor."""
    released.conn.execute(
        "INSERT INTO awa.queue_meta (queue, enqueue_shards) VALUES ('xc_adv6', 8) "
        "ON CONFLICT (queue) DO UPDATE SET enqueue_shards = EXCLUDED.enqueue_shards"
    )
    with psycopg.connect(released.url, autocommit=True) as one:
        ids = [one.execute("SELECT (awa.insert_job_compat('xc.adv6', 'xc_adv6')).id").fetchone()[0] for _ in range(32)]
        pid = one.execute("SELECT pg_backend_pid()").fetchone()[0]
    shards = released.conn.execute(
        "SELECT DISTINCT enqueue_shard FROM awa.ready_entries WHERE job_id = ANY(%s)", (ids,)
    ).fetchall()
    assert shards == [(pid % 8,)]
    # The SDK's direct COPY path picks one rotor shard per call: a whole batch lands on one shard.
    released.client.enqueue_many_copy([{"i": i} for i in range(32)], kind="xc.adv6b", queue="xc_adv6")
    batch = released.conn.execute(
        "SELECT count(DISTINCT enqueue_shard) FROM awa.ready_entries WHERE kind = 'xc.adv6b'"
    ).fetchone()
    assert batch == (1,)


def test_a7_insert_many_copy_drops_duplicates_silently(released: Released) -> None:
    """A7: insert_many_copy skips a duplicate claim without an error; insert and enqueue_many_copy raise."""
    client = released.client
    inserted = client.insert_many_copy([{"a": 1}, {"a": 1}], kind="xc.adv7", queue="xc_adv7", unique_opts={})
    assert len(inserted) == 1
    assert client.insert_many_copy([{"a": 1}], kind="xc.adv7", queue="xc_adv7", unique_opts={}) == []
    with pytest.raises(awa.UniqueConflict):
        client.insert({"a": 1}, kind="xc.adv7", queue="xc_adv7", unique_opts={})
    with pytest.raises(awa.UniqueConflict):
        client.enqueue_many_copy([{"a": 2}, {"a": 2}], kind="xc.adv7", queue="xc_adv7", unique_opts={})
    count = released.conn.execute("SELECT count(*) FROM awa.jobs WHERE kind = 'xc.adv7'").fetchone()
    assert count == (1,)


def test_a8_insert_reports_failure_for_a_job_it_stored(released: Released) -> None:
    """A8 (Python side): insert stores the job, then cannot decode its jsonb args back;
    insert_many_copy raises and stores nothing; enqueue_many_copy stores and returns normally."""
    client, conn = released.client, released.conn
    big = sys.float_info.max
    try:
        with pytest.raises(awa.DatabaseError, match="number out of range"):
            client.insert({"max": big}, kind="xc.adv8", queue="xc_adv8", run_at=FUTURE)
        assert conn.execute("SELECT count(*) FROM awa.jobs WHERE kind = 'xc.adv8'").fetchone() == (1,)
        with pytest.raises(awa.DatabaseError, match="number out of range"):
            client.insert_many_copy([{"max": big}], kind="xc.adv8", queue="xc_adv8", run_at=FUTURE)
        assert client.enqueue_many_copy([{"max": big}], kind="xc.adv8", queue="xc_adv8", run_at=FUTURE) == 1
        count = conn.execute("SELECT count(*) FROM awa.jobs WHERE kind = 'xc.adv8'").fetchone()
        assert count == (2,), "insert stored its job although it raised; insert_many_copy stored none"
        back = client.insert({"big": 1e16}, kind="xc.adv8", queue="xc_adv8", run_at=FUTURE)
        assert back.args == {"big": 10000000000000000} and isinstance(back.args["big"], int)
    finally:
        # No other test may meet a job whose args the SDK cannot read back.
        conn.execute("DELETE FROM awa.jobs WHERE kind = 'xc.adv8'")
    # Nesting: the Python SDK refuses over 64 levels before inserting (the Rust crate stores 65
    # to 127 and, at 128, stores then errs: tests/crosscheck/test_awa_rs_producer.py).
    deep: object = 0
    for _ in range(100):
        deep = [deep]
    with pytest.raises(ValueError, match="nesting too deep"):
        client.insert({"d": deep}, kind="xc.adv8.deep", queue="xc_adv8", run_at=FUTURE)
    assert conn.execute("SELECT count(*) FROM awa.jobs WHERE kind = 'xc.adv8.deep'").fetchone() == (0,)


def test_a10_database_errors_carry_no_sqlstate(released: Released) -> None:
    """A10: a refusal by released validation (23514) reaches Python as awa.DatabaseError whose only
    content is the message: no SQLSTATE a caller could branch on."""
    client = released.client
    with pytest.raises(awa.DatabaseError) as refused:
        client.insert({"a": 1}, kind="xc.adv10", queue="xc_adv10", priority=5)
    e = refused.value
    assert "priority must be between 1 and 4" in str(e)
    assert e.args == (str(e),), e.args
    assert not any(hasattr(e, a) for a in ("sqlstate", "pgcode", "code", "diag")), dir(e)
    count = released.conn.execute("SELECT count(*) FROM awa.jobs WHERE kind = 'xc.adv10'").fetchone()
    assert count == (0,)


def test_a11_enqueue_many_copy_skips_released_validation(released: Released) -> None:
    """A11: enqueue_many_copy stores what insert and insert_many_copy refuse with 23514: a priority
    outside 1..=4, a kind over 200 characters, more than 20 tags."""
    client, conn = released.client, released.conn
    for bad in ({"priority": 5}, {"priority": 0}, {"tags": [f"t{i}" for i in range(21)]}):
        with pytest.raises(awa.DatabaseError):
            client.insert({"a": 1}, kind="xc.adv11", queue="xc_adv11", **bad)
        with pytest.raises(awa.DatabaseError):
            client.insert_many_copy([{"a": 1}], kind="xc.adv11", queue="xc_adv11", **bad)
        assert client.enqueue_many_copy([{"a": 1}], kind="xc.adv11", queue="xc_adv11", **bad) == 1
    long_kind = "k" * 201
    assert client.enqueue_many_copy([{"a": 1}], kind=long_kind, queue="xc_adv11") == 1
    stored = conn.execute(
        "SELECT priority, cardinality(tags), length(kind) FROM awa.jobs WHERE queue = 'xc_adv11' ORDER BY id"
    ).fetchall()
    assert stored == [(5, 0, 8), (0, 0, 8), (2, 21, 8), (2, 0, 201)], stored
