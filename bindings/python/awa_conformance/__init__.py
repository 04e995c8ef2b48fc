"""awa_conformance: Awa SQL producer contract v1 reference functions, vectors and producer checks."""

from collections.abc import Callable as _Callable
from collections.abc import Iterable as _Iterable
from typing import Any as _Any

from awa_conformance import _native
from awa_conformance._errors import (
    ConformanceError,
    Error,
    ExpectedFailuresError,
    IntegerOutOfRange,
    InvalidArgs,
    InvalidArgsType,
    InvalidKey,
    InvalidPartitions,
    InvalidShard,
    InvalidType,
    InvalidUniqueStates,
    InvalidWidth,
    ProducerRefused,
    ProducerSkip,
    UnknownFamily,
)
from awa_conformance._vectors import decode_typed, families, manifest, vectors
from awa_conformance.report import CaseResult, Report
from awa_conformance._native import (
    CONCURRENCY_DOMAIN_TAG,
    CONTRACT_VERSION,
    DEFAULT_UNIQUE_STATES,
    DIGEST_LEN,
    JOB_STATES,
    JSON_NULL,
    MAX_DEPTH,
    MAX_KEY_LEN,
    MAX_PARTITIONS,
    MAX_WIDTH,
    UNIQUE_KEY_LEN,
    JsonNull,
    Route,
    canonical_json,
    concurrency_digest,
    concurrency_preimage,
    concurrency_shard,
    move_shard,
    ordering_key_hash64,
    ordering_shard,
    parse_unique_states_bits,
    partition_for_ordering_key,
    partition_hash64,
    physical_queue_name,
    route,
    unique_key,
    unique_key_preimage,
    unique_states_bits,
)

__version__: str = _native.__version__

#: What canonical_json accepts (see __init__.pyi).
JsonValue = dict[str, "JsonValue"] | list["JsonValue"] | str | int | float | bool | None | JsonNull


def check_producer(
    dsn: str,
    insert: _Callable[[dict[str, _Any]], _Any],
    *,
    families: _Iterable[str] | None = None,
    schema: str = "awa",
    producer_role: str = "awa_producer",
    junit: str | None = None,
    json: str | None = None,
    markdown: str | None = None,
    expected_failures: str | None = None,
    timeout: float = 30.0,
    protocol: int = 2,
    plain_sessions: bool = False,
) -> Report:
    """Check a producer in-process with the runner's producer engine; see __init__.pyi."""
    from awa_conformance.producer import check_producer as _check

    return _check(
        dsn, insert, families=families, schema=schema, producer_role=producer_role, junit=junit, json=json, markdown=markdown,
        expected_failures=expected_failures, timeout=timeout, protocol=protocol, plain_sessions=plain_sessions,
    )


def session_dsn(dsn: str) -> str:
    """``dsn`` as a URL whose sessions start under the callers' settings; see __init__.pyi."""
    from awa_conformance.producer import session_dsn as _session_dsn

    return _session_dsn(dsn)


__all__ = [
    "CONCURRENCY_DOMAIN_TAG",
    "CONTRACT_VERSION",
    "DEFAULT_UNIQUE_STATES",
    "DIGEST_LEN",
    "JOB_STATES",
    "JSON_NULL",
    "MAX_DEPTH",
    "MAX_KEY_LEN",
    "MAX_PARTITIONS",
    "MAX_WIDTH",
    "UNIQUE_KEY_LEN",
    "CaseResult",
    "ConformanceError",
    "Error",
    "ExpectedFailuresError",
    "IntegerOutOfRange",
    "InvalidArgs",
    "InvalidArgsType",
    "InvalidKey",
    "InvalidPartitions",
    "InvalidShard",
    "InvalidType",
    "InvalidUniqueStates",
    "InvalidWidth",
    "JsonNull",
    "JsonValue",
    "ProducerRefused",
    "ProducerSkip",
    "Report",
    "Route",
    "UnknownFamily",
    "canonical_json",
    "check_producer",
    "concurrency_digest",
    "concurrency_preimage",
    "concurrency_shard",
    "decode_typed",
    "families",
    "manifest",
    "move_shard",
    "ordering_key_hash64",
    "ordering_shard",
    "parse_unique_states_bits",
    "partition_for_ordering_key",
    "partition_hash64",
    "physical_queue_name",
    "route",
    "session_dsn",
    "unique_key",
    "unique_key_preimage",
    "unique_states_bits",
    "vectors",
]
