"""pytest plugin: ``pytest --awa-dsn URL --awa-producer pkg.mod:function`` adds one test per producer case.

Inert unless ``--awa-producer`` is given. The cases, the judge and the expected-failures
matcher are the runner's producer engine (the same as ``awa-conformance --producer``), run
once through the native module for every selected test on the first test that needs it. Test
IDs are the case names (``awa-conformance::producer::routing_precedence::rp-…::w8``), so
``-k`` selects cases. Expected failures (``--awa-expected-failures FILE``, the runner's JSON
format) run and xfail; one that passes fails the run; an entry matching no case is a usage
error. ``--awa-protocol 3`` sends the callable every job field of producer protocol 3
(metadata and max_attempts, ADR 0053); with the default 2, the cases that need them are
skipped with the reason, as the runner does for a protocol 2 producer.
"""

from __future__ import annotations

import importlib
import json
import os
from typing import Any

import pytest

from awa_conformance._errors import ConformanceError

_SESSION_KEY = pytest.StashKey["_Engine"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("awa-conformance", "Awa SQL producer contract checks")
    group.addoption("--awa-dsn", metavar="URL", help="PostgreSQL DSN the checks run on (also AWA_DSN)")
    group.addoption(
        "--awa-producer",
        metavar="MODULE:FUNCTION",
        help="the producer's insert callable: takes the request dict, enqueues, returns the job id",
    )
    group.addoption("--awa-schema", default="awa", help="schema holding insert_job/job_routing (default: awa)")
    group.addoption("--awa-producer-role", default="awa_producer", help="the schema's producer role (default: awa_producer)")
    group.addoption(
        "--awa-families",
        metavar="LIST",
        help="comma-separated case families to check (default: all producer families)",
    )
    group.addoption(
        "--awa-protocol",
        type=int,
        choices=(2, 3),
        default=2,
        help="the producer protocol the callable speaks: 3 also sends metadata and max_attempts "
        "(default: 2; its cases that need them are skipped)",
    )
    group.addoption(
        "--awa-plain-sessions",
        action="store_true",
        help="the engine's own insert_job calls keep the server's defaults instead of the callers' "
        "settings (check_producer's plain_sessions=True); connect the callable with "
        "awa_conformance.session_dsn(dsn) to run it under them",
    )
    group.addoption(
        "--awa-expected-failures",
        metavar="FILE",
        help='JSON: {"version": 1, "expected_failures": [{"id": ..., "reason": ...}]} (the runner\'s format)',
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


class _Engine:
    """Runs the engine once, for every selected case, the first time a result is needed."""

    def __init__(self, dsn: str, insert: Any, schema: str, role: str, expected: str | None,
                 protocol: int = 2, plain_sessions: bool = False) -> None:
        self.dsn, self.insert, self.schema, self.role, self.expected = dsn, insert, schema, role, expected
        self.protocol, self.plain_sessions = protocol, plain_sessions
        self.results: dict[str, Any] | None = None
        self.error: str | None = None

    def result(self, session: pytest.Session, name: str) -> Any:
        if self.error is not None:
            pytest.exit(self.error, returncode=pytest.ExitCode.USAGE_ERROR)
        if self.results is None:
            from awa_conformance.producer import run_engine

            names = [i.name for i in session.items if isinstance(i, AwaCaseItem)]
            try:
                report = run_engine(
                    self.dsn, self.insert, schema=self.schema, producer_role=self.role, names=names,
                    expected_failures=self.expected, protocol=self.protocol,
                    plain_sessions=self.plain_sessions,
                )
            except ConformanceError as e:
                # The run as a whole could not start (no connection, no contract schema, a
                # database that cannot host it): one error for the session, never one failed
                # test per case. The message is the runner's, password already masked.
                self.error = f"awa-conformance: no case was checked: {e}"
                pytest.exit(self.error, returncode=pytest.ExitCode.USAGE_ERROR)
            self.results = {c.name: c for c in report.cases}
        return self.results.get(name)


class AwaCaseFailed(Exception):
    """A case the producer did not pass."""


class AwaCaseItem(pytest.Item):
    """One producer case."""

    def __init__(self, *, family: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.family = family
        self.add_marker(pytest.mark.awa_conformance)
        self.user_properties.append(("family", family))

    def runtest(self) -> None:
        engine: _Engine = self.config.stash[_SESSION_KEY]
        result = engine.result(self.session, self.name)
        if result is None:
            raise AwaCaseFailed(f"{self.name}: the engine recorded no result for this case")
        self.user_properties.append(("status", result.status))
        detail = json.dumps({"expected": result.expected, "actual": result.actual}, indent=2, default=str)
        if result.status == "passed":
            return
        if result.status == "expected_failure":
            pytest.xfail(f"expected failure: {result.message}")
        if result.status in ("not_applicable", "ignored"):
            pytest.skip(result.message or result.status)
        if result.status == "unexpected_pass":
            raise AwaCaseFailed(
                f"{self.name} is listed as an expected failure but passed: remove it from the "
                f"expected-failures file ({result.message})"
            )
        if result.status == "errored":
            raise AwaCaseFailed(f"{self.name}: harness error, the case was not checked: {result.message}")
        raise AwaCaseFailed(f"{self.name}: {result.message}\n{detail}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (AwaCaseFailed, ConformanceError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[str, int | None, str]:
        return ("awa-conformance", None, self.name)


class AwaConformanceCollector(pytest.Collector):
    """Parent node of the case items."""

    def __init__(self, *, cases: list[Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._cases = cases

    def collect(self) -> list[pytest.Item]:
        return [AwaCaseItem.from_parent(self, name=c.name, family=c.family) for c in self._cases]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "awa_conformance: a producer check generated by the runner's engine")
    spec = config.getoption("--awa-producer")
    if not spec:
        return
    dsn = config.getoption("--awa-dsn") or os.environ.get("AWA_DSN")
    if not dsn:
        raise pytest.UsageError("--awa-producer needs --awa-dsn URL (or AWA_DSN): the database to check on")
    config.stash[_SESSION_KEY] = _Engine(
        dsn, _load_producer(spec), config.getoption("--awa-schema"), config.getoption("--awa-producer-role"),
        config.getoption("--awa-expected-failures"), config.getoption("--awa-protocol"),
        config.getoption("--awa-plain-sessions"),
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    # tryfirst: our items exist before -k / -m deselection runs.
    if _SESSION_KEY not in config.stash:
        return
    from awa_conformance.expected_failures import load_expected_failures
    from awa_conformance.producer import build_cases, trial_names

    fams = config.getoption("--awa-families")
    selected = [f.strip() for f in fams.split(",") if f.strip()] if fams else None
    try:
        cases, _ = build_cases(selected)
    except ConformanceError as e:
        raise pytest.UsageError(f"--awa-families: {e}") from e
    path = config.getoption("--awa-expected-failures")
    if path:
        try:
            load_expected_failures(path, trial_names())
        except ConformanceError as e:
            raise pytest.UsageError(str(e)) from e
    collector = AwaConformanceCollector.from_parent(session, name="awa-conformance", cases=cases)
    items.extend(collector.collect())
