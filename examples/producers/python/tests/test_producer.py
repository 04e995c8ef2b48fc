"""The example producer, driven over its protocol against a real PostgreSQL, judged from the vectors.

Independent of the runner's engine: this test speaks the producer protocol to `run` itself,
reads what was stored back with `<schema>.job_routing` as the installer, and compares it with
the vector files (and hashlib/blake3 for the few expectations a vector does not hold). Every
judge is also run against a copy of the producer with one deliberate mistake (a patch in
tests/mutants/python/, applied by tests/mutants/materialise.py: the example itself has none),
and must find it. Needs DATABASE_URL (a superuser: it installs a throwaway contract schema
with the runner's `schema install`, and removes it after) and the runner binary
(`AWA_CONFORMANCE_BIN`, else target/release or target/debug). With AWA_REQUIRE_DB=1 a missing
database or binary fails instead of skipping.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import blake3
import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
RUN = HERE.parent / "run"
TAG = b"awa:concurrency_key:v1\x00"
TIMEOUT = 30.0  # seconds: every wait on the producer is bounded by this
STATES = "11111000"


def mutant_run(mutant: str) -> Path:
    """The `run` of a copy of this example with tests/mutants/python/<mutant>.patch applied."""
    sys.path.insert(0, str(ROOT / "tests" / "mutants"))
    import materialise

    return materialise.materialise("python", mutant) / "run"


def vectors(family: str) -> list[dict[str, Any]]:
    """Every vector of a family across the releases (v1, v1.1, ...), expected errors excluded."""
    out = []
    for path in sorted((ROOT / "vectors").glob(f"v1*/{family}.json")):
        out += [v for v in json.loads(path.read_text(encoding="utf-8"))["vectors"] if "error" not in v["expected"]]
    assert out, f"no {family} vectors found under vectors/"
    return out


def _fail_or_skip(why: str) -> None:
    if os.environ.get("AWA_REQUIRE_DB") == "1":
        pytest.fail(why + " (AWA_REQUIRE_DB=1)")
    pytest.skip(why)


def _runner() -> str:
    explicit = os.environ.get("AWA_CONFORMANCE_BIN")
    if explicit:
        return explicit
    for build in ("release", "debug"):
        path = ROOT / "target" / build / "awa-conformance"
        if path.exists():
            return str(path)
    found = shutil.which("awa-conformance")
    if found is None:
        _fail_or_skip("no awa-conformance binary: build it (cargo build -p awa-conformance) or set AWA_CONFORMANCE_BIN")
    return str(found)


@dataclass
class Db:
    owner: psycopg.Connection[Any]
    schema: str
    producer_dsn: str

    def q(self, text: str) -> sql.Composed:
        return sql.SQL(text).format(s=sql.Identifier(self.schema))

    def width(self, queue_name: str, width: int) -> None:
        self.owner.execute(
            self.q("INSERT INTO {s}.queue_meta (queue, enqueue_shards) VALUES (%s, %s) "
                   "ON CONFLICT (queue) DO UPDATE SET enqueue_shards = EXCLUDED.enqueue_shards"),
            (queue_name, width),
        )

    def stored(self, job_id: int) -> dict[str, Any]:
        cur = self.owner.cursor(row_factory=psycopg.rows.dict_row)
        row = cur.execute(self.q("SELECT * FROM {s}.job_routing(%s)"), (job_id,)).fetchone()
        assert row is not None and row["job_id"] == job_id, f"job {job_id} not found"
        return row

    def payload(self, job_id: int) -> dict[str, Any]:
        """The whole stored job (contract §15): kind, args, metadata, tags, run_at, ..."""
        cur = self.owner.cursor(row_factory=psycopg.rows.dict_row)
        row = cur.execute(self.q("SELECT * FROM {s}.job_stored(%s)"), (job_id,)).fetchone()
        assert row is not None and row["job_id"] == job_id, f"job {job_id} not found"
        return row

    def pg(self, expression: str, value: Any) -> Any:
        """What PostgreSQL itself makes of a value, e.g. `%s::jsonb::text`: the judge's reference."""
        return self.owner.execute(sql.SQL("SELECT " + expression), (value,)).fetchone()[0]

    def jobs_in(self, queue_name: str) -> int:
        return self.owner.execute(self.q("SELECT count(*) FROM {s}.contract_jobs WHERE queue = %s"),
                                  (queue_name,)).fetchone()[0]

    def forget_claims(self) -> None:
        """Vectors may share a key (the informative collisions): each case claims it afresh."""
        self.owner.execute(self.q("DELETE FROM {s}.job_unique_claims"))


