"""Results of producer checks, as rendered by the runner's report writers in the native module.

A :class:`Report` wraps the runner's own report of the run (``awa-conformance-report`` v1,
``runner/report.schema.json``): the same JSON, JUnit and Markdown the CLI writes, so a
``check_producer`` report and an ``awa-conformance --producer`` report have one shape.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Literal

Status = Literal["passed", "failed", "expected_failure", "unexpected_pass", "not_applicable", "ignored", "errored"]
STATUSES: tuple[Status, ...] = (
    "passed", "failed", "expected_failure", "unexpected_pass", "not_applicable", "ignored", "errored",
)
#: Statuses that make a run nonconformant (or stop it from reaching a verdict).
_BAD = frozenset({"failed", "unexpected_pass", "errored"})


@dataclass(frozen=True)
class CaseResult:
    """One case of the run. ``name`` is the trial name (``producer::<family>::<id>…``),
    ``id`` the part after the family; bytes in ``expected``/``actual`` are lowercase hex."""

    id: str
    family: str
    status: Status
    expected: dict[str, Any] = field(default_factory=dict)
    actual: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    name: str = ""

    @classmethod
    def from_runner(cls, case: dict[str, Any]) -> CaseResult:
        parts = case["name"].split("::", 2)

        def obj(v: Any) -> dict[str, Any]:
            return v if isinstance(v, dict) else ({} if v is None else {"value": v})

        return cls(
            id=parts[2] if len(parts) > 2 else case["name"],
            family=parts[1] if len(parts) > 1 else case.get("suite", ""),
            status=case["status"],
            expected=obj(case.get("expected")),
            actual=obj(case.get("actual")),
            message=case.get("message") or "",
            name=case["name"],
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Report:
    """All case results of one run plus where they came from (the runner's report)."""

    cases: list[CaseResult] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    verdict: str = ""
    run_errors: list[str] = field(default_factory=list)
    # The runner's report object (native module); not a field: set by from_native only.
    _native: ClassVar[Any] = None

    @classmethod
    def from_native(cls, native: Any) -> Report:
        doc = json.loads(native.json())
        report = cls(
            cases=[CaseResult.from_runner(c) for c in doc["cases"]],
            provenance=dict(doc["provenance"]),
            verdict=doc["verdict"],
            run_errors=list(doc["run_errors"]),
        )
        report._native = native
        return report

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
        """True when the run is conformant: no case failed, passed unexpectedly or errored."""
        return not self.run_errors and all(c.status not in _BAD for c in self.cases)

    @property
    def failures(self) -> list[CaseResult]:
        """The cases that make the run fail: failed, unexpectedly passed, or errored."""
        return [c for c in self.cases if c.status in _BAD]

    def _require_native(self) -> Any:
        if self._native is None:
            raise ValueError("this Report was built in Python; only a check_producer report has the runner's renderings")
        return self._native

    def to_dict(self) -> dict[str, Any]:
        """The runner's JSON report as a dict."""
        return json.loads(self._require_native().json())

    def to_json(self, *, indent: int | None = 2) -> str:
        """The runner's JSON report (format ``awa-conformance-report`` v1)."""
        return json.dumps(self.to_dict(), indent=indent)

    def write_json(self, path: str | os.PathLike[str]) -> None:
        _write(path, self._require_native().json())

    def write_junit(self, path: str | os.PathLike[str]) -> None:
        """The runner's JUnit XML (one testcase per case)."""
        _write(path, self._require_native().junit())

    def write_markdown(self, path: str | os.PathLike[str]) -> None:
        """The runner's Markdown summary."""
        _write(path, self._require_native().markdown())


def _write(path: str | os.PathLike[str], text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
