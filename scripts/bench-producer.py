#!/usr/bin/env python3
"""Producer-path throughput, measured side by side in one run (docs/benchmarks.md, P8, P9).

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
                     clean up), as many cases in flight as L's hello declares (max_in_flight);
                     build the examples first (`examples/producers/L/run --build`).
  one-at-a-time L    the same with `--test-threads 1`: one case in flight and every case cleaned
                     up at once, as the engine ran before ADR 0057 (the baseline the issue keeps
                     behind a flag); the ratio column shows the engine's gain on L.
  check_producer-old the previous release's Python `check_producer` (its own engine, SQL and
                     judge in Python), loaded from git history, with a psycopg insert callable.
  baseline python    with --baseline DIR: DIR is a checkout of an earlier commit with its
                     release runner built (DIR/target/release/awa-conformance, or
                     CARGO_TARGET_DIR given as --baseline-target); that runner on that tree's
                     Python example, alternating run by run with today's, so the per-case time
                     of today's engine is compared with the earlier one's on the same machine
                     in the same minutes (the cases differ: the ratio is per case).
  replay L          with --replay: the limit to measure the engine against (issue: "the
                     producer engine at the producer's own speed"). The engine's run of L is
                     recorded (a pass-through between engine and producer keeps every request
                     line), then the same requests are fed to a fresh instance of L with the
                     engine left out, as many outstanding as its hello's max_in_flight, into a
                     scratch schema: the answers are checked only for being well-formed (JSON,
                     the seq of an outstanding request).
                     Printed: the requests, the producer's own time for them (start-up
                     excluded) and requests/s, and the engine's time for the same requests
                     as a multiple of it.
  phases             the engine contenders run with --timings: their time per case inside the
                     engine, by phase (set-up, reference, producer, read-back, judge, sweep,
                     other), median of the runs.
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


#: Sits between the engine and a producer, writing every line the engine sends to a file.
RECORDER = r'''
import subprocess, sys, threading
log = open(sys.argv[1], "a", encoding="utf-8")
child = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
def up():
    for line in child.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
t = threading.Thread(target=up, daemon=True)
t.start()
for line in sys.stdin:
    log.write(line)
    log.flush()
    child.stdin.write(line)
    child.stdin.flush()
child.stdin.close()
t.join(30)
sys.exit(child.wait(30))
'''


def replay(run: pathlib.Path, requests: list[str], dsn: str, schema: str) -> tuple[int, float]:
    """The recorded requests fed to a fresh `run` with the engine left out, as many outstanding
    as its hello's max_in_flight (1 when absent). Returns (requests, seconds from the first
    request to the last answer)."""
    env = {**os.environ, "AWA_CONFORMANCE_DSN": dsn, "AWA_CONFORMANCE_SCHEMA": schema}
    p = subprocess.Popen([str(run)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         bufsize=1, env=env, cwd=ROOT)
    hello = json.loads(p.stdout.readline())
    if hello.get("type") != "hello":
        sys.exit(f"replay {run}: no hello, got {hello}")
    window = int(hello.get("max_in_flight") or 1)
    todo = [ln for ln in requests if json.loads(ln).get("type") != "stop"]
    outstanding: set[int] = set()
    sent = answered = 0
    t0 = time.perf_counter()
    while answered < len(todo):
        while sent < len(todo) and len(outstanding) < window:
            line = todo[sent]
            outstanding.add(json.loads(line)["seq"])
            p.stdin.write(line if line.endswith("\n") else line + "\n")
            p.stdin.flush()
            sent += 1
        answer = json.loads(p.stdout.readline())
        if answer.get("seq") not in outstanding:
            sys.exit(f"replay {run}: answer {answer} answers no outstanding request")
        outstanding.discard(answer["seq"])
        answered += 1
    dt = time.perf_counter() - t0
    # stop, then end of input (as the engine does), bounded: a producer that still does not
    # exit is killed, and its time is already taken.
    p.stdin.write(json.dumps({"type": "stop"}) + "\n")
    p.stdin.close()
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(10)
    return answered, dt


def replay_rows(runner: str, dsn: str, runs: int, only: str | None) -> dict[str, tuple[int, float, float]]:
    """For each example: (requests, engine seconds, producer's own seconds), medians of `runs`,
    engine and replay alternating. A scratch schema keeps the replayed rows apart; it is
    uninstalled at the end."""
    schema, role = "awa_bench_replay", "awa_bench_replay_producer"
    target = ["--dsn", dsn, "--schema", schema, "--producer-role", role]
    subprocess.run([runner, "schema", "install", *target], check=True, capture_output=True)
    out = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            recorder = pathlib.Path(tmp) / "recorder.py"
            recorder.write_text(RECORDER)
            for lang in ("python", "node", "go", "java", "go/bulk"):
                run = ROOT / "examples" / "producers" / lang / "run"
                if not run.exists() or (only and only not in f"replay {lang}"):
                    continue
                engine, own, n = [], [], 0
                for i in range(runs):
                    log = pathlib.Path(tmp) / f"{lang.replace('/', '-')}-{i}.jsonl"
                    cmd = f"{sys.executable} {recorder} {log} {run}"
                    t0 = time.perf_counter()
                    subprocess.run([runner, *target, "--producer", cmd, "-q", "producer::"], check=True,
                                   cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    engine.append(time.perf_counter() - t0)
                    # JSON lines split on "\n" only: a JSON string may hold U+2028, which splitlines() splits.
                    lines = [ln for ln in log.read_text(encoding="utf-8").split("\n") if ln]
                    n, dt = replay(run, lines, dsn, schema)
                    own.append(dt)
                out[f"replay {lang}"] = (n, statistics.median(engine), statistics.median(own))
    finally:
        subprocess.run([runner, "schema", "uninstall", *target], check=False, capture_output=True)
    return out


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
    ap.add_argument("--replay", action="store_true",
                    help="also time each example on the engine's recorded requests, engine left out")
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
                    lambda run=run: timed([a.runner, "--dsn", dsn, "--producer", str(run), "--timings",
                                           "producer::"], env))
                contenders[f"one-at-a-time {lang}"] = (
                    lambda run=run: timed([a.runner, "--dsn", dsn, "--producer", str(run), "--timings",
                                           "--test-threads", "1", "producer::"], env))
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
        phases: dict[str, list[dict]] = {}
        # Round-robin: run i of every contender before run i+1 of any, so a change in the
        # machine's load falls on all of them alike.
        for _ in range(a.runs):
            for name, fn in contenders.items():
                dt, rep = fn()
                samples[name].append(dt)
                counts[name] = passed(rep, "adapter::" if name == "adapter-protocol" else "producer::")
                if "timings" in rep:
                    phases.setdefault(name, []).append(rep["timings"])
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
    print(f"{'contender':<28} {'cases':>6} {'median s':>9} {'cases/s':>9} {'ms/case':>8} {'vs old':>7} "
          f"{'vs one at a time':>16} {'time/case vs baseline':>22}")
    for name, (n, t) in rows.items():
        rate = n / t if t else 0.0
        ratio = f"{rate / (base[0] / base[1]):.2f}x" if base and base[0] and name.startswith(("producer", "check")) else "-"
        per_case = 1000 * t / n if n else 0.0
        vs = "-"
        if line and line[0] and n and name == "producer-engine python":
            vs = f"{(t / n) / (line[1] / line[0]):.2f}x"
        single = rows.get(name.replace("producer-engine", "one-at-a-time"))
        gain = "-"
        if name.startswith("producer-engine") and single and single[0] and single[1] and n:
            gain = f"{rate / (single[0] / single[1]):.2f}x"
        print(f"{name:<28} {n:>6} {t:>9.2f} {rate:>9.0f} {per_case:>8.2f} {ratio:>7} {gain:>16} {vs:>22}")
    if phases:
        # --timings: the engine's time per case, by phase (median of the runs).
        names = [p["phase"] for p in next(iter(phases.values()))[0]["phases"]]
        print()
        print(f"{'ms per case, by phase':<28} " + " ".join(f"{n:>9}" for n in names) + f" {'in cases':>9}")
        for name, runs in phases.items():
            cols = [statistics.median(next(p["per_case_ms"] for p in r["phases"] if p["phase"] == n) for r in runs)
                    for n in names]
            total = statistics.median(r["in_cases_ms"] / max(r["cases"], 1) for r in runs)
            print(f"{name:<28} " + " ".join(f"{c:>9.3f}" for c in cols) + f" {total:>9.3f}")
    if a.replay:
        print()
        print(f"{'the limit: the same requests, engine left out':<48} {'requests':>8} {'own s':>7} "
              f"{'own req/s':>9} {'engine s':>9} {'engine/own':>10} {'engine rate':>12}")
        for name, (n, engine, own) in replay_rows(a.runner, dsn, a.runs, a.only).items():
            # The engine's own run of the same cases from the table above, when it ran there:
            # the recorded run pays for the recorder's pass-through, which is not the engine's.
            lang = name.removeprefix("replay ")
            engine = rows.get(f"producer-engine {lang}", (0, engine))[1]
            print(f"{name:<48} {n:>8} {own:>7.2f} {n / own:>9.0f} {engine:>9.2f} {engine / own:>9.1f}x "
                  f"{100 * own / engine:>10.0f}%")


if __name__ == "__main__":
    main()
