"""Every v1 vector on disk, one test each, reproduced through the Python functions."""

from __future__ import annotations

import hashlib
import json

import pytest

import awa_conformance as ac
from conftest import VECTOR_DIR, disk_vectors, vector_params


def _args(typed):
    """Vector args: null = absent (None); a typed null = JSON_NULL."""
    if typed is None:
        return None
    value = ac.decode_typed(typed)
    return ac.JSON_NULL if value is None else value


@pytest.mark.parametrize("v", vector_params("canonical_json"))
def test_canonical_json(v):
    out = ac.canonical_json(ac.decode_typed(v["input"]["value"]))
    assert out.hex() == v["expected"]["canonical_hex"]
    assert out.decode("utf-8") == v["expected"]["canonical_text"]


@pytest.mark.parametrize("v", vector_params("unique_key"))
def test_unique_key(v):
    inp = v["input"]
    bucket = None if inp["period_bucket"] is None else int(inp["period_bucket"])
    args = _args(inp["args"])
    pre = ac.unique_key_preimage(inp["kind"], inp["queue"], args, bucket)
    assert pre.hex() == v["intermediate"]["preimage_hex"]
    want_args = v["intermediate"]["canonical_args_hex"]
    assert (None if args is None else ac.canonical_json(args).hex()) == want_args
    key = ac.unique_key(inp["kind"], queue=inp["queue"], args=args, period_bucket=bucket)
    assert key.hex() == v["expected"]["unique_key_hex"]


@pytest.mark.parametrize("v", vector_params("ordering_shard"))
def test_ordering_shard(v):
    key = bytes.fromhex(v["input"]["key_hex"])
    assert ac.ordering_key_hash64(key) == int(v["intermediate"]["hash64"])
    assert [ac.ordering_shard(key, w) for w in range(1, 65)] == v["expected"]["shards"]


@pytest.mark.parametrize("v", vector_params("partition"))
def test_partition(v):
    inp = v["input"]
    key = bytes.fromhex(inp["key_hex"])
    assert ac.ordering_key_hash64(key) == int(v["intermediate"]["hash64"])
    assert ac.partition_hash64(key) == int(v["intermediate"]["partition_hash64"])
    p = ac.partition_for_ordering_key(key, inp["partitions"])
    assert p == v["expected"]["partition"]
    assert ac.physical_queue_name(inp["logical_queue"], p) == v["expected"]["physical_queue"]


@pytest.mark.parametrize("v", vector_params("concurrency_digest"))
def test_concurrency_digest(v):
    key = bytes.fromhex(v["input"]["key_hex"])
    assert ac.concurrency_preimage(key).hex() == v["intermediate"]["preimage_hex"]
    assert ac.concurrency_digest(key).hex() == v["expected"]["digest_hex"]
    try:
        text = key.decode("utf-8")
    except UnicodeDecodeError:
        return
    assert ac.concurrency_digest(text) == ac.concurrency_digest(key)


@pytest.mark.parametrize("v", vector_params("concurrency_shard"))
def test_concurrency_shard(v):
    digest = ac.concurrency_digest(bytes.fromhex(v["input"]["key_hex"]))
    assert digest.hex() == v["intermediate"]["digest_hex"]
    assert int.from_bytes(digest[:8], "big") == int(v["intermediate"]["first8_u64"])
    assert [ac.concurrency_shard(digest, w) for w in range(1, 65)] == v["expected"]["shards"]


@pytest.mark.parametrize("v", vector_params("routing_precedence"))
def test_routing_precedence(v):
    inp, exp = v["input"], v["expected"]
    ok = None if inp["ordering_key_hex"] is None else bytes.fromhex(inp["ordering_key_hex"])
    ck = None if inp["concurrency_key_hex"] is None else bytes.fromhex(inp["concurrency_key_hex"])
    r = ac.route(inp["width"], ordering_key=ok, concurrency_key=ck)
    assert r.source == exp["route_source"]
    assert r.shard == exp["enqueue_shard"]
    assert (None if r.concurrency_digest is None else r.concurrency_digest.hex()) == exp["concurrency_digest_hex"]


@pytest.mark.parametrize("v", vector_params("move_shard"))
def test_move_shard(v):
    inp = v["input"]
    assert ac.move_shard(inp["retained_shard"], inp["destination_width"]) == v["expected"]["shard"]


@pytest.mark.parametrize("v", vector_params("unique_states"))
def test_unique_states(v):
    mask = v["input"]["mask"]
    bits = ac.unique_states_bits(mask)
    assert bits == v["expected"]["bits"]
    assert ac.parse_unique_states_bits(bits) == mask
    assert [s for i, s in enumerate(ac.JOB_STATES) if bits[i] == "1"] == v["expected"]["states"]


def test_embedded_vectors_equal_disk():
    """The vectors compiled into the module are the files on disk, byte-for-byte in meaning."""
    assert set(ac.families()) == {p.stem for p in VECTOR_DIR.glob("*.json")} - {"manifest"}
    for fam in ac.families():
        embedded = ac.vectors(fam)
        assert all(v.pop("family") == fam for v in embedded)
        assert embedded == disk_vectors(fam)
    with open(VECTOR_DIR / "manifest.json", encoding="utf-8") as f:
        assert ac.manifest() == json.load(f)
    assert len(ac.vectors()) == sum(len(disk_vectors(f)) for f in ac.families())


def test_manifest_root_hash_matches_files():
    """root_sha256 = SHA-256 of the sha256sum-style listing (ADR 0002), recomputed from disk."""
    m = ac.manifest()
    listing = ""
    for entry in m["files"]:
        digest = hashlib.sha256((VECTOR_DIR / entry["path"]).read_bytes()).hexdigest()
        assert digest == entry["sha256"], entry["path"]
        listing += f"{digest}  {entry['path']}\n"
    assert hashlib.sha256(listing.encode()).hexdigest() == m["root_sha256"]


def test_unknown_family_names_valid_ones():
    with pytest.raises(ac.UnknownFamily, match="routing_precedence") as e:
        ac.vectors("routing")
    assert isinstance(e.value, ValueError) and isinstance(e.value, ac.Error)
