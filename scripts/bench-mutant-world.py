#!/usr/bin/env python3
"""What a SQL mutant's world costs: a fresh `schema install` against a copy of a template
database, each beside the `sql::` run every mutant then makes, side by side in one run.

Usage: scripts/bench-mutant-world.py [--dsn URL] [--runner PATH] [--baseline-runner PATH] [--rounds 5]

Issue 30 asked whether a template database installed once (`CREATE DATABASE … TEMPLATE`)
would prove the kill matrix's rows cheaper than runner/tests/db_mutants.rs's world per mutant
(a database, then `schema install`). This measures the three parts of one mutant's cost in
interleaved rounds (so machine noise hits each alike) and prints each median and the ratios
that decide it: what the template would save is the install minus the copy, against the suite
run that stays. With --baseline-runner (another build of the runner, e.g. the last commit's),
each round also runs the same `sql::` set with it on the same database, interleaved, and the
ratio of the two suite runs is printed: a change to the suites' cost measured side by side.

Needs psycopg 3, a superuser DSN (default $DATABASE_URL) and the runner (default the release
build, target/release/awa-conformance). Every database and role it creates is named
awa_bench_mw_<random> and dropped at the end, also on error. Exit status: 0 when every
measurement ran, 1 on any error. Nothing printed contains the DSN.
"""
import argparse
import os
import pathlib
import secrets
import statistics
import subprocess
import sys
import time

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_RUNNER = ROOT / "target" / "release" / "awa-conformance"


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dsn", default=os.environ.get("DATABASE_URL"))
    ap.add_argument("--runner", default=str(DEFAULT_RUNNER))
    ap.add_argument("--baseline-runner", help="another runner build whose sql:: run is timed beside")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    if not a.dsn:
        print("bench-mutant-world: no DSN: pass --dsn or set DATABASE_URL", file=sys.stderr)
        return 1
    if a.baseline_runner and not pathlib.Path(a.baseline_runner).is_file():
        print(f"bench-mutant-world: no baseline runner at {a.baseline_runner}", file=sys.stderr)
        return 1
    if not pathlib.Path(a.runner).is_file():
        print(f"bench-mutant-world: no runner at {a.runner}: cargo build --release -p awa-conformance",
              file=sys.stderr)
        return 1
    prefix = f"awa_bench_mw_{secrets.token_hex(4)}"
    made: list[str] = []
    admin = psycopg.connect(a.dsn, autocommit=True)

    def create(name: str, template: str | None = None) -> str:
        q = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if template:
            q += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
        made.append(name)
        admin.execute(q)
        return make_conninfo(a.dsn, dbname=name)

    def install(name: str) -> None:
        dsn = create(name)
        subprocess.run([a.runner, "schema", "install", "--dsn", dsn, "--schema", prefix,
                        "--producer-role", f"{prefix}_producer"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def suite(name: str, runner: str | None = None) -> None:
        # Exit 0 (the reference passes): every case ran, as in a mutant's exact run.
        subprocess.run([runner or a.runner, "--dsn", make_conninfo(a.dsn, dbname=name), "--schema", prefix,
                        "--producer-role", f"{prefix}_producer", "-q", "sql::"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    times: dict[str, list[float]] = {"install": [], "template copy": [], "sql:: run": []}
    try:
        template = f"{prefix}_tmpl"
        install(template)
        for r in range(a.rounds):
            times["install"].append(timed(lambda: install(f"{prefix}_i{r}")))
            times["template copy"].append(timed(lambda: create(f"{prefix}_c{r}", template)))
            times["sql:: run"].append(timed(lambda: suite(f"{prefix}_i{r}")))
            if a.baseline_runner:
                times.setdefault("sql:: baseline", []).append(
                    timed(lambda: suite(f"{prefix}_i{r}", a.baseline_runner)))
            print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    except (subprocess.CalledProcessError, psycopg.Error) as e:
        detail = getattr(e, "stderr", b"") or b""
        print(f"bench-mutant-world: {type(e).__name__}: {detail.decode(errors='replace') or e}",
              file=sys.stderr)
        return 1
    finally:
        for name in reversed(made):
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        for role in (f"{prefix}_producer", f"{prefix}_owner"):
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
        admin.close()
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        print(f"{k:>14}: median {v * 1000:8.1f} ms over {a.rounds} rounds")
    saved = med["install"] - med["template copy"]
    per_mutant = med["install"] + med["sql:: run"]
    print(f"template copy / install: {med['template copy'] / med['install']:.2f}")
    print(f"saved per mutant by a template: {saved * 1000:.1f} ms = "
          f"{100 * saved / per_mutant:.1f}% of a mutant's world and run ({per_mutant:.2f} s)")
    if a.baseline_runner:
        print(f"sql:: run / baseline's: {med['sql:: run'] / med['sql:: baseline']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
