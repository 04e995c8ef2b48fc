#!/usr/bin/env python3
"""Reference producer adapter for `awa-conformance --adapter` (docs/adapter-protocol.md).

Speaks the JSON-lines protocol on stdin/stdout. The routing families are implemented here in
pure Python (standard library only), the way a third-party producer would write them;
canonical_json and unique_key need BLAKE3 and Awa's canonical JSON, so they are declared only
when the `awa_conformance` Python bindings are importable (and then computed by them).

Run:  awa-conformance --adapter "python3 examples/adapters/python/adapter.py" adapter::
Env:  AWA_ADAPTER_BREAK=<family>  deliberately answer that family wrongly (used by the
      runner's tests to prove a wrong producer fails).
"""

import hashlib
import json
import os
import sys

PROTOCOL = 1
MASK64 = (1 << 64) - 1
TAG = b"awa:concurrency_key:v1\x00"  # ADR 0001 D1: 22 ASCII bytes, then one NUL
OFFSET = 0xCBF29CE484222325  # released ordering hash: FNV offset basis and prime,
PRIME = 0x100000001B3  # combined multiply-then-ADD (not FNV-1/FNV-1a)
PARTITION_DOMAIN = 0x9D4D1B2F53A70C91
STATES = ["scheduled", "available", "running", "completed",
          "retryable", "failed", "cancelled", "waiting_external"]

try:  # optional: the PyO3 bindings of the reference core
    import awa_conformance as _bindings
except ImportError:  # pure-Python routing only
    _bindings = None


def concurrency_digest(key: bytes) -> bytes:
    return hashlib.sha256(TAG + key).digest()


def concurrency_shard(digest: bytes, width: int) -> int:
    return int.from_bytes(digest[:8], "big") % width


def ordering_hash64(key: bytes) -> int:
    h = OFFSET
    for b in key:
        h = (h * PRIME + b) & MASK64
    return h


def partition_hash64(key: bytes) -> int:
    v = ordering_hash64(key) ^ PARTITION_DOMAIN
    v ^= v >> 30
    v = (v * 0xBF58476D1CE4E5B9) & MASK64
    v ^= v >> 27
    v = (v * 0x94D049BB133111EB) & MASK64
    return v ^ (v >> 31)


def opt_key(hex_or_none):
    return None if hex_or_none is None else bytes.fromhex(hex_or_none)


def route(width, ordering_key, concurrency_key):
    source_key = concurrency_key if concurrency_key is not None else ordering_key
    digest = None if source_key is None else concurrency_digest(source_key)
    if ordering_key is not None:
        return "ordering_key", ordering_hash64(ordering_key) % width, digest
    if digest is not None:
        return "concurrency_key", concurrency_shard(digest, width), digest
    return "rotor", None, None  # any shard in [0, width) conforms


def f_concurrency_digest(inp):
    return {"digest_hex": concurrency_digest(bytes.fromhex(inp["key_hex"])).hex()}


def f_concurrency_shard(inp):
    d = concurrency_digest(bytes.fromhex(inp["key_hex"]))
    return {"shards": [concurrency_shard(d, w) for w in range(1, 65)]}


def f_ordering_shard(inp):
    h = ordering_hash64(bytes.fromhex(inp["key_hex"]))
    return {"shards": [h % w for w in range(1, 65)]}


def f_partition(inp):
    p = partition_hash64(bytes.fromhex(inp["key_hex"])) % inp["partitions"]
    q = inp["logical_queue"] if p == 0 else "%s__p%d" % (inp["logical_queue"], p)
    return {"partition": p, "physical_queue": q}


def f_routing_precedence(inp):
    source, shard, digest = route(inp["width"], opt_key(inp["ordering_key_hex"]),
                                  opt_key(inp["concurrency_key_hex"]))
    return {"route_source": source, "enqueue_shard": shard,
            "concurrency_digest_hex": None if digest is None else digest.hex()}


def f_move_shard(inp):
    return {"shard": inp["retained_shard"] % inp["destination_width"]}


def f_unique_states(inp):
    mask = inp["mask"]
    return {"bits": "".join("1" if mask & (1 << i) else "0" for i in range(8)),
            "states": [s for i, s in enumerate(STATES) if mask & (1 << i)]}


def f_canonical_json(inp):
    data = _bindings.canonical_json(_bindings.decode_typed(inp["value"]))
    return {"canonical_hex": data.hex(), "canonical_text": data.decode("utf-8", "replace")}


def f_unique_key(inp):
    # args null = by_args off; a typed JSON null is a value (the bindings' JSON_NULL).
    if inp["args"] is None:
        args = None
    elif inp["args"].get("type") == "null":
        args = _bindings.JSON_NULL
    else:
        args = _bindings.decode_typed(inp["args"])
    bucket = None if inp["period_bucket"] is None else int(inp["period_bucket"])
    key = _bindings.unique_key(inp["kind"], queue=inp["queue"], args=args, period_bucket=bucket)
    return {"unique_key_hex": key.hex()}


FAMILIES = {
    "concurrency_digest": f_concurrency_digest,
    "concurrency_shard": f_concurrency_shard,
    "ordering_shard": f_ordering_shard,
    "partition": f_partition,
    "routing_precedence": f_routing_precedence,
    "move_shard": f_move_shard,
    "unique_states": f_unique_states,
}
if _bindings is not None:
    FAMILIES["canonical_json"] = f_canonical_json
    FAMILIES["unique_key"] = f_unique_key


def broken(family, output):
    """Corrupt one answer (AWA_ADAPTER_BREAK): proves the runner notices a wrong producer."""
    if os.environ.get("AWA_ADAPTER_BREAK") != family:
        return output
    for k, v in output.items():
        if isinstance(v, str) and v:
            output[k] = ("0" if v[0] != "0" else "1") + v[1:]
            return output
        if isinstance(v, int):
            output[k] = v + 1
            return output
        if isinstance(v, list) and v:
            output[k] = [x + 1 if isinstance(x, int) else x for x in v]
            return output
    return output


def send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")


def main():
    version = getattr(_bindings, "__version__", "stdlib") if _bindings else "stdlib"
    send({"type": "hello", "protocol": PROTOCOL,
          "implementation": {"name": "awa-conformance python reference adapter",
                             "version": version},
          "capabilities": sorted(FAMILIES)})
    sys.stdout.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        if msg.get("type") == "stop":
            break
        seq, family = msg["seq"], msg["family"]
        fn = FAMILIES.get(family)
        if fn is None:
            send({"seq": seq, "skipped": True, "reason": "family %s not implemented" % family})
            continue
        try:
            send({"seq": seq, "output": broken(family, fn(msg["input"]))})
        except Exception as e:  # report, keep serving: one bad vector is one finding
            send({"seq": seq, "error": "%s: %s" % (type(e).__name__, e)})
    sys.stdout.flush()


if __name__ == "__main__":
    main()
