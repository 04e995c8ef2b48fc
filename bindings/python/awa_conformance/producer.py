"""In-process producer checks: enqueue each applicable vector through a caller's client, read back.

Applicable vectors (documented in ``__init__.pyi``):

* ``routing_precedence``: every vector, at its width. The request carries the vector's
  ordering/concurrency keys; the stored routing must match the vector (rotor: any shard in
  ``[0, width)``) and what ``<schema>.insert_job`` computes for the same request.
* ``unique_key``: every vector (normative and informative). The request carries the reference
  ``unique_key`` bytes, the vector's hash inputs (``unique_key_inputs``) and
  ``unique_states="11111000"``; the stored ``unique_key`` and ``unique_states`` must match.

Every case runs on its own run-scoped queue ``awa_conformance_<run>_<n>`` whose width is
upserted into ``<schema>.queue_meta``; the case's rows (jobs, uniqueness claims, queue_meta) are
deleted right after it is checked and again when the session closes, so the database is left
as found. The checking DSN therefore needs SELECT/DELETE on ``contract_jobs`` and
``job_unique_claims`` and INSERT/UPDATE/DELETE on ``queue_meta`` (an owner or superuser); since
contract v1.1 it must also be a member of the role that owns ``job_routing`` (the installer),
because ``job_routing`` shows any other caller only the jobs its own session user enqueued.
"""

from __future__ import annotations

import datetime as _dt
import importlib.util
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from awa_conformance import _native
from awa_conformance._errors import ConformanceError
from awa_conformance._vectors import decode_typed, families, manifest, vectors
from awa_conformance.report import CaseResult, Report

#: Families the producer checks cover.
PRODUCER_FAMILIES: tuple[str, ...] = ("routing_precedence", "unique_key")
#: The unique_states every unique_key case asks for (released default mask 0b0001_1111).
UNIQUE_STATES = _native.unique_states_bits(_native.DEFAULT_UNIQUE_STATES)
#: Job kind used for every probe job.
PROBE_KIND = "awa_conformance.probe"

Request = dict[str, Any]
InsertFn = Callable[[Request], int]


def _hex(b: bytes | None) -> str | None:
    return None if b is None else b.hex()


def _unhex(s: str | None) -> bytes | None:
    return None if s is None else bytes.fromhex(s)


def _digest_hex(key: bytes | None) -> str | None:
    """The §6 digest of a key as job_routing returns it for the ordering key (v1.1)."""
    return None if key is None else bytes(_native.concurrency_digest(key)).hex()


@dataclass(frozen=True)
class Case:
    """One producer check: a vector and the request built from it (queue filled in at run time)."""

    id: str
    family: str
    vector: dict[str, Any]
    width: int
    ordering_key: bytes | None = None
    concurrency_key: bytes | None = None
    unique_key: bytes | None = None
    unique_key_inputs: dict[str, Any] | None = None
    unique_states: str | None = None
    expected: dict[str, Any] = field(default_factory=dict)


def _routing_case(v: dict[str, Any]) -> Case:
    inp, exp = v["input"], v["expected"]
    return Case(
        id=v["id"],
        family="routing_precedence",
        vector=v,
        width=int(inp["width"]),
        ordering_key=_unhex(inp["ordering_key_hex"]),
        concurrency_key=_unhex(inp["concurrency_key_hex"]),
        expected={
            "route_source": exp["route_source"],
            "enqueue_shard": exp["enqueue_shard"],
            "concurrency_digest": exp["concurrency_digest_hex"],
            # Contract v1.1: job_routing returns the ordering key's digest, never the key.
            "ordering_key_digest": _digest_hex(_unhex(inp["ordering_key_hex"])),
        },
    )


def _unique_case(v: dict[str, Any]) -> Case:
    inp, exp = v["input"], v["expected"]
    args = inp["args"]
    if args is None:
        py_args: Any = None
    else:
        decoded = decode_typed(args)
        py_args = _native.JSON_NULL if decoded is None else decoded
    bucket = inp["period_bucket"]
    inputs = {
        "kind": inp["kind"],
        "queue": inp["queue"],
        "args": py_args,
        "period_bucket": None if bucket is None else int(bucket),
    }
    return Case(
        id=v["id"],
        family="unique_key",
        vector=v,
        width=1,
        unique_key=bytes.fromhex(exp["unique_key_hex"]),
        unique_key_inputs=inputs,
        unique_states=UNIQUE_STATES,
        expected={
            "unique_key": exp["unique_key_hex"],
            "unique_states": UNIQUE_STATES,
            "route_source": "rotor",
            "enqueue_shard": None,
            "concurrency_digest": None,
            "ordering_key_digest": None,
        },
    )


