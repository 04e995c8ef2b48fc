"""The database tests cannot pass by skipping: AWA_REQUIRE_DB=1 turns a missing DATABASE_URL into a failure."""

from __future__ import annotations

import pytest

from conftest import require_dsn


def test_missing_database_skips_by_default(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("AWA_REQUIRE_DB", raising=False)
    with pytest.raises(pytest.skip.Exception):
        require_dsn()


def test_missing_database_fails_when_required(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("AWA_REQUIRE_DB", "1")
    with pytest.raises(pytest.fail.Exception, match="AWA_REQUIRE_DB=1"):
        require_dsn()


def test_database_url_is_used(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://example.invalid/db")
    monkeypatch.setenv("AWA_REQUIRE_DB", "1")
    assert require_dsn() == "postgresql://example.invalid/db"
