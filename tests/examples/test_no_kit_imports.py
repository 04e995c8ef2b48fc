"""No example adapter or producer imports the kit; and the check itself catches every kind of import."""

from __future__ import annotations

from pathlib import Path

import pytest

from no_kit_imports import findings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_examples_exist():
    assert any(EXAMPLES.rglob("*.py")) and any(EXAMPLES.rglob("*.go")), "examples/ moved? update this test"
    assert any(EXAMPLES.rglob("*.mjs")) and any(EXAMPLES.rglob("pom.xml")), "examples/producers moved? update this test"


def test_no_example_imports_the_kit():
    found = findings(EXAMPLES)
    assert not found, "examples must implement every family themselves, without the kit:\n" + "\n".join(found)


VIOLATIONS = {
    "a.py": "import json\nimport awa_conformance as ac\n",
    "b.py": "from awa_conformance._native import unique_key\n",
    "c.py": "import importlib\nm = importlib.import_module('awa_conformance')\n",
    "d/main.go": 'package main\n\nimport (\n\t"fmt"\n\tac "github.com/hardbyte/awa-conformance/go"\n)\n',
    "e/go.mod": "module example.com/x\n\nrequire github.com/hardbyte/awa-conformance v0.1.0\n",
    "f/Cargo.toml": '[package]\nname = "x"\n\n[dependencies]\ncore = { package = "awa-conformance-core", version = "0.1" }\n',
    "g/src/main.rs": "fn main() { let _ = awa_conformance_core::json::canonical_json; }\n",
    "h/requirements.txt": "blake3==1.0.11\nawa-conformance[db]>=0.1\n",
    "i/producer.mjs": "import pg from 'pg';\nimport { uniqueKey } from 'awa-conformance';\n",
    "j/index.js": "const pg = require('pg');\nconst ac = require('@awa/awa-conformance');\n",
    "k/package.json": '{"name": "x", "dependencies": {"pg": "^8", "awa-conformance": "^0.1"}}',
    "l/pom.xml": "<project><dependencies><dependency><groupId>org.postgresql</groupId><artifactId>postgresql</artifactId></dependency>"
    "<dependency><groupId>x</groupId><artifactId>awa-conformance-core</artifactId></dependency></dependencies></project>",
}


@pytest.mark.parametrize("name", sorted(VIOLATIONS))
def test_the_check_catches(tmp_path: Path, name: str):
    root = tmp_path / "examples"
    target = root / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(VIOLATIONS[name], encoding="utf-8")
    found = findings(root)
    assert len(found) == 1, found
    assert found[0].startswith(str(Path("examples") / name)), found


def test_clean_code_passes(tmp_path: Path):
    root = tmp_path / "examples"
    root.mkdir()
    (root / "ok.py").write_text("import blake3\nimport hashlib\n# awa_conformance is not imported\n", encoding="utf-8")
    (root / "go.mod").write_text("module example.com/awa-conformance-adapter\n\ngo 1.19\n", encoding="utf-8")
    assert findings(root) == []
