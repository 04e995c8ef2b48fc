"""Keeps tests/mutants consistent: every patch applies, the table lists exactly the patches.

The runner tests that use a mutant only say "the runner failed it"; a patch that stopped
applying would break them with a confusing error, or (with fuzz) patch the wrong place. Here
every patch must apply to its example as it is now with exact context, a patched Python
example must still compile, the README table must name exactly the patch files, and no
example may carry a mistake switch again.
"""

from __future__ import annotations

import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

import materialise as m

README = m.HERE / "README.md"
BEGIN, END = "<!-- mutants:begin -->", "<!-- mutants:end -->"
# The switches the examples used to read; none may come back.
OLD_SWITCHES = ("AWA_EXAMPLE_MUTANT", "AWA_PRODUCER_BREAK", "AWA_ADAPTER_BREAK",
                "AWA_PRODUCER_CLIENT_CHECKS", "AWA_PG_MUTANT")


def table() -> set[tuple[str, str]]:
    text = README.read_text(encoding="utf-8").split(BEGIN, 1)[1].split(END, 1)[0]
    rows = set()
    for line in text.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows |= {(example.strip(), cells[0].strip("`")) for example in cells[1].split(",")}
    return rows


@pytest.mark.parametrize("example,mutant", m.all_patches())
def test_patch_applies(example: str, mutant: str) -> None:
    why = m.check(example, mutant)
    assert why is None, f"tests/mutants/{example}/{mutant}.patch no longer applies: {why}"


@pytest.mark.parametrize("example,mutant", m.all_patches())
def test_patch_says_what_it_breaks(example: str, mutant: str) -> None:
    head = m.patch_path(example, mutant).read_text(encoding="utf-8").split("\n--- ", 1)[0]
    assert head.startswith(f"Mutant `{mutant}` of "), head[:200]


def test_table_lists_exactly_the_patches() -> None:
    assert table() == set(m.all_patches())


def test_every_example_is_known() -> None:
    assert {e for e, _ in m.all_patches()} <= set(m.EXAMPLES)


@pytest.mark.parametrize("example,mutant", [(e, x) for e, x in m.all_patches()
                                            if e in ("python", "awa-pg", "adapter-python")])
def test_patched_python_compiles(example: str, mutant: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("AWA_MUTANTS_DIR", str(tmp_path))
    copy = m.materialise(example, mutant)
    for f in [*copy.glob("*.py"), copy / "run"]:
        if f.is_file() and (f.suffix == ".py" or f.read_text(encoding="utf-8").startswith("#!/usr/bin/env python3")):
            py_compile.compile(str(f), cfile=str(tmp_path / "pyc"), doraise=True)


def test_materialise_prints_a_command(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(m.HERE / "materialise.py"), "adapter-python", "separators"],
                          env={**os.environ, "AWA_MUTANTS_DIR": str(tmp_path)},
                          capture_output=True, text=True, check=True)
    argv = done.stdout.split()
    assert len(argv) == 2 and argv[1].startswith(str(tmp_path)) and argv[1].endswith("/adapter.py")
    assert b'b", ".join' in Path(argv[1]).read_bytes()
    # The example itself is untouched.
    assert b'b", ".join' not in (m.ROOT / "examples" / "adapters" / "python" / "adapter.py").read_bytes()


def test_no_example_has_a_mistake_switch() -> None:
    found = []
    for f in m._files(m.ROOT / "examples"):
        try:
            text = f.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [f"{f.relative_to(m.ROOT)}: {s}" for s in OLD_SWITCHES if s in text]
    assert not found, found
