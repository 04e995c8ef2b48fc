"""The embedded v1 vectors (compiled into the native module) as plain Python data."""

from __future__ import annotations

import json
import struct
from functools import lru_cache
from typing import Any

from awa_conformance import _native
from awa_conformance._errors import UnknownFamily

_MANIFEST = "manifest.json"


@lru_cache(maxsize=1)
def _texts() -> dict[str, str]:
    return dict(_native._embedded_vector_files())


def families() -> tuple[str, ...]:
    """The vector families, in file-name order."""
    return tuple(name.removesuffix(".json") for name in _texts() if name != _MANIFEST)


def vectors(family: str | None = None) -> list[dict[str, Any]]:
    """The vectors of one family (or of all, in family order), each with a ``family`` key added."""
    names = families()
    if family is not None and family not in names:
        raise UnknownFamily(
            f"unknown vector family {family!r}: pass one of {', '.join(names)}, or None for all"
        )
    out: list[dict[str, Any]] = []
    for name in names if family is None else (family,):
        # Parsed per call: callers get their own copy to mutate.
        doc = json.loads(_texts()[name + ".json"])
        for vector in doc["vectors"]:
            vector["family"] = name
            out.append(vector)
    return out


def manifest() -> dict[str, Any]:
    """The v1 manifest: per-file SHA-256 and vector counts, and ``root_sha256``."""
    return json.loads(_texts()[_MANIFEST])


def decode_typed(value: dict[str, Any]) -> Any:
    """Turn an ADR 0002 typed JSON value into the Python value that canonical_json accepts.

    null → None, int → int (exact), float → float from its IEEE-754 ``bits`` (so -0.0 and NaN
    survive), array → list, object → dict (insertion order kept; for a duplicated key the
    last value wins, as in the core).
    """
    kind = value["type"]
    if kind == "null":
        return None
    if kind == "bool":
        return bool(value["value"])
    if kind == "int":
        return int(value["value"])
    if kind == "float":
        return struct.unpack(">d", bytes.fromhex(value["bits"]))[0]
    if kind == "string":
        return value["value"]
    if kind == "array":
        return [decode_typed(v) for v in value["value"]]
    if kind == "object":
        return {k: decode_typed(v) for k, v in value["value"]}
    raise ValueError(f"unknown typed JSON value type {kind!r} (ADR 0002 lists the types)")
