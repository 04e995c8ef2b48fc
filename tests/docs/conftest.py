"""Shared fixtures of the documentation checks: one Kit (runner binary + Python module) per session.

Every test that takes the `kit` fixture is marked `needs_kit`: it runs the runner binary and the
installed `awa_conformance` module (the release wheel). The others (ADR template, install lines,
released-awa.md's citations, ...) read files only, so `scripts/test.sh quick` runs them with
`-m "not needs_kit"` (no wheel, no database), and the `db` and `full` tiers run the rest with
`-m needs_kit`. The mark follows the fixture, so a new test lands in the right tier by itself.
"""

from __future__ import annotations

import pytest

from doccheck import Kit


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "needs_kit: uses the runner binary and the installed awa_conformance module (the kit fixture)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "kit" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.needs_kit)


@pytest.fixture(scope="session")
def kit() -> Kit:
    return Kit()
