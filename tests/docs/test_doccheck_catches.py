"""The documentation check fails when a document is wrong: edited copies of the real documents.

Each test copies a document, breaks one claim the way a careless edit would, and asserts that
the check reports that document and line.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from doccheck import ROOT, DocError, Kit, check, collect


def errors(path: Path, display: str, kit: Kit) -> list[str]:
    out = []
    for example in collect(path, display):
        try:
            check(example, kit)
        except DocError as e:
            out.append(str(e))
    return out


def broken_copy(tmp_path: Path, doc: str, old: str, new: str) -> tuple[Path, int]:
    """A copy of `doc` with the first `old` replaced; returns the path and the edited line."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert old in text, f"{doc} no longer contains {old!r}: update this test"
    line = text[: text.index(old)].count("\n") + 1
    path = tmp_path / Path(doc).name
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path, line


def test_the_real_documents_pass(kit: Kit) -> None:
    for doc in ("docs/contract.md",):
        assert errors(ROOT / doc, doc, kit) == []


def test_a_changed_number_in_the_prose_fails(tmp_path: Path, kit: Kit) -> None:
    # §4's worked example: hash64("tenant-42") with its last digit changed.
    path, _ = broken_copy(tmp_path, "docs/contract.md", "805962331363418024", "805962331363418025")
    found = errors(path, "docs/contract.md", kit)
    assert any(re.match(r"docs/contract\.md:\d+: .*805962331363418024", e) for e in found), found


def test_a_changed_shard_fails(tmp_path: Path, kit: Kit) -> None:
    path, _ = broken_copy(tmp_path, "docs/contract.md", "shard 5 at width 8", "shard 6 at width 8")
    found = errors(path, "docs/contract.md", kit)
    assert any(re.match(r"docs/contract\.md:\d+: the checked value '5' does not appear", e) for e in found), found


def test_a_number_no_check_covers_fails(tmp_path: Path, kit: Kit) -> None:
    # A number in the prose that the marker does not state is unchecked, so it fails.
    path, line = broken_copy(tmp_path, "docs/contract.md", "first 8 bytes `9222", "first 9 bytes `9222")
    found = errors(path, "docs/contract.md", kit)
    assert f"docs/contract.md:{line}: the example states 9, which no check line covers" in found, found


def test_a_changed_behaviour_fails(kit: Kit) -> None:
    # The same document against a core whose ordering shard is off by one.
    real = kit.ac
    fake = SimpleNamespace(**{n: getattr(real, n) for n in dir(real) if not n.startswith("__")})
    fake.ordering_shard = lambda key, width: (real.ordering_shard(key, width) + 1) % width
    wrong = Kit(module=fake, runner=kit.runner)
    found = errors(ROOT / "docs/contract.md", "docs/contract.md", wrong)
    assert any("ordering_shard" in e and "the document says" in e for e in found), found


def test_a_wrong_doctest_output_fails(tmp_path: Path, kit: Kit) -> None:
    path, line = broken_copy(tmp_path, "README.md", "'11111000'\n", "'11111001'\n")
    found = errors(path, "README.md", kit)
    # doctest names the line of the `>>>` example, the one above the edited output.
    assert any(e.startswith("README.md:") and f'File "README.md", line {line - 1}' in e for e in found), found


def test_an_unchecked_example_block_fails(tmp_path: Path, kit: Kit) -> None:
    path = tmp_path / "doc.md"
    path.write_text("# t\n\n```json\n{\"version\": 1}\n```\n", encoding="utf-8")
    found = errors(path, "doc.md", kit)
    assert found and found[0].startswith("doc.md:3: ") and "nobody checks" in found[0], found


def test_a_worked_example_without_marker_fails(tmp_path: Path, kit: Kit) -> None:
    path = tmp_path / "doc.md"
    path.write_text("# t\n\nWorked example: `hash64(\"\")` is 1.\n", encoding="utf-8")
    found = errors(path, "doc.md", kit)
    assert found == ["doc.md:3: a worked example without a <!-- check ... --> marker before it"]


def test_a_wrong_exit_code_table_fails(tmp_path: Path, kit: Kit) -> None:
    path, _ = broken_copy(tmp_path, "README.md", "| 3 | usage error", "| 3 | harness error")
    found = errors(path, "README.md", kit)
    assert any("exit code 3" in e for e in found), found


def test_an_unknown_runner_flag_fails(tmp_path: Path, kit: Kit) -> None:
    path, line = broken_copy(tmp_path, "README.md", "vectors regenerate --check", "vectors regenerate --verify")
    found = errors(path, "README.md", kit)
    assert any(e.startswith(f"README.md:{line}: ") and "--verify" in e for e in found), found


def test_a_wrong_adapter_request_fails(tmp_path: Path, kit: Kit) -> None:
    path, _ = broken_copy(tmp_path, "docs/adapter-protocol.md", '"width":8', '"width":7')
    found = errors(path, "docs/adapter-protocol.md", kit)
    assert any("the runner sends input=" in e for e in found), found


@pytest.mark.parametrize("capability", ["routing_precedence", "no_such_family"])
def test_a_wrong_adapter_hello_fails(tmp_path: Path, kit: Kit, capability: str) -> None:
    # A protocol the runner does not speak (4) is refused; an unknown family name must not pass
    # unnoticed either.
    old = '"protocol":1'
    new = '"protocol":4' if capability == "routing_precedence" else old
    path, _ = broken_copy(tmp_path, "docs/adapter-protocol.md", old, new)
    if capability == "no_such_family":
        text = path.read_text(encoding="utf-8").replace('"concurrency_shard","routing', '"no_such_family","routing', 1)
        path.write_text(text, encoding="utf-8")
    found = errors(path, "docs/adapter-protocol.md", kit)
    assert any("docs/adapter-protocol.md:" in e and ("rejects this hello" in e or "asked for" in e) for e in found), found


def test_a_wrong_expected_failures_file_fails(tmp_path: Path, kit: Kit) -> None:
    path, _ = broken_copy(tmp_path, "bindings/README.md", '"reason": "why"', '"because": "why"')
    found = errors(path, "bindings/README.md", kit)
    assert any(e.startswith("bindings/README.md:") and "expected-failures file" in e for e in found), found
