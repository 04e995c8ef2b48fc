"""Executable documentation: finds the worked examples in the kit's documents and checks each one.

The convention (CONTRIBUTING.md, "Adding a documented example"):

* a ```` ```pycon ```` block is a doctest, run against the installed `awa_conformance` module;
* a ```` ```json example=NAME ```` block is a message checked by the checker NAME
  (`adapter-hello`, `adapter-request`, `expected-failures`), against the real runner, or
  (`protocol` with `schema=NAME`) against the JSON Schema docs/protocol/NAME.schema.json;
* a ```` ```sh example=cli ```` block is run line by line with the real runner (each line must
  exit 0, or with `exit=N` on the info string, N);
* `<!-- check ... -->` before a paragraph, table, list or code block holds Python lines
  `EXPR == LITERAL` (with `ac` = `awa_conformance`): each must hold, each LITERAL must appear in
  that block, and in a paragraph every number of the prose must occur in the marker, so a
  number cannot change on one side only; `<!-- check exit-codes -->` before a table compares it
  with the runner's exit codes;
* a json/python/sh/console block with none of these needs `unchecked="why"`, and a paragraph
  that starts with "Worked example" needs a `check` marker: nothing is left unchecked silently.
  In every sh block, each `--flag` of an `awa-conformance` command must exist in its `--help`.

Every failure is reported as `<document>:<line>: <what is wrong>`.
"""

from __future__ import annotations

import ast
import doctest
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
# The documents whose examples are checked, relative to the repository root.
DOCS = ("docs/contract.md", "README.md", "bindings/README.md", "docs/adapter-protocol.md")
# Fenced blocks in these languages are examples and must be checked or marked unchecked.
EXAMPLE_LANGS = {"json", "python", "pycon", "sh", "shell", "bash", "console"}
SH_LANGS = {"sh", "shell", "bash", "console"}
WORD = re.compile(r"[A-Za-z0-9]+")
SECTION_REF = re.compile(r"§\s*\d+(?:\.\d+)*(?:[–-]§?\d+)?")


class DocError(AssertionError):
    """A documented example that is false, or a block that breaks the convention."""


@dataclass
class Example:
    """One checkable unit of a document."""

    doc: str  # path as shown, e.g. docs/contract.md
    line: int  # 1-based line of the marker or fence
    kind: str  # doctest | check | json | cli | flags | exit-codes | rule
    content: str  # marker body, fence body, or the rule violation
    block: str = ""  # the block a marker describes (source text)
    block_line: int = 0
    block_type: str = ""
    attrs: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"

    def fail(self, msg: str, line: int | None = None) -> DocError:
        return DocError(f"{self.doc}:{line or self.line}: {msg}")


def _attrs(info: str) -> tuple[str, dict[str, str]]:
    parts = shlex.split(info) if info.strip() else [""]
    lang, attrs = parts[0], {}
    for p in parts[1:]:
        key, _, value = p.partition("=")
        attrs[key] = value
    return lang, attrs


def _block_after(tokens: list[Any], i: int) -> int | None:
    """Index of the first block-level token after tokens[i] that carries a source map."""
    for j in range(i + 1, len(tokens)):
        t = tokens[j]
        if t.map is not None and t.nesting >= 0 and t.type != "inline":
            return j
    return None


