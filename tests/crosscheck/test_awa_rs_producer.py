"""The released Rust crate awa-model 0.6.9 as a producer: examples/producers/awa-rs/run driven over the protocol.

The program is built (`run --build`, cargo, bounded) and started as the runner starts a producer
(`sh -c CMD`, JSON lines on stdin and stdout, AWA_CONFORMANCE_DSN in the environment) against the
database the released CLI migrated (conftest.py); each answer is checked against what released
Awa stored. The divergences the crate has are asserted as such (README.md of the example lists
them). A deliberately wrong build (a copy with tests/mutants/awa-rs/<mutant>.patch applied) must be caught. Kinds and queues are this
file's own (`xc.rs*`, `xc_rs*`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import jsonschema
import pytest
from conftest import REPO, RELEASES, VECTORS_ROOT, Released
from xcheck_values import load_family

sys.path.insert(0, str(REPO / "tests" / "mutants"))
import materialise  # noqa: E402  (tests/mutants/materialise.py)

PROJECT = REPO / "examples" / "producers" / "awa-rs"
PRODUCER = PROJECT / "run"
# A cold build of the crate and its dependency tree on a 2-core machine takes minutes; a hang
# must still end.
BUILD_TIMEOUT_S = 1500
FUTURE = "2099-01-01T00:00:00Z"
PROTOCOL = REPO / "docs" / "protocol"


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads((PROTOCOL / f"{name}.schema.json").read_text(encoding="utf-8")))


# Every line the program writes, and every request this file sends, must follow the protocol's schemas.
HELLO, REQUEST, ANSWER = validator("hello"), validator("enqueue-request"), validator("enqueue-answer")
# Vectors the crate stores with the vector's key but answers as failed: it inserts, then cannot
# decode the returned row's args with serde_json (README.md's table; the draft advisory A8).
UNIQUE_KEY_DIVERGENT = {
    "uk-a0c392684b0d": "number out of range",  # f64::MAX comes back from jsonb as a 309-digit integer
    "uk-74f39082c369": "recursion limit exceeded",  # 128 levels: serde_json's default limit
}


def _required() -> bool:
    return os.environ.get("AWA_CROSSCHECK_REQUIRED") == "1" or os.environ.get("AWA_REQUIRE_DB") == "1"


@pytest.fixture(scope="module")
def built() -> None:
    """`run --build` (a no-op when the binary is fresh); a failed build fails, never skips, in CI."""
    if shutil.which("cargo") is None:
        msg = "cargo is not on PATH: the awa-rs producer is a Cargo project (install Rust)"
        if _required():
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    try:
        proc = subprocess.run([str(PRODUCER), "--build"], capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
                              check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{PRODUCER} --build` took over {BUILD_TIMEOUT_S}s", pytrace=False)
    if proc.returncode != 0:
        pytest.fail(f"`{PRODUCER} --build` failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}", pytrace=False)


class Session:
    """One producer process: hello read, requests answered one at a time."""

    def __init__(self, url: str, producer: Path = PRODUCER, **env: str) -> None:
        full = {**os.environ, "AWA_CONFORMANCE_DSN": url, "AWA_CONFORMANCE_SCHEMA": "awa", **env}
        self.proc = subprocess.Popen(["sh", "-c", str(producer)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=full)
        self.seq = 0
        self.job_ids: list[int] = []
        self.hello = self._read()
        HELLO.validate(self.hello)

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the producer closed stdout"
        return json.loads(line)

    def send(self, msg: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def enqueue(self, schema: str = "awa", **job: Any) -> dict[str, Any]:
        self.seq += 1
        full = {"kind": "xc.rs", "args": {"type": "object", "value": []}, "priority": None, "run_at": None,
                "tags": [], "ordering_key_hex": None, "concurrency_key_hex": None, "unique": None,
                "unique_states": None, "partition": None, "opts": {}, **job}
        request = {"type": "enqueue", "seq": self.seq, "case": f"producer::xc::{self.seq}", "schema": schema, "job": full}
        REQUEST.validate(request)
        answer = self.send(request)
        ANSWER.validate(answer)
        assert answer["seq"] == self.seq
        if "job_id" in answer:
            self.job_ids.append(answer["job_id"])
        return answer

    def stop(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.write('{"type":"stop"}\n')
        self.proc.stdin.close()
        return self.proc.wait(timeout=30)


@pytest.fixture
def start(built: None, released: Released) -> Iterator[Callable[..., Session]]:
    """Start producers (`producer`: another run script; env overrides as keywords); each must exit 0 on stop. Afterwards every
    job they created is deleted, with this file's queues and widths: the database is shared with
    the other cross-check files, and a job stored with a vector's key (or with args the SDKs
    cannot decode back, A8) would be found by their lookups by key."""
    sessions: list[Session] = []

    def _start(producer: Path = PRODUCER, **env: str) -> Session:
        s = Session(released.url, producer, **env)
        sessions.append(s)
        return s

    try:
        yield _start
        for s in sessions:
            assert s.stop() == 0
    finally:
        for s in sessions:
            if s.proc.poll() is None:
                s.proc.kill()
                s.proc.wait(timeout=30)
        ids = [i for s in sessions for i in s.job_ids]
        released.conn.execute(r"DELETE FROM awa.jobs WHERE id = ANY(%s) OR queue LIKE 'xc\_rs\_%%'", (ids,))
        released.conn.execute(r"DELETE FROM awa.queue_meta WHERE queue LIKE 'xc\_rs\_%'")
        left = released.conn.execute(r"SELECT count(*) FROM awa.jobs WHERE id = ANY(%s) OR queue LIKE 'xc\_rs\_%%'",
                                     (ids,)).fetchone()
        assert left == (0,), f"{left} jobs of this file were left behind"


@pytest.fixture
def session(start: Callable[..., Session]) -> Session:
    return start()


def job_row(released: Released, job_id: int, cols: str) -> tuple[Any, ...]:
    row = released.conn.execute(f"SELECT {cols} FROM awa.jobs WHERE id = %s", (job_id,)).fetchone()
    assert row is not None, f"job {job_id} is not in awa.jobs"
    return tuple(row)


def set_width(released: Released, queue: str, width: int) -> None:
    released.conn.execute(
        "INSERT INTO awa.queue_meta (queue, enqueue_shards) VALUES (%s, %s) "
        "ON CONFLICT (queue) DO UPDATE SET enqueue_shards = EXCLUDED.enqueue_shards",
        (queue, width),
    )


def shard_mismatches(s: Session, released: Released, tag: str) -> list[str]:
    """Ordering keys at widths 1, 2, 7, 8, 64: the stored shard against the vector's."""
    bad = []
    vectors = load_family(VECTORS_ROOT, RELEASES, "ordering_shard")
    assert len(vectors) >= 10
    for width in (1, 2, 7, 8, 64):
        queue = f"xc_rs_{tag}_w{width}"
        set_width(released, queue, width)
        for v in vectors:
            answer = s.enqueue(queue=queue, ordering_key_hex=v["input"]["key_hex"])
            assert "job_id" in answer, (v["id"], answer)
            row = released.conn.execute("SELECT enqueue_shard FROM awa.ready_entries WHERE job_id = %s",
                                        (answer["job_id"],)).fetchone()
            want = v["expected"]["shards"][width - 1]
            if row != (want,):
                bad.append(f"{v['id']}@w{width}: stored {row}, vector {want}")
    return bad


