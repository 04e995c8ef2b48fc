"""Runs the bulk example producer (examples/producers/go/bulk) and its mutants through the runner.

The correct producer must pass at least 100 `producer::` cases with nothing failed or errored,
the `producer::bulk::*` batches among them. Each mutant (a copy of examples/producers/go with
tests/mutants/go/<mutant>.patch applied; table in tests/mutants/README.md) must make the run
fail (exit 1) in the cases that check what it breaks: off_by_one_shard (a client shard one too high, rejected by publish_batch) in
the routing families and the bulk batches, drop_concurrency_key in the concurrency families,
drop_tags and drop_metadata (nothing staged in those columns) in producer::payload::*, skip_bulk
(every bulk request answered `skipped`) in producer::coverage alone, the others in
producer::bulk::unique_conflict.

Needs DATABASE_URL (a superuser DSN: the schema is installed into its own schema and removed
afterwards) and a runner with `--producer` (AWA_CONFORMANCE_BIN, default
target/release/awa-conformance). With AWA_REQUIRE_DB=1 (CI) a missing one fails instead of skipping.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "mutants"))
import materialise  # noqa: E402  (tests/mutants/materialise.py)
sys.path.insert(0, str(ROOT / "tests" / "page"))
from keep import keep_for_page  # noqa: E402  (tests/page/keep.py)

RUNNER = Path(os.environ.get("AWA_CONFORMANCE_BIN", ROOT / "target" / "release" / "awa-conformance"))
RUN = ROOT / "examples" / "producers" / "go" / "bulk" / "run"
SCHEMA = "awa_bulk_producer"
ROLE = "awa_bulk_producer_producer"
# Bounds every runner call: a hung producer must fail the test, not hang CI.
RUN_TIMEOUT = 600
ADAPTER_TIMEOUT = "120"


def _unavailable(why: str) -> None:
    if os.environ.get("AWA_REQUIRE_DB") == "1":
        pytest.fail(why + " (AWA_REQUIRE_DB=1: this must run)")
    pytest.skip(why)


@pytest.fixture(scope="module")
def dsn() -> str:
    url = os.environ.get("DATABASE_URL")
    if not url:
        _unavailable("DATABASE_URL is not set")
    if not RUNNER.is_file():
        _unavailable(f"no runner at {RUNNER}: build it (cargo build --release -p awa-conformance)")
    help_text = subprocess.run([RUNNER, "--help"], capture_output=True, text=True, timeout=60).stdout
    if "--producer" not in help_text:
        _unavailable(f"{RUNNER} has no --producer option (the producer engine)")
    built = subprocess.run([RUN, "--build"], capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, f"building the bulk producer failed:\n{built.stderr[-4000:]}"
    target = ["--dsn", url, "--schema", SCHEMA, "--producer-role", ROLE]
    subprocess.run([RUNNER, "schema", "install", *target], check=True, timeout=120)
    yield url
    subprocess.run([RUNNER, "schema", "uninstall", *target], check=True, timeout=120)


def run_producer(dsn: str, tmp_path: Path, mutant: str | None = None,
                 only: str = "producer::") -> tuple[int, list[dict], str]:
    """A run of the bulk producer (or a mutant of it) over the cases named by `only`: a mutant
    test that asserts on one family runs that family alone (fewer cases, never fewer kinds)."""
    report = tmp_path / f"bulk-{mutant or 'correct'}.json"
    producer = "examples/producers/go/bulk/run"
    if mutant:
        # The go example's copy with the patch, built (both commands); its bulk/run starts it.
        producer = shlex.quote(str(materialise.materialise("go", mutant, build=True) / "bulk" / "run"))
    cmd = [RUNNER, "--dsn", dsn, "--schema", SCHEMA, "--producer-role", ROLE,
           "--producer", producer, "--report-json", str(report),
           "--adapter-timeout", ADAPTER_TIMEOUT, "-q", only]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    cases = json.loads(report.read_text(encoding="utf-8"))["cases"] if report.exists() else []
    return done.returncode, cases, done.stdout[-3000:] + done.stderr[-3000:]


def family(case: dict) -> str:
    return case["name"].split("::")[1]  # producer::<family>::<id>[::w<width>][::<step>]


def test_bulk_producer_is_green(dsn: str, tmp_path: Path) -> None:
    rc, cases, log = run_producer(dsn, tmp_path)
    keep_for_page(tmp_path / "bulk-correct.json", "go-bulk")
    statuses = Counter(c["status"] for c in cases)
    bad = [c["name"] for c in cases if c["status"] in ("failed", "errored")]
    assert rc == 0 and not bad, f"exit {rc}, not passed: {bad[:20]}\n{log}"
    assert statuses["passed"] >= 100, f"only {dict(statuses)} producer cases\n{log}"
    bulk = {c["name"]: c["status"] for c in cases if family(c) == "bulk"}
    assert "producer::bulk::unique_conflict" in bulk, f"no bulk cases ran: {sorted(bulk)}\n{log}"
    assert len(bulk) >= 2 and set(bulk.values()) == {"passed"}, f"bulk cases: {bulk}\n{log}"


def test_off_by_one_shard_is_caught(dsn: str, tmp_path: Path) -> None:
    rc, cases, log = run_producer(dsn, tmp_path, "off_by_one_shard")
    killed = {family(c) for c in cases if c["status"] == "failed"}
    assert rc == 1, f"mutant off_by_one_shard: exit {rc}\n{log}"
    # A keyed row is rejected wherever it is staged: as a batch of one and in the bulk batches.
    assert {"routing_precedence", "ordering_shard", "bulk"} <= killed, f"failed families: {sorted(killed)}\n{log}"
    # Rotor-only rows stage no shard: the mutant cannot touch them (the check is not blanket).
    passed = {c["name"] for c in cases if c["status"] == "passed"}
    assert "producer::bulk::unique_conflict" in passed, f"{sorted(killed)}\n{log}"


def test_drop_concurrency_key_is_caught(dsn: str, tmp_path: Path) -> None:
    rc, cases, log = run_producer(dsn, tmp_path, "drop_concurrency_key")
    killed = {family(c) for c in cases if c["status"] == "failed"}
    assert rc == 1, f"mutant drop_concurrency_key: exit {rc}\n{log}"
    assert {"routing_precedence", "concurrency_shard"} <= killed, f"failed families: {sorted(killed)}\n{log}"


# Each breaks one thing the unique-conflict batch checks: nothing of a refused batch committed,
# the row the refusal names, the refusal itself.
@pytest.mark.parametrize("mutant", ["per_row_commit", "rows_from_zero", "drop_unique_key"])
def test_unique_conflict_mutant_is_caught(dsn: str, tmp_path: Path, mutant: str) -> None:
    rc, cases, log = run_producer(dsn, tmp_path, mutant, only="producer::bulk::")
    failed = {c["name"] for c in cases if c["status"] == "failed"}
    assert rc == 1 and "producer::bulk::unique_conflict" in failed, f"mutant {mutant}: exit {rc}, failed {sorted(failed)[:20]}\n{log}"


# The staged columns a careless producer leaves NULL: every job is stored with the default.
@pytest.mark.parametrize("mutant", ["drop_tags", "drop_metadata"])
def test_payload_mutant_is_caught(dsn: str, tmp_path: Path, mutant: str) -> None:
    rc, cases, log = run_producer(dsn, tmp_path, mutant, only="producer::payload::")
    killed = {family(c) for c in cases if c["status"] == "failed"}
    assert rc == 1 and "payload" in killed, f"mutant {mutant}: exit {rc}, failed families {sorted(killed)}\n{log}"


def test_skip_bulk_is_caught(dsn: str, tmp_path: Path) -> None:
    # Declares `bulk`, skips every batch: no batch fails, the coverage of what it declares does.
    rc, cases, log = run_producer(dsn, tmp_path, "skip_bulk")
    failed = [c["name"] for c in cases if c["status"] == "failed"]
    assert rc == 1 and failed == ["producer::coverage"], f"mutant skip_bulk: exit {rc}, failed {failed[:20]}\n{log}"


def test_bulk_traffic_matches_the_protocol_schemas(dsn: str, tmp_path: Path) -> None:
    """The real lines of a bulk run (hello, bulk requests, their answers) against docs/protocol."""
    import jsonschema

    sent, got = tmp_path / "sent.jsonl", tmp_path / "got.jsonl"
    cmd = f"tee '{sent}' | examples/producers/go/bulk/run | tee '{got}'"
    done = subprocess.run(
        [RUNNER, "--dsn", dsn, "--schema", SCHEMA, "--producer-role", ROLE, "--producer", cmd,
         "--adapter-timeout", ADAPTER_TIMEOUT, "-q", "producer::bulk::"],
        cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    def validator(name: str) -> jsonschema.Draft202012Validator:
        schema = json.loads((ROOT / "docs" / "protocol" / f"{name}.schema.json").read_text(encoding="utf-8"))
        return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())

    requests = [json.loads(line) for line in sent.read_text(encoding="utf-8").splitlines() if line.strip()]
    answers = [json.loads(line) for line in got.read_text(encoding="utf-8").splitlines() if line.strip()]
    validator("hello").validate(answers[0])
    bulk = [r for r in requests if r["type"] == "bulk"]
    assert len(bulk) >= 2, requests[:3]
    for r in bulk:
        validator("bulk-request").validate(r)
    seqs = {r["seq"] for r in bulk}
    replies = [a for a in answers[1:] if a.get("seq") in seqs]
    assert len(replies) == len(bulk)
    for a in replies:
        validator("bulk-answer").validate(a)
    assert any("job_ids" in a for a in replies) and any("refused" in a for a in replies)
    # A wrong answer is not accepted: the schemas are not blanket.
    with pytest.raises(jsonschema.ValidationError):
        validator("bulk-answer").validate({"seq": 1, "job_id": 1})