def collect(path: Path, display: str) -> list[Example]:
    """Every example and convention violation of one Markdown document, in document order."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    found: list[Example] = []
    covered: set[int] = set()  # token indices described by a check marker
    for i, t in enumerate(tokens):
        if t.type == "html_block" and t.content.lstrip().startswith("<!-- check"):
            body = t.content.strip()[len("<!-- check") : -len("-->")]
            j = _block_after(tokens, i)
            if j is None:
                found.append(Example(display, t.map[0] + 1, "rule", "a check marker must precede a block"))
                continue
            covered.add(j)
            b = tokens[j]
            start, end = b.map
            name = body.strip() if "\n" not in body.strip() else ""
            found.append(
                Example(
                    display,
                    t.map[0] + 1,
                    "exit-codes" if name == "exit-codes" else "check",
                    body,
                    block="\n".join(lines[start:end]),
                    block_line=start + 1,
                    block_type=b.type,
                )
            )
        elif t.type == "fence":
            lang, attrs = _attrs(t.info)
            line = t.map[0] + 1
            kind = attrs.get("example")
            if lang == "pycon":
                found.append(Example(display, line, "doctest", t.content, attrs=attrs))
            elif kind == "cli" and lang in SH_LANGS:
                found.append(Example(display, line, "cli", t.content, attrs=attrs))
            elif kind and lang == "json":
                found.append(Example(display, line, "json", t.content, attrs=attrs))
            elif lang in EXAMPLE_LANGS and not attrs.get("unchecked"):
                found.append(
                    Example(
                        display,
                        line,
                        "rule",
                        f"```{t.info.strip()} block is an example nobody checks: use ```pycon, "
                        "example=cli/adapter-hello/adapter-request/expected-failures, or "
                        'unchecked="<why>" (CONTRIBUTING.md, "Adding a documented example")',
                    )
                )
            if lang in SH_LANGS and "awa-conformance" in t.content:
                found.append(Example(display, line, "flags", t.content, attrs=attrs))
        elif t.type == "paragraph_open" and i not in covered:
            inline = tokens[i + 1].content
            if inline.startswith("Worked example"):
                found.append(
                    Example(
                        display,
                        t.map[0] + 1,
                        "rule",
                        "a worked example without a <!-- check ... --> marker before it",
                    )
                )
    return found


def collect_all(root: Path = ROOT) -> list[Example]:
    out: list[Example] = []
    for doc in DOCS:
        out += collect(root / doc, doc)
    return out


# ----------------------------------------------------------------------------------------------
# The things examples are checked against
# ----------------------------------------------------------------------------------------------


class Kit:
    """The real runner binary and the installed Python module, shared by all checks."""

    def __init__(self, module: Any = None, runner: str | None = None) -> None:
        self._module = module
        self._runner = runner
        self._requests: list[dict[str, Any]] | None = None

    @property
    def ac(self) -> Any:
        if self._module is None:
            try:
                import awa_conformance
            except ImportError as e:  # a missing module must fail the check, never skip it
                raise DocError(f"the awa_conformance module is not installed ({e}): run bindings/run-tests.sh") from e
            self._module = awa_conformance
        return self._module

    @property
    def runner(self) -> str:
        if self._runner is None:
            candidates = [os.environ.get("AWA_CONFORMANCE_BIN", "")]
            candidates += [str(ROOT / "target" / p / "awa-conformance") for p in ("release", "debug")]
            found = [c for c in candidates if c and Path(c).is_file()]
            if not found:
                raise DocError(
                    "no awa-conformance binary: set AWA_CONFORMANCE_BIN or run cargo build -p awa-conformance"
                )
            self._runner = str(Path(found[0]).resolve())
        return self._runner

    def run(self, args: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        # The documented commands run without a database: no DSN, and no CI demand for one.
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "AWA_REQUIRE_DB") and not k.startswith("PG")
        }
        env.update(kw.pop("env", {}))
        return subprocess.run(
            [self.runner, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, **kw
        )

    def adapter_session(self, hello: dict[str, Any]) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
        """Run the runner against a stub adapter that sends `hello` and records each request."""
        with tempfile.TemporaryDirectory() as d:
            record = Path(d) / "requests.jsonl"
            stub = Path(d) / "stub.py"
            stub.write_text(STUB_ADAPTER, encoding="utf-8")
            cmd = f"{shlex.quote(sys.executable)} {shlex.quote(str(stub))}"
            out = self.run(
                ["--no-embedded", "--adapter", cmd, "adapter::", "-q"],
                env={"DOC_HELLO": json.dumps(hello), "DOC_RECORD": str(record)},
            )
            requests = [json.loads(x) for x in record.read_text(encoding="utf-8").splitlines()] if record.exists() else []
        return out, requests

    def all_requests(self) -> list[dict[str, Any]]:
        """Every request the runner sends to an adapter that declares every family."""
        if self._requests is None:
            hello = {"type": "hello", "protocol": 1, "implementation": {"name": "doc-check", "version": "0"},
                     "capabilities": list(self.ac.families())}
            out, self._requests = self.adapter_session(hello)
            if not self._requests:
                raise DocError(f"the runner sent no adapter request (exit {out.returncode}): {out.stderr[-2000:]}")
        return self._requests


# A stub adapter: says the documented hello, records every request, answers each "skipped".
STUB_ADAPTER = """
import json, os, sys
sys.stdout.write(json.dumps(json.loads(os.environ["DOC_HELLO"])) + "\\n"); sys.stdout.flush()
with open(os.environ["DOC_RECORD"], "w", encoding="utf-8") as rec:
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("type") == "stop":
            break
        rec.write(json.dumps(msg) + "\\n")
        sys.stdout.write(json.dumps({"seq": msg["seq"], "skipped": True, "reason": "doc check"}) + "\\n")
        sys.stdout.flush()