def unique_key_request(v: dict[str, Any]) -> dict[str, Any]:
    """A unique_key vector as a request: its own queue when it has one (by_queue), scheduled so
    nothing runs it, states 00000000 so nothing conflicts."""
    inp = v["input"]
    by_queue = inp["queue"] is not None
    return {
        "kind": inp["kind"],
        "queue": inp["queue"] if by_queue else "xc_rs_uk",
        "args": inp["args"] or {"type": "object", "value": []},
        "unique": {"by_queue": by_queue, "by_args": inp["args"] is not None, "period_bucket": inp["period_bucket"]},
        "unique_states": "00000000",
        "run_at": FUTURE,
    }


def unique_key_outcomes(s: Session, released: Released) -> dict[str, str]:
    """Every unique_key vector through the producer: 'ok', 'refused: …' or 'stored <hex>'."""
    out = {}
    for v in load_family(VECTORS_ROOT, RELEASES, "unique_key"):
        answer = s.enqueue(**unique_key_request(v))
        if "job_id" not in answer:
            out[v["id"]] = "answered " + json.dumps({k: a for k, a in answer.items() if k != "seq"})
            continue
        (key,) = job_row(released, answer["job_id"], "unique_key")
        got = bytes(key).hex() if key is not None else None
        out[v["id"]] = "ok" if got == v["expected"]["unique_key_hex"] else f"stored {got}"
    return out


