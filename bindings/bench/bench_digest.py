"""Benchmark: concurrency_digest vs hashlib.sha256 on the same pre-image, and unique_key throughput.

Run after building (e.g. bindings/run-tests.sh, or `maturin develop --release`):

    python bindings/bench/bench_digest.py [--number N] [--repeat R]

Timings are best-of-R (timeit), measured side by side in one process. Not a test: nothing
here asserts on speed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import timeit

import awa_conformance as ac

TAG = ac.CONCURRENCY_DOMAIN_TAG

# ~10 keys, nested: the shape of a typical job's args.
TYPICAL_ARGS = {
    "user_id": 123456789,
    "email": "someone@example.com",
    "template": "welcome_v2",
    "locale": "en-NZ",
    "send_at": "2026-11-29T07:00:00Z",
    "priority": 2,
    "dry_run": False,
    "score": 0.875,
    "tags": ["onboarding", "email", "batch-7"],
    "context": {"plan": "pro", "seats": 12, "features": {"sso": True, "audit": False}},
}


def best(stmt, number: int, repeat: int) -> float:
    """Best seconds per call over `repeat` runs of `number` calls."""
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--number", type=int, default=200_000, help="calls per timing run")
    ap.add_argument("--repeat", type=int, default=7, help="timing runs; the best is reported")
    a = ap.parse_args()

    key = os.urandom(16)
    pre = TAG + key
    # The functions must agree before their speed is worth comparing.
    assert ac.concurrency_digest(key) == hashlib.sha256(pre).digest()
    sha = hashlib.sha256
    digest = ac.concurrency_digest

    t_ours = best(lambda: digest(key), a.number, a.repeat)
    t_pre = best(lambda: sha(pre).digest(), a.number, a.repeat)
    t_concat = best(lambda: sha(TAG + key).digest(), a.number, a.repeat)

    uk = ac.unique_key
    n_uk = max(a.number // 4, 1)
    t_uk = best(lambda: uk("send_email", queue="email", args=TYPICAL_ARGS), n_uk, a.repeat)
    t_cj = best(lambda: ac.canonical_json(TYPICAL_ARGS), n_uk, a.repeat)

    print(f"python {platform.python_version()} on {platform.machine()}, awa_conformance {ac.__version__}")
    print(f"best of {a.repeat} x {a.number} calls")
    print(f"concurrency_digest(16-byte key)            {t_ours * 1e9:8.1f} ns/call")
    print(f"hashlib.sha256(tag+key pre-built).digest() {t_pre * 1e9:8.1f} ns/call")
    print(f"hashlib.sha256(TAG + key).digest()         {t_concat * 1e9:8.1f} ns/call")
    print(f"ratio concurrency_digest / sha256(pre-built)  {t_ours / t_pre:.2f}x  (target <= 1.5x)")
    print(f"ratio concurrency_digest / sha256(TAG + key)  {t_ours / t_concat:.2f}x")
    print(f"unique_key(kind, queue, 10-key nested args) {t_uk * 1e6:8.2f} us/call  ({1 / t_uk:,.0f}/s)")
    print(f"canonical_json(same args)                   {t_cj * 1e6:8.2f} us/call  ({1 / t_cj:,.0f}/s)")


if __name__ == "__main__":
    main()