@pytest.fixture(scope="module")
def db() -> Iterator[Db]:
    dsn = os.environ.get("DATABASE_URL")
    if not dsn:
        _fail_or_skip("DATABASE_URL is not set")
    runner = _runner()
    schema = f"awa_pyprod_{secrets.token_hex(4)}"
    role, login = f"{schema}_producer", f"{schema}_login"
    target = ["--dsn", dsn, "--schema", schema, "--producer-role", role]
    subprocess.run([runner, "schema", "install", *target], check=True, capture_output=True, timeout=120)
    owner = psycopg.connect(dsn, autocommit=True)
    try:
        # The producer logs in with the contract's producer role only, as a real one would.
        owner.execute(sql.SQL("CREATE ROLE {} LOGIN IN ROLE {}").format(sql.Identifier(login), sql.Identifier(role)))
        yield Db(owner, schema, make_conninfo(dsn, user=login))
    finally:
        owner.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(login)))
        # uninstall removes what install created; the rows the producer added go with its tables.
        owner.close()
        subprocess.run([runner, "schema", "uninstall", *target], check=True, capture_output=True, timeout=120)


class Producer:
    """One `run` process: hello read at start, one request at a time, every read bounded."""

    def __init__(self, db: Db, run: Path = RUN, **env: str) -> None:
        self.stderr = tempfile.TemporaryFile()
        full = dict(os.environ, AWA_CONFORMANCE_DSN=db.producer_dsn, AWA_CONFORMANCE_SCHEMA=db.schema,
                    AWA_PRODUCER_PYTHON=sys.executable, **env)
        self.schema = db.schema
        self.proc = subprocess.Popen([str(run)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=full, text=True, encoding="utf-8")
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.seq = 0
        self.hello = self._next()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put("")

    def _next(self) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=TIMEOUT)
        except queue.Empty:
            pytest.fail(f"the producer said nothing for {TIMEOUT}s; stderr:\n{self.log()}")
        if not line:
            pytest.fail(f"the producer closed stdout; stderr:\n{self.log()}")
        return json.loads(line)

    def log(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")

    def enqueue(self, **job: Any) -> dict[str, Any]:
        self.seq += 1
        full = {"kind": "awa_conformance.probe", "queue": "pyprod", "args": {"type": "object", "value": []},
                "priority": None, "run_at": None, "tags": [], "ordering_key_hex": None,
                "concurrency_key_hex": None, "unique": None, "unique_states": None, "partition": None,
                "metadata": None, "max_attempts": None, "opts": {}}
        full.update(job)
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"type": "enqueue", "seq": self.seq, "case": "test",
                                          "schema": self.schema, "job": full}) + "\n")
        self.proc.stdin.flush()
        answer = self._next()
        assert answer.get("seq") == self.seq, answer
        return answer

    def stop(self) -> int:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write('{"type":"stop"}\n')
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            return self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return -9


@pytest.fixture
def producer(db: Db) -> Iterator[Producer]:
    p = Producer(db)
    yield p
    assert p.stop() == 0, p.log()


def broken(db: Db, mistake: str) -> Producer:
    return Producer(db, run=mutant_run(mistake))


# --- judges: each returns the mismatches it found (empty = conforms) -----------------------------


def _job(answer: dict[str, Any], what: str) -> int | str:
    if "job_id" not in answer:
        return f"{what}: not enqueued: {answer}"
    return int(answer["job_id"])


def judge_routing(p: Producer, db: Db, cases: list[dict[str, Any]]) -> list[str]:
    """Stored route source, shard, digests vs routing_precedence vectors, at the vector's width."""
    bad = []
    for v in cases:
        inp, exp = v["input"], v["expected"]
        width = int(inp["width"])
        q = f"pyprod_w{width}"
        db.width(q, width)
        job = _job(p.enqueue(queue=q, ordering_key_hex=inp["ordering_key_hex"],
                             concurrency_key_hex=inp["concurrency_key_hex"]), v["id"])
        if isinstance(job, str):
            bad.append(job)
            continue
        got = db.stored(job)
        ok_hex = inp["ordering_key_hex"]
        want_okd = None if ok_hex is None else hashlib.sha256(TAG + bytes.fromhex(ok_hex)).hexdigest()
        shard_ok = (got["enqueue_shard"] == exp["enqueue_shard"] if exp["enqueue_shard"] is not None
                    else 0 <= got["enqueue_shard"] < width)
        digest = None if got["concurrency_digest"] is None else bytes(got["concurrency_digest"]).hex()
        okd = None if got["ordering_key_digest"] is None else bytes(got["ordering_key_digest"]).hex()
        if not (got["route_source"] == exp["route_source"] and shard_ok
                and digest == exp["concurrency_digest_hex"] and okd == want_okd and got["queue"] == q):
            bad.append(f"{v['id']}: stored {got}, vector {exp}")
    return bad


