"""The released SDK as a producer: examples/producers/awa-pg/run driven over the producer protocol.

The program is started as the runner starts a producer (`sh -c CMD`, JSON lines on stdin and
stdout, AWA_CONFORMANCE_DSN in the environment) against the database the released CLI migrated
(conftest.py); each answer is checked against what released Awa stored. Kinds and queues are
this file's own (`xc.pp*`, `xc_pp*`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Iterator

import pytest
from conftest import REPO, RELEASES, VECTORS_ROOT, Released
from xcheck_values import load_family

PRODUCER = REPO / "examples" / "producers" / "awa-pg" / "run"


class Session:
    """One producer process: hello read, requests answered one at a time."""

    def __init__(self, url: str, path: str) -> None:
        env = {**os.environ, "AWA_CONFORMANCE_DSN": url, "AWA_CONFORMANCE_SCHEMA": "awa", "AWA_PG_PATH": path}
        self.proc = subprocess.Popen(
            ["sh", "-c", f"{sys.executable} {PRODUCER}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.seq = 0
        self.hello = self._read()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the producer closed stdout"
        return json.loads(line)

    def enqueue(self, **job: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.seq += 1
        full = {"kind": "xc.pp", "args": {"type": "object", "value": []}, "priority": None, "run_at": None,
                "tags": [], "ordering_key_hex": None, "concurrency_key_hex": None, "unique": None,
                "unique_states": None, "partition": None, "opts": {}, **job}
        msg = {"type": "enqueue", "seq": self.seq, "case": "xc", "schema": "awa", "job": full}
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        answer = self._read()
        assert answer["seq"] == self.seq
        return answer

    def stop(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.write('{"type":"stop"}\n')
        self.proc.stdin.close()
        return self.proc.wait(timeout=30)


@pytest.fixture
def session(released: Released) -> Iterator[Session]:
    s = Session(released.url, "insert")
    yield s
    assert s.stop() == 0


def test_hello(session: Session) -> None:
    assert session.hello["type"] == "hello" and session.hello["protocol"] == 2
    assert session.hello["implementation"]["version"] == "0.6.9"
    assert set(session.hello["capabilities"]) == {"enqueue", "errors", "nested"}


def test_ordering_keys_land_on_the_vector_shard(session: Session, released: Released) -> None:
    released.conn.execute(
        "INSERT INTO awa.queue_meta (queue, enqueue_shards) VALUES ('xc_pp_w8', 8) "
        "ON CONFLICT (queue) DO UPDATE SET enqueue_shards = EXCLUDED.enqueue_shards"
    )
    for v in load_family(VECTORS_ROOT, RELEASES, "ordering_shard"):
        answer = session.enqueue(queue="xc_pp_w8", ordering_key_hex=v["input"]["key_hex"])
        row = released.conn.execute(
            "SELECT enqueue_shard FROM awa.ready_entries WHERE job_id = %s", (answer["job_id"],)
        ).fetchone()
        assert row == (v["expected"]["shards"][7],), v["id"]


def test_unique_keys_are_the_vector_keys(session: Session, released: Released) -> None:
    # Vectors without a queue (by_queue false), args an object or absent, no released hazard.
    checked = 0
    for v in load_family(VECTORS_ROOT, RELEASES, "unique_key"):
        inp = v["input"]
        if inp["queue"] is not None or v["tags"] != ["fields"] or len(inp["kind"]) > 200:
            continue
        args = inp["args"] or {"type": "object", "value": []}
        unique = {"by_queue": False, "by_args": inp["args"] is not None, "period_bucket": inp["period_bucket"]}
        answer = session.enqueue(kind=inp["kind"], queue="xc_pp_uk", args=args, unique=unique,
                                 unique_states="00000000", run_at="2099-01-01T00:00:00Z")
        key = released.conn.execute("SELECT unique_key FROM awa.jobs WHERE id = %s", (answer["job_id"],)).fetchone()
        assert key is not None and bytes(key[0]).hex() == v["expected"]["unique_key_hex"], v["id"]
        checked += 1
    assert checked >= 3


def test_refusals_and_skips(session: Session) -> None:
    unique = {"by_queue": False, "by_args": True, "period_bucket": None}
    args = {"type": "object", "value": [["n", {"type": "int", "value": "7"}]]}
    first = session.enqueue(kind="xc.pp.dup", queue="xc_pp_dup", args=args, unique=unique, unique_states="11111000")
    assert "job_id" in first
    dup = session.enqueue(kind="xc.pp.dup", queue="xc_pp_dup", args=args, unique=unique, unique_states="11111000")
    assert dup["refused"]["sqlstate"] == "23505"
    bad = session.enqueue(queue="xc_pp_bits", unique=unique, unique_states="1111")
    assert bad["refused"]["code"] == "unique_states_not_8_bits"
    skipped = session.enqueue(queue="xc_pp_ck", concurrency_key_hex="74656e616e742d3432")
    assert skipped["skipped"] is True and "concurrency key" in skipped["reason"]


def test_partitions_route_to_the_physical_queue(session: Session, released: Released) -> None:
    for v in load_family(VECTORS_ROOT, RELEASES, "partition")[:20]:
        inp = v["input"]
        answer = session.enqueue(queue=inp["logical_queue"], run_at="2099-01-01T00:00:00Z",
                                 partition={"key_hex": inp["key_hex"], "partitions": inp["partitions"]})
        row = released.conn.execute("SELECT queue FROM awa.jobs WHERE id = %s", (answer["job_id"],)).fetchone()
        assert row == (v["expected"]["physical_queue"],), v["id"]


def test_insert_many_copy_path_drops_a_duplicate_without_refusing(released: Released) -> None:
    """Advisory A7 as the protocol sees it: the duplicate is answered `error`, never `refused`."""
    s = Session(released.url, "insert_many_copy")
    try:
        unique = {"by_queue": False, "by_args": True, "period_bucket": None}
        args = {"type": "object", "value": [["n", {"type": "int", "value": "8"}]]}
        assert "job_id" in s.enqueue(kind="xc.pp.copy", queue="xc_pp_copy", args=args, unique=unique)
        dup = s.enqueue(kind="xc.pp.copy", queue="xc_pp_copy", args=args, unique=unique)
        assert "refused" not in dup and "dropped silently" in dup["error"]
    finally:
        assert s.stop() == 0


def test_enqueue_many_copy_path_answers_the_job_id(released: Released) -> None:
    s = Session(released.url, "enqueue_many_copy")
    try:
        answer = s.enqueue(queue="xc_pp_direct", ordering_key_hex="74656e616e742d3432")
        row = released.conn.execute("SELECT kind FROM awa.jobs WHERE id = %s", (answer["job_id"],)).fetchone()
        assert row == ("xc.pp",)
    finally:
        assert s.stop() == 0

