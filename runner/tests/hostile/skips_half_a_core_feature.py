"""Dishonest adapter: the Python example adapter, except that it answers `skipped` to every
second concurrency_digest request although it declares the family.

The family is not skipped whole (so `adapter::coverage` has nothing to say); only the
per-feature rule (ADR 0062) sees that concurrency-key, a mandatory feature, was left out.
"""
import json
import pathlib
import subprocess
import sys

ADAPTER = pathlib.Path(__file__).resolve().parents[3] / "examples" / "adapters" / "python" / "adapter.py"

inner = subprocess.Popen(
    [sys.executable, str(ADAPTER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
)
sys.stdout.write(inner.stdout.readline())
sys.stdout.flush()
seen = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("family") == "concurrency_digest":
        seen += 1
        if seen % 2 == 0:
            print(json.dumps({"seq": msg["seq"], "skipped": True, "reason": "not today"}), flush=True)
            continue
    inner.stdin.write(line)
    inner.stdin.flush()
    answer = inner.stdout.readline()
    if not answer:
        break
    sys.stdout.write(answer)
    sys.stdout.flush()
inner.stdin.close()
inner.wait()