def _unique_request(v: dict[str, Any]) -> dict[str, Any]:
    inp = v["input"]
    return {
        "kind": inp["kind"],
        "queue": inp["queue"] if inp["queue"] is not None else "pyprod_unique",
        "args": inp["args"],
        "unique": {"by_queue": inp["queue"] is not None, "by_args": inp["args"] is not None,
                   "period_bucket": inp["period_bucket"]},
        "unique_states": STATES,
    }


def judge_unique(p: Producer, db: Db, cases: list[dict[str, Any]]) -> list[str]:
    """Stored unique_key/unique_states vs unique_key vectors; the trace vs their intermediates."""
    bad = []
    for v in cases:
        db.forget_claims()
        answer = p.enqueue(**_unique_request(v))
        if v["input"]["kind"] == "" and (answer.get("refused") or {}).get("sqlstate") == "23514":
            # The vector's description expects released validation to refuse an empty kind;
            # the reference schema stores it. Either way the key is judged when it is stored.
            continue
        job = _job(answer, v["id"])
        if isinstance(job, str):
            bad.append(job)
            continue
        got = db.stored(job)
        key = None if got["unique_key"] is None else bytes(got["unique_key"]).hex()
        trace, mid = answer.get("trace", {}), v["intermediate"]
        cargs = trace.get("canonical_args") if v["input"]["args"] is not None else None
        if (key != v["expected"]["unique_key_hex"] or got["unique_states"] != STATES
                or trace.get("unique_preimage_hex") != mid["preimage_hex"]
                or (None if cargs is None else cargs.encode("utf-8").hex()) != mid["canonical_args_hex"]):
            bad.append(f"{v['id']}: stored key {key} states {got['unique_states']}, trace {trace}; "
                       f"vector {v['expected']} {mid}")
    return bad


def judge_partition(p: Producer, db: Db, cases: list[dict[str, Any]]) -> list[str]:
    """The physical queue vs partition vectors; the key travels as the ordering key; and a
    by_queue unique key hashes the physical queue (contract §2)."""
    bad = []
    for v in cases:
        inp, exp = v["input"], v["expected"]
        db.forget_claims()
        key = bytes.fromhex(inp["key_hex"])
        answer = p.enqueue(kind="pyprod.partition", queue=inp["logical_queue"],
                           partition={"key_hex": inp["key_hex"], "partitions": inp["partitions"]},
                           unique={"by_queue": True, "by_args": False, "period_bucket": None},
                           unique_states=STATES)
        job = _job(answer, v["id"])
        if isinstance(job, str):
            bad.append(job)
            continue
        got = db.stored(job)
        want_key = blake3.blake3(b"pyprod.partition\x00" + exp["physical_queue"].encode()).digest()[:16]
        okd = None if got["ordering_key_digest"] is None else bytes(got["ordering_key_digest"])
        if (got["queue"] != exp["physical_queue"] or got["route_source"] != "ordering_key"
                or okd != hashlib.sha256(TAG + key).digest() or bytes(got["unique_key"]) != want_key):
            bad.append(f"{v['id']}: stored {got}, vector {exp}")
    return bad


# A payload with every field a careless producer changes or drops (protocol 3), and the JSON
# text of its metadata written by hand: the judge asks PostgreSQL what jsonb makes of it.
PAYLOAD: dict[str, Any] = {
    "kind": "pyprod.Payload·Ünï",
    "args": {"type": "object", "value": [["v", {"type": "float", "value": "1.5", "bits": "3ff8000000000000"}]]},
    "tags": ["zeta", "Alpha", "ünïcödé 🙂"],
    "priority": 3,
    "max_attempts": 7,
    "run_at": "2031-07-04T12:34:56.123456+05:30",
    "metadata": {"type": "object", "value": [
        ["source", {"type": "string", "value": "awa-conformance"}],
        ["nothing", {"type": "null"}],
        ["big", {"type": "int", "value": "18446744073709551615"}],
        ["ratio", {"type": "float", "value": "1.5", "bits": "3ff8000000000000"}],
        ["note", {"type": "string", "value": "ünï \u2028"}],
    ]},
}
PAYLOAD_ARGS = '{"v":1.5}'
PAYLOAD_METADATA = '{"source":"awa-conformance","nothing":null,"big":18446744073709551615,"ratio":1.5,"note":"ünï \u2028"}'


