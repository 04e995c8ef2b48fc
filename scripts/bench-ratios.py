#!/usr/bin/env python3
"""Run the core criterion benchmarks and print each contender/baseline ratio from one run.

Usage: scripts/bench-ratios.py [--runs N] [--no-run]
  --runs N   run the whole criterion suite N times (default 3) and report each pair's median
             ratio with its range: on a shared VM a single run drifts by +-10%.
  --no-run   read the last results in target/criterion (one run).
A ratio is baseline_time / core_time: above 1.0 the core is faster than its baseline.
"""
import json
import pathlib
import statistics
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


def run_suite() -> None:
    subprocess.run(
        ["cargo", "bench", "-p", "awa-conformance-core", "--bench", "core", "--",
         "--warm-up-time", "2", "--measurement-time", "5"],
        cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def main() -> int:
    runs = 1
    if "--runs" in sys.argv:
        runs = int(sys.argv[sys.argv.index("--runs") + 1])
    elif "--no-run" not in sys.argv:
        runs = 3
    samples: list[list[tuple[float, float]]] = [[] for _ in PAIRS]
    for _ in range(runs if "--no-run" not in sys.argv else 1):
        if "--no-run" not in sys.argv:
            run_suite()
        for i, (group, core, baseline, param, _target, _what) in enumerate(PAIRS):
            samples[i].append((mean_ns(group, core, param), mean_ns(group, baseline, param)))
    ok = True
    print(f"{'benchmark':<62} {'core':>9} {'baseline':>9} {'ratio':>7} {'range':>13} {'target':>7}")
    for (group, core, baseline, param, target, what), runs_of in zip(PAIRS, samples):
        ratios = [b / c for c, b in runs_of]
        ratio = statistics.median(ratios)
        c = statistics.median(c for c, _ in runs_of)
        b = statistics.median(b for _, b in runs_of)
        ok &= ratio >= target
        flag = "" if ratio >= target else "  (below target)"
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}x"
        print(f"{what:<62} {c:>7.0f}ns {b:>7.0f}ns {ratio:>6.2f}x {spread:>13} {target:>6.1f}x{flag}")
    print(f"({len(samples[0])} run(s); ratio = median of per-run baseline/core)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
