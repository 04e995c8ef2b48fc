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
    """One case of a producer check, as the runner's report records it.

    ``name`` is the case (trial) name ``producer::<family>::<id>[::w<width>][::<step>]``,
    ``family`` its second segment and ``id`` the rest. Bytes in ``expected``/``actual`` are
    lowercase hex (whole, as in the runner's JSON report).
    """

    id: str
    family: str
    status: Literal["passed", "failed", "expected_failure", "unexpected_pass", "not_applicable", "ignored", "errored"]
    expected: dict[str, Any]
    actual: dict[str, Any]
    message: str
    name: str
    def __init__(
        self,
        id: str,
        family: str,
        status: Literal["passed", "failed", "expected_failure", "unexpected_pass", "not_applicable", "ignored", "errored"],
        expected: dict[str, Any] = ...,
        actual: dict[str, Any] = ...,
        message: str = "",
        name: str = "",
    ) -> None: ...
    @classmethod
    def from_runner(cls, case: dict[str, Any]) -> CaseResult:
        """One case object of the runner's JSON report."""
    def to_dict(self) -> dict[str, Any]: ...

@final
class Report:
    """All cases of one producer check plus provenance: the runner's own report of the run.

    ``provenance`` and ``verdict`` (``conformant``, ``nonconformant``, ``error``) are the
    runner's (``runner/report.schema.json``); the JSON, JUnit and Markdown renderings are the
    runner's writers, byte for byte what ``awa-conformance --producer`` writes.
    """

    cases: list[CaseResult]
    provenance: dict[str, Any]
    verdict: str
    run_errors: list[str]
    def __init__(
        self,
        cases: list[CaseResult] = ...,
        provenance: dict[str, Any] = ...,
        verdict: str = "",
        run_errors: list[str] = ...,
    ) -> None: ...
    @classmethod
    def from_native(cls, native: Any) -> Report:
        """Wrap the native module's report object (what check_producer does)."""
    @property
    def counts(self) -> dict[str, int]:
        """Cases per status (passed, failed, expected_failure, unexpected_pass, not_applicable,
        ignored, errored) and total."""
    @property
    def ok(self) -> bool:
        """True when no case failed, passed unexpectedly or errored, and the run had no error."""
    @property
    def failures(self) -> list[CaseResult]:
        """The cases that fail the run (failed, unexpected_pass, errored)."""
    def to_dict(self) -> dict[str, Any]:
        """The runner's JSON report as a dict."""
    def to_json(self, *, indent: int | None = 2) -> str:
        """The runner's JSON report (format ``awa-conformance-report`` v1)."""
    def write_json(self, path: str | os.PathLike[str]) -> None:
        """Write the runner's JSON report."""
    def write_junit(self, path: str | os.PathLike[str]) -> None:
        """Write the runner's JUnit XML (one testcase per case)."""
    def write_markdown(self, path: str | os.PathLike[str]) -> None:
        """Write the runner's Markdown summary."""

class ProducerRefused(Exception):
    """Raise from ``insert`` to refuse a request client-side: ``ProducerRefused(code, message="")``.

    ``code`` is the contract's (``key_too_long``, ``unique_states_not_8_bits``, ...). A
    database refusal needs nothing: let the driver's exception (with ``.sqlstate``) propagate.
    """

    code: str
    message: str
    def __init__(self, code: str, message: str = "") -> None: ...

class ProducerSkip(Exception):
    """Raise from ``insert`` when the producer cannot do a request: the case is not applicable."""

