#!/usr/bin/env python3
"""Reference producer adapter for `awa-conformance --adapter` (docs/adapter-protocol.md).

Speaks the JSON-lines protocol on stdin/stdout and implements every family it declares itself,
from docs/contract.md, the way a third-party producer would: it never imports the kit (CI
fails if it does), so its answers are an independent check of the vectors. Standard library
only, plus the `blake3` PyPI package for unique_key (BLAKE3 is not in hashlib); without that
package unique_key is not declared and the runner reports its vectors not applicable.

Run:  awa-conformance --adapter "python3 examples/adapters/python/adapter.py" adapter::
"""

import decimal
import hashlib
import json
import math
import struct
import sys

PROTOCOL = 1
MASK64 = (1 << 64) - 1
TAG = b"awa:concurrency_key:v1\x00"  # ADR 0006: 22 ASCII bytes, then one NUL
OFFSET = 0xCBF29CE484222325  # released ordering hash: FNV offset basis and prime,
PRIME = 0x100000001B3  # combined multiply-then-ADD (not FNV-1/FNV-1a)
PARTITION_DOMAIN = 0x9D4D1B2F53A70C91
STATES = ["scheduled", "available", "running", "completed",
          "retryable", "failed", "cancelled", "waiting_external"]

MAX_DEPTH = 128  # contract §1: deeper nesting is rejected
MAX_KEY = 4096  # contract §10 (ZA003): longer ordering and concurrency keys are rejected


class Refused(Exception):
    """An input the contract refuses; answered as {"error": code} (capability `errors`)."""

    def __init__(self, code):
        super().__init__(code)
        self.code = code


def check_width(width):
    if not 1 <= width <= 64:
        raise Refused("invalid_width")
    return width

try:  # BLAKE3 for unique_key (contract §2); hashlib has no BLAKE3
    import blake3 as _blake3
except ImportError:
    _blake3 = None


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
    check_width(width)
    for key in (ordering_key, concurrency_key):
        if key is not None and len(key) > MAX_KEY:
            raise Refused("key_too_long")
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
    if not 1 <= inp["partitions"] <= 32767:
        raise Refused("invalid_partitions")
    p = partition_hash64(bytes.fromhex(inp["key_hex"])) % inp["partitions"]
    q = inp["logical_queue"] if p == 0 else "%s__p%d" % (inp["logical_queue"], p)
    return {"partition": p, "physical_queue": q}


def f_routing_precedence(inp):
    source, shard, digest = route(inp["width"], opt_key(inp["ordering_key_hex"]),
                                  opt_key(inp["concurrency_key_hex"]))
    return {"route_source": source, "enqueue_shard": shard,
            "concurrency_digest_hex": None if digest is None else digest.hex()}


def f_move_shard(inp):
    check_width(inp["destination_width"])
    if not 0 <= inp["retained_shard"] <= 63:
        raise Refused("invalid_shard")
    return {"shard": inp["retained_shard"] % inp["destination_width"]}


def f_unique_states(inp):
    mask = inp["mask"]
    return {"bits": "".join("1" if mask & (1 << i) else "0" for i in range(8)),
            "states": [s for i, s in enumerate(STATES) if mask & (1 << i)]}


# --- canonical JSON (contract §1) over the vectors' typed values (ADR 0002) -------------------

_ESCAPES = {0x22: b'\\"', 0x5C: b"\\\\", 0x08: b"\\b", 0x0C: b"\\f", 0x0A: b"\\n", 0x0D: b"\\r",
            0x09: b"\\t"}


def cj_string(text):
    out = bytearray(b'"')
    for b in text.encode("utf-8"):
        if b in _ESCAPES:
            out += _ESCAPES[b]
        elif b < 0x20:
            out += b"\\u%04x" % b
        else:
            out.append(b)
    out += b'"'
    return bytes(out)


