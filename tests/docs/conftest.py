"""Shared fixtures of the documentation checks: one Kit (runner binary + Python module) per session."""

from __future__ import annotations

import pytest

from doccheck import Kit


@pytest.fixture(scope="session")
def kit() -> Kit:
    return Kit()
