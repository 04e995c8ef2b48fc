"""The runner's reports, read by real consumers: junitparser and ElementTree for JUnit, the JSON
Schema (runner/report.schema.json) for the JSON report.

A failing run where every vector case fails with hostile values in its message (the adapter
runner/tests/hostile/hostile_values.py: C0 controls, NUL, U+FFFE/U+FFFF, RTL marks, astral
characters, markup, a 1 MB value, and the vectors' own inputs echoed back), and a harness error
caused by a lone surrogate: both must give files every consumer accepts. Uses the binary of
AWA_CONFORMANCE_BIN, else target/release or target/debug.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import junitparser
import pytest

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "runner" / "tests" / "hostile" / "hostile_values.py"


def runner() -> str:
    candidates = [os.environ.get("AWA_CONFORMANCE_BIN", "")]
    candidates += [str(ROOT / "target" / p / "awa-conformance") for p in ("release", "debug")]
    for c in candidates:
        if c and Path(c).is_file():
            return c
    pytest.fail("no awa-conformance binary: set AWA_CONFORMANCE_BIN or run cargo build -p awa-conformance")


def run_hostile(tmp_path: Path, mode: str) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    junit, report = tmp_path / "j.xml", tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL" and not k.startswith("PG")}
    env.pop("AWA_REQUIRE_DB", None)
    adapter = f"{sys.executable} {HOSTILE} {mode}".strip()
    out = subprocess.run(
        [runner(), "--no-embedded", "--adapter", adapter, "--junit", str(junit), "--report-json", str(report),
         "-q", "adapter::"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    return out, junit, report


def check_json(report: Path, exit_code: int) -> dict:
    doc = json.loads(report.read_text(encoding="utf-8"))
    schema = json.loads((ROOT / "runner" / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(doc)
    assert doc["exit_code"] == exit_code
    return doc


def test_every_case_failing_with_hostile_values_gives_reports_every_consumer_reads(tmp_path: Path) -> None:
    out, junit, report = run_hostile(tmp_path, "")
    assert out.returncode == 1, out.stderr
    doc = check_json(report, 1)
    vector_cases = [c for c in doc["cases"] if c["name"] != "adapter::coverage"]
    assert len(vector_cases) > 1000 and all(c["status"] == "failed" for c in vector_cases)
    assert any(len(c["actual"].get("big", "")) > 1_000_000 for c in vector_cases), "JSON lost the 1 MB value"
    assert any("\uffff" in json.dumps(c["actual"], ensure_ascii=False) for c in vector_cases)

    tree = ET.parse(junit)
    failures = tree.getroot().findall(".//testcase/failure")
    assert len(failures) >= len(vector_cases)
    xml = junitparser.JUnitXml.fromfile(str(junit))
    failed = [case for suite in xml for case in suite if any(isinstance(r, junitparser.Failure) for r in case.result)]
    assert len(failed) >= len(vector_cases)
    messages = " ".join(r.message or "" for case in failed for r in case.result)
    assert "\\u{FFFF}" in messages, "U+FFFF not shown visibly"


def test_a_lone_surrogate_answer_gives_reports_every_consumer_reads(tmp_path: Path) -> None:
    out, junit, report = run_hostile(tmp_path, "lone-surrogate")
    assert out.returncode == 6, out.stderr
    doc = check_json(report, 6)
    assert "udc00" in json.dumps(doc)
    ET.parse(junit)
    errors = [r for suite in junitparser.JUnitXml.fromfile(str(junit)) for case in suite for r in case.result
              if isinstance(r, junitparser.Error)]
    assert errors, "the harness error is not in the JUnit report"
