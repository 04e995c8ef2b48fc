"""Checks docs/producer-kill-matrix.md against the mutant runs of test_example_producers.py.

Collected after that file (pytest orders files by name), so it sees every run of the session;
AWA_UPDATE_KILL_MATRIX=1 rewrites the table instead of failing on a stale one.
"""

from __future__ import annotations

import os

import pytest

from test_example_producers import FAMILIES, KILLS, LANGS, MUTANTS, ROOT

MATRIX_DOC = ROOT / "docs" / "producer-kill-matrix.md"
BEGIN, END = "<!-- kill-matrix:begin -->", "<!-- kill-matrix:end -->"


def render(kills: dict[tuple[str, str], set[str]], families: list[str]) -> str:
    lines = ["| mutant | " + " | ".join(families) + " |", "|---|" + "---|" * len(families)]
    for mutant in MUTANTS:
        cells = []
        for fam in families:
            who = [lang for lang in LANGS if fam in kills.get((lang, mutant), set())]
            cells.append(", ".join(who) if who else "—")
        lines.append(f"| `{mutant}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def test_doc_lists_every_mutant() -> None:
    text = MATRIX_DOC.read_text(encoding="utf-8")
    table = text.split(BEGIN, 1)[1].split(END, 1)[0]
    rows = [line.split("|")[1].strip().strip("`") for line in table.strip().splitlines()[2:]]
    assert rows == list(MUTANTS), "docs/producer-kill-matrix.md rows differ from the mutants tested"


def test_kill_matrix_doc_is_current() -> None:
    if len(KILLS) != len(LANGS) * len(MUTANTS):
        pytest.skip("the kill matrix needs every mutant run of this session (run the whole file)")
    text = MATRIX_DOC.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    fresh = f"{head}{BEGIN}\n{render(KILLS, sorted(FAMILIES))}\n{END}{tail}"
    if os.environ.get("AWA_UPDATE_KILL_MATRIX") == "1":
        MATRIX_DOC.write_text(fresh, encoding="utf-8")
        return
    assert fresh == text, "docs/producer-kill-matrix.md is stale: rerun with AWA_UPDATE_KILL_MATRIX=1"