def build_cases(selected: Iterable[str] | None = None) -> tuple[list[Case], list[CaseResult]]:
    """The producer cases for ``selected`` families (default: all applicable).

    Vectors of a selected family that producers cannot be checked on come back as
    ``not_applicable`` results.
    """
    names = families()
    chosen = list(PRODUCER_FAMILIES if selected is None else selected)
    for fam in chosen:
        if fam not in names:
            raise ConformanceError(f"unknown family {fam!r} in families=: pass some of {', '.join(names)}")
    cases: list[Case] = []
    skipped: list[CaseResult] = []
    for fam in chosen:
        for v in vectors(fam):
            if "error" in v["expected"]:
                # An input the contract refuses (width 0, a 4097-byte key, ...): it checks a
                # client-side function's refusal, never an enqueue, so it is no producer case.
                continue
            if fam == "routing_precedence":
                cases.append(_routing_case(v))
            elif fam == "unique_key":
                cases.append(_unique_case(v))
            else:
                skipped.append(
                    CaseResult(
                        id=v["id"],
                        family=fam,
                        status="not_applicable",
                        message=f"{fam} vectors check pure functions, not a producer: "
                        "run them against the core (awa_conformance functions or the Rust runner)",
                    )
                )
    return cases, skipped


def _import_psycopg() -> Any:
    try:
        import psycopg
    except ImportError as e:
        raise ConformanceError(_psycopg_import_error(e)) from e
    return psycopg


def _psycopg_import_error(e: ImportError) -> str:
    """Why ``import psycopg`` failed, with the fix: psycopg missing, or psycopg without libpq."""
    if importlib.util.find_spec("psycopg") is None:
        return "producer checks need psycopg 3: pip install 'awa-conformance[db]'"
    # psycopg is installed but none of its implementations loaded: its pure-Python one needs
    # the libpq shared library, which pip does not install.
    cause = " ".join(str(e).split())
    return (
        "psycopg is installed but cannot load libpq, the PostgreSQL client library "
        f"({cause}): install libpq (Debian/Ubuntu: apt-get install libpq5; RHEL/Fedora: "
        "dnf install libpq) or use psycopg's bundled copy: pip install 'psycopg[binary]'"
    )


