"""Each example producer's own traffic, without the engine: valid protocol-3 messages and the right outcomes.

Feeds canned requests on stdin (a stored job; once it is answered, its duplicate, a 4-bit
unique_states and a partitioned job at once, then stop), validates every line against
docs/protocol/*.schema.json and checks what each answer says and what the database stored;
the rows are removed afterwards. A producer declaring max_in_flight may answer the three in
any order: answers are matched by seq, each answered exactly once.
Needs DATABASE_URL and the reference schema installed by the runner (as test_example_producers).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import uuid
from pathlib import Path

import jsonschema
import psycopg
import pytest

from test_example_producers import LANGS, ROOT, RUNNER, ROLE, SCHEMA, _unavailable

PROTOCOL = ROOT / "docs" / "protocol"


def schema(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads((PROTOCOL / f"{name}.schema.json").read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def installed() -> str:
    url = os.environ.get("DATABASE_URL")
    if not url:
        _unavailable("DATABASE_URL is not set")
    if not RUNNER.is_file():
        _unavailable(f"no runner at {RUNNER}")
    target = ["--dsn", url, "--schema", SCHEMA, "--producer-role", ROLE]
    subprocess.run([RUNNER, "schema", "install", *target], check=True, timeout=120)
    yield url
    subprocess.run([RUNNER, "schema", "uninstall", *target], check=True, timeout=120)


def job(kind: str, queue: str, **over) -> dict:
    base = {"kind": kind, "queue": queue,
            "args": {"type": "object", "value": [["to", {"type": "string", "value": "a@example.com"}]]},
            "priority": None, "run_at": None, "tags": [], "ordering_key_hex": None,
            "concurrency_key_hex": None, "unique": None, "unique_states": None, "partition": None,
            "metadata": None, "max_attempts": None, "opts": {}}
    return base | over


def _exchange(proc: subprocess.Popen, requests: list[dict], timeout: float) -> list[dict]:
    """The hello, then `requests` sent and answered one by one (a hung producer is killed by
    the caller after `timeout`)."""
    assert proc.stdin is not None and proc.stdout is not None
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        lines = [json.loads(proc.stdout.readline())]
        for r in requests:
            proc.stdin.write(json.dumps(r) + "\n")
            proc.stdin.flush()
            lines.append(json.loads(proc.stdout.readline()))
        return lines
    finally:
        timer.cancel()


@pytest.mark.parametrize("lang", (*LANGS, "python"))
def test_protocol_traffic(installed: str, lang: str) -> None:
    tag = uuid.uuid4().hex[:12]
    kind, queue = f"awa_example_protocol_{tag}", f"awa_example_protocol_{tag}"
    unique = {"by_queue": True, "by_args": True, "period_bucket": None}
    jobs = [
        job(kind, queue, unique=unique, unique_states="11111000", concurrency_key_hex="ff00c3", max_attempts=7,
            metadata={"type": "object", "value": [["n", {"type": "int", "value": "18446744073709551615"}]]}),
        job(kind, queue, unique=unique, unique_states="11111000"),
        job(kind, queue, unique=unique, unique_states="1111"),
        job(kind, queue, ordering_key_hex="74656e616e742d3432",
            partition={"key_hex": "74656e616e742d3432", "partitions": 4}),
    ]
    requests = [{"type": "enqueue", "seq": i, "case": f"producer::example_protocol::{i}", "schema": SCHEMA, "job": j}
                for i, j in enumerate(jobs, 1)] + [{"type": "stop"}]
    for r in requests:
        schema("stop" if r["type"] == "stop" else "enqueue-request").validate(r)
    env = dict(os.environ, AWA_CONFORMANCE_DSN=installed, AWA_CONFORMANCE_SCHEMA=SCHEMA)
    proc = subprocess.Popen([ROOT / "examples" / "producers" / lang / "run"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        # The first job is answered (committed) before its duplicate is sent; the rest go at once.
        first = _exchange(proc, requests[:1], 300)
        rest, stderr = proc.communicate("".join(json.dumps(r) + "\n" for r in requests[1:]), timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr[-3000:]
    # Split on "\n" only: answers may hold U+2028 raw, which str.splitlines() would split on.
    lines = first + [json.loads(line) for line in rest.split("\n") if line]
    hello, answers = lines[0], lines[1:]
    assert sorted(a["seq"] for a in answers) == [1, 2, 3, 4], "each request answered once"
    answers.sort(key=lambda a: a["seq"])
    schema("hello").validate(hello)
    assert hello["protocol"] == 3 and "enqueue" in hello["capabilities"]
    for a in answers:
        schema("enqueue-answer").validate(a)
    stored, dup, short, parted = answers
    assert "job_id" in stored and stored["trace"]["physical_queue"] == queue
    assert dup["refused"]["sqlstate"] == "23505"
    # The Python example refuses it before any SQL (sqlstate null); the others leave it to the
    # database. Either conforms (docs/adapter-protocol.md).
    refuser = None if lang == "python" else "22026"
    assert short["refused"] == short["refused"] | {"sqlstate": refuser, "code": "unique_states_not_8_bits"}
    assert parted["trace"]["physical_queue"] == queue + "__p2"  # contract §5 worked example
    try:
        with psycopg.connect(installed) as conn:
            row = conn.execute(
                f'SELECT encode(unique_key, \'hex\'), unique_states::text, route_source FROM "{SCHEMA}".job_routing(%s)',
                (stored["job_id"],)).fetchone()
            assert row == (stored["trace"]["unique_key_hex"], "11111000", "concurrency_key")
            # Protocol 3's members: the metadata's integer beyond i64 kept exactly.
            row = conn.execute(f'SELECT max_attempts, metadata FROM "{SCHEMA}".job_stored(%s)',
                               (stored["job_id"],)).fetchone()
            assert row == (7, '{"n": 18446744073709551615}')
    finally:
        with psycopg.connect(installed) as conn:
            ids = [a["job_id"] for a in answers if "job_id" in a]
            conn.execute(f'DELETE FROM "{SCHEMA}".job_unique_claims WHERE job_id = ANY(%s)', (ids,))
            conn.execute(f'DELETE FROM "{SCHEMA}".contract_jobs WHERE kind = %s', (kind,))
