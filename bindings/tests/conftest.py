"""Shared fixtures: the on-disk vectors (releases v1 and v1.1) and a PostgreSQL database with the reference schema."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
VECTORS_ROOT = HERE / ".." / ".." / "vectors"
# Every release, oldest first; a later release holds only the families it adds to.
RELEASES = ("v1", "v1.1")
VECTOR_DIR = VECTORS_ROOT / "v1"
SCHEMA_DIR = HERE / ".." / ".." / "schema"
PRODUCERS_DIR = HERE / "producers"
# A dedicated schema so a released `awa` schema in the same database is never touched.
TEST_SCHEMA = os.environ.get("AWA_TEST_SCHEMA", "awa_conf_pytest")
TEST_ROLE = TEST_SCHEMA + "_producer"
if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,50}", TEST_SCHEMA):
    raise pytest.UsageError("AWA_TEST_SCHEMA must match [A-Za-z_][A-Za-z0-9_]{0,50}")


def disk_vectors(family: str, *, with_errors: bool = False) -> list[dict[str, Any]]:
    """The vectors of one family in every release, read from disk (the files Rust tests use).

    Vectors whose expected answer is an error (an input the contract refuses) only with
    ``with_errors``: producer checks never enqueue them.
    """
    out: list[dict[str, Any]] = []
    for release in RELEASES:
        path = VECTORS_ROOT / release / f"{family}.json"
        if path.exists():
            with open(path, encoding="utf-8") as f:
                out.extend(json.load(f)["vectors"])
    return [v for v in out if with_errors or "error" not in v["expected"]]


def vector_params(family: str) -> list[Any]:
    """pytest params, one per vector, with the vector ID as the test ID."""
    return [pytest.param(v, id=v["id"]) for v in disk_vectors(family, with_errors=True)]


def install_schema(conn: Any, schema: str, role: str) -> None:
    """Run schema/0*.sql in order with the documented @schema@/@producer_role@ substitution."""
    for path in sorted(SCHEMA_DIR.glob("[0-9][0-9][0-9]_*.sql")):
        text = path.read_text(encoding="utf-8")
        text = text.replace("@schema@", f'"{schema}"').replace("@producer_role@", f'"{role}"')
        conn.execute(text)


def require_dsn() -> str:
    """DATABASE_URL; without it skip, or fail when AWA_REQUIRE_DB=1 (CI: a skip must not pass)."""
    dsn = os.environ.get("DATABASE_URL")
    if dsn:
        return dsn
    why = "DATABASE_URL is not set: database tests need a PostgreSQL DSN (superuser or schema owner)"
    if os.environ.get("AWA_REQUIRE_DB") == "1":
        pytest.fail(f"{why}; AWA_REQUIRE_DB=1 forbids skipping them", pytrace=False)
    pytest.skip(why)


@pytest.fixture(scope="session")
def database() -> dict[str, str]:
    """DSN + schema of a database with the reference SQL installed (needs DATABASE_URL)."""
    dsn = require_dsn()
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        with conn.transaction():
            # A fresh install each session: the schema is this suite's own, and the reference
            # SQL may have changed since the last run.
            conn.execute(f'DROP SCHEMA IF EXISTS "{TEST_SCHEMA}" CASCADE')
            install_schema(conn, TEST_SCHEMA, TEST_ROLE)
    return {"dsn": dsn, "schema": TEST_SCHEMA, "role": TEST_ROLE}
