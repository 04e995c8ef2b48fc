"""Released Awa 0.6.9's SQL boundary, observed: the facts docs/released-awa.md states about insert_job_compat.

Each test proves one numbered fact of docs/released-awa.md (named in its docstring) on the
database the released CLI migrated (conftest.py). These are the facts the reference SQL copies
from released Awa (validation order and messages, the uniqueness claim rule, the width column),
so a released behaviour this kit mis-describes fails here. Kinds, queues and keys are this
file's own (`xc.sql_fact`, `xc_fact*`), apart from the other cross-check tests.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import psycopg
import psycopg.types.numeric
import pytest
from conftest import Released

FUTURE = dt.datetime(2099, 1, 1, tzinfo=dt.timezone.utc)
KIND = "xc.sql_fact"


@pytest.fixture
def conn(released: Released) -> psycopg.Connection:
    """The released database's connection (a fresh database per session, dropped at the end)."""
    return released.conn


def insert(conn: psycopg.Connection, **params: Any) -> Any:
    """One released insert_job_compat call with named parameters (p_ prefixed), in a savepoint."""
    params.setdefault("p_kind", KIND)
    # SQL never derives the state from run_at (the SDKs do): p_state is passed as text.
    names = ", ".join(f"{k} => %({k})s" + ("::awa.job_state" if k == "p_state" else "") for k in params)
    with conn.transaction():
        return conn.execute(f"SELECT (awa.insert_job_compat({names})).*", params).fetchone()


def error_of(conn: psycopg.Connection, **params: Any) -> tuple[str, str]:
    with pytest.raises(psycopg.Error) as info:
        insert(conn, **params)
    err = info.value
    return err.sqlstate or "", err.diag.message_primary or ""


# R2.2: released validation, in order, with SQLSTATE 23514 and these exact messages.
VALIDATION = [
    ({"p_kind": "k" * 201}, "job kind length must be <= 200 characters"),
    ({"p_queue": "q" * 201}, "queue name length must be <= 200 characters"),
    ({"p_priority": 0}, "priority must be between 1 and 4"),
    ({"p_priority": 5}, "priority must be between 1 and 4"),
    ({"p_max_attempts": 0}, "max_attempts must be between 1 and 1000"),
    ({"p_max_attempts": 1001}, "max_attempts must be between 1 and 1000"),
    ({"p_tags": [f"t{i}" for i in range(21)]}, "job tags must contain at most 20 values"),
]


@pytest.mark.parametrize(("params", "message"), VALIDATION, ids=[m for _, m in VALIDATION])
def test_validation_messages(conn: psycopg.Connection, params: dict[str, Any], message: str) -> None:
    """R2.2: each released validation check raises 23514 with its exact message."""
    p = {"p_priority": 2, "p_max_attempts": 25, **params}
    p["p_priority"] = psycopg.types.numeric.Int2(p["p_priority"])
    p["p_max_attempts"] = psycopg.types.numeric.Int2(p["p_max_attempts"])
    assert error_of(conn, **p) == ("23514", message)


def test_validation_order(conn: psycopg.Connection) -> None:
    """R2.2: the first failing check wins, in the order kind, queue, priority, max_attempts, tags."""
    int2 = psycopg.types.numeric.Int2
    bad = {
        "p_kind": "k" * 201,
        "p_queue": "q" * 201,
        "p_priority": int2(0),
        "p_max_attempts": int2(0),
        "p_tags": [f"t{i}" for i in range(21)],
    }
    fixes = [
        ("p_kind", KIND, VALIDATION[0][1]),
        ("p_queue", "xc_fact_v", VALIDATION[1][1]),
        ("p_priority", int2(2), VALIDATION[2][1]),
        ("p_max_attempts", int2(25), VALIDATION[4][1]),
        ("p_tags", [], VALIDATION[6][1]),
    ]
    for name, good, message in fixes:
        assert error_of(conn, **bad) == ("23514", message)
        bad[name] = good


def test_empty_kind_and_queue_are_accepted(conn: psycopg.Connection) -> None:
    """R2.1: released insert_job_compat accepts an empty kind '' and an empty queue ''."""
    row = insert(conn, p_kind="", p_queue="")
    assert row is not None and row[1] == "" and row[2] == ""


def test_wrong_bit_length_is_22026(conn: psycopg.Connection) -> None:
    """R2.3: a unique_states of another length than 8 fails with 22026 while casting."""
    with pytest.raises(psycopg.Error) as info:
        with conn.transaction():
            conn.execute(
                "SELECT awa.insert_job_compat(p_kind => %s, p_unique_key => '\\x01'::bytea, "
                "p_unique_states => B'1111')",
                (KIND,),
            )
    assert info.value.sqlstate == "22026"


def test_queue_name_notify_limit(conn: psycopg.Connection) -> None:
    """R2.3: in queue storage an available insert NOTIFYs 'awa:'||queue, so queues over 59 bytes fail (22023)."""
    assert insert(conn, p_queue="q" * 59) is not None
    assert error_of(conn, p_queue="q" * 60)[0] == "22023"
    # Deferred inserts do not notify: the 200-character limit applies.
    assert insert(conn, p_queue="q" * 60, p_state="scheduled", p_run_at=FUTURE) is not None