def judge_payload(p: Producer, db: Db) -> list[str]:
    """Every stored field (contract §15) vs the request: one job with all of them, one with none."""
    bad = []
    job = _job(p.enqueue(queue="pyprod_payload", **PAYLOAD), "payload")
    if isinstance(job, str):
        return [job]
    got = db.payload(job)
    want = {"kind": PAYLOAD["kind"], "queue": "pyprod_payload", "args": db.pg("%s::jsonb::text", PAYLOAD_ARGS),
            "priority": 3, "max_attempts": 7, "run_at": db.pg("%s::timestamptz", PAYLOAD["run_at"]),
            "state": "scheduled", "metadata": db.pg("%s::jsonb::text", PAYLOAD_METADATA), "tags": PAYLOAD["tags"]}
    bad += [f"payload: stored {k} {got[k]!r}, asked {v!r}" for k, v in want.items() if got[k] != v]
    job = _job(p.enqueue(queue="pyprod_payload"), "defaults")
    if isinstance(job, str):
        return [*bad, job]
    got = db.payload(job)
    want = {"args": "{}", "priority": 2, "max_attempts": 25, "state": "available", "metadata": "{}", "tags": []}
    bad += [f"defaults: stored {k} {got[k]!r}, the default is {v!r}" for k, v in want.items() if got[k] != v]
    return bad


# The refusals every producer must give, with what the database or the client says.
#   (name, request fields, client-side answer, database answer)
REFUSALS: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    ("ordering_key_4097", {"ordering_key_hex": "ab" * 4097},
     {"sqlstate": None, "code": "key_too_long"}, {"sqlstate": "ZA003", "code": "key_too_long"}),
    ("concurrency_key_4097", {"concurrency_key_hex": "00" * 4097},
     {"sqlstate": None, "code": "key_too_long"}, {"sqlstate": "ZA003", "code": "key_too_long"}),
    ("unique_states_4_bits", {"unique_states": "1111"},
     {"sqlstate": None, "code": "unique_states_not_8_bits"}, {"sqlstate": "22026", "code": "unique_states_not_8_bits"}),
    ("unique_states_9_bits", {"unique_states": "111110000"},
     {"sqlstate": None, "code": "unique_states_not_8_bits"}, {"sqlstate": "22026", "code": "unique_states_not_8_bits"}),
    ("unknown_opts_key", {"opts": {"bogus": 1}},
     {"sqlstate": "ZA002", "code": "unknown_opts_key"}, {"sqlstate": "ZA002", "code": "unknown_opts_key"}),
    ("expectation_mismatch", {"ordering_key_hex": "00", "opts": {"expected_route_source": "rotor"}},
     {"sqlstate": "ZA001", "code": "expected_route_source_mismatch"},
     {"sqlstate": "ZA001", "code": "expected_route_source_mismatch"}),
    ("priority_out_of_range", {"priority": 9},
     {"sqlstate": "23514", "code": None}, {"sqlstate": "23514", "code": None}),
]


def judge_refusals(p: Producer, db: Db, *, client_checks: bool) -> list[str]:
    bad = []
    for name, fields, client, database in REFUSALS:
        q = f"pyprod_refused_{name}_{secrets.token_hex(3)}"  # fresh: earlier mutants may have stored jobs
        answer = p.enqueue(queue=q, **fields)
        want = client if client_checks else database
        refused = answer.get("refused") or {}
        if {k: refused.get(k) for k in want} != want or not refused.get("message"):
            bad.append(f"{name}: expected refused {want}, got {answer}")
        if db.jobs_in(q):
            bad.append(f"{name}: a refused request stored a job")
    # A duplicate: the second enqueue of the same unique job is refused with 23505.
    db.forget_claims()
    dup = {"queue": "pyprod_dup", "unique": {"by_queue": True, "by_args": True, "period_bucket": "1"},
           "unique_states": STATES}
    first, second = p.enqueue(**dup), p.enqueue(**dup)
    if "job_id" not in first or (second.get("refused") or {}).get("sqlstate") != "23505":
        bad.append(f"duplicate: expected a job then refused 23505, got {first} then {second}")
    return bad


# --- the tests ----------------------------------------------------------------------------------


def test_hello(producer: Producer) -> None:
    assert producer.hello["type"] == "hello" and producer.hello["protocol"] == 3
    assert set(producer.hello["capabilities"]) == {"enqueue", "errors"}
    assert producer.hello["implementation"]["name"]


def test_routing_precedence(producer: Producer, db: Db) -> None:
    cases = vectors("routing_precedence")
    assert judge_routing(producer, db, cases) == []


