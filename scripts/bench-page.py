#!/usr/bin/env python3
"""The results page's size and load time in a real browser, for 10 reports of ~2,500 cases.

Usage: scripts/bench-page.py REPORT.json... [--copies N] [--runs 5]
Builds one page from N copies of each given report (default: enough copies for 10 reports) with
`awa-conformance report html` (AWA_CONFORMANCE_BIN, default target/release/awa-conformance),
then opens it in headless Chromium (CHROMIUM, default /usr/bin/chromium) through playwright RUNS
times and prints the page's size, its gzip size, and the median time from navigation to the
drawn case list (body[data-ready]) and to the load event. A measurement, not a test.
"""
import argparse
import gzip
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--copies", type=int)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    copies = a.copies or max(1, 10 // len(a.reports))
    runner = os.environ.get("AWA_CONFORMANCE_BIN", str(ROOT / "target/release/awa-conformance"))
    args = [f"copy {c} of {Path(r).stem}={r}" for c in range(copies) for r in a.reports]
    cases = sum(len(__import__("json").loads(Path(r).read_text())["cases"]) for r in a.reports) * copies
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        subprocess.run([runner, "report", "html", "--out", tmp, *args], check=True, capture_output=True)
        build = time.perf_counter() - t0
        page = Path(tmp) / "index.html"
        size = page.stat().st_size
        zsize = len(gzip.compress(page.read_bytes()))
        ready, load = [], []
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), args=["--no-sandbox"])
            for _ in range(a.runs):
                pg = b.new_page()
                t0 = time.perf_counter()
                pg.goto(page.as_uri())
                load.append(time.perf_counter() - t0)
                pg.wait_for_selector("body[data-ready=true]")
                ready.append(time.perf_counter() - t0)
                pg.close()
            b.close()
    print(f"reports: {len(args)}, cases: {cases}, build: {build:.2f} s")
    print(f"page: {size / 1e6:.2f} MB ({zsize / 1e6:.2f} MB gzipped)")
    print(f"load event: median {statistics.median(load) * 1000:.0f} ms (min {min(load) * 1000:.0f}, max {max(load) * 1000:.0f})")
    print(f"cases drawn: median {statistics.median(ready) * 1000:.0f} ms (min {min(ready) * 1000:.0f}, max {max(ready) * 1000:.0f})")


if __name__ == "__main__":
    main()
