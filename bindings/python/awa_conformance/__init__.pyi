"""Type stubs for awa_conformance: Awa SQL producer contract v1 reference functions, vectors and checks.

Every key-related value is computed by the Rust core ``awa-conformance-core``; this package only
converts arguments, calls it and maps its errors. Keys are raw ``bytes`` (encode text keys
yourself); only :func:`concurrency_digest` also takes ``str`` (meaning its UTF-8 bytes).
"""

import os
from collections.abc import Callable, Iterable
from typing import Any, Final, Literal, final

__version__: str

# -- constants ---------------------------------------------------------------------------

CONCURRENCY_DOMAIN_TAG: Final[bytes]
"""``b"awa:concurrency_key:v1\\x00"`` (23 bytes): the prefix hashed before every concurrency key."""
CONTRACT_VERSION: Final[int]
"""The contract version these functions implement (``awa.contract_version()`` in SQL): 1."""
JOB_STATES: Final[tuple[str, ...]]
"""Job states in Awa's enum order; bit ``i`` of a unique_states mask stands for ``JOB_STATES[i]``."""
DEFAULT_UNIQUE_STATES: Final[int]
"""Released Awa's default unique_states mask ``0b0001_1111`` (scheduled … retryable)."""
MAX_WIDTH: Final[int]
"""Largest enqueue-shard width (64)."""
MAX_KEY_LEN: Final[int]
"""Longest ordering/concurrency key the contract accepts, in bytes (4096)."""
MAX_DEPTH: Final[int]
"""Deepest array/object nesting canonical_json accepts (128)."""
MAX_PARTITIONS: Final[int]
"""Largest PartitionedQueue partition count (32767)."""
UNIQUE_KEY_LEN: Final[int]
"""Length of a unique_key (16)."""
DIGEST_LEN: Final[int]
"""Length of a concurrency digest (32)."""

@final
class JsonNull:
    """Type of :data:`JSON_NULL`; not constructible."""

JSON_NULL: Final[JsonNull]
"""JSON ``null`` as a value: ``unique_key(kind, args=JSON_NULL)`` hashes an args field holding
``null``, while ``args=None`` (the default) means *no* args field. Inside containers, ``None``
and ``JSON_NULL`` both encode as ``null``."""

JsonValue = dict[str, "JsonValue"] | list["JsonValue"] | str | int | float | bool | None | JsonNull
"""What canonical_json accepts: dict with str keys, list, str, int (within i64 ∪ u64), float,
bool, None (null) and JSON_NULL. Tuples, bytes, sets and other types raise InvalidArgsType."""

# -- errors ------------------------------------------------------------------------------

class Error(Exception):
    """Base class of every error awa_conformance raises on purpose."""

class InvalidWidth(Error, ValueError):
    """An enqueue-shard width outside 1..=64."""

class InvalidPartitions(Error, ValueError):
    """A partition count outside 1..=32767, or a partition index outside 0..=32766."""

class InvalidShard(Error, ValueError):
    """A retained enqueue shard outside 0..=63."""

class InvalidKey(Error, ValueError):
    """An ordering/concurrency key longer than 4096 bytes, or a digest that is not 32 bytes."""

class InvalidUniqueStates(Error, ValueError):
    """A unique_states mask outside 0..=255 or a bit string that is not eight '0'/'1' characters."""

class InvalidArgs(Error, ValueError):
    """A JSON value that cannot be encoded: nested too deep, or a str with a lone surrogate."""

class IntegerOutOfRange(InvalidArgs, OverflowError):
    """An int outside i64 ∪ u64 (never silently turned into a float)."""

class InvalidType(Error, TypeError):
    """A parameter of the wrong Python type (e.g. str where raw bytes are required, or bool for an int)."""

class InvalidArgsType(InvalidType):
    """A value with no JSON mapping: tuple, bytes, set, a non-str dict key, ..."""

class UnknownFamily(Error, ValueError):
    """vectors(family) with a family the embedded vectors do not have; the message lists valid ones."""

class ConformanceError(Error):
    """A producer check could not run (database, schema, or producer callable misbehaving)."""

class ExpectedFailuresError(ConformanceError, ValueError):
    """An expected-failures file that is malformed or names an unknown vector ID."""

# -- routing -----------------------------------------------------------------------------

