"""A conforming in-process producer for the plugin/check tests: enqueues through <schema>.insert_job with psycopg.

It computes what the request leaves to the producer (canonical args, unique_key over the
physical queue, the partition) with this kit's functions, as a producer built on the kit would.
"""

from __future__ import annotations

import os
from typing import Any

import psycopg
from psycopg import sql

import awa_conformance as ac

_conn: psycopg.Connection | None = None

SQL = (
    "SELECT job_id FROM {}.insert_job(p_kind => %s::text, p_queue => %s::text, p_args => %s::jsonb, "
    "p_priority => %s::smallint, p_max_attempts => %s::smallint, p_run_at => %s::timestamptz, "
    "p_metadata => %s::jsonb, p_tags => %s::text[], "
    "p_unique_key => %s::bytea, p_unique_states => %s::varbit, p_ordering_key => %s::bytea, "
    "p_concurrency_key => %s::bytea, p_opts => %s::jsonb)"
)


def connection() -> psycopg.Connection:
    """One autocommit connection per process (the producer's own client)."""
    global _conn
    if _conn is None or _conn.closed:
        dsn = os.environ.get("AWA_PRODUCER_DSN") or os.environ["DATABASE_URL"]
        _conn = psycopg.connect(dsn, autocommit=True)
    return _conn


def physical_queue(request: dict[str, Any]) -> str:
    p = request["partition"]
    if p is None:
        return request["queue"]
    return ac.physical_queue_name(request["queue"], ac.partition_for_ordering_key(p["key"], p["partitions"]))


def args_value(request: dict[str, Any]) -> Any:
    return ac.JSON_NULL if request["args"] is None else request["args"]


def unique_key(request: dict[str, Any], queue: str) -> bytes | None:
    u = request["unique"]
    if u is None:
        return None
    return ac.unique_key(
        request["kind"],
        queue=queue if u["by_queue"] else None,
        args=args_value(request) if u["by_args"] else None,
        period_bucket=u["period_bucket"],
    )


def params(request: dict[str, Any]) -> tuple[Any, ...]:
    queue = physical_queue(request)
    import json

    return (
        request["kind"],
        queue,
        ac.canonical_json(args_value(request)).decode("utf-8"),
        request["priority"],
        request.get("max_attempts"),  # protocol=3 only; absent (the default) with protocol=2
        request["run_at"],
        None if request.get("metadata_typed") is None
        else ac.canonical_json(ac.JSON_NULL if request["metadata"] is None else request["metadata"]).decode("utf-8"),
        request["tags"],
        unique_key(request, queue),
        request["unique_states"],
        request["ordering_key"],
        request["concurrency_key"],
        json.dumps(request["opts"]),
    )


def call(request: dict[str, Any], values: tuple[Any, ...]) -> int:
    row = connection().execute(sql.SQL(SQL).format(sql.Identifier(request["schema"])), values).fetchone()
    assert row is not None
    return int(row[0])


def insert(request: dict[str, Any]) -> int:
    """Enqueue one request; database refusals propagate as psycopg errors (with .sqlstate)."""
    return call(request, params(request))


async def insert_async(request: dict[str, Any]) -> int:
    """The same producer written with psycopg's AsyncConnection: a coroutine function."""
    global _aconn
    if _aconn is None or _aconn.closed:
        dsn = os.environ.get("AWA_PRODUCER_DSN") or os.environ["DATABASE_URL"]
        _aconn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    cur = await _aconn.execute(sql.SQL(SQL).format(sql.Identifier(request["schema"])), params(request))
    row = await cur.fetchone()
    assert row is not None
    return int(row[0])


_aconn: psycopg.AsyncConnection | None = None