def test_width_column_range(conn: psycopg.Connection) -> None:
    """R4.2: queue_meta.enqueue_shards accepts 1..=64 and rejects 0 and 65 with 23514."""
    for ok in (1, 64):
        with conn.transaction():
            conn.execute(
                "INSERT INTO awa.queue_meta (queue, enqueue_shards) VALUES ('xc_fact_w', %s) "
                "ON CONFLICT (queue) DO UPDATE SET enqueue_shards = EXCLUDED.enqueue_shards",
                (ok,),
            )
    for bad in (0, 65):
        with pytest.raises(psycopg.Error) as info:
            with conn.transaction():
                conn.execute("UPDATE awa.queue_meta SET enqueue_shards = %s WHERE queue = 'xc_fact_w'", (bad,))
        assert info.value.sqlstate == "23514"


def test_no_width_row_means_one_shard(conn: psycopg.Connection) -> None:
    """R4.2: a queue without a queue_meta row has width 1: every key lands on shard 0."""
    ids = [insert(conn, p_queue="xc_fact_nowidth", p_ordering_key=bytes([b]))[0] for b in range(8)]
    shards = conn.execute("SELECT DISTINCT enqueue_shard FROM awa.ready_entries WHERE job_id = ANY(%s)", (ids,))
    assert [r[0] for r in shards.fetchall()] == [0]


def _claim(conn: psycopg.Connection, key: bytes, states: str | None, **extra: Any) -> Any:
    sql = (
        "SELECT (awa.insert_job_compat(p_kind => %(k)s, p_queue => %(q)s, p_unique_key => %(key)s, "
        "p_unique_states => %(s)s::bit(8), p_state => %(state)s::awa.job_state, p_run_at => %(run_at)s)).id"
    )
    run_at = extra.get("run_at")
    params = {
        "k": KIND,
        "q": extra.get("queue", "xc_fact_u"),
        "key": key,
        "s": states,
        "state": "scheduled" if run_at else "available",
        "run_at": run_at,
    }
    with conn.transaction():
        return conn.execute(sql, params).fetchone()


def test_duplicate_claim_is_23505_idx_awa_jobs_unique(conn: psycopg.Connection) -> None:
    """R5.2/R5.3: a claimed key raises 23505 on constraint idx_awa_jobs_unique, also from another queue."""
    key = b"xc-fact-dup"
    _claim(conn, key, "11111000")
    for queue in ("xc_fact_u", "xc_fact_other"):
        with pytest.raises(psycopg.Error) as info:
            _claim(conn, key, "11111000", queue=queue)
        assert info.value.sqlstate == "23505"
        assert info.value.diag.constraint_name == "idx_awa_jobs_unique"


def test_null_states_store_but_do_not_claim(conn: psycopg.Connection) -> None:
    """R5.2: a key with NULL states is stored but never enforced."""
    key = b"xc-fact-nullstates"
    assert _claim(conn, key, None) and _claim(conn, key, None)


def test_mask_without_initial_state_takes_no_claim(conn: psycopg.Connection) -> None:
    """R5.2: a scheduled insert whose mask excludes `scheduled` takes no claim; a later duplicate succeeds."""
    key = b"xc-fact-mask"
    assert _claim(conn, key, "01111000", run_at=FUTURE)
    assert _claim(conn, key, "11111000")


def test_empty_key_is_enforced(conn: psycopg.Connection) -> None:
    """R5.2: the empty bytea key is an ordinary key and is enforced."""
    _claim(conn, b"", "11111000")
    with pytest.raises(psycopg.Error) as info:
        _claim(conn, b"", "11111000")
    assert info.value.sqlstate == "23505"


def test_states_bit_order(released: Released, conn: psycopg.Connection) -> None:
    """R5.1: the SDK writes states bit i as character i from the left (1 -> 10000000, 0x80 -> 00000001)."""
    for mask, text in ((1, "10000000"), (0x80, "00000001"), (0b0001_1111, "11111000")):
        job = released.client.insert(
            {"m": mask}, kind=KIND, queue="xc_fact_bits", unique_opts={"states": mask}, run_at=FUTURE
        )
        row = conn.execute("SELECT unique_states::text FROM awa.jobs WHERE id = %s", (job.id,)).fetchone()
        assert row is not None and row[0] == text


def test_sdk_insert_refuses_deep_nesting(released: Released) -> None:
    """R4.3: the SDK's insert path refuses args nested deeper than 64 levels (the core allows 128)."""
    shallow: Any = {"leaf": 1}
    for _ in range(30):
        shallow = {"a": shallow}
    released.client.insert(shallow, kind=KIND, queue="xc_fact_depth", run_at=FUTURE)
    deep: Any = {"leaf": 1}
    for _ in range(100):
        deep = {"a": deep}
    with pytest.raises(Exception, match="64"):
        released.client.insert(deep, kind=KIND, queue="xc_fact_depth", run_at=FUTURE)


@pytest.mark.parametrize("args", [[1, 2], "text", 7, {"a": "nul\x00"}], ids=["list", "str", "int", "nul"])
def test_sdk_insert_refuses_what_the_oracle_reaches(released: Released, args: Any) -> None:
    """R4.3: the SDK's insert path refuses non-object args, and PostgreSQL jsonb refuses U+0000."""
    with pytest.raises(Exception):  # noqa: B017 - the SDK's and the server's exception types differ
        released.client.insert(args, kind=KIND, queue="xc_fact_refuse", run_at=FUTURE)