def cj_float(v):
    """Shortest round-trip digits (Python's repr: nearest, ties to even) in the §1 layout."""
    if math.isnan(v) or math.isinf(v):
        return b"null"
    sign = "-" if math.copysign(1.0, v) < 0 else ""
    if v == 0:
        digits, k = "0", 1
    else:
        # repr's digits as an integer times a power of ten, trailing zeros dropped.
        _, ds, e = decimal.Decimal(repr(abs(v))).as_tuple()
        digits = "".join(map(str, ds)).lstrip("0")
        stripped = digits.rstrip("0")
        e += len(digits) - len(stripped)
        digits = stripped
        k = e + len(digits)  # |v| = 0.d1...dL x 10^k
    n = len(digits)
    if k - n >= 0 and k <= 16:
        body = digits + "0" * (k - n) + ".0"
    elif 0 < k <= 16:
        body = digits[:k] + "." + digits[k:]
    elif -5 < k <= 0:
        body = "0." + "0" * (-k) + digits
    else:
        x = k - 1
        body = digits[0] + ("." + digits[1:] if n > 1 else "") + "e" + ("+" if x >= 0 else "-") + str(abs(x))
    return (sign + body).encode("ascii")


def canonical(typed, depth=0):
    """Awa canonical JSON v1 bytes of one typed value."""
    t, val = typed["type"], typed.get("value")
    if t == "null":
        return b"null"
    if t == "bool":
        return b"true" if val else b"false"
    if t == "int":
        return str(int(val)).encode("ascii")
    if t == "float":
        return cj_float(struct.unpack(">d", bytes.fromhex(typed["bits"]))[0])
    if t == "string":
        return cj_string(val)
    if t == "nested":
        # Release v1.1's compact form of a deep chain (ADR 0020): `depth` single-element
        # arrays, or single-member objects under `key`, around `value`.
        inner = typed["value"]
        for _ in range(typed["depth"]):
            if typed["container"] == "array":
                inner = {"type": "array", "value": [inner]}
            else:
                inner = {"type": "object", "value": [[typed["key"], inner]]}
        return canonical(inner, depth)
    if depth >= MAX_DEPTH:
        raise Refused("too_deep")
    if t == "array":
        return b"[" + b",".join(canonical(x, depth + 1) for x in val) + b"]"
    if t == "object":
        last = {}
        for key, member in val:  # duplicate keys: the last occurrence wins
            last[key] = member
        members = sorted(last.items(), key=lambda kv: kv[0].encode("utf-8"))
        return b"{" + b",".join(cj_string(key) + b":" + canonical(m, depth + 1)
                                for key, m in members) + b"}"
    raise ValueError("unknown typed value %r" % t)


def f_canonical_json(inp):
    data = canonical(inp["value"])
    return {"canonical_hex": data.hex(), "canonical_text": data.decode("utf-8")}


def f_unique_key(inp):
    # contract §2: kind, then 0x00 + field for each present field; args null = by_args off.
    pre = inp["kind"].encode("utf-8")
    if inp["queue"] is not None:
        pre += b"\x00" + inp["queue"].encode("utf-8")
    if inp["args"] is not None:
        pre += b"\x00" + canonical(inp["args"])
    if inp["period_bucket"] is not None:
        pre += b"\x00" + struct.pack("<q", int(inp["period_bucket"]))
    return {"unique_key_hex": _blake3.blake3(pre).digest()[:16].hex()}


FAMILIES = {
    "concurrency_digest": f_concurrency_digest,
    "concurrency_shard": f_concurrency_shard,
    "ordering_shard": f_ordering_shard,
    "partition": f_partition,
    "routing_precedence": f_routing_precedence,
    "move_shard": f_move_shard,
    "unique_states": f_unique_states,
    "canonical_json": f_canonical_json,
}
if _blake3 is not None:
    FAMILIES["unique_key"] = f_unique_key
else:
    print("adapter.py: the blake3 package is not installed; unique_key is not declared",
          file=sys.stderr)


def send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")


def main():
    send({"type": "hello", "protocol": PROTOCOL,
          "implementation": {"name": "awa-conformance python reference adapter",
                             "version": "1"},
          # `nested`: this adapter decodes ADR 0020's compact nested form (typed(), above), so
          # at protocol 1 it asks to be sent the vectors written in it (ADR 0053).
          "capabilities": sorted(FAMILIES) + ["errors", "nested"]})
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
            send({"seq": seq, "output": fn(msg["input"])})
        except Refused as r:
            send({"seq": seq, "output": {"error": r.code}})
        except Exception as e:  # report, keep serving: one bad vector is one finding
            send({"seq": seq, "error": "%s: %s" % (type(e).__name__, e)})
    sys.stdout.flush()


if __name__ == "__main__":
    main()
