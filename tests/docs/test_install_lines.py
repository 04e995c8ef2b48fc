"""Every install line the documents show is pinned, to the right version, and marked when it needs a release.

A bare `pip install awa-conformance` / `pipx run awa-conformance` would run whatever is
published under the name next, in a user's CI; and until the kit's first release is published,
a PyPI line fails as written, so its block must say so (`unchecked="... PyPI ..."`). The kit is
pinned to the workspace version (Cargo.toml), the released Awa packages to the versions of
tests/requirements.txt. ADRs are records of past decisions and are not scanned.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
KIT = "awa-conformance"
# An install command up to the end of its line or inline code span.
COMMAND = re.compile(r"\b(?:pip3?|pipx)\s+(?:install|run)\b[^\n`]*")
REQUIREMENT = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)(?:\[[^\]]*\])?(?:==(?P<version>[^\s;]+))?$")
WHEEL = re.compile(r"awa_conformance-(?P<version>[0-9][^-*]*)-")


def workspace_version() -> str:
    return tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))["workspace"]["package"]["version"]


def pins() -> dict[str, str]:
    """Package name -> the version every document must pin it to."""
    out = {KIT: workspace_version()}
    for line in (ROOT / "tests/requirements.txt").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^(awa-[a-z-]+)==(\S+)$", line.strip())
        if m:
            out[m.group(1)] = m.group(2)
    return out


def documents() -> list[str]:
    files = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [f for f in files.stdout.split() if not f.startswith("docs/adr/")]


def requirements(command: str) -> list[str]:
    """The requirement words of one pip / pipx command (not its flags, paths or app names)."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    words = [w.strip("'\"") for w in words]
    out: list[str] = []
    i = next(k for k, w in enumerate(words) if w in ("install", "run")) + 1
    pipx_run = any(w == "pipx" for w in words[:i]) and words[i - 1] == "run"
    spec = False
    while i < len(words):
        w = words[i]
        if w in ("&&", "||", ";", "|", "#"):
            break
        if w == "--spec":
            out.append(words[i + 1] if i + 1 < len(words) else "")
            spec = True
            i += 2
            continue
        if w.startswith("-"):
            i += 1 + (w in ("-r", "-c", "-e", "--find-links", "-f", "--index-url", "-i"))
            continue
        out.append(w)
        if pipx_run:
            # pipx run [--spec REQ] APP args...: without --spec APP is the requirement; either way
            # the rest are the app's own arguments.
            if spec:
                out.pop()
            break
        i += 1
    return out


def problems(text: str, where: str, pinned: dict[str, str]) -> list[str]:
    """`where:line: what` for each unpinned or wrongly pinned install of a pinned package."""
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for m in COMMAND.finditer(line):
            for req in requirements(m.group(0)):
                wheel = WHEEL.search(req)
                if wheel and wheel.group("version") != pinned[KIT]:
                    out.append(f"{where}:{lineno}: the wheel {req} is not version {pinned[KIT]}")
                r = REQUIREMENT.match(req)
                if not r or r.group("name").lower() not in pinned:
                    continue
                name, want = r.group("name").lower(), pinned[r.group("name").lower()]
                if r.group("version") is None:
                    out.append(f"{where}:{lineno}: `{m.group(0).strip()}` installs {name} unpinned; write {name}=={want}")
                elif r.group("version") != want:
                    out.append(f"{where}:{lineno}: {name}=={r.group('version')}, but the version to pin is {want}")
    return out


def installs_the_kit_by_name(content: str) -> bool:
    """Whether `content` installs the kit by its name (from an index), not a wheel by path."""
    for m in COMMAND.finditer(content):
        for r in requirements(m.group(0)):
            req = REQUIREMENT.match(r)
            if req and req.group("name").lower() == KIT:
                return True
    return False


def unmarked(text: str, where: str, pinned: dict[str, str]) -> list[str]:
    """Fenced blocks that install the kit from PyPI without saying that this needs PyPI."""
    out = []
    recipe = re.search(r"<!-- ci-recipe:shell:begin -->(.*?)<!-- ci-recipe:shell:end -->", text, re.S)
    for t in MarkdownIt("commonmark").parse(text):
        if t.type != "fence":
            continue
        if not installs_the_kit_by_name(t.content):
            continue
        if recipe and t.content.strip() in recipe.group(1):
            continue  # run by scripts/test-ci-recipe.sh with the built wheel through PIP_FIND_LINKS
        if "PyPI" not in t.info:
            out.append(
                f'{where}:{t.map[0] + 1}: this block installs {KIT} from PyPI; until {pinned[KIT]} is published '
                f'it fails as written: mark it ```{t.info.split()[0] if t.info.strip() else "sh"} unchecked="needs ... PyPI ..."'
            )
    return out


@pytest.mark.parametrize("doc", documents())
def test_install_lines_are_pinned_to_the_released_versions(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    found = problems(text, doc, pins()) + unmarked(text, doc, pins())
    assert not found, "\n".join(found)


def test_the_check_catches_unpinned_wrong_and_unmarked_lines() -> None:
    pinned = {KIT: "0.1.0", "awa-pg": "0.6.9"}
    bad = "\n".join(
        [
            "Run `pipx run awa-conformance --dsn X`.",
            "Or `pip install 'awa-conformance[db]'` and `pip install awa-conformance==0.0.9`,",
            "`pip install awa-pg`, `pip install dist/awa_conformance-0.0.9-cp310-abi3.whl`.",
        ]
    )
    found = problems(bad, "doc.md", pinned)
    assert [f.split(": ", 1)[0] for f in found] == ["doc.md:1", "doc.md:2", "doc.md:2", "doc.md:3", "doc.md:3"], found
    good = "`pipx run --spec awa-conformance==0.1.0 awa-conformance --dsn X`, `pip install awa-pg==0.6.9 psycopg`"
    assert problems(good, "doc.md", pinned) == []
    fenced = '```sh\npip install awa-conformance==0.1.0\n```\n\n```sh unchecked="needs PyPI"\npipx run --spec awa-conformance==0.1.0 awa-conformance\n```\n'
    assert [f.split(": ", 1)[0] for f in unmarked(fenced, "doc.md", pinned)] == ["doc.md:1"]