@final
class Route:
    """The authoritative routing of one job (contract v1 D3). Frozen, comparable, hashable."""

    @property
    def source(self) -> Literal["ordering_key", "concurrency_key", "rotor"]:
        """Which precedence rule applied."""
    @property
    def shard(self) -> int | None:
        """The enqueue shard, or None for the rotor (any shard in [0, width) conforms)."""
    @property
    def concurrency_digest(self) -> bytes | None:
        """The stored 32-byte digest: of the concurrency key, else of the ordering key, else None."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

def route(width: int, ordering_key: bytes | None = None, concurrency_key: bytes | None = None) -> Route:
    """Route a job: explicit ordering key, else concurrency key, else rotor.

    ``b""`` is a key (the empty key), distinct from None. Raises InvalidWidth outside 1..=64 and
    InvalidKey when a key is longer than 4096 bytes.
    """

def move_shard(retained: int, destination_width: int) -> int:
    """The shard a job keeps when moved to another queue: ``retained % destination_width``.

    Raises InvalidShard unless 0 <= retained <= 63, InvalidWidth outside 1..=64.
    """

# -- hashes ------------------------------------------------------------------------------

def unique_key(
    kind: str,
    queue: str | None = None,
    args: JsonValue = None,
    period_bucket: int | None = None,
) -> bytes:
    """The 16-byte unique_key released Awa 0.6.x computes: BLAKE3 of the pre-image, truncated.

    Pre-image: ``kind`` UTF-8; then for each field that is present, ``0x00`` and the field
    (queue UTF-8, args as canonical JSON, period_bucket as 8 bytes little-endian i64).
    ``None`` means the field is absent; pass :data:`JSON_NULL` for args that are JSON null.
    Raises InvalidArgsType / IntegerOutOfRange / InvalidArgs for args canonical_json rejects,
    IntegerOutOfRange for a period_bucket outside i64.
    """

def unique_key_preimage(
    kind: str,
    queue: str | None = None,
    args: JsonValue = None,
    period_bucket: int | None = None,
) -> bytes:
    """The exact bytes :func:`unique_key` hashes (a debug layer; same arguments and errors)."""

def canonical_json(obj: JsonValue, /) -> bytes:
    """Awa canonical JSON v1: compact, object keys sorted by UTF-8 bytes, exact integers.

    dict insertion order does not matter (the core sorts). ``bool`` is tested before ``int``.
    Integers outside i64 ∪ u64 raise IntegerOutOfRange (a ValueError and OverflowError); tuple,
    bytes, non-str keys and other types raise InvalidArgsType (a TypeError); nesting deeper than
    MAX_DEPTH raises InvalidArgs. NaN and ±inf encode as ``null``.
    """

def ordering_key_hash64(key: bytes, /) -> int:
    """The released ordering-key hash (FNV offset/prime, multiply-then-add), an unsigned 64-bit int."""

def ordering_shard(key: bytes, width: int) -> int:
    """``ordering_key_hash64(key) % width``; raises InvalidWidth outside 1..=64."""

def partition_hash64(key: bytes, /) -> int:
    """SplitMix64 finaliser over ``ordering_key_hash64(key) ^ 0x9d4d1b2f53a70c91`` (released partition hash)."""

def partition_for_ordering_key(key: bytes, partitions: int) -> int:
    """``partition_hash64(key) % partitions``; raises InvalidPartitions outside 1..=32767."""

def physical_queue_name(logical: str, index: int) -> str:
    """``logical`` for partition 0, else ``f"{logical}__p{index}"``; index in 0..=32766."""

def concurrency_digest(key: bytes | str, /) -> bytes:
    """``SHA-256(CONCURRENCY_DOMAIN_TAG || key)``, 32 bytes. A str key means its UTF-8 bytes."""

def concurrency_preimage(key: bytes | str, /) -> bytes:
    """``CONCURRENCY_DOMAIN_TAG || key``: the bytes :func:`concurrency_digest` hashes."""

def concurrency_shard(digest: bytes, width: int) -> int:
    """The first 8 digest bytes as a big-endian u64, ``% width``.

    ``digest`` must be 32 bytes (InvalidKey otherwise: pass ``concurrency_digest(key)``, not the key).
    """

def unique_states_bits(mask: int, /) -> str:
    """The ``bit(8)`` text of a mask 0..=255: character i (from the left) is '1' when bit ``1 << i`` is set.

    ``DEFAULT_UNIQUE_STATES`` → ``"11111000"``. Raises InvalidUniqueStates outside 0..=255.
    """

def parse_unique_states_bits(bits: str, /) -> int:
    """Inverse of :func:`unique_states_bits`; raises InvalidUniqueStates unless exactly eight '0'/'1'."""

# -- vectors -----------------------------------------------------------------------------

def families() -> tuple[str, ...]:
    """The vector families of the embedded releases, in file-name order."""

def vectors(family: str | None = None) -> list[dict[str, Any]]:
    """The embedded vectors of ``family`` (all families when None), v1 then v1.1, as parsed JSON.

    Each dict is the vector object of ADR 0002 (id, description, status, tags, input,
    intermediate, expected) plus ``family`` and ``release`` ("1", "1.1") keys. Descriptions and
    tags are as corrected by the errata (ADR 0020); a corrected vector has an ``erratum`` key
    with the reason. A vector whose ``expected`` is ``{"error": code}`` is an input the contract
    refuses. Every call returns fresh copies. Raises UnknownFamily (naming the valid families)
    for an unknown family.
    """

def manifest(release: str | None = None) -> dict[str, Any]:
    """The manifest of the newest embedded release (v1.1: files, errata, ``extends`` pinning
    v1's root, ``root_sha256``), or of ``release`` ("1" or "1.1")."""

def decode_typed(value: dict[str, Any]) -> Any:
    """An ADR 0002 typed JSON value → the Python value canonical_json accepts.

    null → None, float from its IEEE-754 ``bits`` (so -0.0 and NaN survive), object → dict
    in member order (a duplicated key keeps its last value, as the core does), ``nested``
    (v1.1) → ``depth`` single-element lists or single-key dicts around the value.
    """

# -- producer checks ---------------------------------------------------------------------

@final
class CaseResult:
    """One vector checked against a producer. Bytes in ``expected``/``actual`` are lowercase hex."""

    id: str
    family: str
    status: Literal["passed", "failed", "not_applicable"]
    expected: dict[str, Any]
    actual: dict[str, Any]
    message: str
    def __init__(
        self,
        id: str,
        family: str,
        status: Literal["passed", "failed", "not_applicable"],
        expected: dict[str, Any] = ...,
        actual: dict[str, Any] = ...,
        message: str = "",
    ) -> None: ...
    def to_dict(self) -> dict[str, Any]: ...

@final
class Report:
    """All case results of one producer check plus provenance.

    ``provenance``: kit_version, contract_version, vectors_version, vectors_root_sha256,
    server_version, server_contract_version, schema, producer, run_id, started_at.
    """

    cases: list[CaseResult]
    provenance: dict[str, Any]
    def __init__(self, cases: list[CaseResult] = ..., provenance: dict[str, Any] = ...) -> None: ...
    @property
    def counts(self) -> dict[str, int]:
        """Cases per status (passed, failed, not_applicable) and total."""
    @property
    def ok(self) -> bool:
        """True when no case failed."""
    @property
    def failures(self) -> list[CaseResult]:
        """The failed cases."""
    def to_dict(self) -> dict[str, Any]: ...
    def to_json(self, *, indent: int | None = 2) -> str:
        """The report as JSON (format ``awa-conformance-producer-report`` v1)."""
    def write_json(self, path: str | os.PathLike[str]) -> None: ...
    def write_junit(self, path: str | os.PathLike[str]) -> None:
        """JUnit XML: one testcase per vector, classname ``awa_conformance.<family>``."""

def check_producer(
    dsn: str,
    insert: Callable[[dict[str, Any]], int],
    *,
    families: Iterable[str] | None = None,
    schema: str = "awa",
    junit: str | None = None,
    json: str | None = None,
) -> Report:
    """Check a producer in-process against the vectors; needs ``awa-conformance[db]`` (psycopg 3).

    Cases: every ``routing_precedence`` vector at its width and every ``unique_key`` vector
    (default ``families``); vectors of other families you name come back ``not_applicable``.
    For each case the kit upserts ``<schema>.queue_meta`` for a run-scoped queue
    ``awa_conformance_<run>_<n>`` at the vector's width and calls ``insert(request)`` with::

        {"id", "family", "schema", "kind", "queue", "args": {}, "priority": 2, "width",
         "ordering_key": bytes | None, "concurrency_key": bytes | None,
         "unique_key": bytes | None,             # the reference key (pass through, or ...)
         "unique_key_inputs": {"kind", "queue", "args", "period_bucket"} | None,  # ... recompute
         "unique_states": "11111000" | None}

    ``insert`` enqueues through the producer's own client, commits, and returns the job id.
    The kit then reads ``<schema>.job_routing(id)`` and compares it with the vector (rotor: any
    shard in [0, width)) and with what ``<schema>.insert_job`` computes for the same request in
    a rolled-back transaction. Each case's rows (jobs, uniqueness claims, queue_meta) are
    deleted afterwards, so the database is left as found; the DSN needs SELECT/DELETE on
    ``contract_jobs``/``job_unique_claims`` and write access to ``queue_meta``, and must be a
    member of the role owning ``job_routing`` (contract v1.1 scopes it to the enqueuing login).
    The stored ordering key is compared as its digest (``job_routing`` returns no raw key).
    ``junit``/``json``: also write the report to these paths. Raises ConformanceError when
    the database or schema cannot be used.
    """
