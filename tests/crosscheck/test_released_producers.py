"""The released SDKs checked by the runner's producer engine on released Awa (compat profile).

`awa-conformance --dsn <released> --producer examples/producers/<sdk>/run` runs every producer
case released Awa can answer through each enqueue path of the released Python SDK (awa-pg) and
Rust crate (awa-model, built by the step before), judged against `insert_job_compat` and the
vectors; each path's expected-failures file lists its divergences, each with its reason (an
expected failure that passes fails the run). Each deliberate mistake of the awa-pg wrapper
(a copy with tests/mutants/awa-pg/<mutant>.patch applied) fails the run, and no run leaves a row, a relation or a role behind.
The runner is AWA_CONFORMANCE_BIN (default target/release/awa-conformance).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import REPO, Released

sys.path.insert(0, str(REPO / "tests" / "mutants"))
import materialise  # noqa: E402  (tests/mutants/materialise.py)
sys.path.insert(0, str(REPO / "tests" / "page"))
from keep import keep_for_page  # noqa: E402  (tests/page/keep.py)

RUNNER = Path(os.environ.get("AWA_CONFORMANCE_BIN", REPO / "target" / "release" / "awa-conformance"))
AWA_PG = REPO / "examples" / "producers" / "awa-pg"
AWA_RS = REPO / "examples" / "producers" / "awa-rs"
# (example directory, the variable choosing its path, the path, the implementation name).
PATHS = (
    (AWA_PG, "AWA_PG_PATH", "insert", "awa-pg (insert) 0.6.9"),
    (AWA_PG, "AWA_PG_PATH", "insert_many_copy", "awa-pg (insert_many_copy) 0.6.9"),
    (AWA_PG, "AWA_PG_PATH", "enqueue_many_copy", "awa-pg (enqueue_many_copy) 0.6.9"),
    (AWA_RS, "AWA_RS_PATH", "insert_with", "awa-model (Rust, insert_with) 0.6.9"),
    (AWA_RS, "AWA_RS_PATH", "insert_many", "awa-model (Rust, insert_many) 0.6.9"),
)
# A deliberate mistake, and the family whose cases must catch it.
MUTANTS = {
    "drop_ordering_key": "ordering_shard",
    "unique_ignores_queue": "unique_key",
    "off_by_one_partition_count": "partition",
    "drop_priority": "partition",
}

# Every relation, role and per-table row count of the database: a run must leave all of it.
STATE_SQL = """
SELECT (SELECT count(*) FROM pg_catalog.pg_class),
       (SELECT count(*) FROM pg_catalog.pg_roles),
       (SELECT string_agg(format('%s=%s', c.relname,
                 (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %I.%I',
                   n.nspname, c.relname), false, true, '')))[1]::text), ' ' ORDER BY c.relname)
          FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'awa' AND c.relkind IN ('r', 'p') AND NOT c.relispartition)
