"""docs/released-awa.md: every fact names a cross-check test, and every test it names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from doccheck import ROOT

DOC = ROOT / "docs" / "released-awa.md"
FILES = {
    "sql": ROOT / "tests" / "crosscheck" / "test_released_sql.py",
    "awa": ROOT / "tests" / "crosscheck" / "test_released_awa.py",
    "adv": ROOT / "tests" / "crosscheck" / "test_advisories.py",
}
CITE = re.compile(r"`(sql|awa|adv)::(test_\w+)`")
FACT = re.compile(r"^\* \*\*(R\d+\.\d+)")


def defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}


def problems(text: str) -> list[str]:
    """Facts without a proof, and cited tests that do not exist, as `released-awa.md:line: what`."""
    tests = {prefix: defined_tests(path) for prefix, path in FILES.items()}
    out = []
    lines = text.splitlines()
    facts = [i for i, line in enumerate(lines) if FACT.match(line)]
    for n, start in enumerate(facts):
        end = facts[n + 1] if n + 1 < len(facts) else len(lines)
        body = "\n".join(lines[start:end])
        fact = FACT.match(lines[start]).group(1)
        if "Proof:" not in body and "fixture" not in body:
            out.append(f"released-awa.md:{start + 1}: fact {fact} names no cross-check test")
    for i, line in enumerate(lines, 1):
        for prefix, name in CITE.findall(line):
            if name not in tests[prefix]:
                out.append(f"released-awa.md:{i}: {prefix}::{name} does not exist in {FILES[prefix].name}")
    return out


def test_every_fact_is_tied_to_an_existing_test() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert len([m for m in map(FACT.match, text.splitlines()) if m]) >= 10
    assert problems(text) == []


def test_a_missing_test_or_proof_fails() -> None:
    text = DOC.read_text(encoding="utf-8")
    renamed = text.replace("sql::test_empty_kind_and_queue_are_accepted", "sql::test_empty_kind_is_rejected", 1)
    assert any("test_empty_kind_is_rejected does not exist" in p for p in problems(renamed))
    unproved = text + "\n* **R9.1 Invented.** A fact nobody checked.\n"
    assert any("fact R9.1 names no cross-check test" in p for p in problems(unproved))
