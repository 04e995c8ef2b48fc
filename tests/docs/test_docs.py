"""Every worked example of the kit's documents is true: one test per example, named `document:line`."""

from __future__ import annotations

import pytest

from doccheck import DOCS, Example, Kit, check, collect_all

EXAMPLES = collect_all()


@pytest.mark.parametrize("example", [pytest.param(e, id=f"{e.where}:{e.kind}") for e in EXAMPLES])
def test_documented_example(example: Example, kit: Kit) -> None:
    check(example, kit)


@pytest.mark.parametrize("doc", DOCS)
def test_every_document_has_checked_examples(doc: str) -> None:
    kinds = {e.kind for e in EXAMPLES if e.doc == doc and e.kind != "rule"}
    assert kinds, f"{doc}: no checked example found; did the markers move?"
