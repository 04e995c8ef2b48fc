"""Expected-failures files: the runner's one format and matcher, from the native module.

Format (JSON)::

    {"version": 1, "expected_failures": [{"id": "producer::unique_key::uk-…", "reason": "why"}]}

``id`` is a case name or a trailing part of one made of whole ``::`` segments (a bare vector
ID covers every case ending in it); every entry must name at least one known case.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from awa_conformance import _native
from awa_conformance._errors import ExpectedFailuresError

FORMAT_VERSION = 1


def load_expected_failures(path: str | os.PathLike[str], known_ids: Iterable[str]) -> dict[str, str]:
    """Parse and check an expected-failures file: ``{entry id: reason}`` in file order.

    ``known_ids`` are the case names the entries must match (the runner's rule). Raises
    ExpectedFailuresError, naming the fix, for a malformed file or an entry matching nothing.
    """
    try:
        entries = _native._load_expected_failures(os.fspath(path), list(known_ids))
    except ValueError as e:
        raise ExpectedFailuresError(str(e)) from e
    return dict(entries)
