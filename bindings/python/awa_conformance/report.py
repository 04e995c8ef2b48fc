"""Results of producer checks: per-case outcomes, counts, provenance, JSON and JUnit output."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["passed", "failed", "not_applicable"]
STATUSES: tuple[Status, ...] = ("passed", "failed", "not_applicable")


@dataclass(frozen=True)
class CaseResult:
    """One vector checked against a producer. Bytes in expected/actual are lowercase hex."""

    id: str
    family: str
    status: Status
    expected: dict[str, Any] = field(default_factory=dict)
    actual: dict[str, Any] = field(default_factory=dict)
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Report:
    """All case results of one run plus where they came from."""

    cases: list[CaseResult] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        """Number of cases per status, plus ``total``."""
        out = {s: 0 for s in STATUSES}
        for case in self.cases:
            out[case.status] += 1
        out["total"] = len(self.cases)
        return out

    @property
    def ok(self) -> bool:
        """True when no case failed."""
        return all(c.status != "failed" for c in self.cases)

    @property
    def failures(self) -> list[CaseResult]:
        return [c for c in self.cases if c.status == "failed"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "awa-conformance-producer-report",
            "format_version": 1,
            "provenance": dict(self.provenance),
            "counts": self.counts,
            "cases": [c.to_dict() for c in self.cases],
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=False)

    def write_json(self, path: str | os.PathLike[str]) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())
            f.write("\n")

    def write_junit(self, path: str | os.PathLike[str]) -> None:
        """JUnit XML: one testsuite, one testcase per vector (classname = family)."""
        counts = self.counts
        root = ET.Element("testsuites", name="awa-conformance")
        suite = ET.SubElement(
            root,
            "testsuite",
            name="awa-conformance producer",
            tests=str(counts["total"]),
            failures=str(counts["failed"]),
            errors="0",
            skipped=str(counts["not_applicable"]),
        )
        props = ET.SubElement(suite, "properties")
        for key, value in self.provenance.items():
            ET.SubElement(props, "property", name=str(key), value=str(value))
        for case in self.cases:
            tc = ET.SubElement(suite, "testcase", classname=f"awa_conformance.{case.family}", name=case.id)
            detail = json.dumps({"expected": case.expected, "actual": case.actual}, indent=2)
            if case.status == "failed":
                ET.SubElement(tc, "failure", message=case.message, type="conformance").text = detail
            elif case.status == "not_applicable":
                ET.SubElement(tc, "skipped", message=case.message or "not applicable")
        ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