"""


def db_state(url: str) -> tuple[Any, ...]:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(STATE_SQL).fetchone()
    assert row is not None
    return tuple(row)


def run_producer(released: Released, tmp_path: Path, path: str, expected: Path | None,
                 mutant: str = "", only: str = "producer::", example: Path = AWA_PG,
                 path_var: str = "AWA_PG_PATH") -> tuple[int, dict[str, Any], str]:
    if not RUNNER.is_file():
        pytest.fail(f"{RUNNER} is missing: cargo build --release -p awa-conformance", pytrace=False)
    report = tmp_path / f"{path}-{mutant or 'clean'}.json"
    env = {**os.environ, path_var: path, "NO_COLOR": "1"}
    if mutant:
        example = materialise.materialise("awa-pg" if example == AWA_PG else "awa-rs", mutant, build=True)
    command = f"{sys.executable} {example / 'run'}" if example.name == "awa-pg" else str(example / "run")
    argv = [str(RUNNER), "--dsn", released.url, "--producer", command,
            "--report-json", str(report), "-q", only]
    if expected is not None:
        argv += ["--expected-failures", str(expected)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=900, env=env, check=False)
    data = json.loads(report.read_text(encoding="utf-8")) if report.is_file() else {}
    return proc.returncode, data, proc.stderr[-4000:]


def statuses(report: dict[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for case in report.get("cases", []):
        out[case["status"]] = out.get(case["status"], 0) + 1
    return out


# The input classes of docs/contract.md §16 that only protocol 3 can ask for: metadata,
# max_attempts and a run_at with an offset other than Z.
PROTOCOL_3_FIELD_CLASSES = (
    "max_attempts.min", "max_attempts.max", "max_attempts.below", "max_attempts.above",
    "metadata.empty", "metadata.mixed", "metadata.nested", "metadata.key_order",
    "run_at.offset_half_hour", "run_at.offset_negative",
)


@pytest.mark.parametrize(("example", "path_var", "path", "name"), PATHS, ids=[f"{p[0].name}-{p[2]}" for p in PATHS])
def test_sdk_path_conforms_but_for_its_documented_divergences(released: Released, tmp_path: Path, example: Path,
                                                             path_var: str, path: str, name: str) -> None:
    expected = example / "expected-failures" / f"{path}.json"
    before = db_state(released.url)
    code, report, stderr = run_producer(released, tmp_path, path, expected, example=example, path_var=path_var)
    keep_for_page(tmp_path / f"{path}-clean.json", f"{example.name}-{path}")
    assert db_state(released.url) == before, "the run left rows, relations or roles behind"
    assert code == 0, stderr
    counts = statuses(report)
    listed = len(json.loads(expected.read_text(encoding="utf-8"))["expected_failures"])
    assert counts.get("expected_failure", 0) == listed, counts
    assert counts.get("passed", 0) >= 290, counts
    assert report["provenance"]["level"] == "compat"
    assert report["provenance"]["extra"]["producer"] == name
    # What released Awa cannot express is not applicable, each case with its reason.
    na = [c for c in report["cases"] if c["status"] == "not_applicable"]
    assert {c["name"].split("::")[1] for c in na} >= {"concurrency_digest", "concurrency_shard", "bulk"}
    # The rest is what protocol 2 (these wrappers' protocol) cannot ask for (ADR 0053).
    assert all("released" in (c.get("message") or "") or "protocol 3 adds" in (c.get("message") or "")
               for c in na), na[:3]
    assert {c["name"] for c in na if "protocol 3 adds" in (c.get("message") or "")} == {
        *(f"producer::payload::{n}" for n in ("all", "max_attempts", "metadata", "run_at_offset")),
        *(f"producer::field::{n}" for n in PROTOCOL_3_FIELD_CLASSES)}


def test_a_stale_expected_failure_fails_the_run(released: Released, tmp_path: Path) -> None:
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps({"version": 1, "expected_failures": [
        {"id": "producer::ordering_shard::os-0246624848b7::w1", "reason": "stale: this case passes"},
    ]}), encoding="utf-8")
    code, report, stderr = run_producer(released, tmp_path, "enqueue_many_copy", stale,
                                        only="producer::ordering_shard::")
    assert code == 1, stderr
    assert statuses(report).get("unexpected_pass", 0) == 1, statuses(report)


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_each_wrapper_mistake_fails_its_family(released: Released, tmp_path: Path, mutant: str) -> None:
    before = db_state(released.url)
    # Only the family that must catch it: a filtered run checks fewer cases, never fewer kinds.
    # The path's documented divergences stay expected failures, so only the mistake fails.
    code, report, stderr = run_producer(released, tmp_path, "insert",
                                        AWA_PG / "expected-failures" / "insert.json", mutant,
                                        only=f"producer::{MUTANTS[mutant]}::")
    assert db_state(released.url) == before
    assert code == 1, stderr
    failed = {c["name"].split("::")[1] for c in report["cases"] if c["status"] == "failed"}
    assert MUTANTS[mutant] in failed, (mutant, failed)
