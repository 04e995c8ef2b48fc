#!/usr/bin/env python3
"""Example Awa producer in Python (psycopg 3) speaking the producer protocol (`--producer`).

An *example*, not a supported client: it shows how a producer written from docs/contract.md
and docs/languages.md enqueues through `<schema>.insert_job`, and lets `awa-conformance
--producer examples/producers/python/run producer::` check what it really stores. It never
imports the kit (CI fails if it does): canonical JSON (contract §1), the unique_key pre-image
and BLAKE3 (§2, the `blake3` PyPI package) and partition routing (§5) are its own code.

Protocol (docs/adapter-protocol.md, "Enqueue: producers"): one hello line, then one answer per
`enqueue` request, until `{"type":"stop"}` or EOF. Logs go to stderr, never to stdout. The hello
declares `max_in_flight`: up to that many requests are taken before the first is answered, each
by a worker thread with a connection of its own, and each answer carries its request's seq.

Environment:
  AWA_CONFORMANCE_DSN     the database to enqueue into (required)
  AWA_CONFORMANCE_SCHEMA  the contract schema (default; every request names it too)
"""

from __future__ import annotations

import json
import math
import os
import queue
import struct
import sys
import threading
from typing import Any

import blake3
import psycopg
from psycopg import sql

PROTOCOL = 3  # protocol 3: a job carries metadata and max_attempts; run_at any offset
NAME = "awa-conformance example producer (python, psycopg 3)"
VERSION = "1"
MAX_KEY = 4096  # contract §8: longer ordering/concurrency keys are refused (ZA003)
MAX_DEPTH = 128  # contract §1: a value inside 129 nested containers is refused
MAX_PARTITIONS = 32767  # contract §5
MASK64 = (1 << 64) - 1
OFFSET = 0xCBF29CE484222325  # contract §4: multiply-then-add over the FNV constants
PRIME = 0x100000001B3
PARTITION_DOMAIN = 0x9D4D1B2F53A70C91  # contract §5
IN_FLIGHT = 8  # requests answered at once (hello.max_in_flight): a worker and a connection each



class Refused(Exception):
    """A request this producer refuses before calling the database (answered as `refused`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


# --- typed args (ADR 0002) -> Python values ------------------------------------------------------


def decode_typed(typed: dict[str, Any]) -> Any:
    """The Python value of one ADR 0002 typed value (floats stay float, ints stay int)."""
    t = typed["type"]
    if t == "null":
        return None
    if t == "bool":
        return bool(typed["value"])
    if t == "int":
        return int(typed["value"])
    if t == "float":
        # The bits, not the decimal text: "nan"/"-0.0" and every payload survive exactly.
        return struct.unpack(">d", bytes.fromhex(typed["bits"]))[0]
    if t == "string":
        return typed["value"]
    if t == "array":
        return [decode_typed(x) for x in typed["value"]]
    if t == "object":
        # A Python dict keeps the LAST value of a repeated key, as the contract requires.
        return {key: decode_typed(member) for key, member in typed["value"]}
    if t == "nested":
        # v1.1's compact form of a deep chain (ADR 0020): `depth` containers around `value`.
        inner = decode_typed(typed["value"])
        for _ in range(typed["depth"]):
            inner = [inner] if typed["container"] == "array" else {typed["key"]: inner}
        return inner
    raise ValueError(f"unknown typed value {t!r}")


# --- Awa canonical JSON v1 (contract §1) ---------------------------------------------------------

_ESCAPES = {0x22: b'\\"', 0x5C: b"\\\\", 0x08: b"\\b", 0x0C: b"\\f", 0x0A: b"\\n",
            0x0D: b"\\r", 0x09: b"\\t"}


def _utf8(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")  # a lone surrogate raises here: refuse, never replace
    except UnicodeEncodeError as e:
        raise Refused("lone_surrogate", f"{what} holds a lone surrogate: {e}") from e


def _string(text: str) -> bytes:
    raw = _utf8(text, "a string in args")
    out = bytearray(b'"')
    for b in raw:
        if b in _ESCAPES:
            out += _ESCAPES[b]
        elif b < 0x20:
            out += b"\\u%04x" % b  # lowercase hex
        else:
            out.append(b)
    return bytes(out + b'"')


def _float(v: float) -> bytes:
    """repr()'s shortest round-trip digits (ties to even), laid out by the §1 table."""
    if math.isnan(v) or math.isinf(v):
        return b"null"
    sign = "-" if math.copysign(1.0, v) < 0 else ""
    if v == 0:
        digits, k = "0", 1
    else:
        mantissa, _, exp = repr(abs(v)).partition("e")
        whole, _, frac = mantissa.partition(".")
        digits = (whole + frac).lstrip("0")
        # |v| = 0.<whole+frac> x 10^(len(whole) + exp); leading zeros shift the point.
        k = len(whole) + int(exp or 0) - (len(whole + frac) - len(digits))
        digits = digits.rstrip("0")
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


