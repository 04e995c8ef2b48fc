"""check_producer checks its report paths before the run, as the runner's command line does."""

from __future__ import annotations

from pathlib import Path

import pytest

import awa_conformance as ac

# Nothing listens on port 1: a path problem must be reported before any connection is tried.
DSN = "postgres://nobody@127.0.0.1:1/none"


def insert(request: dict) -> int:
    raise AssertionError("the producer must not be called when a report path is bad")


def test_an_unwritable_report_path_is_refused_before_the_run(tmp_path: Path) -> None:
    bad = tmp_path / "no-such-dir" / "j.xml"
    with pytest.raises(ac.ConformanceError, match=r"junit= .*no-such-dir.*does not exist"):
        ac.check_producer(DSN, insert, junit=str(bad))
    with pytest.raises(ac.ConformanceError, match=r"json= .* is a directory"):
        ac.check_producer(DSN, insert, json=str(tmp_path))


def test_two_reports_naming_one_file_are_refused_before_the_run(tmp_path: Path) -> None:
    with pytest.raises(ac.ConformanceError, match=r"json= .* and junit= .* are the same file"):
        ac.check_producer(DSN, insert, json=str(tmp_path / "r"), junit=str(tmp_path / "." / "r"))
    assert not (tmp_path / "r").exists()