"""


# ----------------------------------------------------------------------------------------------
# Checks
# ----------------------------------------------------------------------------------------------


def check(example: Example, kit: Kit) -> None:
    """Raise DocError naming the document and line if `example` is not true."""
    CHECKS[example.kind](example, kit)


def _rule(ex: Example, kit: Kit) -> None:
    raise ex.fail(ex.content)


def _doctest(ex: Example, kit: Kit) -> None:
    test = doctest.DocTestParser().get_doctest(ex.content, {}, ex.where, ex.doc, ex.line)
    if not test.examples:
        raise ex.fail("a ```pycon block without a single >>> example")
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test, out=report.append, clear_globs=True)
    if runner.failures:
        raise ex.fail("doctest failed (the line numbers below are the document's):\n" + "".join(report))


def _render(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return str(value)


def _words(text: str) -> set[str]:
    return {w for w in WORD.findall(SECTION_REF.sub(" ", text)) if any(c.isdigit() for c in w)}


def _appears(rendered: str, block: str, spans: list[str]) -> bool:
    if re.search(r"(?<![A-Za-z0-9_])" + re.escape(rendered) + r"(?![A-Za-z0-9_])", block):
        return True
    return any(s.replace(" ", "") == rendered for s in spans)


def _check_marker(ex: Example, kit: Kit) -> None:
    namespace = {"ac": kit.ac}
    spans = re.findall(r"`([^`]+)`", ex.block)
    claimed: list[str] = []
    for offset, raw in enumerate(ex.content.split("\n")):
        line = raw.strip()
        if not line:
            continue
        where = ex.line + offset
        try:
            tree = ast.parse(line, mode="eval").body
        except SyntaxError as e:
            raise ex.fail(f"not a Python expression: {line} ({e.msg})", where) from e
        if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1 and isinstance(tree.ops[0], ast.Eq)):
            raise ex.fail(f"a check line must be `EXPR == LITERAL`: {line}", where)
        try:
            expected = ast.literal_eval(tree.comparators[0])
        except ValueError as e:
            raise ex.fail(f"the right-hand side must be a literal: {line}", where) from e
        try:
            actual = eval(compile(ast.Expression(tree.left), ex.where, "eval"), namespace)  # noqa: S307
        except Exception as e:
            raise ex.fail(f"{ast.unparse(tree.left)} raised {type(e).__name__}: {e}", where) from e
        if actual != expected:
            raise ex.fail(f"{ast.unparse(tree.left)} is {actual!r}, the document says {expected!r}", where)
        rendered = _render(expected)
        if not _appears(rendered, ex.block, spans):
            raise ex.fail(f"the checked value {rendered!r} does not appear in the text below the marker", where)
        claimed.append(rendered)
    if not claimed:
        raise ex.fail("an empty check marker")
    if ex.block_type == "paragraph_open":
        # Every number in the prose is one the marker states: the two cannot drift apart.
        covered = [s for s in spans if s.replace(" ", "") in claimed]
        prose = ex.block
        for s in covered:
            prose = prose.replace(s, " ")
        unchecked = sorted(_words(prose) - _words(ex.content) - {w for c in claimed for w in _words(c)})
        if unchecked:
            raise ex.fail(
                f"the example states {', '.join(unchecked)}, which no check line covers", ex.block_line
            )


def _exit_codes(ex: Example, kit: Kit) -> None:
    out = kit.run(["--help"])
    helped = dict(re.findall(r"^\s+(\d+)\s+(.+)$", out.stdout.split("Exit codes:")[-1], re.MULTILINE))
    rows = re.findall(r"^\|\s*(\d+)\s*\|\s*(.+?)\s*\|\s*$", ex.block, re.MULTILINE)
    documented = {code: meaning for code, meaning in rows}
    if set(documented) != set(helped):
        raise ex.fail(
            f"exit codes {sorted(documented)} in the table, {sorted(helped)} in `awa-conformance --help`", ex.block_line
        )

    def lead(text: str) -> list[str]:
        return re.findall(r"[a-z]+", text.lower())[:3]

    for code, meaning in documented.items():
        if lead(meaning) != lead(helped[code]):
            raise ex.fail(f"exit code {code}: the table says {meaning!r}, the runner says {helped[code]!r}", ex.block_line)


def _commands(content: str) -> list[tuple[int, str]]:
    """(offset, command) per line; `\\` continuations joined, comments dropped."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for offset, raw in enumerate(content.split("\n")):
        line = raw.rstrip()
        if not pending:
            start = offset
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        if full and not full.startswith("#"):
            out.append((start, full))
    return out


def _cli(ex: Example, kit: Kit) -> None:
    want = int(ex.attrs.get("exit", "0"))
    for offset, cmd in _commands(ex.content):
        argv = shlex.split(cmd, comments=True)
        if not argv or argv[0] != "awa-conformance":
            raise ex.fail(f"an example=cli line must run awa-conformance: {cmd}", ex.line + 1 + offset)
        out = kit.run(argv[1:])
        if out.returncode != want:
            raise ex.fail(
                f"`{cmd}` exited {out.returncode}, the document expects {want}:\n{out.stderr[-1500:]}",
                ex.line + 1 + offset,
            )


