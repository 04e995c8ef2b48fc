#!/usr/bin/env python3
"""crosscheck.py: compare the installed SQL helpers and insert_job routing with Python models.

Python side: hashlib SHA-256 for D1, the released multiply-then-add ordering loop, D2/D3/D4 as
written in docs/adr/0001. Keys are random, lengths 0..2048 (plus edge lengths around the SQL
function's 16/64-byte blocks), every width 1..64. Needs psycopg and AWA_SCHEMA_TEST_DSN;
AWA_SCHEMA_TEST_SCHEMA names the installed schema (default awa_conf_test).
"""

import hashlib
import json
import os
import random
import sys

import psycopg

TAG = b"awa:concurrency_key:v1\x00"
OFFSET = 0xCBF29CE484222325
PRIME = 0x100000001B3


def digest(key: bytes) -> bytes:
    return hashlib.sha256(TAG + key).digest()


def ordering_hash64(key: bytes) -> int:
    h = OFFSET
    for b in key:
        h = (h * PRIME + b) % (1 << 64)
    return h


def concurrency_shard(d: bytes, width: int) -> int:
    return int.from_bytes(d[:8], "big") % width


def route(width, ok, ck):
    """D3: (route_source, shard or None for rotor, digest or None)."""
    if ok is not None:
        return "ordering_key", ordering_hash64(ok) % width, digest(ck if ck is not None else ok)
    if ck is not None:
        d = digest(ck)
        return "concurrency_key", concurrency_shard(d, width), d
    return "rotor", None, None


def main() -> int:
    dsn = os.environ.get("AWA_SCHEMA_TEST_DSN")
    if not dsn:
        print("crosscheck.py: set AWA_SCHEMA_TEST_DSN", file=sys.stderr)
        return 2
    schema = os.environ.get("AWA_SCHEMA_TEST_SCHEMA", "awa_conf_test")
    s = '"' + schema.replace('"', '""') + '"'
    rng = random.Random(0x5EED)
    lengths = [0, 1, 7, 8, 15, 16, 17, 63, 64, 65, 79, 80, 127, 128, 129, 1024, 2048]
    lengths += [rng.randint(0, 2048) for _ in range(300)]
    keys = [rng.randbytes(n) for n in lengths]
    keys += [b"\x00" * 100, b"\xff" * 100, b"\x80" * 64]
    failures = []

    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.cursor()
        for key in keys:
            cur.execute(
                f"SELECT {s}.ordering_key_hash64(%(k)s), {s}.concurrency_digest(%(k)s),"
                f" ARRAY(SELECT {s}.ordering_shard(%(k)s, w) FROM generate_series(1, 64) w),"
                f" ARRAY(SELECT {s}.concurrency_shard({s}.concurrency_digest(%(k)s), w)"
                f"       FROM generate_series(1, 64) w)",
                {"k": key},
            )
            h, d, oshards, cshards = cur.fetchone()
            want_h, want_d = ordering_hash64(key), digest(key)
            tag = f"key len {len(key)} hex {key[:8].hex()}..."
            if int(h) != want_h:
                failures.append(f"ordering_key_hash64 {tag}: sql {h} python {want_h}")
            if bytes(d) != want_d:
                failures.append(f"concurrency_digest {tag}")
            if oshards != [want_h % w for w in range(1, 65)]:
                failures.append(f"ordering_shard {tag}")
            if cshards != [concurrency_shard(want_d, w) for w in range(1, 65)]:
                failures.append(f"concurrency_shard {tag}")

        # insert_job routing end to end, inside a transaction that is rolled back.
        with conn.transaction(force_rollback=True):
            cur.execute(
                f"INSERT INTO {s}.queue_meta (queue, enqueue_shards)"
                f" SELECT 'xc_w' || w, w FROM generate_series(1, 64) w"
                f" ON CONFLICT (queue) DO UPDATE SET enqueue_shards = EXCLUDED.enqueue_shards"
            )
            for i in range(400):
                width = rng.randint(1, 64)
                pick = lambda: None if rng.random() < 0.4 else rng.randbytes(rng.randint(0, 4096))
                ok, ck = pick(), pick()
                src, shard, d = route(width, ok, ck)
                cur.execute(
                    f"SELECT r.route_source, r.enqueue_shard, r.concurrency_digest,"
                    f" x.route_source, x.enqueue_shard, x.concurrency_digest, x.ordering_key_digest"
                    f" FROM {s}.insert_job('xc', %s, p_ordering_key => %s,"
                    f" p_concurrency_key => %s) r, {s}.job_routing(r.job_id) x",
                    (f"xc_w{width}", ok, ck),
                )
                r_src, r_shard, r_d, x_src, x_shard, x_d, x_ok = cur.fetchone()
                got = (r_src, r_shard if shard is not None else None, r_d and bytes(r_d))
                if got != (src, shard, d) or not 0 <= r_shard < width:
                    failures.append(f"insert_job route #{i} width {width}: sql {got[:2]} python {(src, shard)}")
                # v1.1: job_routing returns the ordering key's digest, never the key.
                want_ok = digest(ok) if ok is not None else None
                if (x_src, x_shard, x_d and bytes(x_d), x_ok and bytes(x_ok)) != (r_src, r_shard, r_d and bytes(r_d), want_ok):
                    failures.append(f"job_routing #{i} differs from insert_job result")

        # unique_states bound as a driver parameter (v1.1, ADR 0025): psycopg sends the str
        # as a text parameter; through $n::varbit every length but 8 is refused by the function
        # (22026 with the contract DETAIL), and 8 bits are stored as given.
        with conn.transaction(force_rollback=True):
            for states in ("1111", "111110000", "", "11111000"):
                try:
                    with conn.transaction():
                        cur.execute(
                            f"SELECT x.unique_states FROM {s}.insert_job('xc', p_unique_key => %s,"
                            f" p_unique_states => %s::varbit) r, {s}.job_routing(r.job_id) x",
                            (b"xc-states-" + states.encode(), states),
                        )
                        stored = cur.fetchone()[0]
                    if len(states) != 8 or stored != states:
                        failures.append(f"unique_states {states!r} via %s::varbit stored as {stored!r}")
                except psycopg.Error as e:
                    detail = json.loads(e.diag.message_detail or "null")
                    if len(states) == 8 or e.sqlstate != "22026" or (detail or {}).get("code") != "unique_states_not_8_bits":
                        failures.append(f"unique_states {states!r} via %s::varbit: {e.sqlstate} {detail}")

    for f in failures[:20]:
        print("FAIL:", f, file=sys.stderr)
    if failures:
        print(f"crosscheck.py: {len(failures)} failures", file=sys.stderr)
        return 1
    print(f"crosscheck.py: {len(keys)} keys x 64 widths and 400 insert_job routings agree with Python")
    return 0


if __name__ == "__main__":
    sys.exit(main())
