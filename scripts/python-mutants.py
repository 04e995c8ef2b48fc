#!/usr/bin/env python3
"""Run the Python example producer's mutants through the runner, as tests/mutants/python-runs.json says.

Each row is one run: the patched copy of examples/producers/python (tests/mutants/materialise.py)
as `--producer`, the row's filter, and two checks: the run exits 1, and for every `must_fail`
prefix some case starting with it failed (not errored or skipped: a failure is a finding the
runner made). Rows run two at a time (each is a producer and a runner on the same database, in
run-scoped queues). Prints one line per row; exits 1 when any row does not hold.

Usage: python-mutants.py RUNNER DSN SCHEMA ROLE REPORT_DIR
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tests" / "mutants" / "python-runs.json"
MATERIALISE = ROOT / "tests" / "mutants" / "materialise.py"
# A run of one family takes seconds; the bound only stops a hung producer from hanging CI.
RUN_TIMEOUT = 600


def run_row(i: int, row: dict, runner: str, dsn: str, schema: str, role: str, reports: Path) -> str | None:
    """One row; None when it holds, else why not."""
    made = subprocess.run([sys.executable, str(MATERIALISE), "python", row["mutant"]],
                          capture_output=True, text=True, timeout=RUN_TIMEOUT)
    if made.returncode != 0:
        return f"{row['mutant']}: materialise failed: {made.stderr.strip()[-500:]}"
    report = reports / f"python-mutant-{i}-{row['mutant']}.json"
    cmd = [runner, "--dsn", dsn, "--schema", schema, "--producer-role", role,
           "--producer", made.stdout.strip(), "-q", "--report-json", str(report), row["filter"]]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    cases = json.loads(report.read_text(encoding="utf-8"))["cases"] if report.exists() else []
    failed = [c["name"] for c in cases if c["status"] == "failed"]
    if done.returncode != 1:
        return (f"{row['mutant']} on {row['filter']}: exit {done.returncode}, want 1; failed {failed[:5]}\n"
                f"{done.stderr[-1500:]}")
    missed = [p for p in row["must_fail"] if not any(n.startswith(p) for n in failed)]
    if missed:
        return f"{row['mutant']} on {row['filter']}: no failed case for {missed}; failed {failed[:10]}"
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 6:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    runner, dsn, schema, role, reports = argv[1], argv[2], argv[3], argv[4], Path(argv[5])
    reports.mkdir(parents=True, exist_ok=True)
    rows = json.loads(TABLE.read_text(encoding="utf-8"))["runs"]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda ir: run_row(ir[0], ir[1], runner, dsn, schema, role, reports),
                                enumerate(rows)))
    bad = 0
    for row, why in zip(rows, results):
        if why is None:
            print(f"caught  {row['mutant']} on {row['filter']}")
        else:
            bad += 1
            print(f"MISSED  {why}", file=sys.stderr)
    print(f"python-mutants: {len(rows) - bad} of {len(rows)} runs caught as tests/mutants/python-runs.json says")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
