"""In-process producer checks: the runner's producer engine, with a Python callable as the producer.

``check_producer(dsn, insert)`` and the pytest plugin run the same engine as
``awa-conformance --producer CMD`` (the runner compiled into this wheel): the same cases, the
same judge, the same expected-failures matcher and the same JSON/JUnit/Markdown writers. This
module only turns each engine request into a dict, calls ``insert`` (awaiting a coroutine), and
turns its return value or exception into the protocol's answer (docs/adapter-protocol.md,
"Enqueue: producers"); the request shape is documented on ``check_producer`` in
``__init__.pyi``.
"""

from __future__ import annotations

import asyncio
import inspect
import json as _json
import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from awa_conformance import _native
from awa_conformance._errors import ConformanceError, ExpectedFailuresError, ProducerRefused, ProducerSkip
from awa_conformance._vectors import decode_typed
from awa_conformance.report import CaseResult, Report

Request = dict[str, Any]
InsertFn = Callable[[Request], Any]

#: Seconds one ``insert`` call may take (the CLI's ``--adapter-timeout`` default).
DEFAULT_TIMEOUT = 30.0


def trial_names() -> list[str]:
    """Every producer case name (``producer::<family>::<id>[::w<width>][::<step>]``)."""
    return list(_native._producer_trial_names())


def _families() -> list[str]:
    return sorted({name.split("::")[1] for name in trial_names()})


#: The case families the producer engine builds (the second segment of a case name).
PRODUCER_FAMILIES: tuple[str, ...] = tuple(_families())


@dataclass(frozen=True)
class Case:
    """One producer case, by name (the engine builds and judges it)."""

    name: str
    family: str

    @property
    def id(self) -> str:
        """The part after the family ("" for the whole-producer case ``producer::coverage``)."""
        parts = self.name.split("::", 2)
        return parts[2] if len(parts) > 2 else ""


def build_cases(selected: Iterable[str] | None = None) -> tuple[list[Case], list[CaseResult]]:
    """The producer cases of ``selected`` families (default: all), and no skipped results.

    Raises ConformanceError naming the known families for an unknown one.
    """
    chosen = list(PRODUCER_FAMILIES if selected is None else selected)
    for fam in chosen:
        if fam not in PRODUCER_FAMILIES:
            raise ConformanceError(f"unknown family {fam!r} in families=: pass some of {', '.join(PRODUCER_FAMILIES)}")
    cases = [Case(n, n.split("::")[1]) for n in trial_names() if n.split("::")[1] in chosen]
    return cases, []


def request_dict(message: dict[str, Any]) -> Request:
    """The dict ``insert`` receives for one protocol enqueue request (see ``check_producer``)."""
    job = message["job"]

    def key(hex_text: str | None) -> bytes | None:
        return None if hex_text is None else bytes.fromhex(hex_text)

    unique = job["unique"]
    partition = job["partition"]
    return {
        "case": message["case"],
        "schema": message["schema"],
        "kind": job["kind"],
        "queue": job["queue"],
        "args": decode_typed(job["args"]),
        "args_typed": job["args"],
        "priority": job["priority"],
        "run_at": job["run_at"],
        "tags": list(job["tags"]),
        "ordering_key": key(job["ordering_key_hex"]),
        "concurrency_key": key(job["concurrency_key_hex"]),
        "unique": None if unique is None else {
            "by_queue": unique["by_queue"],
            "by_args": unique["by_args"],
            "period_bucket": None if unique["period_bucket"] is None else int(unique["period_bucket"]),
        },
        "unique_states": job["unique_states"],
        "partition": None if partition is None else {
            "key": bytes.fromhex(partition["key_hex"]), "partitions": partition["partitions"],
        },
        "opts": job["opts"],
        # Protocol 3's members, only when the request carries them (ADR 0053).
        **({} if "metadata" not in job else {
            "metadata": None if job["metadata"] is None else decode_typed(job["metadata"]),
            "metadata_typed": job["metadata"],
            "max_attempts": job["max_attempts"],
        }),
    }


def _detail_code(exc: BaseException) -> str | None:
    """The contract ``code`` of a driver error's JSON DETAIL (psycopg: ``e.diag.message_detail``)."""
    detail = getattr(getattr(exc, "diag", None), "message_detail", None)
    if not isinstance(detail, str):
        return None
    try:
        parsed = _json.loads(detail)
    except ValueError:
        return None  # released errors (23505, 23514) have a plain-text DETAIL
    code = parsed.get("code") if isinstance(parsed, dict) else None
    return code if isinstance(code, str) else None


