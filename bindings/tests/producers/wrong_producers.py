"""Deliberately non-conforming producers: each must make some producer checks fail."""

from __future__ import annotations

from typing import Any

from psycopg import sql

import psycopg_producer


def insert_hex_keys(request: dict[str, Any]) -> int:
    """The classic bug: sends the keys' hex text instead of the raw bytes."""
    wrong = dict(request)
    for k in ("ordering_key", "concurrency_key"):
        if wrong[k] is not None:
            wrong[k] = wrong[k].hex().encode()
    return psycopg_producer.insert(wrong)


def insert_wrong_shard(request: dict[str, Any]) -> int:
    """Writes the job row directly, with a shard one off from the correct one (when width > 1)."""
    conn = psycopg_producer.connection()
    schema = sql.Identifier(request["schema"])
    with conn.transaction():
        job_id = psycopg_producer.insert(request)
        conn.execute(
            sql.SQL(
                "UPDATE {}.contract_jobs SET enqueue_shard = (enqueue_shard + 1) %% %s WHERE id = %s"
            ).format(schema),
            (request["width"], job_id),
        )
    return job_id


def insert_recomputed_unique_key(request: dict[str, Any]) -> int:
    """Recomputes unique_key with kind and queue swapped: wrong bytes for every unique_key case."""
    import awa_conformance as ac

    wrong = dict(request)
    inputs = request["unique_key_inputs"]
    if inputs is not None:
        wrong["unique_key"] = ac.unique_key(
            inputs["queue"] or "", queue=inputs["kind"], args=inputs["args"], period_bucket=inputs["period_bucket"]
        )
    return psycopg_producer.insert(wrong)
