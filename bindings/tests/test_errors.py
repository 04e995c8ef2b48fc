"""Error mapping: every rejection is an awa_conformance.Error and the right builtin subclass."""

from __future__ import annotations

import pytest

import awa_conformance as ac

U64_MAX = 2**64 - 1
I64_MIN = -(2**63)


def test_hierarchy():
    for cls in (
        ac.InvalidWidth, ac.InvalidPartitions, ac.InvalidShard, ac.InvalidKey,
        ac.InvalidUniqueStates, ac.InvalidArgs, ac.UnknownFamily,
    ):
        assert issubclass(cls, ac.Error) and issubclass(cls, ValueError), cls
    assert issubclass(ac.IntegerOutOfRange, ac.InvalidArgs)
    assert issubclass(ac.IntegerOutOfRange, OverflowError)
    assert issubclass(ac.InvalidArgsType, ac.InvalidType)
    assert issubclass(ac.InvalidType, TypeError) and issubclass(ac.InvalidType, ac.Error)
    assert issubclass(ac.ExpectedFailuresError, ac.ConformanceError)
    assert not issubclass(ac.ConformanceError, ValueError)


@pytest.mark.parametrize("n", [U64_MAX, 2**63, 2**63 - 1, I64_MIN, 0, -1])
def test_integers_exact_over_i64_and_u64(n):
    assert ac.canonical_json(n) == str(n).encode()
    assert ac.canonical_json({"n": n}) == b'{"n":%d}' % n


@pytest.mark.parametrize("n", [2**64, -(2**63) - 1, 10**30, -(10**30)])
def test_integers_outside_are_rejected_not_floated(n):
    with pytest.raises(ac.IntegerOutOfRange, match="outside i64") as e:
        ac.canonical_json({"a": [1, n]})
    assert isinstance(e.value, ValueError) and isinstance(e.value, OverflowError)
    assert 'obj["a"][1]' in str(e.value)
    with pytest.raises(ac.IntegerOutOfRange, match=r"args\[0\]"):
        ac.unique_key("k", args=[n])


def test_bool_is_not_int():
    assert ac.canonical_json([True, False, 1, 0]) == b"[true,false,1,0]"
    with pytest.raises(ac.InvalidType):
        ac.ordering_shard(b"k", True)


@pytest.mark.parametrize(
    "value, type_name",
    [((1, 2), "tuple"), (b"x", "bytes"), ({1, 2}, "set"), (object(), "object"), (bytearray(b"x"), "bytearray")],
)
def test_non_json_types_are_type_errors(value, type_name):
    with pytest.raises(ac.InvalidArgsType, match=type_name) as e:
        ac.canonical_json({"v": value})
    assert isinstance(e.value, TypeError) and isinstance(e.value, ac.Error)


def test_non_str_keys_are_type_errors():
    for key in (1, b"k", None, (1,)):
        with pytest.raises(ac.InvalidArgsType, match="keys must be str"):
            ac.canonical_json({key: 1})


def test_insertion_order_does_not_matter():
    assert ac.canonical_json({"b": 1, "a": 2}) == ac.canonical_json({"a": 2, "b": 1}) == b'{"a":2,"b":1}'


def test_depth_limit():
    v = None
    for _ in range(ac.MAX_DEPTH):
        v = [v]
    assert ac.canonical_json(v).startswith(b"[" * ac.MAX_DEPTH)
    with pytest.raises(ac.InvalidArgs, match="nested deeper than 128"):
        ac.canonical_json([v])
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(ac.InvalidArgs, match="nested deeper"):
        ac.canonical_json(cyclic)


def test_lone_surrogate_is_invalid_args():
    with pytest.raises(ac.InvalidArgs, match="surrogate"):
        ac.canonical_json("\ud800")


def test_json_null_versus_absent_args():
    assert ac.unique_key("k") == ac.unique_key("k", args=None)
    assert ac.unique_key_preimage("k", args=ac.JSON_NULL) == b"k\x00null"
    assert ac.canonical_json(ac.JSON_NULL) == b"null"
    assert repr(ac.JSON_NULL) == "awa_conformance.JSON_NULL"
    with pytest.raises(TypeError):
        type(ac.JSON_NULL)()


def test_period_bucket_range():
    assert ac.unique_key_preimage("k", period_bucket=-1).endswith(b"\xff" * 8)
    with pytest.raises(ac.IntegerOutOfRange, match="period_bucket"):
        ac.unique_key("k", period_bucket=2**63)


@pytest.mark.parametrize("width", [0, -1, 65, 2**64])
def test_invalid_width(width):
    with pytest.raises(ac.InvalidWidth, match="1..=64"):
        ac.ordering_shard(b"k", width)
    with pytest.raises(ac.InvalidWidth):
        ac.concurrency_shard(bytes(32), width)
    with pytest.raises(ac.InvalidWidth):
        ac.route(width)
    with pytest.raises(ac.InvalidWidth):
        ac.move_shard(0, width)


def test_keys_must_be_bytes():
    with pytest.raises(ac.InvalidType, match="encode"):
        ac.ordering_shard("k", 4)
    with pytest.raises(ac.InvalidType):
        ac.route(4, ordering_key="k")
    with pytest.raises(ac.InvalidType):
        ac.concurrency_digest(1)
    assert ac.concurrency_digest("é") == ac.concurrency_digest("é".encode())


def test_key_too_long_and_digest_length():
    long = bytes(ac.MAX_KEY_LEN + 1)
    with pytest.raises(ac.InvalidKey, match="4097 bytes"):
        ac.route(1, concurrency_key=long)
    assert ac.route(1, ordering_key=long[:-1]).source == "ordering_key"
    with pytest.raises(ac.InvalidKey, match="32 bytes, got 16"):
        ac.concurrency_shard(bytes(16), 4)


def test_other_ranges():
    with pytest.raises(ac.InvalidShard):
        ac.move_shard(64, 8)
    with pytest.raises(ac.InvalidPartitions):
        ac.partition_for_ordering_key(b"k", 0)
    with pytest.raises(ac.InvalidPartitions):
        ac.partition_for_ordering_key(b"k", 32768)
    with pytest.raises(ac.InvalidPartitions):
        ac.physical_queue_name("q", 32767)
    with pytest.raises(ac.InvalidUniqueStates):
        ac.unique_states_bits(256)
    with pytest.raises(ac.InvalidUniqueStates):
        ac.parse_unique_states_bits("1111100x")
    with pytest.raises(ac.InvalidType):
        ac.unique_key(b"kind")


def test_route_value_semantics():
    a = ac.route(8, ordering_key=b"o", concurrency_key=b"c")
    assert a == ac.route(8, b"o", b"c") and hash(a) == hash(ac.route(8, b"o", b"c"))
    assert a != ac.route(8, b"o")
    assert a.source == "ordering_key" and a.shard == ac.ordering_shard(b"o", 8)
    assert a.concurrency_digest == ac.concurrency_digest(b"c")
    assert eval(repr(a).replace("Route(", "dict(")) == {
        "source": a.source, "shard": a.shard, "concurrency_digest": a.concurrency_digest
    }
    rotor = ac.route(3)
    assert (rotor.source, rotor.shard, rotor.concurrency_digest) == ("rotor", None, None)
    with pytest.raises(AttributeError):
        a.shard = 1  # type: ignore[misc]
