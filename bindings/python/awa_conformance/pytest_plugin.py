"""pytest plugin: ``pytest --awa-dsn URL --awa-producer pkg.mod:function`` adds one test per vector.

Inert unless ``--awa-producer`` is given. Test IDs are the vector IDs
(``awa-conformance::rp-0123456789ab``), so ``-k`` selects vectors. Expected failures
(``--awa-expected-failures FILE``) run and xfail; one that passes fails the run; an unknown ID
is a usage error.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

from awa_conformance._errors import ConformanceError
from awa_conformance._vectors import vectors

_SESSION_KEY = pytest.StashKey["_SessionHolder"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("awa-conformance", "Awa SQL producer contract checks")
    group.addoption("--awa-dsn", metavar="URL", help="PostgreSQL DSN the checks read back from (also AWA_DSN)")
    group.addoption(
        "--awa-producer",
        metavar="MODULE:FUNCTION",
        help="the producer's insert callable: takes the request dict, enqueues, returns the job id",
    )
    group.addoption("--awa-schema", default="awa", help="schema holding insert_job/job_routing (default: awa)")
    group.addoption(
        "--awa-families",
        metavar="LIST",
        help="comma-separated families to check (default: routing_precedence,unique_key)",
    )
    group.addoption(
        "--awa-expected-failures",
        metavar="FILE",
        help='JSON or TOML: {"version": 1, "expected_failures": [{"id": ..., "reason": ...}]}',
    )


def _load_producer(spec: str) -> Any:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise pytest.UsageError(f"--awa-producer {spec!r}: write MODULE:FUNCTION, e.g. myapp.awa_probe:insert")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as e:
        raise pytest.UsageError(f"--awa-producer: cannot import {module_name!r} ({e}); is it on sys.path?") from e
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as e:
            raise pytest.UsageError(f"--awa-producer: {module_name!r} has no attribute {attr!r}") from e
    if not callable(obj):
        raise pytest.UsageError(f"--awa-producer: {spec} is not callable")
    return obj


class _SessionHolder:
    """Opens the ProducerSession on first use, so collection alone never connects."""

    def __init__(self, dsn: str, insert: Any, schema: str) -> None:
        self.dsn, self.insert, self.schema = dsn, insert, schema
        self.session: Any = None
        self.error: str | None = None

    def get(self) -> Any:
        if self.error is not None:
            raise ConformanceError(self.error)
        if self.session is None:
            from awa_conformance.producer import ProducerSession

            try:
                self.session = ProducerSession(self.dsn, self.insert, schema=self.schema)
            except ConformanceError as e:
                self.error = str(e)
                raise
        return self.session

    def close(self) -> None:
        if self.session is not None:
            self.session.close()


class AwaCaseFailed(Exception):
    """A vector the producer did not reproduce."""


class AwaVectorItem(pytest.Item):
    """One producer check (one vector)."""

    def __init__(self, *, case: Any, reason: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.expected_failure_reason = reason
        self.add_marker(pytest.mark.awa_conformance)
        self.user_properties.append(("family", case.family))

    def runtest(self) -> None:
        holder: _SessionHolder = self.config.stash[_SESSION_KEY]
        result = holder.get().run(self.case)
        self.user_properties.append(("status", result.status))
        if self.expected_failure_reason is not None:
            if result.status == "failed":
                pytest.xfail(f"expected failure: {self.expected_failure_reason}")
            raise AwaCaseFailed(
                f"{self.case.id} is listed as an expected failure ({self.expected_failure_reason!r}) "
                "but passed: remove it from the expected-failures file"
            )
        if result.status == "failed":
            detail = json.dumps({"expected": result.expected, "actual": result.actual}, indent=2, default=str)
            raise AwaCaseFailed(f"{self.case.id} ({self.case.family}): {result.message}\n{detail}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (AwaCaseFailed, ConformanceError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[str, int | None, str]:
        return ("awa-conformance", None, f"{self.case.family}::{self.case.id}")


class AwaConformanceCollector(pytest.Collector):
    """Parent node of the vector items."""

    def __init__(self, *, cases: list[Any], expected: dict[str, str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._cases, self._expected = cases, expected

    def collect(self) -> list[pytest.Item]:
        return [
            AwaVectorItem.from_parent(self, name=c.id, case=c, reason=self._expected.get(c.id))
            for c in self._cases
        ]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "awa_conformance: a producer check generated from a vector")
    spec = config.getoption("--awa-producer")
    if not spec:
        return
    import os

    dsn = config.getoption("--awa-dsn") or os.environ.get("AWA_DSN")
    if not dsn:
        raise pytest.UsageError("--awa-producer needs --awa-dsn URL (or AWA_DSN): the database to read jobs back from")
    holder = _SessionHolder(dsn, _load_producer(spec), config.getoption("--awa-schema"))
    config.stash[_SESSION_KEY] = holder
    config.add_cleanup(holder.close)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    # tryfirst: our items exist before -k / -m deselection runs.
    if _SESSION_KEY not in config.stash:
        return
    from awa_conformance.expected_failures import load_expected_failures
    from awa_conformance.producer import build_cases

    fams = config.getoption("--awa-families")
    selected = [f.strip() for f in fams.split(",") if f.strip()] if fams else None
    try:
        cases, _ = build_cases(selected)
    except ConformanceError as e:
        raise pytest.UsageError(f"--awa-families: {e}") from e
    expected: dict[str, str] = {}
    path = config.getoption("--awa-expected-failures")
    if path:
        try:
            expected = load_expected_failures(path, (v["id"] for v in vectors()))
        except ConformanceError as e:
            raise pytest.UsageError(str(e)) from e
    collector = AwaConformanceCollector.from_parent(session, name="awa-conformance", cases=cases, expected=expected)
    items.extend(collector.collect())
