"""Deliberately non-conforming producers: each must make some producer cases fail."""

from __future__ import annotations

from typing import Any

import awa_conformance as ac
import psycopg_producer


def insert_hex_keys(request: dict[str, Any]) -> int:
    """The classic bug: sends the keys' hex text instead of the raw bytes."""
    wrong = dict(request)
    for k in ("ordering_key", "concurrency_key"):
        if wrong[k] is not None:
            wrong[k] = wrong[k].hex().encode()
    return psycopg_producer.insert(wrong)


def insert_without_ordering_key(request: dict[str, Any]) -> int:
    """Never sends the ordering key."""
    return psycopg_producer.insert(dict(request, ordering_key=None))


def insert_logical_queue_key(request: dict[str, Any]) -> int:
    """Hashes the logical queue for by_queue, not the physical one, and ignores period buckets."""
    values = list(psycopg_producer.params(request))
    u = request["unique"]
    if u is not None:
        values[6] = ac.unique_key(
            request["kind"],
            queue=request["queue"] if u["by_queue"] else None,
            args=psycopg_producer.args_value(request) if u["by_args"] else None,
        )
    return psycopg_producer.call(request, tuple(values))


def insert_bit8(request: dict[str, Any]) -> int:
    """Binds unique_states through ::bit(8), which pads '1111' to '11110000' silently."""
    values = list(psycopg_producer.params(request))
    sql_text = psycopg_producer.SQL.replace("%s::varbit", "%s::bit(8)")
    from psycopg import sql

    row = psycopg_producer.connection().execute(
        sql.SQL(sql_text).format(sql.Identifier(request["schema"])), tuple(values)
    ).fetchone()
    assert row is not None
    return int(row[0])


def insert_naive_run_at(request: dict[str, Any]) -> int:
    """Binds run_at as a naive timestamp (the UTC wall clock, offset dropped): right only in a
    session whose TimeZone is UTC."""
    from datetime import datetime, timezone

    values = list(psycopg_producer.params(request))
    if request["run_at"] is not None:
        at = datetime.fromisoformat(request["run_at"].replace("Z", "+00:00"))
        values[5] = at.astimezone(timezone.utc).replace(tzinfo=None)
    return psycopg_producer.call(request, tuple(values))
