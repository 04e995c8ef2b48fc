"""Checks an ADR against the template of docs/adr/README.md: title, Status, the four sections in order."""

from __future__ import annotations

import re
from pathlib import Path

SECTIONS = ["Context", "Decision", "Consequences", "Alternatives considered"]
NAME = re.compile(r"^(\d{4})-[a-z0-9-]+\.md$")


def problems(path: Path, index: str) -> list[str]:
    """What is wrong with one ADR file, as `file:line: what` (empty when it follows the template)."""
    name = path.name
    m = NAME.match(name)
    if not m:
        return [f"{name}: the file name must be NNNN-kebab-title.md"]
    number = m.group(1)
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    if not lines or not lines[0].startswith(f"# ADR {number}: "):
        out.append(f"{name}:1: the first line must be '# ADR {number}: <title>'")
    status = [i for i, line in enumerate(lines, 1) if line.startswith("Status: ")]
    if not status:
        out.append(f"{name}: no 'Status: ' line")
    if f"]({name})" not in index:
        out.append(f"{name}: not listed in docs/adr/README.md")
    if status and lines[status[0] - 1].startswith("Status: split"):
        return out  # a pointer page to the records it was split into
    headings = [(i, line[3:].strip()) for i, line in enumerate(lines, 1) if line.startswith("## ")]
    if [h for _, h in headings] != SECTIONS:
        found = ", ".join(f"'{h}' (line {i})" for i, h in headings) or "none"
        out.append(f"{name}: the sections must be exactly {SECTIONS} in this order; found {found}")
    return out
