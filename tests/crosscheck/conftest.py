"""Fixtures: a fresh database migrated by the released `awa` CLI 0.6.9, and the released SDK client."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import awa
import psycopg
import pytest

REPO = Path(__file__).resolve().parents[2]
# The vectors root under test (one directory per release); AWA_CROSSCHECK_VECTORS_DIR points
# elsewhere only for development.
VECTORS_ROOT = Path(os.environ.get("AWA_CROSSCHECK_VECTORS_DIR", REPO / "vectors"))
# Every release, oldest first. v1 holds every family; a later release only those it adds to.
RELEASES = ("v1", "v1.1")
RELEASED_VERSION = "0.6.9"


def _required() -> bool:
    return os.environ.get("AWA_CROSSCHECK_REQUIRED") == "1"


def _redact(text: str, url: str) -> str:
    """Remove the DSN's password from text we are about to show."""
    pw = urllib.parse.urlsplit(url).password
    return text.replace(pw, "***") if pw else text


def _with_dbname(url: str, dbname: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(path="/" + dbname))


@dataclass
class Released:
    """Handles on released Awa: an SDK client and a plain connection to the same database."""

    url: str
    conn: psycopg.Connection
    client: awa.Client


@pytest.fixture(scope="session")
def released() -> Iterator[Released]:
    base = os.environ.get("DATABASE_URL")
    if not base:
        msg = "DATABASE_URL is unset: the cross-check needs a PostgreSQL it may CREATE DATABASE on"
        if _required():
            pytest.fail(msg + " (AWA_CROSSCHECK_REQUIRED=1 forbids skipping)", pytrace=False)
        pytest.skip(msg)
    installed = importlib.metadata.version("awa-pg")
    if installed != RELEASED_VERSION:
        pytest.fail(f"awa-pg {installed} is installed; pip install awa-pg=={RELEASED_VERSION}", pytrace=False)
    # The CLI installed next to this interpreter first (pip's console script), then PATH.
    beside = Path(sys.executable).parent / "awa"
    cli = str(beside) if beside.is_file() else shutil.which("awa")
    if cli is None:
        pytest.fail("the `awa` CLI is not on PATH: pip install -r tests/requirements.txt", pytrace=False)
    version = subprocess.run([cli, "--version"], capture_output=True, text=True, check=False).stdout
    if RELEASED_VERSION not in version:
        pytest.fail(f"`awa --version` says {version.strip()!r}; pip install awa-cli=={RELEASED_VERSION}")

    dbname = f"awa_xcheck_{os.getpid()}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {dbname}")
    url = _with_dbname(base, dbname)
    try:
        # The released CLI migrates; the URL goes through the environment, not argv, so it never
        # shows up in a process listing or in an error message built from the command line.
        mig = subprocess.run(
            [cli, "migrate"],
            env={**os.environ, "DATABASE_URL": url, "NO_COLOR": "1"},
            capture_output=True,
            text=True,
            check=False,
        )
        if mig.returncode != 0:
            pytest.fail(f"`awa migrate` failed (exit {mig.returncode}):\n{_redact(mig.stderr + mig.stdout, url)}")
        conn = psycopg.connect(url, autocommit=True)
        # A fresh install is `canonical`; promote it to queue storage (docs/released-awa.md R1.1) so inserts
        # land in ready_entries with an enqueue_shard.
        promoted = conn.execute("SELECT awa.storage_auto_finalize_if_fresh('awa')").fetchone()
        engine = conn.execute("SELECT awa.active_storage_engine()").fetchone()
        if not (promoted and promoted[0] and engine and engine[0] == "queue_storage"):
            pytest.fail(f"could not promote the fresh database to queue storage (engine {engine})")
        client = awa.Client(url, max_connections=2)
        yield Released(url=url, conn=conn, client=client)
        conn.close()
        del client
    finally:
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
