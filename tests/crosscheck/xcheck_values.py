"""Typed vector values (ADR 0002) to Python objects, and what the released Python SDK can express."""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

I64_MIN = -(2**63)
I64_MAX = 2**63 - 1

# The released SDK's insert path refuses args nested deeper than this many containers
# ("JSON nesting too deep (max 64 levels)"); cancel_by_unique_key has no such limit.
SDK_INSERT_MAX_DEPTH = 64
# released insert_job_compat: kind and queue length <= 200 characters.
SQL_MAX_NAME_CHARS = 200


class VectorFormatError(ValueError):
    """A vector file does not follow docs/adr/0002-vector-format.md."""


@dataclass
class PyValue:
    """A typed value converted to Python, with the ways Python/the SDK cannot carry it."""

    value: Any
    # Ints outside i64: the released SDK converts them to f64 (documented Rust-vs-Python divergence).
    has_big_int: bool = False
    # Duplicate object keys: a Python dict cannot hold them.
    has_duplicate_key: bool = False
    # U+0000 in a string or key: PostgreSQL jsonb refuses it, so it cannot be stored.
    has_nul: bool = False
    depth: int = 0
    notes: list[str] = field(default_factory=list)


def from_typed(typed: Any, where: str) -> PyValue:
    """Convert one TYPED value; `where` names the vector for error messages."""
    out = PyValue(None)
    out.value, out.depth = _conv(typed, where, out)
    return out


def _conv(t: Any, where: str, acc: PyValue) -> tuple[Any, int]:
    if not isinstance(t, dict) or "type" not in t:
        raise VectorFormatError(f"{where}: not a TYPED value: {json.dumps(t)[:80]}")
    kind = t["type"]
    if kind == "null":
        return None, 0
    if kind == "bool":
        if not isinstance(t.get("value"), bool):
            raise VectorFormatError(f"{where}: bool value must be true/false")
        return t["value"], 0
    if kind == "int":
        n = int(t["value"])
        if not I64_MIN <= n <= I64_MAX:
            acc.has_big_int = True
        return n, 0
    if kind == "float":
        # The bits are the exact value; the decimal must agree (NaN payloads aside).
        f = struct.unpack(">d", bytes.fromhex(t["bits"]))[0]
        dec = float(t["value"])
        if not (math.isnan(f) and math.isnan(dec)) and struct.pack(">d", dec) != struct.pack(">d", f):
            raise VectorFormatError(f"{where}: float value {t['value']} disagrees with bits {t['bits']}")
        return f, 0
    if kind == "string":
        s = t["value"]
        if "\x00" in s:
            acc.has_nul = True
        return s, 0
    if kind == "array":
        items = [_conv(x, where, acc) for x in t["value"]]
        return [v for v, _ in items], 1 + max((d for _, d in items), default=0)
    if kind == "object":
        obj: dict[str, Any] = {}
        depth = 0
        for pair in t["value"]:
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
                raise VectorFormatError(f"{where}: object member must be [key, TYPED]")
            key, sub = pair
            if "\x00" in key:
                acc.has_nul = True
            if key in obj:
                acc.has_duplicate_key = True
            v, d = _conv(sub, where, acc)
            obj[key] = v  # insertion order kept for first occurrences
            depth = max(depth, d)
        return obj, 1 + depth
    if kind == "nested":
        # v1.1: `depth` single-element arrays or single-member objects {key: ...} around value.
        depth = t["depth"]
        if not (isinstance(depth, int) and depth >= 1 and t.get("container") in ("array", "object")):
            raise VectorFormatError(f"{where}: nested needs container array/object and depth >= 1")
        v, d = _conv(t["value"], where, acc)
        for _ in range(depth):
            v = [v] if t["container"] == "array" else {t["key"]: v}
        return v, d + depth
    raise VectorFormatError(f"{where}: unknown TYPED type {kind!r}")


def load_family(vectors_root: Path, releases: tuple[str, ...], family: str) -> list[dict[str, Any]]:
    """The vectors of `<release>/<family>.json` for every release that has the family (v1 must),
    checked for the envelope fields we rely on. Vectors whose expected answer is an error (inputs
    the contract refuses) are left out: released Awa defines no such refusal to compare with."""
    out: list[dict[str, Any]] = []
    for i, release in enumerate(releases):
        path = vectors_root / release / f"{family}.json"
        if i > 0 and not path.is_file():
            continue
        out.extend(v for v in _load_file(path, family) if "error" not in v["expected"])
    return out


def _load_file(path: Path, family: str) -> list[dict[str, Any]]:
    if not path.is_file():
        raise VectorFormatError(f"{path}: missing; generate the vectors before the cross-check")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VectorFormatError(f"{path}: not valid UTF-8 JSON ({exc}); regenerate the vectors") from exc
    if doc.get("format") != "awa-conformance-vectors" or doc.get("family") != family:
        raise VectorFormatError(f"{path}: not an awa-conformance-vectors file for family {family}")
    vectors = doc.get("vectors")
    if not isinstance(vectors, list) or not vectors:
        raise VectorFormatError(f"{path}: has no vectors")
    return vectors
