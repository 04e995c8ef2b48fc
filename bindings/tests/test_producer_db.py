"""check_producer runs the runner's producer engine on a Python callable (needs DATABASE_URL)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import xml.etree.ElementTree as ET

import psycopg
import pytest
from psycopg import sql

import awa_conformance as ac
from awa_conformance.producer import build_cases, trial_names
from conftest import PRODUCERS_DIR

sys.path.insert(0, str(PRODUCERS_DIR))
import psycopg_producer  # noqa: E402
import wrong_producers  # noqa: E402

TABLES = ("contract_jobs", "job_unique_claims", "queue_meta")
NAMES = trial_names()


@pytest.fixture
def db(database, monkeypatch):
    monkeypatch.setenv("AWA_PRODUCER_DSN", database["dsn"])
    return database


def counts(db) -> dict[str, int]:
    with psycopg.connect(db["dsn"]) as conn:
        return {
            t: conn.execute(sql.SQL("SELECT count(*) FROM {}.{}").format(sql.Identifier(db["schema"]), sql.Identifier(t))).fetchone()[0]
            for t in TABLES
        }


def names_of(family: str) -> list[str]:
    return [n for n in NAMES if n.split("::")[1] == family]


def test_every_family_has_cases():
    families = {n.split("::")[1] for n in NAMES}
    assert {"routing_precedence", "unique_key", "unique_states", "partition", "refusal"} <= families, families
    assert len(NAMES) >= 100


def test_conforming_producer_passes_and_leaves_db_as_found(db, tmp_path):
    before = counts(db)
    report = ac.check_producer(
        db["dsn"], psycopg_producer.insert, schema=db["schema"], producer_role=db["role"],
        junit=str(tmp_path / "r.xml"), json=str(tmp_path / "r.json"), markdown=str(tmp_path / "r.md"),
        protocol=3,
    )
    assert counts(db) == before
    assert report.ok, [(c.name, c.message) for c in report.failures[:5]]
    # A callable declares no `bulk` capability: the staged-batch cases are not applicable (the
    # CLI's rule), everything else passes.
    bulk = [n for n in NAMES if n.split("::")[1] == "bulk"]
    assert bulk and report.counts["not_applicable"] == len(bulk)
    assert report.counts["passed"] == len(NAMES) - len(bulk) and report.counts["total"] == len(NAMES)
    assert report.verdict == "conformant"
    assert report.provenance["vectors_root_sha256"] == ac.manifest()["root_sha256"]
    # The runner's own writers: its JSON format, JUnit with one testcase per case.
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["format"] == "awa-conformance-report" and len(data["cases"]) == len(NAMES)
    assert data == report.to_dict()
    suite_cases = {tc.get("name") for tc in ET.parse(tmp_path / "r.xml").getroot().iter("testcase")}
    assert len(suite_cases) == len(NAMES)
    assert (tmp_path / "r.md").read_text().strip()


def test_protocol_2_callable_is_not_sent_the_fields_it_lacks(db):
    """ADR 0053: the default protocol 2 sends no metadata/max_attempts (the producer binds the
    defaults), the cases that need them are not applicable, and the report says so."""
    payload = names_of("payload")
    report = ac.check_producer(db["dsn"], psycopg_producer.insert, schema=db["schema"], producer_role=db["role"],
                               families=["payload"])
    assert report.ok, [(c.name, c.message) for c in report.failures[:5]]
    na = sorted(c.name for c in report.cases if c.status == "not_applicable")
    assert na == [f"producer::payload::{i}" for i in ("all", "max_attempts", "metadata", "run_at_offset")], na
    assert report.counts["passed"] == len(payload) - len(na) > 100
    assert "judged only as their defaults" in report.provenance["extra"]["producer_fields"]
    with pytest.raises(ac.ConformanceError, match="protocol=4"):
        ac.check_producer(db["dsn"], psycopg_producer.insert, schema=db["schema"], producer_role=db["role"],
                          families=["payload"], protocol=4)


def test_async_producer_is_awaited(db):
    report = ac.check_producer(db["dsn"], psycopg_producer.insert_async, schema=db["schema"], producer_role=db["role"], families=["unique_key"])
    assert report.ok and report.counts["passed"] == len(names_of("unique_key")) > 0, report.failures[:3]


@pytest.mark.parametrize(
    "producer, family",
    [
        (wrong_producers.insert_hex_keys, "routing_precedence"),
        (wrong_producers.insert_without_ordering_key, "routing_precedence"),
        (wrong_producers.insert_logical_queue_key, "unique_key"),
        (wrong_producers.insert_bit8, "refusal"),
    ],
)
def test_wrong_producers_fail(db, producer, family):
    before = counts(db)
    report = ac.check_producer(db["dsn"], producer, schema=db["schema"], producer_role=db["role"], families=[family])
    assert counts(db) == before
    assert report.failures, f"{producer.__name__} passed every {family} case"
    assert not report.ok and report.verdict == "nonconformant"
    assert all(c.family == family and c.message for c in report.failures)


def test_producer_exceptions_and_bad_returns_are_case_failures(db):
    def broken(request):
        raise RuntimeError("client exploded")

    def returns_none(request):
        return None

    for fn, text in ((broken, "client exploded"), (returns_none, "must return the job id")):
        report = ac.check_producer(db["dsn"], fn, schema=db["schema"], producer_role=db["role"], families=["routing_precedence"])
        assert report.counts["passed"] == 0 and report.failures, fn
        assert text in report.failures[0].message


def test_client_refusals_and_skips(db):
    def refuse_everything(request):
        raise ac.ProducerRefused("key_too_long", "refused by the test")

    report = ac.check_producer(db["dsn"], refuse_everything, schema=db["schema"], producer_role=db["role"], families=["refusal"])
    # A key over 4096 bytes may be refused client-side; the other refusals may not.
    assert any(c.status == "passed" for c in report.cases)
    assert report.failures

    def skip(request):
        raise ac.ProducerSkip("not supported here")

    report = ac.check_producer(db["dsn"], skip, schema=db["schema"], producer_role=db["role"], families=["partition"])
    assert report.counts["not_applicable"] == report.counts["total"] > 0
    assert "not supported here" in report.cases[0].message


def test_a_hanging_call_is_bounded(db):
    calls: list[str] = []

    def slow_once(request):
        calls.append(request["case"])
        if len(calls) == 1:
            time.sleep(3)
        return psycopg_producer.insert(request)

    start = time.monotonic()
    report = ac.check_producer(db["dsn"], slow_once, schema=db["schema"], producer_role=db["role"],
                               families=["partition"], timeout=0.5)
    assert time.monotonic() - start < 120
    by_name = {c.name: c for c in report.cases}
    first = by_name[calls[0]]
    # The hung call is a harness error of its case; the run goes on with a fresh worker thread.
    assert first.status == "errored" and "0.5" in first.message, first
    assert all(by_name[n].status == "passed" for n in calls[1:]) and len(calls) > 1
    assert report.verdict == "error" and not report.ok


def test_unknown_family_and_bad_arguments(db):
    with pytest.raises(ac.ConformanceError, match="unknown family"):
        build_cases(["nope"])
    with pytest.raises(ac.ConformanceError, match="not a str"):
        ac.check_producer(db["dsn"], psycopg_producer.insert, families="unique_key")
    with pytest.raises(ac.ConformanceError, match="callable"):
        ac.check_producer(db["dsn"], 42)  # type: ignore[arg-type]


def test_coroutines_use_one_loop(db):
    loops = set()

    async def insert(request):
        loops.add(id(asyncio.get_running_loop()))
        return await psycopg_producer.insert_async(request)

    report = ac.check_producer(db["dsn"], insert, schema=db["schema"], producer_role=db["role"], families=["partition"])
    assert report.ok and len(loops) == 1


def test_session_dsn_puts_the_callable_under_the_callers_settings(db, monkeypatch):
    """docs/contract.md §12.4 for an in-process producer: the callable's connection is its own,
    so session_dsn gives it the callers' settings; a naive run_at then fails at the payload,
    the conforming producer still passes, and the provenance names both kinds of session."""
    url = ac.session_dsn(db["dsn"])
    assert url.startswith("postgresql://")
    with psycopg.connect(url) as conn:
        assert conn.execute("SHOW TimeZone").fetchone()[0] == "Asia/Kathmandu"
        assert conn.execute("SHOW DateStyle").fetchone()[0] == "SQL, DMY"
    payload = ["payload"]

    def check(insert, **kw):
        if psycopg_producer._conn is not None:
            psycopg_producer._conn.close()
        psycopg_producer._conn = None
        monkeypatch.setenv("AWA_PRODUCER_DSN", url)
        return ac.check_producer(db["dsn"], insert, families=payload, schema=db["schema"],
                                 producer_role=db["role"], protocol=3, **kw)

    good = check(psycopg_producer.insert)
    assert good.ok, [(c.name, c.message) for c in good.failures[:3]]
    assert "TimeZone=Asia/Kathmandu" in good.provenance["extra"]["caller_session"]
    assert "session_dsn" in good.provenance["extra"]["producer_session"]
    naive = check(wrong_producers.insert_naive_run_at)
    assert not naive.ok
    assert any("run_at" in (c.message or "") for c in naive.failures), [c.message for c in naive.failures[:3]]
    plain = check(psycopg_producer.insert, plain_sessions=True)
    assert plain.ok
    assert plain.provenance["extra"]["caller_session"] == (
        "the server's defaults (plain_sessions=True)"
    )
    with pytest.raises(ac.ConformanceError):
        ac.session_dsn("host=/nonexistent port=notaport")
    psycopg_producer._conn = None