def canonical_json(value: Any, depth: int = 0) -> bytes:
    """Awa canonical JSON v1 bytes of a Python value (dict, list, str, int, float, bool, None)."""
    if value is None:
        return b"null"
    if isinstance(value, bool):  # before int: bool is a subclass of int
        return b"true" if value else b"false"
    if isinstance(value, int):
        if not -(1 << 63) <= value <= MASK64:
            raise Refused("integer_out_of_range", f"integer {value} is outside [-2^63, 2^64-1]")
        return str(value).encode("ascii")
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return _string(value)
    if depth >= MAX_DEPTH:
        raise Refused("too_deep", f"args nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, list):
        return b"[" + b",".join(canonical_json(x, depth + 1) for x in value) + b"]"
    if isinstance(value, dict):
        members = sorted(((_utf8(k, "an args key"), k, v) for k, v in value.items()), key=lambda m: m[0])
        return b"{" + b",".join(_string(k) + b":" + canonical_json(v, depth + 1) for _, k, v in members) + b"}"
    raise TypeError(f"cannot encode {type(value).__name__} as canonical JSON")


# --- unique_key (§2), partitions (§5) ------------------------------------------------------------


def unique_preimage(kind: str, queue: str | None, args: bytes | None, period_bucket: int | None) -> bytes:
    """kind || 0x00 queue || 0x00 canonical args || 0x00 LE64(bucket), each part only if present."""
    pre = _utf8(kind, "kind")
    if queue is not None:
        pre += b"\x00" + _utf8(queue, "queue")
    if args is not None:
        pre += b"\x00" + args
    if period_bucket is not None:
        pre += b"\x00" + struct.pack("<q", period_bucket)
    return pre


def unique_key(preimage: bytes) -> bytes:
    return blake3.blake3(preimage).digest()[:16]


def _hash64(key: bytes) -> int:
    h = OFFSET
    for b in key:
        h = (h * PRIME + b) & MASK64
    return h


def partition_of(key: bytes, partitions: int) -> int:
    if partitions == 1:
        return 0
    v = _hash64(key) ^ PARTITION_DOMAIN
    v ^= v >> 30
    v = (v * 0xBF58476D1CE4E5B9) & MASK64
    v ^= v >> 27
    v = (v * 0x94D049BB133111EB) & MASK64
    return (v ^ (v >> 31)) % partitions


def physical_queue(logical: str, partition: int) -> str:
    return logical if partition == 0 else f"{logical}__p{partition}"


# --- one enqueue ----------------------------------------------------------------------------------


def _key(hex_or_none: str | None, field: str) -> bytes | None:
    if hex_or_none is None:
        return None
    key = bytes.fromhex(hex_or_none)
    # Refused before SQL; the database would refuse it too (ZA003): either answer conforms.
    if len(key) > MAX_KEY:
        raise Refused("key_too_long", f"{field} of {len(key)} bytes: keys are at most {MAX_KEY} bytes")
    return key


class Producer:
    """One connection (autocommit: each insert_job call is committed before the answer)."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.conn: psycopg.Connection[Any] | None = None

    def connection(self) -> psycopg.Connection[Any]:
        if self.conn is None or self.conn.closed or self.conn.broken:
            self.conn = psycopg.connect(self.dsn, autocommit=True)
        return self.conn

    def enqueue(self, schema: str, job: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Enqueue one logical job; returns (job id, trace). Raises Refused or psycopg.Error."""
        kind, queue = job["kind"], job["queue"]
        ordering_key = _key(job.get("ordering_key_hex"), "ordering_key")
        concurrency_key = _key(job.get("concurrency_key_hex"), "concurrency_key")

        partition = job.get("partition")
        if partition is not None:
            n = int(partition["partitions"])
            if not 1 <= n <= MAX_PARTITIONS:
                raise Refused("invalid_partitions", f"{n} partitions: PartitionedQueue takes 1..={MAX_PARTITIONS}")
            pkey = _key(partition["key_hex"], "partition key")
            queue = physical_queue(queue, partition_of(pkey, n))
            if ordering_key is None:
                # Released route_opts_by_key: the partition key travels as the ordering key.
                ordering_key = pkey

        args_doc = job.get("args")
        args_bytes = None
        if args_doc is not None:
            value = decode_typed(args_doc)
            args_bytes = canonical_json(value)
        # Metadata comes in the same typed form as args and is written the same way: its
        # canonical JSON text, so the jsonb stored holds exactly the numbers and strings asked.
        metadata_doc = job.get("metadata")
        metadata_bytes = None if metadata_doc is None else canonical_json(decode_typed(metadata_doc))

        trace: dict[str, Any] = {
            "canonical_args": None if args_bytes is None else args_bytes.decode("utf-8"),
            "physical_queue": queue,
        }
        key = None
        unique = job.get("unique")
        if unique is not None:
            if unique["by_args"]:
                hashed = args_bytes if args_bytes is not None else b"{}"  # p_args default
            else:
                hashed = None
            hq = None
            if unique["by_queue"]:
                hq = queue  # the physical queue (contract §2), not the logical one
            bucket = unique.get("period_bucket")
            pre = unique_preimage(kind, hq, hashed, None if bucket is None else int(bucket))
            key = unique_key(pre)
            trace["unique_preimage_hex"] = pre.hex()
            trace["unique_key_hex"] = key.hex()

        states = job.get("unique_states")
        # Refused before SQL; the database would refuse it too (22026): either answer conforms.
        if states is not None and len(states) != 8:
            raise Refused("unique_states_not_8_bits", f"unique_states {states!r} has {len(states)} bits, not 8")

        # Named arguments, each with its explicit type (insert_job has one signature); an
        # absent optional field is omitted so the function's default applies.
        fields: list[tuple[str, str, Any]] = [("p_kind", "::text", kind), ("p_queue", "::text", queue)]
        if args_bytes is not None:
            fields.append(("p_args", "::jsonb", args_bytes.decode("utf-8")))
        if job.get("priority") is not None:
            fields.append(("p_priority", "::smallint", job["priority"]))
        if job.get("max_attempts") is not None:
            fields.append(("p_max_attempts", "::smallint", job["max_attempts"]))
        if job.get("run_at") is not None:
            # The RFC 3339 text as sent: PostgreSQL parses the offset and the microseconds
            # itself (a round trip through datetime would be one more place to lose them).
            fields.append(("p_run_at", "::timestamptz", job["run_at"]))
        if metadata_bytes is not None:
            fields.append(("p_metadata", "::jsonb", metadata_bytes.decode("utf-8")))
        fields.append(("p_tags", "::text[]", list(job.get("tags") or [])))
        for name, value in (("p_unique_key", key), ("p_ordering_key", ordering_key),
                            ("p_concurrency_key", concurrency_key)):
            if value is not None:
                fields.append((name, "::bytea", value))  # bytes, never text
        if states is not None:
            # The 8-character text cast to varbit; never ::bit(8) (contract §3).
            fields.append(("p_unique_states", "::varbit", states))
        if job.get("opts") is not None:
            fields.append(("p_opts", "::jsonb", json.dumps(job["opts"], separators=(",", ":"))))

        call = sql.SQL("SELECT job_id FROM {}.insert_job({})").format(
            sql.Identifier(schema),
            sql.SQL(", ").join(sql.SQL(f"{name} => %s{cast}") for name, cast, _ in fields),
        )
        row = self.connection().execute(call, [v for _, _, v in fields]).fetchone()
        assert row is not None  # insert_job returns exactly one row or raises
        return int(row[0]), trace


def refusal(e: psycopg.Error) -> dict[str, Any]:
    """A database refusal: its SQLSTATE, and the contract code from the DETAIL JSON if any."""
    code = None
    detail = e.diag.message_detail
    if detail:
        try:
            parsed = json.loads(detail)
        except ValueError:
            parsed = None  # released errors (23505, 23514) have a plain-text DETAIL
        if isinstance(parsed, dict) and isinstance(parsed.get("code"), str):
            code = parsed["code"]
    return {"sqlstate": e.sqlstate, "code": code, "message": e.diag.message_primary or str(e)}


def answer(producer: Producer, msg: dict[str, Any]) -> dict[str, Any]:
    seq = msg.get("seq")
    if msg.get("type") != "enqueue":
        return {"seq": seq, "skipped": True, "reason": f"request type {msg.get('type')!r} is not implemented"}
    schema = msg.get("schema") or os.environ.get("AWA_CONFORMANCE_SCHEMA") or "awa"
    try:
        job_id, trace = producer.enqueue(schema, msg["job"])
    except Refused as r:
        return {"seq": seq, "refused": {"sqlstate": None, "code": r.code, "message": str(r)}}
    except psycopg.Error as e:
        if e.sqlstate is None:  # no answer from the server (connection lost): not a refusal
            return {"seq": seq, "error": f"{type(e).__name__}: {e}"}
        return {"seq": seq, "refused": refusal(e)}
    except Exception as e:  # a bug of this producer on a valid request: a finding
        return {"seq": seq, "error": f"{type(e).__name__}: {e}"}
    return {"seq": seq, "job_id": job_id, "trace": trace}


def send(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def serve(dsn: str, requests: queue.Queue[dict[str, Any] | None], out: threading.Lock) -> None:
    """One worker: its own connection, one request at a time, until the None that ends it."""
    producer = Producer(dsn)
    try:
        while (msg := requests.get()) is not None:
            reply = answer(producer, msg)
            with out:  # one whole line at a time on stdout
                send(reply)
    finally:
        if producer.conn is not None:
            producer.conn.close()


def main() -> int:
    dsn = os.environ.get("AWA_CONFORMANCE_DSN")
    if not dsn:
        print("producer.py: AWA_CONFORMANCE_DSN is not set; run it through awa-conformance --producer "
              "or set it to the database's URL", file=sys.stderr)
        return 2
    Producer(dsn).connection().close()  # fail before the hello when the database is unreachable
    send({"type": "hello", "protocol": PROTOCOL, "implementation": {"name": NAME, "version": VERSION},
          "capabilities": ["enqueue", "errors"], "max_in_flight": IN_FLIGHT})
    requests: queue.Queue[dict[str, Any] | None] = queue.Queue()
    out = threading.Lock()
    workers = [threading.Thread(target=serve, args=(dsn, requests, out)) for _ in range(IN_FLIGHT)]
    for worker in workers:
        worker.start()
    for line in iter(sys.stdin.readline, ""):
        if not line.strip():
            continue
        msg = json.loads(line)
        if msg.get("type") == "stop":
            break
        requests.put(msg)
    for _ in workers:
        requests.put(None)  # each worker answers what it took, then ends
    for worker in workers:
        worker.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
