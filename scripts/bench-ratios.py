#!/usr/bin/env python3
"""Run the core criterion benchmarks and print each contender/baseline ratio from one run.

Usage: scripts/bench-ratios.py [--no-run]   (--no-run reads the last results in target/criterion)
A ratio is baseline_time / core_time: above 1.0 the core is faster than its baseline.
"""
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CRIT = ROOT / "target" / "criterion"

# (group, contender, baseline, parameter, target ratio, what the target means)
PAIRS = [
    ("concurrency_digest", "core", "raw_sha256", "16", 0.9, "digest vs raw SHA-256 of a same-length input, 16 B key"),
    ("concurrency_digest", "core", "raw_sha256", "1024", 0.9, "digest vs raw SHA-256 of a same-length input, 1 KiB key"),
    ("ordering_hash64", "core", "naive_loop", "1024", 2.0, "ordering hash64 vs the byte-at-a-time loop, 1 KiB key"),
    ("unique_key", "core", "serde_json_blake3", None, 0.8, "unique_key vs serde_json::to_vec + BLAKE3, ~1.4 KiB args"),
]


def mean_ns(group: str, name: str, param: str | None) -> float:
    base = CRIT / group / name
    if param is None:
        params = [p for p in base.iterdir() if p.is_dir() and p.name != "report"]
        if len(params) != 1:
            sys.exit(f"expected one parameter under {base}, found {[p.name for p in params]}")
        base = params[0]
    else:
        base = base / param
    est = json.loads((base / "new" / "estimates.json").read_text())
    return est["mean"]["point_estimate"]


def main() -> int:
    if "--no-run" not in sys.argv:
        subprocess.run(
            ["cargo", "bench", "-p", "awa-conformance-core", "--bench", "core", "--",
             "--warm-up-time", "2", "--measurement-time", "5"],
            cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    ok = True
    print(f"{'benchmark':<62} {'core':>10} {'baseline':>10} {'ratio':>7} {'target':>7}")
    for group, core, baseline, param, target, what in PAIRS:
        c, b = mean_ns(group, core, param), mean_ns(group, baseline, param)
        ratio = b / c
        ok &= ratio >= target
        flag = "" if ratio >= target else "  (below target)"
        print(f"{what:<62} {c:>8.0f}ns {b:>8.0f}ns {ratio:>6.2f}x {target:>6.1f}x{flag}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