def test_unique_key(producer: Producer, db: Db) -> None:
    assert judge_unique(producer, db, vectors("unique_key")) == []


def test_partition(producer: Producer, db: Db) -> None:
    assert judge_partition(producer, db, vectors("partition")) == []


def test_refusals_client_side(producer: Producer, db: Db) -> None:
    assert judge_refusals(producer, db, client_checks=True) == []


def test_refusals_by_the_database(db: Db) -> None:
    # A conforming variant (tests/mutants/python/no_client_checks.patch) that leaves the lengths
    # to the database: its refusals carry the database's SQLSTATEs.
    p = Producer(db, run=mutant_run("no_client_checks"))
    try:
        assert judge_refusals(p, db, client_checks=False) == []
    finally:
        assert p.stop() == 0, p.log()


def test_stored_fields(producer: Producer, db: Db) -> None:
    """run_at makes the job scheduled, priority is stored, keys are bytes (NUL, 0x80-0xff, '\\')."""
    a = producer.enqueue(queue="pyprod_fields", run_at="2026-11-30T20:00:00Z", priority=4, tags=["x", "y"],
                         ordering_key_hex="005c78ff80")
    got = db.stored(int(a["job_id"]))
    assert (got["state"], got["priority"]) == ("scheduled", 4)
    assert bytes(got["ordering_key_digest"]) == hashlib.sha256(TAG + bytes.fromhex("005c78ff80")).digest()
    b = producer.enqueue(queue="pyprod_fields", ordering_key_hex="")
    got = db.stored(int(b["job_id"]))
    assert got["state"] == "available" and got["route_source"] == "ordering_key"  # the empty key is a key


def test_payload(producer: Producer, db: Db) -> None:
    assert judge_payload(producer, db) == []


def test_stop_on_eof(db: Db) -> None:
    p = Producer(db)
    assert p.proc.stdin is not None
    p.proc.stdin.close()
    assert p.proc.wait(timeout=TIMEOUT) == 0


# Each deliberate mistake (tests/mutants/python/<name>.patch) is caught by the judge it concerns.
MUTANTS: dict[str, Any] = {
    "drop_ordering_key": lambda p, db: judge_routing(p, db, vectors("routing_precedence")[:20]),
    "drop_concurrency_key": lambda p, db: judge_routing(p, db, vectors("routing_precedence")),
    "text_keys": lambda p, db: judge_routing(p, db, vectors("routing_precedence")),
    "json_dumps": lambda p, db: judge_unique(p, db, vectors("unique_key")),
    "logical_queue": lambda p, db: judge_partition(p, db, vectors("partition")[:20]),
    "drop_partition": lambda p, db: judge_partition(p, db, vectors("partition")[:20]),
    # Without the client-side check, '1111' through ::bit(8) is padded and stored, not refused.
    "bit8_cast": lambda p, db: judge_refusals(p, db, client_checks=True),
    "drop_sqlstate": lambda p, db: judge_refusals(p, db, client_checks=True),
    # Skipped, not refused: the runner's producer::coverage catches it too (scripts/test.sh).
    "skip_refusals": lambda p, db: judge_refusals(p, db, client_checks=True),
    # Skipped, not stored: the runner fails it on the features rule (scripts/test.sh).
    "skip_concurrency_keys": lambda p, db: judge_routing(p, db, vectors("routing_precedence")),
    "drop_tags": judge_payload,
    "drop_metadata": judge_payload,
}
# Patches that are conforming variants, not mistakes (tests/mutants/README.md).
VARIANTS = {"no_client_checks"}


@pytest.mark.parametrize("mistake", sorted(MUTANTS))
def test_each_mistake_is_caught(db: Db, mistake: str) -> None:
    p = broken(db, mistake)
    try:
        found = MUTANTS[mistake](p, db)
        assert found, f"mutant {mistake} (tests/mutants/python/{mistake}.patch) went unnoticed"
    finally:
        p.stop()


def test_every_mistake_has_a_test() -> None:
    patches = {p.stem for p in (ROOT / "tests" / "mutants" / "python").glob("*.patch")}
    # A mistake in one input class of docs/contract.md §16 is caught by the runner's
    # producer::field:: cases instead (tests/mutants/python-runs.json, scripts/python-mutants.py):
    # this file's judges do not send those classes.
    runs = json.loads((ROOT / "tests" / "mutants" / "python-runs.json").read_text(encoding="utf-8"))["runs"]
    field = {r["mutant"] for r in runs if r["filter"] == "producer::field::"} - set(MUTANTS)
    assert field and patches - VARIANTS - field == set(MUTANTS)