class _Worker:
    """One daemon thread that runs every ``insert`` call of a check, in order.

    A producer keeps thread affinity (a thread-local connection works) and one asyncio event
    loop (an async producer may keep a connection across calls). A call that outlives the
    timeout is abandoned with its thread; the next call starts a fresh worker.
    """

    def __init__(self) -> None:
        self.jobs: queue.Queue[Any] = queue.Queue()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread = threading.Thread(target=self._serve, name="awa-conformance-producer", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                break
            fn, box, done = job
            box.append(fn(self))
            done.set()
        if self.loop is not None:
            self.loop.close()

    def run(self, fn: Callable[[_Worker], Any], timeout: float) -> tuple[bool, Any]:
        box: list[Any] = []
        done = threading.Event()
        self.jobs.put((fn, box, done))
        return (True, box[0]) if done.wait(timeout) else (False, None)

    def await_(self, awaitable: Any) -> Any:
        if self.loop is None:
            self.loop = asyncio.new_event_loop()
        return self.loop.run_until_complete(awaitable)

    def stop(self) -> None:
        self.jobs.put(None)


class _Call:
    """The producer the engine calls: request JSON in, answer JSON out.

    Raises only TimeoutError (``insert`` did not return within ``timeout``: a harness error of
    the case); every other outcome is an answer.
    """

    def __init__(self, insert: InsertFn, timeout: float) -> None:
        self.insert, self.timeout = insert, timeout
        self.worker: _Worker | None = None
        self.abandoned: list[_Worker] = []

    def __call__(self, request_json: str) -> str:
        message = _json.loads(request_json)
        if self.worker is None:
            self.worker = _Worker()
        done, answer = self.worker.run(lambda w: self.answer(message, w), self.timeout)
        if not done:
            # Abandoned: it may still be running the call (a thread cannot be killed).
            self.abandoned.append(self.worker)
            self.worker.stop()
            self.worker = None
            raise TimeoutError(f"insert did not return within {self.timeout}s (timeout=)")
        return _json.dumps(answer, separators=(",", ":"))

    def answer(self, message: dict[str, Any], worker: _Worker) -> dict[str, Any]:
        seq = message["seq"]
        try:
            result = self.insert(request_dict(message))
            if inspect.isawaitable(result):
                result = worker.await_(result)
        except ProducerRefused as r:
            return {"seq": seq, "refused": {"sqlstate": None, "code": r.code, "message": r.message}}
        except ProducerSkip as s:
            return {"seq": seq, "skipped": True, "reason": str(s) or "skipped by the producer"}
        except Exception as e:  # the producer's own failure is this case's answer
            sqlstate = getattr(e, "sqlstate", None)
            if isinstance(sqlstate, str) and sqlstate:
                primary = getattr(getattr(e, "diag", None), "message_primary", None)
                return {"seq": seq, "refused": {"sqlstate": sqlstate, "code": _detail_code(e),
                                                "message": primary or str(e)}}
            return {"seq": seq, "error": f"insert raised {type(e).__name__}: {e}"}
        trace = None
        if isinstance(result, dict):
            result, trace = result.get("job_id"), result.get("trace")
        if isinstance(result, bool) or not isinstance(result, int):
            return {"seq": seq, "error": f"insert returned {result!r}; it must return the job id (int), "
                    "or a dict {\"job_id\": int, \"trace\": {...}}"}
        out: dict[str, Any] = {"seq": seq, "job_id": result}
        if trace is not None:
            out["trace"] = trace
        return out

    def restart(self) -> None:
        """After a timeout: give abandoned calls one more timeout to finish (so a late insert
        lands while the run can still sweep it), then forget them."""
        for worker in self.abandoned:
            worker.thread.join(self.timeout)
        self.abandoned = [w for w in self.abandoned if w.thread.is_alive()]

    def close(self) -> None:
        if self.worker is not None:
            self.worker.stop()
            self.worker = None


def _name_filter(families: Iterable[str] | None) -> list[str] | None:
    if families is None:
        return None
    if isinstance(families, str):
        raise ConformanceError("families= must be a list of family names, not a str")
    cases, _ = build_cases(families)
    return [c.name for c in cases]


def check_producer(
    dsn: str,
    insert: InsertFn,
    *,
    families: Iterable[str] | None = None,
    schema: str = "awa",
    producer_role: str = "awa_producer",
    junit: str | None = None,
    json: str | None = None,
    markdown: str | None = None,
    expected_failures: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    protocol: int = 2,
    plain_sessions: bool = False,
) -> Report:
    """Check a producer's ``insert`` callable with the runner's producer engine; see ``__init__.pyi``."""
    return run_engine(
        dsn, insert, schema=schema, producer_role=producer_role, names=_name_filter(families),
        expected_failures=expected_failures, timeout=timeout, json=json, junit=junit, markdown=markdown,
        protocol=protocol, plain_sessions=plain_sessions,
    )


def session_dsn(dsn: str) -> str:
    """The runner's callers'-settings URL for ``dsn``; see ``__init__.pyi``."""
    try:
        return str(_native._session_dsn(dsn))
    except RuntimeError as e:
        raise ConformanceError(str(e)) from e


def run_engine(
    dsn: str,
    insert: InsertFn,
    *,
    schema: str,
    producer_role: str = "awa_producer",
    names: list[str] | None,
    expected_failures: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    json: str | None = None,
    junit: str | None = None,
    markdown: str | None = None,
    protocol: int = 2,
    plain_sessions: bool = False,
) -> Report:
    """Run the engine on the cases named ``names`` (None: all); the pytest plugin's entry."""
    if not callable(insert):
        raise ConformanceError("insert= must be a callable taking the request dict and returning the job id")
    call = _Call(insert, float(timeout))
    try:
        native = _native._check_producer(
            dsn, schema, producer_role, call, names, expected_failures, float(timeout), json, junit, markdown,
            getattr(insert, "__qualname__", repr(insert)), protocol, bool(plain_sessions),
        )
    except ValueError as e:
        # The native module raises ValueError for an expected-failures file it rejects.
        raise ExpectedFailuresError(str(e)) from e
    except RuntimeError as e:
        raise ConformanceError(str(e)) from e
    finally:
        call.close()
    return Report.from_native(native)
