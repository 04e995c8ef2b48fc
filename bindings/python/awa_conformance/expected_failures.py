"""Expected-failures files (shared with the Rust runner): JSON or TOML lists of {id, reason}."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable

from awa_conformance._errors import ExpectedFailuresError

FORMAT_VERSION = 1


def load_expected_failures(path: str | os.PathLike[str], known_ids: Iterable[str]) -> dict[str, str]:
    """Parse an expected-failures file into ``{vector id: reason}``.

    Format (JSON; TOML with the same shape when the name ends in ``.toml``)::

        {"version": 1, "expected_failures": [{"id": "rp-...", "reason": "why"}]}

    ``id`` and ``reason`` are required non-empty strings. An ID not in ``known_ids`` (the
    whole v1 vector set), a duplicate ID or any other key is an error.
    """
    name = os.fspath(path)
    try:
        if name.endswith(".toml"):
            try:
                import tomllib
            except ModuleNotFoundError:  # Python 3.10
                import tomli as tomllib  # type: ignore[no-redef]
            with open(name, "rb") as f:
                doc = tomllib.load(f)
        else:
            with open(name, encoding="utf-8") as f:
                doc = json.load(f)
    except (OSError, ValueError) as e:
        raise ExpectedFailuresError(f"{name}: cannot read expected-failures file: {e}") from e
    if not isinstance(doc, dict) or set(doc) != {"version", "expected_failures"}:
        raise ExpectedFailuresError(
            f'{name}: expected an object with exactly "version" and "expected_failures", '
            'e.g. {"version": 1, "expected_failures": [{"id": "...", "reason": "..."}]}'
        )
    if doc["version"] != FORMAT_VERSION:
        raise ExpectedFailuresError(f"{name}: version {doc['version']!r} is not supported; write version = 1")
    entries = doc["expected_failures"]
    if not isinstance(entries, list):
        raise ExpectedFailuresError(f"{name}: expected_failures must be a list of {{id, reason}} entries")
    known = set(known_ids)
    out: dict[str, str] = {}
    for i, entry in enumerate(entries):
        where = f"{name}: expected_failures[{i}]"
        if not isinstance(entry, dict) or set(entry) != {"id", "reason"}:
            raise ExpectedFailuresError(f"{where}: each entry needs exactly the keys id and reason")
        vid, reason = entry["id"], entry["reason"]
        if not isinstance(vid, str) or not vid or not isinstance(reason, str) or not reason.strip():
            raise ExpectedFailuresError(f"{where}: id and reason must be non-empty strings")
        if vid not in known:
            raise ExpectedFailuresError(f"{where}: unknown vector ID {vid!r}; copy IDs from the vector files or test names")
        if vid in out:
            raise ExpectedFailuresError(f"{where}: duplicate vector ID {vid!r}; list each ID once")
        out[vid] = reason
    return out