def jobs_with_key(released: Released, kind: str, key_hex: str) -> int:
    row = released.conn.execute("SELECT count(*) FROM awa.jobs WHERE kind = %s AND unique_key = %s",
                                (kind, bytes.fromhex(key_hex))).fetchone()
    assert row is not None
    return int(row[0])


def assert_divergent(outcomes: dict[str, str], released: Released) -> None:
    """Exactly the known vectors fail, each answered `error` for a job that was stored anyway,
    under the vector's key."""
    divergent = {i: o for i, o in outcomes.items() if o != "ok"}
    assert set(divergent) == set(UNIQUE_KEY_DIVERGENT), divergent
    vectors = {v["id"]: v for v in load_family(VECTORS_ROOT, RELEASES, "unique_key")}
    for vid, why in UNIQUE_KEY_DIVERGENT.items():
        assert divergent[vid].startswith('answered {"error": "database error: error occurred while decoding column'), vid
        assert why in divergent[vid], (vid, divergent[vid])
        v = vectors[vid]
        assert jobs_with_key(released, v["input"]["kind"], v["expected"]["unique_key_hex"]) >= 1, vid


def test_hello(session: Session) -> None:
    assert session.hello["type"] == "hello" and session.hello["protocol"] == 2
    assert session.hello["implementation"] == {"name": "awa-model (Rust, insert_with)", "version": "0.6.9"}
    assert set(session.hello["capabilities"]) == {"enqueue", "errors", "nested"}


def test_the_lock_file_pins_the_released_crate() -> None:
    """The hello's version is the crate the lock file builds, from crates.io."""
    lock = (PROJECT / "Cargo.lock").read_text(encoding="utf-8")
    block = re.search(r'name = "awa-model"\nversion = "([^"]+)"\nsource = "([^"]+)"', lock)
    assert block is not None and block.groups() == ("0.6.9", "registry+https://github.com/rust-lang/crates.io-index")
    assert 'awa-model = "=0.6.9"' in (PROJECT / "Cargo.toml").read_text(encoding="utf-8")


def test_ordering_keys_land_on_the_vector_shard(session: Session, released: Released) -> None:
    assert shard_mismatches(session, released, "ok") == []


def test_unique_keys_are_the_vector_keys(session: Session, released: Released) -> None:
    outcomes = unique_key_outcomes(session, released)
    passed = [i for i, o in outcomes.items() if o == "ok"]
    # A good sample: kind-only, by_queue, by_args and period-bucket vectors all among them.
    assert len(passed) >= 20, outcomes
    vectors = {v["id"]: v for v in load_family(VECTORS_ROOT, RELEASES, "unique_key")}
    assert any(vectors[i]["input"]["queue"] is not None for i in passed)
    assert any(vectors[i]["input"]["period_bucket"] is not None for i in passed)
    assert any(vectors[i]["input"]["args"] is not None for i in passed)
    # Integers up to u64::MAX are hashed exactly (the Python SDK's insert hashes them as floats, A1).
    assert "uk-ec49096d6604" in passed
    assert_divergent(outcomes, released)


