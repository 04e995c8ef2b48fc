"""The exception hierarchy of awa_conformance (raised by the native module and the producer checks)."""

from __future__ import annotations

__all__ = [
    "Error",
    "InvalidWidth",
    "InvalidPartitions",
    "InvalidShard",
    "InvalidKey",
    "InvalidUniqueStates",
    "InvalidArgs",
    "IntegerOutOfRange",
    "InvalidType",
    "InvalidArgsType",
    "UnknownFamily",
    "ConformanceError",
    "ExpectedFailuresError",
    "ProducerRefused",
    "ProducerSkip",
]


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
    """A parameter of the wrong Python type (e.g. str where raw bytes are required)."""


class InvalidArgsType(InvalidType):
    """A value with no JSON mapping: tuple, bytes, set, a non-str dict key, ..."""


class UnknownFamily(Error, ValueError):
    """vectors(family) with a family that the embedded vectors do not have."""


class ConformanceError(Error):
    """A producer check could not run (database, schema, or producer callable misbehaving)."""


class ExpectedFailuresError(ConformanceError, ValueError):
    """An expected-failures file that is malformed or names an unknown vector ID."""


class ProducerRefused(Exception):
    """Raise from ``insert`` to refuse a request client-side, with the contract's code.

    For example ``raise ProducerRefused("key_too_long")`` for a key over 4096 bytes, or
    ``"unique_states_not_8_bits"``. A database refusal needs nothing: let the driver's
    exception (it has ``.sqlstate``, as psycopg's do) propagate.
    """

    code: str = ""
    message: str = ""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(message or code)
        self.code = code
        self.message = message or code


class ProducerSkip(Exception):
    """Raise from ``insert`` when the producer cannot do this request at all: the case is
    reported not applicable, with the exception's text as the reason."""
