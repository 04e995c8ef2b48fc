"""Finds example adapters and producers (examples/**) that import the kit they are meant to check.

An example answers the vectors independently; one that imports `awa_conformance` or links an
`awa-conformance` crate compares the reference with itself and can never fail. Checked:
Python imports (ast), Go import paths and go.mod requirements, Cargo.toml dependencies and
Rust `use`/paths, pyproject/requirements dependency names, JavaScript imports/requires and
package.json dependencies, Maven pom.xml dependencies. Installed third-party trees
(node_modules, Maven target/, Go .build/) are not the example's own code and are skipped.
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from pathlib import Path

# The kit's names: the Python module and distribution, and its crates.
KIT = re.compile(r"awa[-_]conformance(?![-_]adapter)")
GO_IMPORT = re.compile(r'^\s*(?:import\s+)?(?:[\w.]+\s+)?"([^"]+)"', re.MULTILINE)


def _python(path: Path, text: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(text, filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if fname in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                names = [node.args[0].value]
        found += [f"{path}:{node.lineno}: imports {n}" for n in names if n.split(".")[0] == "awa_conformance"]
    return found


def _go(path: Path, text: str) -> list[str]:
    found = []
    for block in re.finditer(r"^import\s*\((.*?)^\)|^import\s+[^\n]*", text, re.MULTILINE | re.DOTALL):
        for m in GO_IMPORT.finditer(block.group(0)):
            if KIT.search(m.group(1)):
                line = text.count("\n", 0, block.start() + m.start(1)) + 1
                found.append(f"{path}:{line}: imports {m.group(1)}")
    return found


def _go_mod(path: Path, text: str) -> list[str]:
    return [
        f"{path}:{i}: requires {line.split()[0 if not line.startswith('require') else 1]}"
        for i, line in enumerate(text.splitlines(), 1)
        if not line.strip().startswith("module") and KIT.search(line)
    ]


def _cargo(path: Path, text: str) -> list[str]:
    doc = tomllib.loads(text)
    tables = [doc.get(k, {}) for k in ("dependencies", "dev-dependencies", "build-dependencies")]
    tables += [t.get(k, {}) for t in doc.get("target", {}).values() for k in ("dependencies", "dev-dependencies")]
    found = []
    for table in tables:
        for name, spec in table.items():
            package = spec.get("package", name) if isinstance(spec, dict) else name
            if KIT.search(package):
                found.append(f"{path}: depends on crate {package}")
    return found


def _rust(path: Path, text: str) -> list[str]:
    return [
        f"{path}:{i}: uses {m.group(0)}"
        for i, line in enumerate(text.splitlines(), 1)
        if not line.lstrip().startswith("//")
        for m in [re.search(r"\bawa_conformance\w*", line)]
        if m
    ]


def _python_deps(path: Path, text: str) -> list[str]:
    if path.name == "pyproject.toml":
        project = tomllib.loads(text).get("project", {})
        deps = list(project.get("dependencies", []))
        deps += [d for extra in project.get("optional-dependencies", {}).values() for d in extra]
    else:
        deps = [line.split("#")[0].strip() for line in text.splitlines()]
    return [f"{path}: depends on {d}" for d in deps if d and KIT.match(d.lower())]


JS_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]([^'"]+)['"]""")
POM_DEPENDENCY = re.compile(r"<dependency>.*?</dependency>", re.DOTALL)
SKIPPED_DIRS = {"node_modules", "target", ".build"}


def _js(path: Path, text: str) -> list[str]:
    return [
        f"{path}:{text.count(chr(10), 0, m.start()) + 1}: imports {m.group(1)}"
        for m in JS_IMPORT.finditer(text)
        if KIT.search(m.group(1))
    ]


def _package_json(path: Path, text: str) -> list[str]:
    doc = json.loads(text)
    tables = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
    return [f"{path}: depends on {name}" for t in tables for name in doc.get(t, {}) if KIT.search(name)]


def _pom(path: Path, text: str) -> list[str]:
    return [
        f"{path}:{text.count(chr(10), 0, m.start()) + 1}: depends on {m.group(0).split('<artifactId>')[1].split('<')[0]}"
        for m in POM_DEPENDENCY.finditer(text)
        if "<artifactId>" in m.group(0) and KIT.search(m.group(0).split("<artifactId>")[1].split("<")[0])
    ]


def findings(root: Path) -> list[str]:
    """Every place under `root` where an example uses the kit, as `path:line: what`."""
    found: list[str] = []
    files = (p for p in root.rglob("*") if p.is_file() and not SKIPPED_DIRS & set(p.relative_to(root).parts))
    for path in sorted(files):
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = path.relative_to(root.parent)
        if path.suffix == ".py":
            found += _python(rel, text)
        elif path.suffix == ".go":
            found += _go(rel, text)
        elif path.name == "go.mod":
            found += _go_mod(rel, text)
        elif path.name == "Cargo.toml":
            found += _cargo(rel, text)
        elif path.suffix == ".rs":
            found += _rust(rel, text)
        elif path.name == "pyproject.toml" or (path.name.startswith("requirements") and path.suffix == ".txt"):
            found += _python_deps(rel, text)
        elif path.suffix in (".js", ".mjs", ".cjs", ".ts"):
            found += _js(rel, text)
        elif path.name == "package.json":
            found += _package_json(rel, text)
        elif path.name == "pom.xml":
            found += _pom(rel, text)
    return found