def check_producer(
    dsn: str,
    insert: Callable[[dict[str, Any]], Any],
    *,
    families: Iterable[str] | None = None,
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
    """Check a producer in-process with the runner's producer engine (``awa-conformance --producer``).

    The same cases, judge, expected-failures matcher and report writers as the CLI; the
    producer is ``insert``, called once per request with the GIL held (the engine releases
    it while it prepares queues, reads jobs back and judges). Cases (names
    ``producer::<family>::<id>[::w<width>][::<step>]``): every routing_precedence vector,
    every normative unique_key vector with the key computed by the producer, unique_states
    duplicate semantics, partitions, ordering/concurrency keys at widths 1, 2, 7, 8, 64,
    and expected refusals; ``families`` selects some (unknown: ConformanceError). The engine
    creates run-scoped queues and widths on its own connection (``dsn``: an owner or
    superuser, member of the role owning ``job_routing``), reads each job back through
    ``<schema>.job_routing``, compares it with the vector and with what ``<schema>.insert_job``
    computes for the same request in a rolled-back transaction, and removes every row it and
    the producer created. ``insert`` receives one dict per request::

        {"case": str,                     # the case name, for logs
         "schema": str,                   # the contract schema: call <schema>.insert_job
         "kind": str, "queue": str,       # queue: the logical queue (see partition)
         "args": Any,                     # the args document decoded (dict, list, int, float,
                                          #   str, bool; None = the JSON document null)
         "args_typed": dict,              # the same document in ADR 0002 typed form
         "priority": int | None,          # None: the default (omit p_priority)
         "run_at": str | None,            # RFC 3339 (UTC with protocol=2, any offset with
                                          #   protocol=3, microseconds); None: now
         "tags": list[str],
         "ordering_key": bytes | None,    # raw bytes (b"" is a key, None is not)
         "concurrency_key": bytes | None,
         "unique": None | {"by_queue": bool, "by_args": bool, "period_bucket": int | None},
                                          # compute the key yourself (contract §2); the queue
                                          #   hashed is the physical queue you enqueue to
         "unique_states": str | None,     # bind as text with ::varbit; refuse non-8-bit ones
         "partition": None | {"key": bytes, "partitions": int},
                                          # enqueue to the physical queue (contract §5)
         "opts": dict,                    # p_opts
         # protocol=3 only (absent with protocol=2):
         "metadata": Any,                 # the metadata decoded as args is; None: the
                                          #   default {} (omit p_metadata); bind the
                                          #   canonical JSON text, as for args
         "metadata_typed": dict | None,
         "max_attempts": int | None}      # None: the default (omit p_max_attempts)

    ``insert`` commits the job and returns its id (``int``), or a dict ``{"job_id": int,
    "trace": {"canonical_args", "unique_key_hex", "unique_preimage_hex", "physical_queue"}}``
    so a mismatch is named by its layer. A coroutine function is awaited (one event loop for
    the whole check). A database refusal is the driver's exception with ``.sqlstate``
    (psycopg's): reported with that SQLSTATE and the contract ``code`` of its JSON DETAIL.
    ``raise ProducerRefused(code)`` refuses client-side; ``raise ProducerSkip(reason)`` makes
    the case not applicable; any other exception or return value fails the case. ``timeout``
    bounds each call (seconds; a call still running then is abandoned, the case is a harness
    error). ``expected_failures``: the runner's JSON file (entries are case names or whole
    ``::``-segment suffixes such as a vector ID). ``producer_role``: the schema's producer
    role, as for ``schema install`` (the preflight checks its grants, as the CLI's
    ``--producer-role``). ``junit``/``json``/``markdown``: also write
    the runner's reports there. Sessions (docs/contract.md §12.4): the engine's own calls of
    ``<schema>.insert_job`` run under the callers' settings (TimeZone Asia/Kathmandu, DateStyle
    "SQL, DMY", IntervalStyle iso_8601) unless ``plain_sessions=True``; ``insert``'s connection
    is its own, so open it with ``session_dsn(dsn)`` to be checked as the CLI checks a producer
    process (a ``run_at`` bound as a naive timestamp then fails); the report's provenance
    names both (``caller_session``, ``producer_session``). Raises ConformanceError when the
    database or schema cannot be used, ExpectedFailuresError for a bad expected-failures file.
    """

def session_dsn(dsn: str) -> str:
    """``dsn`` (a URL or a libpq key=value string) as a ``postgresql://`` URL whose sessions
    start under the callers' settings of docs/contract.md §12.4 (the settings after any
    ``options`` of ``dsn``, so they win): what an ``insert`` callable connects with, so a
    mistake that depends on its session (a naive ``run_at``) shows in ``check_producer``.
    Contains the password: never print it. Raises ConformanceError for a DSN that cannot be
    read."""
