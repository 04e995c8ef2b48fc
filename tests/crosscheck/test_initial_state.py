"""The contract's initial-state rule (v1.1, ADR 0027) against released Awa 0.6.9.

Released producers choose the initial state themselves: `scheduled` whenever `run_at` is given
(even in the past), `available` otherwise, and the unique claim follows that state. The
reference `insert_job` must agree, because contract and released producers share claims in one
database. Both are driven here on the same released, migrated database: the released SDK
(`awa.Client.insert`) against `awa.jobs`, and the reference schema installed beside it in its
own schema (`awa_contract_xc`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import awa
import psycopg
import pytest
from conftest import REPO, Released

SCHEMA = "awa_contract_xc"
ROLE = "awa_contract_xc_producer"
KIND = "xc.initial_state"
QUEUE = "xc_initial"
PAST = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)
FUTURE = dt.datetime(2099, 1, 1, tzinfo=dt.timezone.utc)
# unique_opts states 0b0001_1110 = '01111000': every state but scheduled (bit 0).
NO_SCHEDULED_MASK = 0b0001_1110
NO_SCHEDULED_BITS = "01111000"


@pytest.fixture(scope="module")
def contract(released: Released) -> Iterator[psycopg.Connection]:
    """The reference schema installed beside released Awa (substitution rule of schema/README.md)."""
    text = "\n".join(
        p.read_text().replace("@schema@", f'"{SCHEMA}"').replace("@producer_role@", f'"{ROLE}"')
        for p in sorted((REPO / "schema").glob("[0-9][0-9][0-9]_*.sql"))
    )
    conn = released.conn
    conn.execute(text.encode())  # no parameters: one simple-query message, as the runner sends it
    try:
        yield conn
    finally:
        conn.execute(f'DROP SCHEMA "{SCHEMA}" CASCADE')
        conn.execute(f'DROP ROLE IF EXISTS "{ROLE}"')


def released_state(released: Released, run_at: dt.datetime | None) -> str:
    job = released.client.insert({}, kind=KIND, queue=QUEUE, run_at=run_at)
    (state,) = released.conn.execute("SELECT state::text FROM awa.jobs WHERE id = %s", (job.id,)).fetchone()
    return str(state)


def contract_state(conn: psycopg.Connection, run_at: dt.datetime | None) -> str:
    (state,) = conn.execute(
        f'SELECT state FROM "{SCHEMA}".insert_job(%s, %s, p_run_at => %s)', (KIND, QUEUE, run_at)
    ).fetchone()
    return str(state)


@pytest.mark.parametrize("run_at", [None, PAST, FUTURE], ids=["no_run_at", "past_run_at", "future_run_at"])
def test_initial_state_matches_released(
    released: Released, contract: psycopg.Connection, run_at: dt.datetime | None
) -> None:
    want = "available" if run_at is None else "scheduled"
    got = {"released": released_state(released, run_at), "contract": contract_state(contract, run_at)}
    assert got == {"released": want, "contract": want}


def released_claims(released: Released, args: dict[str, str]) -> list[str]:
    """Insert past-run_at, then twice without run_at, under a mask without `scheduled`."""
    out = []
    for run_at in (PAST, None, None):
        try:
            released.client.insert(
                args, kind=KIND, queue=QUEUE, run_at=run_at, unique_opts={"states": NO_SCHEDULED_MASK}
            )
            out.append("accepted")
        except awa.UniqueConflict:
            out.append("23505")
    return out


def contract_claims(conn: psycopg.Connection, key: bytes) -> list[str]:
    out = []
    for run_at in (PAST, None, None):
        try:
            with conn.transaction():
                conn.execute(
                    f'SELECT job_id FROM "{SCHEMA}".insert_job(%s, %s, p_run_at => %s, '
                    "p_unique_key => %s, p_unique_states => %s::varbit)",
                    (KIND, QUEUE, run_at, key, NO_SCHEDULED_BITS),
                )
            out.append("accepted")
        except psycopg.errors.UniqueViolation:
            out.append("23505")
    return out


def test_claim_follows_the_initial_state(released: Released, contract: psycopg.Connection) -> None:
    # A past run_at is scheduled, so the mask without scheduled takes no claim; the first
    # available insert claims; the next collides. Keys unique to this test run.
    stamp = dt.datetime.now(dt.timezone.utc).isoformat()
    got = {
        "released": released_claims(released, {"xc": stamp}),
        "contract": contract_claims(contract, f"xc-initial-{stamp}".encode()),
    }
    want = ["accepted", "accepted", "23505"]
    assert got == {"released": want, "contract": want}


def test_schema_files_found() -> None:
    # The fixture would install nothing if the glob found no file.
    assert len(list(Path(REPO / "schema").glob("[0-9][0-9][0-9]_*.sql"))) >= 5
