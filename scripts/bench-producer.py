#!/usr/bin/env python3
"""Producer-path throughput, measured side by side in one run (docs/benchmarks.md, P8).

Usage: scripts/bench-producer.py [--runs N] [--runner PATH]   (needs DATABASE_URL with the
reference schema installed, and the project venv's python for psycopg/blake3)

Prints, for each contender, the cases it ran, its wall time (median of N runs) and cases/s:
  adapter-protocol   `awa-conformance --adapter <trivial adapter> adapter::`: the runner's
                     function-adapter path with an adapter that only looks answers up (no
                     hashing): the protocol's cost per case, with the runner's start-up
                     (vector loading and verification) and the adapter's included, so the
                     rate is a floor.
  producer-engine L  `awa-conformance --producer examples/producers/L/run producer::` for each
                     example producer L: the one engine, end to end (enqueue, read back, judge,
                     clean up); build the examples first (`examples/producers/L/run --build`).
  check_producer-old the previous release's Python `check_producer` (its own engine, SQL and
                     judge in Python), loaded from git history, with a psycopg insert callable.
  baseline python    with --baseline DIR: DIR is a checkout of an earlier commit with its
                     release runner built (DIR/target/release/awa-conformance, or
                     CARGO_TARGET_DIR given as --baseline-target); that runner on that tree's
                     Python example, alternating run by run with today's, so the per-case time
                     of today's engine is compared with the earlier one's on the same machine
                     in the same minutes (the cases differ: the ratio is per case).
Ratios are printed against the old check_producer, and per case against the baseline. Speed
is never asserted in a test.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: The last commit whose bindings judged producers in Python (before the one engine).
OLD_ENGINE_COMMIT = "9b06016"

TRIVIAL_ADAPTER = r'''
import json, sys, pathlib
answers = {}
for release in sorted(pathlib.Path(sys.argv[1]).iterdir()):
    if not release.is_dir():
        continue
    for f in release.glob("*.json"):
        doc = json.loads(f.read_text())
        if isinstance(doc, dict) and "vectors" in doc:
            for v in doc["vectors"]:
                answers[v["id"]] = v["expected"]
fams = sys.argv[2].split(",") if len(sys.argv) > 2 else [
    "canonical_json", "unique_key", "ordering_shard", "partition", "concurrency_digest",
    "concurrency_shard", "routing_precedence", "move_shard", "unique_states", "errors"]
out = sys.stdout
out.write(json.dumps({"type": "hello", "protocol": 1,
                      "implementation": {"name": "bench-lookup", "version": "0"},
                      "capabilities": fams}) + "\n")
out.flush()
for line in sys.stdin:
    m = json.loads(line)
    if m.get("type") == "stop":
        break
    out.write(json.dumps({"seq": m["seq"], "output": answers[m["id"]]}) + "\n")
    out.flush()
'''


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        report = pathlib.Path(tmp) / "r.json"
        t0 = time.perf_counter()
        p = subprocess.run(cmd + ["--report-json", str(report)], env=env, cwd=ROOT,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        dt = time.perf_counter() - t0
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd[:4])}… exited {p.returncode}:\n{p.stderr[-2000:]}")
        return dt, json.loads(report.read_text())


def passed(report: dict, prefix: str) -> int:
    return sum(1 for c in report["cases"] if c["name"].startswith(prefix) and c["status"] == "passed")


def old_check_producer(dsn: str):
    """The previous release's check_producer, loaded from git history beside the current package."""
    src = subprocess.run(["git", "show", f"{OLD_ENGINE_COMMIT}:bindings/python/awa_conformance/producer.py"],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    tmp = pathlib.Path(tempfile.mkdtemp()) / "old_producer.py"
    tmp.write_text(src)
    spec = importlib.util.spec_from_file_location("awa_conformance._old_producer", tmp)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    import psycopg

    conn = psycopg.connect(dsn, autocommit=True)

    def insert(req):
        row = conn.execute(
            "SELECT job_id FROM awa.insert_job(p_kind => %s, p_queue => %s, p_args => '{}'::jsonb, "
            "p_unique_key => %s, p_unique_states => %s::varbit, p_ordering_key => %s, p_concurrency_key => %s)",
            (req["kind"], req["queue"], req["unique_key"], req["unique_states"], req["ordering_key"],
             req["concurrency_key"]),
        ).fetchone()
        return row[0]

    def run() -> tuple[float, int]:
        t0 = time.perf_counter()
        rep = mod.check_producer(dsn, insert)
        dt = time.perf_counter() - t0
        return dt, sum(1 for c in rep.cases if c.status == "passed")

    return run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--runner", default=str(ROOT / "target" / "release" / "awa-conformance"))
    ap.add_argument("--baseline", help="a checkout of an earlier commit, its runner built")
    ap.add_argument("--baseline-target", help="that checkout's cargo target directory")
    ap.add_argument("--only", help="run only the contenders whose name contains this")
    a = ap.parse_args()
    dsn = os.environ.get("DATABASE_URL") or sys.exit("set DATABASE_URL (reference schema installed)")
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        adapter = pathlib.Path(tmp) / "lookup.py"
        adapter.write_text(TRIVIAL_ADAPTER)
        adapter_cmd = f"{sys.executable} {adapter} {ROOT / 'vectors'}"
        contenders = {
            "adapter-protocol": lambda: timed([a.runner, "--no-embedded", "--adapter", adapter_cmd, "adapter::"], env),
        }
        # End to end through the one engine, for each example producer (built beforehand: each
        # `run --build`), so per-example rates are measured side by side in this run.
        for lang in ("python", "node", "go", "java", "go/bulk"):
            run = ROOT / "examples" / "producers" / lang / "run"
            if run.exists():
                contenders[f"producer-engine {lang}"] = (
                    lambda run=run: timed([a.runner, "--dsn", dsn, "--producer", str(run), "producer::"], env))
        if a.baseline:
            base_dir = pathlib.Path(a.baseline).resolve()
            target = pathlib.Path(a.baseline_target or base_dir / "target")
            base_runner = target / "release" / "awa-conformance"
            if not base_runner.is_file():
                sys.exit(f"--baseline: no runner at {base_runner}: build it (cargo build --release -p awa-conformance)")
            base_run = base_dir / "examples" / "producers" / "python" / "run"
            contenders["baseline python"] = lambda: timed(
                [str(base_runner), "--dsn", dsn, "--producer", str(base_run), "producer::"], env)
        if a.only:
            contenders = {k: v for k, v in contenders.items() if a.only in k or k == "baseline python"}
        rows = {}
        samples: dict[str, list[float]] = {name: [] for name in contenders}
        counts: dict[str, int] = {}
        # Round-robin: run i of every contender before run i+1 of any, so a change in the
        # machine's load falls on all of them alike.
        for _ in range(a.runs):
            for name, fn in contenders.items():
                dt, rep = fn()
                samples[name].append(dt)
                counts[name] = passed(rep, "adapter::" if name == "adapter-protocol" else "producer::")
        for name in contenders:
            rows[name] = (counts[name], statistics.median(samples[name]))
        try:
            old = old_check_producer(dsn)
            times, n = [], 0
            for _ in range(a.runs):
                dt, n = old()
                times.append(dt)
            rows["check_producer-old"] = (n, statistics.median(times))
        except Exception as e:  # the old engine may not load against a future package
            print(f"check_producer-old: not measured ({type(e).__name__}: {e})")
    base = rows.get("check_producer-old")
    line = rows.get("baseline python")
    print(f"{'contender':<28} {'cases':>6} {'median s':>9} {'cases/s':>9} {'ms/case':>8} {'vs old':>7} {'time/case vs baseline':>22}")
    for name, (n, t) in rows.items():
        rate = n / t if t else 0.0
        ratio = f"{rate / (base[0] / base[1]):.2f}x" if base and base[0] and name.startswith(("producer", "check")) else "-"
        per_case = 1000 * t / n if n else 0.0
        vs = "-"
        if line and line[0] and n and name == "producer-engine python":
            vs = f"{(t / n) / (line[1] / line[0]):.2f}x"
        print(f"{name:<28} {n:>6} {t:>9.2f} {rate:>9.0f} {per_case:>8.2f} {ratio:>7} {vs:>22}")


if __name__ == "__main__":
    main()
