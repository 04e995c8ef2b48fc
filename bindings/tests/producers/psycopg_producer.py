"""A conforming producer for the plugin/check tests: enqueues through <schema>.insert_job with psycopg."""

from __future__ import annotations

import os
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

_conn: psycopg.Connection | None = None


def connection() -> psycopg.Connection:
    """One autocommit connection per process (the producer's own client)."""
    global _conn
    if _conn is None or _conn.closed:
        dsn = os.environ.get("AWA_PRODUCER_DSN") or os.environ["DATABASE_URL"]
        _conn = psycopg.connect(dsn, autocommit=True)
    return _conn


def insert(request: dict[str, Any]) -> int:
    """Pass every request field to insert_job; the database computes the routing."""
    query = sql.SQL(
        "SELECT job_id FROM {}.insert_job(p_kind => %s, p_queue => %s, p_args => %s, "
        "p_priority => %s::smallint, p_unique_key => %s, p_unique_states => %s::varbit, "
        "p_ordering_key => %s, p_concurrency_key => %s)"
    ).format(sql.Identifier(request["schema"]))
    row = connection().execute(
        query,
        (
            request["kind"],
            request["queue"],
            Jsonb(request["args"]),
            request["priority"],
            request["unique_key"],
            request["unique_states"],
            request["ordering_key"],
            request["concurrency_key"],
        ),
    ).fetchone()
    assert row is not None
    return int(row[0])