def test_insert_many_path_stores_the_same_keys(start: Callable[..., Session], released: Released) -> None:
    s = start(AWA_RS_PATH="insert_many")
    assert s.hello["implementation"]["name"] == "awa-model (Rust, insert_many)"
    assert_divergent(unique_key_outcomes(s, released), released)
    # Unlike the Python SDK's insert_many_copy (A7), a duplicate is refused.
    unique = {"by_queue": False, "by_args": True, "period_bucket": None}
    assert "job_id" in s.enqueue(kind="xc.rs.many", queue="xc_rs_many", unique=unique)
    assert s.enqueue(kind="xc.rs.many", queue="xc_rs_many", unique=unique)["refused"]["sqlstate"] == "23505"


def test_divergence_args_nested_65_to_127_deep_are_stored(session: Session, released: Released) -> None:
    """The Python SDK refuses args nested over 64 levels before inserting; the crate stores them."""
    answer = session.enqueue(queue="xc_rs_deep", args={"type": "object", "value": [
        ["d", {"type": "nested", "container": "array", "depth": 100, "value": {"type": "int", "value": "0"}}]]})
    assert "job_id" in answer, answer
    (depth,) = job_row(released, answer["job_id"], "jsonb_path_query_first(args, 'strict $.d' ) IS NOT NULL")
    assert depth is True


def test_duplicates_follow_every_unique_states_mask(session: Session) -> None:
    """All 256 masks: a second job with the same unique inputs is refused 23505 iff the first
    job's state (available, or scheduled with run_at) is in the mask."""
    vectors = load_family(VECTORS_ROOT, RELEASES, "unique_states")
    assert len(vectors) == 256
    unique = {"by_queue": False, "by_args": False, "period_bucket": None}
    wrong = []
    for v in vectors:
        bits = v["expected"]["bits"]
        for state, bit, run_at in (("scheduled", 0, FUTURE), ("available", 1, None)):
            job = {"kind": f"xc.rs.us.{v['id']}.{state}", "queue": "xc_rs_us", "unique": unique,
                   "unique_states": bits, "run_at": run_at}
            assert "job_id" in session.enqueue(**job), (v["id"], state)
            second = session.enqueue(**job)
            refused = second.get("refused", {}).get("sqlstate") == "23505"
            if refused != (bits[bit] == "1") or not (refused or "job_id" in second):
                wrong.append(f"{v['id']} ({bits}) after a {state} job: {second}")
    assert wrong == []


def test_request_fields_reach_the_stored_job(session: Session, released: Released) -> None:
    answer = session.enqueue(kind="xc.rs.fields", queue="xc_rs_fields", priority=4, run_at=FUTURE,
                             tags=["a", "b"], args={"type": "object", "value": [["n", {"type": "int", "value": "3"}]]})
    row = job_row(released, answer["job_id"], "kind, queue, priority, state::text, run_at, tags, args")
    assert row[:4] == ("xc.rs.fields", "xc_rs_fields", 4, "scheduled")
    assert row[4] == dt.datetime(2099, 1, 1, tzinfo=dt.timezone.utc)
    assert row[5:] == (["a", "b"], {"n": 3})


def test_refusals_and_skips(session: Session) -> None:
    unique = {"by_queue": False, "by_args": True, "period_bucket": None}
    args = {"type": "object", "value": [["n", {"type": "int", "value": "7"}]]}
    first = session.enqueue(kind="xc.rs.dup", queue="xc_rs_dup", args=args, unique=unique, unique_states="11111000")
    assert "job_id" in first
    dup = session.enqueue(kind="xc.rs.dup", queue="xc_rs_dup", args=args, unique=unique, unique_states="11111000")
    assert dup["refused"]["sqlstate"] == "23505"
    # Without unique_states the crate's default mask (11111000) applies: still a duplicate.
    dup = session.enqueue(kind="xc.rs.dup", queue="xc_rs_dup", args=args, unique=unique)
    assert dup["refused"]["sqlstate"] == "23505"
    for bits in ("1111", "111110000"):
        bad = session.enqueue(queue="xc_rs_bits", unique=unique, unique_states=bits)
        assert bad["refused"] == {"sqlstate": None, "code": "unique_states_not_8_bits", "message": bad["refused"]["message"]}
    skipped = session.enqueue(queue="xc_rs_ck", concurrency_key_hex="74656e616e742d3432")
    assert skipped["skipped"] is True and "concurrency key" in skipped["reason"]
    skipped = session.enqueue(queue="xc_rs_opts", opts={"x": 1})
    assert skipped["skipped"] is True and "opts" in skipped["reason"]
    skipped = session.enqueue(schema="awa_other", queue="xc_rs_schema")
    assert skipped["skipped"] is True and "schema awa" in skipped["reason"]


