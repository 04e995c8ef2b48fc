"""One engine: the runner with `--producer <copy of examples/producers/python>/run` and check_producer
with a callable wrapping the same producer code give the same result for every case and the same
verdict, on the same deliberately wrong producer (the example with tests/mutants/python/json_dumps.patch
applied) and the same expected-failures file."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import awa_conformance as ac
from awa_conformance.producer import trial_names

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("awa-conformance")
# A deliberate mistake of the example producer, args hashed as json.dumps(sort_keys=True)
# output: tests/mutants/python/json_dumps.patch, applied to a copy (the example has no switch).
MISTAKE = "json_dumps"
sys.path.insert(0, str(ROOT / "tests" / "mutants"))
import materialise  # noqa: E402  (tests/mutants/materialise.py)

EXAMPLE = materialise.materialise("python", MISTAKE)
# A unique_key case the mistake breaks (args {"id": 42, "to": …}: json.dumps adds spaces) and a
# routing case it cannot touch: listed, they become expected_failure and unexpected_pass.
BROKEN_CASE = "producer::unique_key::uk-4c8108e99174"
PASSING_CASE = "routing_precedence::rp-b1f4ba5fbed3::w1"


def example_module() -> Any:
    spec = importlib.util.spec_from_file_location("awa_example_producer", EXAMPLE / "producer.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def wrap(module: Any, dsn: str) -> Any:
    """The example producer's enqueue as a check_producer callable (the request back in wire form).
    The example speaks protocol 3 to the runner, so the callable forwards metadata and max_attempts
    and check_producer is asked for protocol 3 too: both engines then send the same cases."""
    producer = module.Producer(dsn)

    def insert(request: dict[str, Any]) -> dict[str, Any]:
        unique, partition = request["unique"], request["partition"]
        job = {
            "kind": request["kind"], "queue": request["queue"], "args": request["args_typed"],
            "priority": request["priority"], "run_at": request["run_at"], "tags": request["tags"],
            "ordering_key_hex": None if request["ordering_key"] is None else request["ordering_key"].hex(),
            "concurrency_key_hex": None if request["concurrency_key"] is None else request["concurrency_key"].hex(),
            "unique": None if unique is None else dict(
                unique, period_bucket=None if unique["period_bucket"] is None else str(unique["period_bucket"])),
            "unique_states": request["unique_states"],
            "partition": None if partition is None else {"key_hex": partition["key"].hex(),
                                                         "partitions": partition["partitions"]},
            "metadata": request["metadata_typed"], "max_attempts": request["max_attempts"],
            "opts": request["opts"],
        }
        try:
            job_id, trace = producer.enqueue(request["schema"], job)
        except module.Refused as r:
            raise ac.ProducerRefused(r.code, str(r)) from r
        return {"job_id": job_id, "trace": trace}

    return insert, producer


def test_runner_and_check_producer_agree(database, tmp_path):
    assert BROKEN_CASE in trial_names()
    expected = tmp_path / "expected.json"
    expected.write_text(json.dumps({"version": 1, "expected_failures": [
        {"id": BROKEN_CASE, "reason": "json.dumps is not canonical JSON"},
        {"id": PASSING_CASE, "reason": "stale: this case passes"},
    ]}), encoding="utf-8")

    runner_json = tmp_path / "runner.json"
    env = dict(os.environ, AWA_PRODUCER_PYTHON=sys.executable)
    proc = subprocess.run(
        [str(SCRIPT), "--dsn", database["dsn"], "--schema", database["schema"],
         "--producer-role", database["schema"] + "_producer", "--producer", str(EXAMPLE / "run"),
         "--expected-failures", str(expected), "--report-json", str(runner_json), "-q", "producer::"],
        capture_output=True, text=True, timeout=900, env=env, check=False,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    by_runner = {c["name"]: c["status"] for c in json.loads(runner_json.read_text())["cases"]}

    insert, producer = wrap(example_module(), database["dsn"])
    try:
        report = ac.check_producer(database["dsn"], insert, schema=database["schema"], producer_role=database["role"],
                                   expected_failures=str(expected), protocol=3)
    finally:
        if producer.conn is not None:
            producer.conn.close()
    by_check = {c.name: c.status for c in report.cases}

    assert by_check == by_runner
    assert len(by_check) >= 100
    assert report.verdict == json.loads(runner_json.read_text())["verdict"] == "nonconformant"
    statuses = set(by_check.values())
    assert {"passed", "failed", "expected_failure", "unexpected_pass"} <= statuses, statuses
    assert by_check[BROKEN_CASE] == "expected_failure"
    assert by_check["producer::" + PASSING_CASE] == "unexpected_pass"
