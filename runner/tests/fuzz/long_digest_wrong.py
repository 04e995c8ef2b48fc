#!/usr/bin/env python3
"""A wrong adapter for the fuzz tests: the Python example adapter, except that its
concurrency_digest answers are corrupted for keys longer than 1024 bytes, a bug that no short
key shows; with the argument `crash` it exits instead of answering such a request. It proxies
the adapter protocol between the runner and the example adapter."""

import json
import os
import subprocess
import sys
import threading

EXAMPLE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "adapters", "python", "adapter.py"
)

child = subprocess.Popen(
    [sys.executable, EXAMPLE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8"
)
long_keys = set()
lock = threading.Lock()


def forward_requests():
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            msg = {}
        key_hex = (msg.get("input") or {}).get("key_hex") or ""
        if msg.get("family") == "concurrency_digest" and len(key_hex) > 2 * 1024:
            if sys.argv[1:] == ["crash"]:
                os._exit(3)
            with lock:
                long_keys.add(msg.get("seq"))
        # Recorded before it is forwarded, so the answer cannot overtake it.
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()


threading.Thread(target=forward_requests, daemon=True).start()
for line in child.stdout:
    msg = json.loads(line)
    with lock:
        wrong = msg.get("seq") in long_keys
    digest = (msg.get("output") or {}).get("digest_hex")
    if wrong and digest:
        msg["output"]["digest_hex"] = ("1" if digest[0] == "0" else "0") + digest[1:]
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()
sys.exit(child.wait())