class ProducerSession:
    """A connection plus run-scoped queues for checking one producer, case by case.

    Use as a context manager; :meth:`run` checks one :class:`Case`. ``close()`` removes every
    row the run created.
    """

    def __init__(self, dsn: str, insert: InsertFn, *, schema: str = "awa") -> None:
        if not callable(insert):
            raise ConformanceError("insert= must be a callable taking the request dict and returning the job id")
        self._psycopg = _import_psycopg()
        from psycopg import sql

        self._sql = sql
        self.insert = insert
        self.schema = schema
        self.run_id = secrets.token_hex(4)
        self._queues: list[str] = []
        self._schema = sql.Identifier(schema)
        try:
            self.conn = self._psycopg.connect(dsn, autocommit=True)
        except self._psycopg.Error as e:
            # psycopg's message never contains the password.
            raise ConformanceError(f"cannot connect to the database for producer checks: {e}") from e
        try:
            self.server_version = self.conn.execute("SHOW server_version").fetchone()[0]
            self.server_contract_version = self._one(
                sql.SQL("SELECT {}.contract_version()").format(self._schema)
            )
        except self._psycopg.Error as e:
            self.conn.close()
            raise ConformanceError(
                f"schema {schema!r} has no contract_version(): install the reference schema with "
                f"`awa-conformance schema install --dsn URL --schema {schema}` (the command ships "
                f"with this package) or pass schema= naming the schema that has it "
                f"({e.diag.message_primary})"
            ) from e

    def _one(self, query: Any, params: Any = None) -> Any:
        row = self.conn.execute(query, params).fetchone()
        return None if row is None else row[0]

    def __enter__(self) -> ProducerSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def provenance(self) -> dict[str, Any]:
        m = manifest()
        return {
            "kit_version": _native.__version__,
            "contract_version": _native.CONTRACT_VERSION,
            "vectors_version": m.get("vectors_version"),
            "vectors_root_sha256": m.get("root_sha256"),
            "server_version": self.server_version,
            "server_contract_version": self.server_contract_version,
            "schema": self.schema,
            "producer": getattr(self.insert, "__qualname__", repr(self.insert)),
            "run_id": self.run_id,
            "started_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }

    # -- per-case -------------------------------------------------------------------------

    def _new_queue(self, width: int) -> str:
        queue = f"awa_conformance_{self.run_id}_{len(self._queues)}"
        self._queues.append(queue)
        self.conn.execute(
            self._sql.SQL(
                "INSERT INTO {}.queue_meta (queue, enqueue_shards) VALUES (%s, %s) "
                "ON CONFLICT (queue) DO UPDATE SET enqueue_shards = EXCLUDED.enqueue_shards"
            ).format(self._schema),
            (queue, width),
        )
        return queue

    def request(self, case: Case, queue: str) -> Request:
        """The dict handed to the producer's ``insert`` callable."""
        return {
            "id": case.id,
            "family": case.family,
            "schema": self.schema,
            "kind": PROBE_KIND,
            "queue": queue,
            "args": {},
            "priority": 2,
            "ordering_key": case.ordering_key,
            "concurrency_key": case.concurrency_key,
            "unique_key": case.unique_key,
            "unique_key_inputs": case.unique_key_inputs,
            "unique_states": case.unique_states,
            "width": case.width,
        }

    def _reference(self, req: Request) -> dict[str, Any]:
        """What the schema's insert_job computes for ``req``, in a rolled-back transaction.

        Uniqueness is not claimed (states NULL): the producer's job already holds the claim.
        """
        q = self._sql.SQL(
            "SELECT enqueue_shard, route_source, concurrency_digest FROM {}.insert_job("
            "p_kind => %s, p_queue => %s, p_args => '{{}}'::jsonb, p_unique_key => %s, "
            "p_ordering_key => %s, p_concurrency_key => %s)"
        ).format(self._schema)
        with self.conn.transaction(force_rollback=True):
            row = self.conn.execute(
                q, (req["kind"], req["queue"], req["unique_key"], req["ordering_key"], req["concurrency_key"])
            ).fetchone()
        shard, source, digest = row
        return {"route_source": source, "enqueue_shard": shard, "concurrency_digest": _hex(digest)}

    def _stored(self, job_id: int) -> dict[str, Any] | None:
        row = self.conn.execute(
            self._sql.SQL(
                "SELECT job_id, queue, enqueue_shard, route_source, concurrency_digest, ordering_key_digest, "
                "unique_key, unique_states FROM {}.job_routing(%s)"
            ).format(self._schema),
            (job_id,),
        ).fetchone()
        if row is None or row[0] is None:
            return None
        _, queue, shard, source, digest, ok, uk, us = row
        return {
            "queue": queue,
            "route_source": source,
            "enqueue_shard": shard,
            "concurrency_digest": _hex(digest),
            "ordering_key_digest": _hex(ok),
            "unique_key": _hex(uk),
            "unique_states": us,
        }

    def run(self, case: Case) -> CaseResult:
        """Enqueue ``case`` through the producer and compare; the case's rows are removed after."""
        queue = self._new_queue(case.width)
        try:
            return self._run(case, queue)
        finally:
            self._cleanup([queue])

    def _run(self, case: Case, queue: str) -> CaseResult:
        req = self.request(case, queue)
        expected = dict(case.expected, queue=queue, width=case.width)

        def fail(message: str, actual: dict[str, Any] | None = None) -> CaseResult:
            return CaseResult(case.id, case.family, "failed", expected, actual or {}, message)

        try:
            job_id = self.insert(dict(req))
        except Exception as e:  # the producer's own failure is this case's result
            return fail(f"producer insert raised {type(e).__name__}: {e}")
        if isinstance(job_id, bool) or not isinstance(job_id, int):
            return fail(f"producer insert returned {job_id!r}; it must return the job id (int)")
        try:
            stored = self._stored(job_id)
        except self._psycopg.Error as e:
            return fail(f"reading {self.schema}.job_routing({job_id}) failed: {e}")
        if stored is None:
            return fail(
                f"job {job_id} not found by {self.schema}.job_routing: the producer must commit "
                "before returning, into the same database and schema"
            )
        problems = self._compare(case, expected, stored)
        actual = dict(stored, job_id=job_id)
        try:
            reference = self._reference(req)
        except self._psycopg.Error as e:
            problems.append(f"reference {self.schema}.insert_job failed: {e}")
        else:
            actual["reference"] = reference
            for k in ("route_source", "concurrency_digest"):
                if reference[k] != stored[k]:
                    problems.append(f"{k}: stored {stored[k]!r}, {self.schema}.insert_job computes {reference[k]!r}")
            if case.expected.get("enqueue_shard") is not None and reference["enqueue_shard"] != stored["enqueue_shard"]:
                problems.append(
                    f"enqueue_shard: stored {stored['enqueue_shard']!r}, "
                    f"{self.schema}.insert_job computes {reference['enqueue_shard']!r}"
                )
        if problems:
            return fail("; ".join(problems), actual)
        return CaseResult(case.id, case.family, "passed", expected, actual, "")

    @staticmethod
    def _compare(case: Case, expected: dict[str, Any], stored: dict[str, Any]) -> list[str]:
        problems = []
        if stored["queue"] != expected["queue"]:
            problems.append(f"queue: stored {stored['queue']!r}, requested {expected['queue']!r}")
        for k in ("route_source", "concurrency_digest", "ordering_key_digest"):
            if stored[k] != expected[k]:
                problems.append(f"{k}: stored {stored[k]!r}, vector expects {expected[k]!r}")
        shard = stored["enqueue_shard"]
        if expected["enqueue_shard"] is None:
            if not (isinstance(shard, int) and 0 <= shard < case.width):
                problems.append(f"enqueue_shard: rotor shard {shard!r} is outside [0, {case.width})")
        elif shard != expected["enqueue_shard"]:
            problems.append(f"enqueue_shard: stored {shard!r}, vector expects {expected['enqueue_shard']!r}")
        if case.family == "unique_key":
            for k in ("unique_key", "unique_states"):
                if stored[k] != expected[k]:
                    problems.append(f"{k}: stored {stored[k]!r}, vector expects {expected[k]!r}")
        return problems

    # -- cleanup --------------------------------------------------------------------------

    def _cleanup(self, queues: list[str]) -> None:
        s = self._schema
        with self.conn.transaction():
            self.conn.execute(
                self._sql.SQL(
                    "DELETE FROM {}.job_unique_claims WHERE job_id IN "
                    "(SELECT id FROM {}.contract_jobs WHERE queue = ANY(%s))"
                ).format(s, s),
                (queues,),
            )
            self.conn.execute(
                self._sql.SQL("DELETE FROM {}.contract_jobs WHERE queue = ANY(%s)").format(s), (queues,)
            )
            self.conn.execute(self._sql.SQL("DELETE FROM {}.queue_meta WHERE queue = ANY(%s)").format(s), (queues,))

    def close(self) -> None:
        """Delete every row this run created (all its queues) and close the connection."""
        if self.conn.closed:
            return
        try:
            if self._queues:
                self._cleanup(list(self._queues))
        finally:
            self.conn.close()


def check_producer(
    dsn: str,
    insert: InsertFn,
    *,
    families: Iterable[str] | None = None,
    schema: str = "awa",
    junit: str | None = None,
    json: str | None = None,
) -> Report:
    """Check a producer's ``insert`` callable against the applicable vectors; see the module doc."""
    if isinstance(families, str):
        raise ConformanceError("families= must be a list of family names, not a str")
    cases, skipped = build_cases(families)
    with ProducerSession(dsn, insert, schema=schema) as session:
        report = Report(cases=[], provenance=session.provenance())
        for case in cases:
            report.cases.append(session.run(case))
    report.cases.extend(skipped)
    if junit is not None:
        report.write_junit(junit)
    if json is not None:
        report.write_json(json)
    return report