def test_a_database_refusal_carries_its_sqlstate(session: Session) -> None:
    """Released insert_job_compat refuses a 201-character kind (check_violation, 23514)."""
    answer = session.enqueue(kind="k" * 201, queue="xc_rs_long")
    assert answer["refused"]["sqlstate"] == "23514", answer


def partition_mismatches(s: Session, released: Released) -> list[str]:
    vectors = load_family(VECTORS_ROOT, RELEASES, "partition")
    assert len(vectors) >= 20
    bad = []
    for v in vectors:
        inp = v["input"]
        answer = s.enqueue(queue=inp["logical_queue"], run_at=FUTURE,
                           partition={"key_hex": inp["key_hex"], "partitions": inp["partitions"]})
        assert "job_id" in answer, (v["id"], answer)
        (queue,) = job_row(released, answer["job_id"], "queue")
        if queue != v["expected"]["physical_queue"]:
            bad.append(f"{v['id']}: stored in {queue}, vector {v['expected']['physical_queue']}")
    return bad


def test_partitions_route_to_the_physical_queue(session: Session, released: Released) -> None:
    assert partition_mismatches(session, released) == []


def test_divergence_scheduled_jobs_lose_the_ordering_key(session: Session, released: Released) -> None:
    """A5 holds for the crate too: with run_at the job waits in deferred_jobs, which has no column
    for the key or a shard (the shard is chosen at promotion)."""
    set_width(released, "xc_rs_a5", 8)
    answer = session.enqueue(queue="xc_rs_a5", ordering_key_hex="74656e616e742d3432", run_at=FUTURE)
    assert job_row(released, answer["job_id"], "state::text") == ("scheduled",)
    conn = released.conn
    assert conn.execute("SELECT count(*) FROM awa.deferred_jobs WHERE job_id = %s", (answer["job_id"],)).fetchone() == (1,)
    assert conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'awa' "
        "AND table_name = 'deferred_jobs' AND column_name IN ('ordering_key', 'enqueue_shard')"
    ).fetchall() == []


def test_divergence_keys_over_4096_bytes_are_stored(session: Session, released: Released) -> None:
    """The contract refuses them (ZA003 / key_too_long); the crate has no limit and stores them."""
    answer = session.enqueue(queue="xc_rs_long_key", ordering_key_hex="6b" * 4097)
    assert "job_id" in answer, answer


def test_divergence_queue_names_over_59_bytes_refused(session: Session) -> None:
    """A2 holds for the crate too: an available job on a 60-byte queue fails on the NOTIFY channel."""
    answer = session.enqueue(queue="q" * 60)
    assert answer["refused"]["sqlstate"] == "22023", answer


@pytest.mark.parametrize("mutant", ["unique_by_queue_inverted", "drop_ordering_key", "drop_partition"])
def test_a_mutant_is_caught(mutant: str, start: Callable[..., Session], released: Released) -> None:
    """The same checks fail on a deliberately wrong build (tests/mutants/awa-rs/<mutant>.patch)."""
    s = start(producer=materialise.materialise("awa-rs", mutant, build=True) / "run")
    if mutant == "drop_ordering_key":
        assert shard_mismatches(s, released, "mut") != []
    elif mutant == "drop_partition":
        assert partition_mismatches(s, released) != []
    else:
        outcomes = unique_key_outcomes(s, released)
        assert sum(o != "ok" for o in outcomes.values()) > len(UNIQUE_KEY_DIVERGENT), outcomes
