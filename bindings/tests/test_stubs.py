"""The hand-written __init__.pyi and the runtime module agree: names, signatures, class members."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest

import awa_conformance as ac

STUB = Path(ac.__file__).with_name("__init__.pyi")
TREE = ast.parse(STUB.read_text(encoding="utf-8"))
MISSING = object()


def _stub_names() -> dict[str, ast.stmt]:
    out: dict[str, ast.stmt] = {}
    for node in TREE.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node
    return out


STUB_NAMES = _stub_names()
PUBLIC = sorted(
    n for n in dir(ac) if not n.startswith("_") and not inspect.ismodule(getattr(ac, n))
)


def test_public_names_match_stub_and_all():
    assert set(PUBLIC) == set(ac.__all__)
    stub_public = {n for n in STUB_NAMES if not n.startswith("_")}
    assert set(PUBLIC) - stub_public == set(), "runtime names missing from __init__.pyi"
    assert stub_public - set(PUBLIC) == set(), "stub names missing at runtime"


def _literal(node: ast.expr | None) -> object:
    if node is None:
        return MISSING
    if isinstance(node, ast.Constant) and node.value is not Ellipsis:
        return node.value
    return Ellipsis  # "has a default", value not stated


def _stub_params(fn: ast.FunctionDef, skip_self: bool = False) -> list[tuple[str, str, object]]:
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    out = []
    for i, (arg, d) in enumerate(zip(positional, defaults)):
        kind = "POSITIONAL_ONLY" if i < len(a.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        out.append((arg.arg, kind, _literal(d)))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((arg.arg, "KEYWORD_ONLY", _literal(d)))
    return out[1:] if skip_self else out


def _runtime_params(obj: object) -> list[tuple[str, str, object]]:
    sig = inspect.signature(obj)  # type: ignore[arg-type]
    return [
        (p.name, p.kind.name, MISSING if p.default is inspect.Parameter.empty else p.default)
        for p in sig.parameters.values()
    ]


def _same(stub: list[tuple[str, str, object]], runtime: list[tuple[str, str, object]]) -> bool:
    if len(stub) != len(runtime):
        return False
    for (sn, sk, sd), (rn, rk, rd) in zip(stub, runtime):
        if sn != rn or sk != rk:
            return False
        if sd is MISSING or rd is MISSING:
            if sd is not rd:
                return False
        elif sd is not Ellipsis and sd != rd:
            return False
    return True


FUNCTIONS = [n for n, node in STUB_NAMES.items() if isinstance(node, ast.FunctionDef)]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_signature(name):
    runtime = getattr(ac, name)
    assert callable(runtime)
    stub = _stub_params(STUB_NAMES[name])  # type: ignore[arg-type]
    assert _same(stub, _runtime_params(runtime)), (stub, _runtime_params(runtime))
    assert ast.get_docstring(STUB_NAMES[name]), f"{name} has no docstring in the stub"


CLASSES = [n for n, node in STUB_NAMES.items() if isinstance(node, ast.ClassDef)]


@pytest.mark.parametrize("name", CLASSES)
def test_class_members(name):
    node = STUB_NAMES[name]
    runtime = getattr(ac, name)
    assert inspect.isclass(runtime)
    assert ast.get_docstring(node), f"{name} has no docstring in the stub"
    stub_bases = [ast.unparse(b) for b in node.bases]  # type: ignore[attr-defined]
    runtime_bases = [b.__name__ for b in runtime.__bases__]
    if stub_bases:
        assert stub_bases == runtime_bases
    members: dict[str, ast.stmt] = {}
    for item in node.body:  # type: ignore[attr-defined]
        if isinstance(item, ast.FunctionDef):
            members[item.name] = item
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            members[item.target.id] = item
    runtime_public = {m for m in dir(runtime) if not m.startswith("_")}
    if issubclass(runtime, BaseException):
        runtime_public -= {"add_note", "args", "with_traceback"}
    if dataclasses.is_dataclass(runtime):
        runtime_public |= {f.name for f in dataclasses.fields(runtime)}
    stub_public = {m for m in members if not m.startswith("_")}
    assert runtime_public == stub_public, name
    for m in stub_public | {m for m in members if m in ("__init__",)}:
        item = members[m]
        if isinstance(item, ast.FunctionDef) and not any(
            isinstance(d, ast.Name) and d.id == "property" for d in item.decorator_list
        ):
            rt = _runtime_params(getattr(runtime, m))
            rt = rt[1:] if rt and rt[0][0] == "self" else rt
            assert _same(_stub_params(item, skip_self=True), rt), f"{name}.{m}"


@pytest.mark.parametrize(
    "name", [n for n, node in STUB_NAMES.items() if isinstance(node, ast.AnnAssign)]
)
def test_constant_types(name):
    ann = STUB_NAMES[name].annotation  # type: ignore[attr-defined]
    if isinstance(ann, ast.Subscript) and ast.unparse(ann.value) == "Final":
        ann = ann.slice
    expected = {"bytes": bytes, "int": int, "str": str, "JsonNull": ac.JsonNull}
    text = ast.unparse(ann)
    base = text.split("[", 1)[0]
    runtime = getattr(ac, name)
    if base in expected:
        assert isinstance(runtime, expected[base]) and not isinstance(runtime, bool), name
    elif base == "tuple":
        assert isinstance(runtime, tuple) and all(isinstance(x, str) for x in runtime), name
    else:
        pytest.fail(f"stub annotation {text} of {name} is not checked by this test; extend it")


def test_constant_values():
    assert ac.CONCURRENCY_DOMAIN_TAG == b"awa:concurrency_key:v1\x00"
    assert ac.CONTRACT_VERSION == 1
    assert ac.JOB_STATES[0] == "scheduled" and len(ac.JOB_STATES) == 8
    assert ac.unique_states_bits(ac.DEFAULT_UNIQUE_STATES) == "11111000"
