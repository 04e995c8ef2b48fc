"""Every vector on disk (releases v1 and v1.1), one test each, reproduced through the Python functions.

A vector whose ``expected`` is ``{"error": code}`` is an input the contract refuses: the
function must raise the exception of that code (``ERROR_CLASSES``).
"""

from __future__ import annotations

import hashlib
import json

import pytest

import awa_conformance as ac
from conftest import RELEASES, VECTORS_ROOT, disk_vectors, vector_params

# The exception each error code of the vectors maps to (docs/adapter-protocol.md lists the codes).
ERROR_CLASSES = {
    "invalid_width": ac.InvalidWidth,
    "key_too_long": ac.InvalidKey,
    "too_deep": ac.InvalidArgs,
    "invalid_partitions": ac.InvalidPartitions,
    "invalid_shard": ac.InvalidShard,
}


def refused(v):
    """A pytest.raises context for an expected-error vector, or None for an ordinary one."""
    code = v["expected"].get("error")
    return None if code is None else pytest.raises(ERROR_CLASSES[code])


def _args(typed):
    """Vector args: null = absent (None); a typed null = JSON_NULL."""
    if typed is None:
        return None
    value = ac.decode_typed(typed)
    return ac.JSON_NULL if value is None else value


@pytest.mark.parametrize("v", vector_params("canonical_json"))
def test_canonical_json(v):
    if (raises := refused(v)) is not None:
        with raises:
            ac.canonical_json(ac.decode_typed(v["input"]["value"]))
        return
    out = ac.canonical_json(ac.decode_typed(v["input"]["value"]))
    assert out.hex() == v["expected"]["canonical_hex"]
    assert out.decode("utf-8") == v["expected"]["canonical_text"]


@pytest.mark.parametrize("v", vector_params("unique_key"))
def test_unique_key(v):
    inp = v["input"]
    bucket = None if inp["period_bucket"] is None else int(inp["period_bucket"])
    args = _args(inp["args"])
    if (raises := refused(v)) is not None:
        with raises:
            ac.unique_key(inp["kind"], queue=inp["queue"], args=args, period_bucket=bucket)
        return
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
    if (raises := refused(v)) is not None:
        with raises:
            ac.partition_for_ordering_key(key, inp["partitions"])
        return
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
    if (raises := refused(v)) is not None:
        with raises:
            ac.route(inp["width"], ordering_key=ok, concurrency_key=ck)
        return
    r = ac.route(inp["width"], ordering_key=ok, concurrency_key=ck)
    assert r.source == exp["route_source"]
    assert r.shard == exp["enqueue_shard"]
    assert (None if r.concurrency_digest is None else r.concurrency_digest.hex()) == exp["concurrency_digest_hex"]


@pytest.mark.parametrize("v", vector_params("move_shard"))
def test_move_shard(v):
    inp = v["input"]
    if (raises := refused(v)) is not None:
        with raises:
            ac.move_shard(inp["retained_shard"], inp["destination_width"])
        return
    assert ac.move_shard(inp["retained_shard"], inp["destination_width"]) == v["expected"]["shard"]


@pytest.mark.parametrize("v", vector_params("unique_states"))
def test_unique_states(v):
    mask = v["input"]["mask"]
    bits = ac.unique_states_bits(mask)
    assert bits == v["expected"]["bits"]
    assert ac.parse_unique_states_bits(bits) == mask
    assert [s for i, s in enumerate(ac.JOB_STATES) if bits[i] == "1"] == v["expected"]["states"]


def _errata() -> dict[str, dict]:
    errata = {}
    for release in RELEASES:
        path = VECTORS_ROOT / release / "errata.json"
        if path.exists():
            errata.update({e["id"]: e for e in json.loads(path.read_text(encoding="utf-8"))["errata"]})
    return errata


def test_embedded_vectors_equal_disk_with_errata_applied():
    """The vectors compiled into the module are the files on disk, with the errata's corrections."""
    on_disk = {p.stem for r in RELEASES for p in (VECTORS_ROOT / r).glob("*.json")} - {"manifest", "errata"}
    assert set(ac.families()) == on_disk
    errata = _errata()
    assert "uk-426a7aea6bba" in errata
    for fam in ac.families():
        embedded = ac.vectors(fam)
        assert all(v.pop("family") == fam for v in embedded)
        assert {v.pop("release") for v in embedded} <= {"1", "1.1"}
        want = disk_vectors(fam, with_errors=True)
        for v in want:
            if (e := errata.get(v["id"])) is not None:
                v["description"] = e.get("description", v["description"])
                v["tags"] = e.get("tags", v["tags"])
                v["erratum"] = e["reason"]
        assert embedded == want
    assert len(ac.vectors()) == sum(len(disk_vectors(f, with_errors=True)) for f in ac.families())


def test_errata_correct_the_empty_kind_vector():
    """uk-426a7aea6bba's frozen description claims a 23514 refusal; the corrected text does not."""
    (v,) = [v for v in ac.vectors("unique_key") if v["id"] == "uk-426a7aea6bba"]
    assert "23514" not in v["description"] and "rejects it" not in v["description"]
    assert "23514" in v["erratum"]
    frozen = json.loads((VECTORS_ROOT / "v1" / "unique_key.json").read_text(encoding="utf-8"))
    (raw,) = [x for x in frozen["vectors"] if x["id"] == "uk-426a7aea6bba"]
    assert "23514" in raw["description"], "v1 bytes never change: the file keeps the frozen text"


@pytest.mark.parametrize("release", ["1", "1.1"])
def test_manifest_root_hash_matches_files(release):
    """root_sha256 = SHA-256 of the sha256sum-style listing (ADR 0002), recomputed from disk."""
    m = ac.manifest(release)
    folder = VECTORS_ROOT / f"v{release}"
    entries = list(m["files"]) + ([m["errata"]] if "errata" in m else [])
    listing = ""
    for entry in sorted(entries, key=lambda e: e["path"]):
        digest = hashlib.sha256((folder / entry["path"]).read_bytes()).hexdigest()
        assert digest == entry["sha256"], entry["path"]
        listing += f"{digest}  {entry['path']}\n"
    assert hashlib.sha256(listing.encode()).hexdigest() == m["root_sha256"]
    assert m == json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def test_newest_manifest_pins_the_frozen_v1_root():
    assert ac.manifest() == ac.manifest("1.1")
    (pin,) = ac.manifest()["extends"]
    assert pin["root_sha256"] == ac.manifest("1")["root_sha256"]
    assert pin["root_sha256"] == "ae61d3c909c9aa4f9770c386b6ec2a6d5b819a1dd14a35da1edb9359296efecb"


def test_unknown_family_names_valid_ones():
    with pytest.raises(ac.UnknownFamily, match="routing_precedence") as e:
        ac.vectors("routing")
    assert isinstance(e.value, ValueError) and isinstance(e.value, ac.Error)