def _flags(ex: Example, kit: Kit) -> None:
    for offset, cmd in _commands(ex.content):
        argv = shlex.split(cmd, comments=True)
        for k, word in enumerate(argv):
            if word != "awa-conformance":
                continue
            rest = argv[k + 1 :]
            sub: list[str] = []
            for w in rest:  # subcommands are the leading bare words before any flag
                if w.startswith("-") or "::" in w:
                    break
                sub.append(w)
            help_text = kit.run([*sub[:2], "--help"]).stdout if sub else kit.run(["--help"]).stdout
            for flag in (w.split("=")[0] for w in rest if w.startswith("--")):
                if not re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", help_text):
                    raise ex.fail(
                        f"`{flag}` is not an option of `awa-conformance {' '.join(sub[:2])}` (see its --help)",
                        ex.line + 1 + offset,
                    )


def _json(ex: Example, kit: Kit) -> None:
    try:
        value = json.loads(ex.content)
    except json.JSONDecodeError as e:
        raise ex.fail(f"not JSON: {e}", ex.line + 1 + e.lineno - 1) from e
    name = ex.attrs["example"]
    if name not in JSON_CHECKS:
        raise ex.fail(f"unknown example={name}; known: {', '.join(sorted(JSON_CHECKS))}")
    JSON_CHECKS[name](ex, kit, value)


def _adapter_hello(ex: Example, kit: Kit, hello: Any) -> None:
    out, requests = kit.adapter_session(hello)
    if out.returncode in (3, 6):
        raise ex.fail(f"the runner rejects this hello (exit {out.returncode}):\n{out.stderr[-1500:]}")
    asked = {r["family"] for r in requests}
    if asked != set(hello["capabilities"]):
        raise ex.fail(f"declared {sorted(hello['capabilities'])}, the runner asked for {sorted(asked)}")


def _adapter_request(ex: Example, kit: Kit, request: Any) -> None:
    for sent in kit.all_requests():
        if sent.get("id") == request.get("id"):
            if set(sent) != set(request):
                raise ex.fail(f"the runner sends the keys {sorted(sent)}, the document shows {sorted(request)}")
            diff = [k for k in sent if k != "seq" and sent[k] != request[k]]
            if diff:
                raise ex.fail(f"the runner sends {', '.join(f'{k}={sent[k]!r}' for k in diff)} for {request.get('id')}")
            return
    raise ex.fail(f"the runner sends no request for vector {request.get('id')!r}")


def _expected_failures(ex: Example, kit: Kit, doc: Any) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "xfail.json"
        path.write_text(ex.content, encoding="utf-8")
        try:  # the Python module's loader
            from awa_conformance.expected_failures import load_expected_failures

            ids = list(load_expected_failures(path, [v["id"] for v in kit.ac.vectors()]))
        except Exception as e:
            raise ex.fail(f"the Python module rejects this expected-failures file: {e}") from e
        # The runner: each listed vector passes, so a valid file fails the run with exit 1
        # ("remove it"); a file it cannot read is a usage error (exit 3).
        listed = [e["id"] for e in doc["expected_failures"]]
        out = kit.run(["--no-embedded", "--expected-failures", str(path), *listed, "-q"])
        if out.returncode != 1 or not all(i in out.stdout + out.stderr for i in listed):
            raise ex.fail(
                f"the runner does not take this expected-failures file (exit {out.returncode}):\n{out.stderr[-1500:]}"
            )
        if not ids:
            raise ex.fail("the Python module read no entry from this expected-failures file")


def _protocol(ex: Example, kit: Kit, message: Any) -> None:
    """A producer-protocol message (`json example=protocol schema=NAME`): valid against its JSON
    Schema docs/protocol/NAME.schema.json, the schemas the runner's tests check real traffic with."""
    import jsonschema

    name = ex.attrs.get("schema", "")
    path = ROOT / "docs" / "protocol" / f"{name}.schema.json"
    if not name or not path.is_file():
        raise ex.fail(f"example=protocol needs schema=NAME naming docs/protocol/NAME.schema.json (got {name!r})")
    schema = json.loads(path.read_text(encoding="utf-8"))
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(message), key=str)
    if errors:
        raise ex.fail(f"not a valid {name} message: {errors[0].message}")


JSON_CHECKS: dict[str, Callable[[Example, Kit, Any], None]] = {
    "protocol": _protocol,
    "adapter-hello": _adapter_hello,
    "adapter-request": _adapter_request,
    "expected-failures": _expected_failures,
}
CHECKS: dict[str, Callable[[Example, Kit], None]] = {
    "rule": _rule,
    "doctest": _doctest,
    "check": _check_marker,
    "exit-codes": _exit_codes,
    "cli": _cli,
    "flags": _flags,
    "json": _json,
}
