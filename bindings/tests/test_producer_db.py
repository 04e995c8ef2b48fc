"""check_producer against the reference schema on a real PostgreSQL (needs DATABASE_URL)."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET

import psycopg
import pytest
from psycopg import sql

import awa_conformance as ac
from awa_conformance.producer import build_cases
from conftest import PRODUCERS_DIR, disk_vectors

sys.path.insert(0, str(PRODUCERS_DIR))
import psycopg_producer  # noqa: E402
import wrong_producers  # noqa: E402

TABLES = ("contract_jobs", "job_unique_claims", "queue_meta")
N_CASES = len(disk_vectors("routing_precedence")) + len(disk_vectors("unique_key"))


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


def test_conforming_producer_passes_and_leaves_db_as_found(db, tmp_path):
    before = counts(db)
    report = ac.check_producer(
        db["dsn"], psycopg_producer.insert, schema=db["schema"],
        junit=str(tmp_path / "r.xml"), json=str(tmp_path / "r.json"),
    )
    assert counts(db) == before
    assert report.counts == {"passed": N_CASES, "failed": 0, "not_applicable": 0, "total": N_CASES}, [
        (c.id, c.message) for c in report.failures
    ]
    assert report.ok
    prov = report.provenance
    assert prov["vectors_root_sha256"] == ac.manifest()["root_sha256"]
    assert prov["server_contract_version"] == prov["contract_version"] == 1
    assert prov["server_version"].startswith(("1", "2"))
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["counts"]["passed"] == N_CASES and len(data["cases"]) == N_CASES
    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == str(N_CASES) and suite.get("failures") == "0"
    assert {tc.get("name") for tc in suite.iter("testcase")} == {c.id for c in report.cases}


def test_rotor_and_hex_bytes_in_report(db):
    report = ac.check_producer(db["dsn"], psycopg_producer.insert, schema=db["schema"], families=["routing_precedence"])
    by_id = {c.id: c for c in report.cases}
    for v in disk_vectors("routing_precedence"):
        case = by_id[v["id"]]
        assert case.expected["concurrency_digest"] == v["expected"]["concurrency_digest_hex"]
        assert case.actual["concurrency_digest"] == v["expected"]["concurrency_digest_hex"]
        if v["expected"]["enqueue_shard"] is None:
            assert 0 <= case.actual["enqueue_shard"] < v["input"]["width"]


@pytest.mark.parametrize(
    "producer, family",
    [
        (wrong_producers.insert_hex_keys, "routing_precedence"),
        (wrong_producers.insert_wrong_shard, "routing_precedence"),
        (wrong_producers.insert_recomputed_unique_key, "unique_key"),
    ],
)
def test_wrong_producers_fail(db, producer, family):
    before = counts(db)
    report = ac.check_producer(db["dsn"], producer, schema=db["schema"])
    assert counts(db) == before
    failed = {c.id for c in report.failures}
    assert failed, "a wrong producer passed every case"
    assert all(c.family == family for c in report.failures)
    if producer is wrong_producers.insert_recomputed_unique_key:
        assert failed == {v["id"] for v in disk_vectors("unique_key")}
    if producer is wrong_producers.insert_wrong_shard:
        # Exactly the keyed cases at width > 1 (a rotor shard one off is still in range).
        want = {
            v["id"] for v in disk_vectors("routing_precedence")
            if v["input"]["width"] > 1 and v["expected"]["enqueue_shard"] is not None
        }
        assert failed == want
    assert all(c.message for c in report.failures)


def test_producer_errors_are_case_failures(db):
    def broken(request):
        raise RuntimeError("client exploded")

    def returns_none(request):
        return None

    for fn, text in ((broken, "client exploded"), (returns_none, "must return the job id")):
        report = ac.check_producer(db["dsn"], fn, schema=db["schema"], families=["unique_key"])
        assert report.counts["failed"] == report.counts["total"] > 0
        assert text in report.cases[0].message


def test_not_applicable_families_and_bad_arguments(db):
    report = ac.check_producer(db["dsn"], psycopg_producer.insert, schema=db["schema"], families=["move_shard"])
    assert report.counts["not_applicable"] == report.counts["total"] == len(disk_vectors("move_shard"))
    with pytest.raises(ac.ConformanceError, match="unknown family"):
        build_cases(["nope"])
    with pytest.raises(ac.ConformanceError, match="contract_version"):
        ac.check_producer(db["dsn"], psycopg_producer.insert, schema="no_such_schema_here")
