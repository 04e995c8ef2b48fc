"""The embedded vectors (releases v1 and v1.1, compiled into the native module) as plain Python data."""

from __future__ import annotations

import json
import struct
from functools import lru_cache
from typing import Any

from awa_conformance import _native
from awa_conformance._errors import UnknownFamily


@lru_cache(maxsize=1)
def _text() -> str:
    # Built in Rust: the errata are applied there (one place decides what a vector says).
    return _native._embedded_vectors_json()


def families() -> tuple[str, ...]:
    """The vector families, in file-name order."""
    names = {v["family"] for v in json.loads(_text())}
    return tuple(sorted(names))


def vectors(family: str | None = None) -> list[dict[str, Any]]:
    """The vectors of one family (or of all), v1 then v1.1, each with ``family`` and ``release`` keys.

    Descriptions and tags are as corrected by the errata; a corrected vector has an ``erratum``
    key holding the reason.
    """
    names = families()
    if family is not None and family not in names:
        raise UnknownFamily(
            f"unknown vector family {family!r}: pass one of {', '.join(names)}, or None for all"
        )
    # Parsed per call: callers get their own copy to mutate.
    everything = json.loads(_text())
    if family is None:
        return sorted(everything, key=lambda v: names.index(v["family"]))
    return [v for v in everything if v["family"] == family]


def manifest(release: str | None = None) -> dict[str, Any]:
    """The manifest of the newest embedded release (v1.1, which pins v1's root), or of ``release`` ("1", "1.1")."""
    manifests = [json.loads(t) for t in _native._embedded_manifests()]
    if release is None:
        return manifests[-1]
    for m in manifests:
        if str(m["vectors_version"]) == release:
            return m
    known = ", ".join(str(m["vectors_version"]) for m in manifests)
    raise ValueError(f"no embedded vector release {release!r}: pass one of {known}")


def decode_typed(value: dict[str, Any]) -> Any:
    """Turn an ADR 0002 typed JSON value into the Python value that canonical_json accepts.

    null → None, int → int (exact), float → float from its IEEE-754 ``bits`` (so -0.0 and NaN
    survive), array → list, object → dict (insertion order kept; for a duplicated key the
    last value wins, as in the core), nested (v1.1: ``depth`` single-element arrays or
    single-member objects ``{key: ...}`` around ``value``) → those containers.
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
    if kind == "nested":
        out = decode_typed(value["value"])
        for _ in range(value["depth"]):
            out = [out] if value["container"] == "array" else {value["key"]: out}
        return out
    raise ValueError(f"unknown typed JSON value type {kind!r} (ADR 0002 lists the types)")
