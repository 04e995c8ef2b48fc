"""scripts/python-mutants.py, the runner of the Python example producer's mutants as data
(tests/mutants/python-runs.json): a row holds only when the run exits 1 and every `must_fail`
prefix names a case that *failed*. Shown on stand-ins (a fake runner that writes the report it is
told to, a fake materialise), so each way a row can miss is seen to be reported, without a
database: a wrong rule here would let a mutant the runner no longer catches pass CI."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "python-mutants.py"

# Writes a report with the cases of FAKE_CASES to the path after --report-json, and exits with
# FAKE_EXIT.
FAKE_RUNNER = """\
import json, os, sys
report = sys.argv[sys.argv.index("--report-json") + 1]
json.dump({"cases": json.loads(os.environ["FAKE_CASES"])}, open(report, "w"))
sys.exit(int(os.environ["FAKE_EXIT"]))
"""


@pytest.fixture()
def pm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    spec = importlib.util.spec_from_file_location("python_mutants", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    materialise = tmp_path / "materialise.py"
    materialise.write_text("print('/nonexistent/producer')\n", encoding="utf-8")
    monkeypatch.setattr(module, "MATERIALISE", materialise)
    runner = tmp_path / "runner"
    runner.write_text(f"#!{sys.executable}\n" + FAKE_RUNNER, encoding="utf-8")
    runner.chmod(0o755)
    return module, str(runner), tmp_path


def run(pm, monkeypatch, cases, code, must_fail):
    module, runner, tmp = pm
    monkeypatch.setenv("FAKE_CASES", json.dumps([{"name": n, "status": s} for n, s in cases]))
    monkeypatch.setenv("FAKE_EXIT", str(code))
    row = {"mutant": "m", "filter": "producer::field::", "must_fail": must_fail}
    return module.run_row(0, row, runner, "dsn", "schema", "role", tmp)


def test_a_row_holds_when_each_listed_case_failed_and_the_run_exits_1(pm, monkeypatch) -> None:
    cases = [("producer::field::kind.whitespace", "failed"), ("producer::field::kind.max", "passed")]
    assert run(pm, monkeypatch, cases, 1, ["producer::field::kind.whitespace"]) is None


def test_a_listed_case_that_passed_errored_or_was_skipped_is_missed(pm, monkeypatch) -> None:
    for status in ("passed", "errored", "not_applicable"):
        cases = [("producer::field::kind.whitespace", status), ("producer::field::tags.one", "failed")]
        why = run(pm, monkeypatch, cases, 1, ["producer::field::kind.whitespace"])
        assert why is not None and "no failed case for ['producer::field::kind.whitespace']" in why, why


def test_a_run_that_does_not_exit_1_is_missed(pm, monkeypatch) -> None:
    cases = [("producer::field::kind.whitespace", "failed")]
    for code in (0, 6):
        why = run(pm, monkeypatch, cases, code, ["producer::field::kind.whitespace"])
        assert why is not None and f"exit {code}, want 1" in why, why


def test_main_exits_1_and_names_the_missed_row(pm, monkeypatch, capsys) -> None:
    module, runner, tmp = pm
    table = tmp / "runs.json"
    table.write_text(json.dumps({"runs": [
        {"mutant": "caught_one", "filter": "f", "must_fail": ["producer::a"]},
        {"mutant": "missed_one", "filter": "f", "must_fail": ["producer::b"]},
    ]}), encoding="utf-8")
    monkeypatch.setattr(module, "TABLE", table)
    monkeypatch.setenv("FAKE_CASES", json.dumps([{"name": "producer::a::x", "status": "failed"}]))
    monkeypatch.setenv("FAKE_EXIT", "1")
    assert module.main(["python-mutants.py", runner, "dsn", "schema", "role", str(tmp / "reports")]) == 1
    out = capsys.readouterr()
    assert "caught  caught_one on f" in out.out
    assert "MISSED  missed_one on f: no failed case for ['producer::b']" in out.err
    assert "1 of 2 runs caught" in out.out
