"""Every ADR follows the one template of docs/adr/README.md; and the check notices one that does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from adrs import problems
from doccheck import ROOT

ADR_DIR = ROOT / "docs" / "adr"
INDEX = (ADR_DIR / "README.md").read_text(encoding="utf-8")
ADRS = sorted(p for p in ADR_DIR.glob("*.md") if p.name != "README.md")


def test_there_are_adrs() -> None:
    assert len(ADRS) >= 15


@pytest.mark.parametrize("path", ADRS, ids=[p.name for p in ADRS])
def test_adr_follows_the_template(path: Path) -> None:
    assert problems(path, INDEX) == []


def test_a_missing_section_fails(tmp_path: Path) -> None:
    src = (ADR_DIR / "0006-concurrency-key-digest.md").read_text(encoding="utf-8")
    broken = tmp_path / "0006-concurrency-key-digest.md"
    broken.write_text(src.replace("## Alternatives considered", "## Notes"), encoding="utf-8")
    found = problems(broken, INDEX)
    assert len(found) == 1 and "Alternatives considered" in found[0], found


def test_an_unlisted_or_misnumbered_adr_fails(tmp_path: Path) -> None:
    src = (ADR_DIR / "0006-concurrency-key-digest.md").read_text(encoding="utf-8")
    broken = tmp_path / "0099-something.md"
    broken.write_text(src, encoding="utf-8")
    found = problems(broken, INDEX)
    assert any("'# ADR 0099: <title>'" in f for f in found) and any("not listed" in f for f in found), found
