"""Cross-check the vectors (releases v1 and v1.1) against released Awa 0.6.9 (awa-pg SDK, awa-cli, its SQL) on a real PostgreSQL.

Ground truth is what the released artifacts compute, observed two independent ways where possible:

* storage: insert through `awa.Client.insert(..., unique_opts=...)` and read the stored
  `awa.jobs.unique_key` bytes back;
* cancel oracle: store a job whose unique_key is the vector's EXPECTED key (raw SQL), then ask
  the released `cancel_by_unique_key(kind, queue=, args=, period_bucket=)` to find it. The SDK
  recomputes the key from the components, so it finds a job whose key equals the expected one
  only if the released computation agrees. This reaches args the insert path refuses (top-level
  arrays/scalars, U+0000, deep nesting, names over 200 characters).

Shards come from released `awa.insert_job_compat(p_ordering_key => ...)` in queue-storage mode,
partitions from `awa.PartitionedQueue.queue_for_key`. See tests/crosscheck/README.md.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import awa
import blake3
import pytest
from conftest import RELEASES, VECTORS_ROOT, Released
from xcheck_values import (
    SDK_INSERT_MAX_DEPTH,
    SQL_MAX_NAME_CHARS,
    PyValue,
    from_typed,
    load_family,
)

# Far future run_at: inserts become `scheduled` (deferred_jobs), which skips the queue-storage
# NOTIFY whose 63-byte channel limit would refuse queue names over 59 bytes (docs/released-awa.md R2.3).
FUTURE = dt.datetime(2099, 1, 1, tzinfo=dt.timezone.utc)
# unique_opts states = 0: the key is stored but no claim is taken, so vectors whose keys collide
# (documented released hazards) do not raise UniqueConflict against each other.
NO_CLAIM = 0
CJ_KIND = "xc.canonical_json"
UK_DEFAULT_QUEUE = "xc_unique_key"
OS_WIDTHS = range(1, 65)


def released_key(preimage: bytes) -> bytes:
    """blake3(preimage)[:16], the released unique_key framing (docs/released-awa.md R3.1)."""
    return blake3.blake3(preimage).digest()[:16]


def params(family: str) -> list[Any]:
    return [pytest.param(v, id=f"{family}::{v['id']}") for v in load_family(VECTORS_ROOT, RELEASES, family)]


# --------------------------------------------------------------------------------------------
# unique_key / canonical_json cases: what to hand the SDK, and what the released key must be
# --------------------------------------------------------------------------------------------


@dataclass
class KeyCase:
    """One released key computation to observe."""

    vid: str
    kind: str
    queue: str | None  # None: by_queue off
    args: PyValue | None  # None: by_args off
    period: int | None  # None: no by_period
    expected_key: bytes

    def inexpressible(self) -> str | None:
        """Why the released Python SDK cannot be asked this at all (the test then skips)."""
        if self.args is not None and self.args.has_duplicate_key:
            return (
                "inexpressible in released Python: duplicate object keys (a dict holds one value per key; "
                "last-wins resolution is unobservable through the SDK)"
            )
        if self.args is not None and self.args.value is None:
            return (
                "inexpressible in released Python: args is the JSON value null, but the SDK reads "
                "args=None as 'args not part of the key' and insert refuses non-dict args"
            )
        return None

    def storage_refusal(self) -> str | None:
        """Why the released insert path cannot store it (only the cancel oracle is used then)."""
        if self.args is not None and not isinstance(self.args.value, dict):
            return "SDK insert takes only dict args"
        if self.args is not None and self.args.has_nul:
            return "PostgreSQL jsonb refuses U+0000"
        if "\x00" in self.kind or "\x00" in (self.queue or ""):
            return "PostgreSQL text refuses U+0000"
        if len(self.kind) > SQL_MAX_NAME_CHARS or len(self.queue or "") > SQL_MAX_NAME_CHARS:
            return "insert_job_compat refuses kind/queue over 200 characters"
        if self.args is not None and self.args.depth > SDK_INSERT_MAX_DEPTH:
            return "SDK insert refuses nesting over 64 levels"
        return None

    def python_args(self) -> Any:
        return self.args.value if self.args is not None else None

    def unique_opts(self) -> dict[str, Any]:
        opts: dict[str, Any] = {
            "by_queue": self.queue is not None,
            "by_args": self.args is not None,
            "states": NO_CLAIM,
        }
        if self.period is not None:
            opts["by_period"] = self.period
        return opts


def uk_case(v: dict[str, Any]) -> KeyCase:
    inp = v["input"]
    where = f"unique_key::{v['id']}"
    args = None if inp.get("args") is None else from_typed(inp["args"], where)
    period = None if inp.get("period_bucket") is None else int(inp["period_bucket"])
    return KeyCase(
        vid=v["id"],
        kind=inp["kind"],
        queue=inp.get("queue"),
        args=args,
        period=period,
        expected_key=bytes.fromhex(v["expected"]["unique_key_hex"]),
    )


def cj_cases(v: dict[str, Any]) -> tuple[KeyCase, KeyCase]:
    """A canonical_json vector as key computations (kind CJ_KIND, by_args only): (storage, oracle).

    The released key is blake3(kind || 0x00 || canonical(args))[:16], so equal keys prove the
    released canonical bytes equal the vector's. The insert path takes only dict args, so a
    non-object value is stored wrapped as {"v": value}, whose canonical bytes are `{"v":` +
    canonical(value) + `}` (compact framing). The cancel oracle takes the value itself, except
    a top-level null, which the SDK reads as "no args": that one is wrapped there too.
    """
    where = f"canonical_json::{v['id']}"
    value = from_typed(v["input"]["value"], where)
    canon = bytes.fromhex(v["expected"]["canonical_hex"])
    prefix = CJ_KIND.encode() + b"\x00"

    def case(args: PyValue, canonical: bytes) -> KeyCase:
        return KeyCase(v["id"], CJ_KIND, None, args, None, released_key(prefix + canonical))

    direct = case(value, canon)
    if isinstance(value.value, dict):
        return direct, direct
    wrapped = case(
        PyValue(
            {"v": value.value},
            has_big_int=value.has_big_int,
            has_duplicate_key=value.has_duplicate_key,
            has_nul=value.has_nul,
            depth=value.depth + 1,
        ),
        b'{"v":' + canon + b"}",
    )
    return wrapped, (wrapped if value.value is None else direct)


def store_all(released: Released, cases: list[KeyCase]) -> dict[str, tuple[bytes | None, str | None]]:
    """Insert every storable case through the released SDK; return vid -> (stored key, error)."""
    errors: dict[str, str] = {}
    for case in cases:
        if case.inexpressible() or case.storage_refusal():
            continue
        try:
            released.client.insert(
                case.python_args() if case.args is not None else {},
                kind=case.kind,
                queue=case.queue if case.queue is not None else UK_DEFAULT_QUEUE,
                run_at=FUTURE,
                tags=[f"xc:{case.vid}"],
                unique_opts=case.unique_opts(),
            )
        except Exception as exc:  # noqa: BLE001 - the row may exist even when the SDK raised
            errors[case.vid] = f"{type(exc).__name__}: {exc}"
    rows = released.conn.execute(
        "SELECT substr(tags[1], 4), unique_key FROM awa.jobs WHERE tags[1] LIKE 'xc:%'"
    ).fetchall()
    stored: dict[str, tuple[bytes | None, str | None]] = {vid: (None, err) for vid, err in errors.items()}
    for vid, key in rows:
        stored[vid] = (bytes(key) if key is not None else None, errors.get(vid))
    # Keys read: remove the rows so the cancel oracle only ever finds its own jobs (some stored
    # args, e.g. 1.7976931348623157e308, make the SDK fail to decode a returned row).
    released.conn.execute("DELETE FROM awa.jobs WHERE tags[1] LIKE 'xc:%'")
    return stored


def oracle_agrees(released: Released, case: KeyCase) -> bool:
    """True iff released cancel_by_unique_key computes case.expected_key (see module doc)."""
    (job_id,) = released.conn.execute(
        "SELECT id FROM awa.insert_job_compat(p_kind => 'xc.oracle', p_queue => 'xc_oracle', "
        "p_state => 'scheduled', p_run_at => %s, p_unique_key => %s)",
        (FUTURE, case.expected_key),
    ).fetchone()
    found = released.client.cancel_by_unique_key(
        case.kind, queue=case.queue, args=case.python_args(), period_bucket=case.period
    )
    if found is None:
        # No live job has the released key, so it is not ours: clear ours for later vectors.
        released.client.cancel(job_id)
        return False
    # Any job found carries the released key; it agrees iff that key is the expected one.
    row = released.conn.execute("SELECT unique_key FROM awa.jobs WHERE id = %s", (found.id,)).fetchone()
    agrees = row is not None and bytes(row[0]) == case.expected_key
    if found.id != job_id:
        try:
            released.client.cancel(job_id)
        except awa.AwaError:
            pass  # already terminal
    return agrees


def check_key_case(
    released: Released,
    stored: dict[str, tuple[bytes | None, str | None]],
    storage_case: KeyCase,
    oracle_case: KeyCase,
) -> None:
    """Both released observations must give the expected key (u64 args: see the hazard branch)."""
    reason = oracle_case.inexpressible() or storage_case.inexpressible()
    if reason:
        pytest.skip(reason)
    problems: list[str] = []
    got: bytes | None = None
    if storage_case.storage_refusal() is None:
        got, err = stored.get(storage_case.vid, (None, "no row stored"))
        if got is None:
            problems.append(f"released SDK insert stored no key ({err})")
    agrees = oracle_agrees(released, oracle_case)
    case = oracle_case

    if case.args is not None and case.args.has_big_int:
        # Documented hazard (docs/released-awa.md R4.2): the released insert path turns ints outside i64 into
        # f64, so it must NOT store the exact-integer key a Rust (u64) producer computes ...
        if got is not None:
            assert got != storage_case.expected_key, (
                "released insert stored the vector's key for an arg outside i64: either the vector "
                "does not hold the exact integer, or the documented f64 hazard is gone (then update "
                "tests/crosscheck/README.md)"
            )
        # ... while released cancel_by_unique_key (serde conversion, u64-capable) computes it
        # exactly: that confirms the vector's exact-integer bytes are the released Rust ones.
        assert agrees, (
            f"released cancel_by_unique_key computes a key other than expected {case.expected_key.hex()}"
        )
        return

    if got is not None and got != storage_case.expected_key:
        problems.append(f"stored key {got.hex()} != expected {storage_case.expected_key.hex()}")
    if not agrees:
        problems.append(
            f"released cancel_by_unique_key computes a key other than expected {case.expected_key.hex()}"
        )
    assert not problems, f"{case.vid}: " + "; ".join(problems)


UK_PARAMS = params("unique_key")
CJ_PARAMS = params("canonical_json")


@pytest.fixture(scope="session")
def uk_stored(released: Released) -> dict[str, tuple[bytes | None, str | None]]:
    return store_all(released, [uk_case(p.values[0]) for p in UK_PARAMS])


@pytest.fixture(scope="session")
def cj_stored(released: Released, uk_stored: dict[str, Any]) -> dict[str, tuple[bytes | None, str | None]]:
    # Depends on uk_stored only to order the inserts; tags keep the two families apart.
    stored = store_all(released, [cj_cases(p.values[0])[0] for p in CJ_PARAMS])
    return {vid: stored[vid] for vid in stored if vid.startswith("cj-")}


@pytest.mark.parametrize("vector", UK_PARAMS)
def test_unique_key(vector: dict[str, Any], released: Released, uk_stored: dict[str, Any]) -> None:
    case = uk_case(vector)
    check_key_case(released, uk_stored, case, case)


@pytest.mark.parametrize("vector", CJ_PARAMS)
def test_canonical_json(vector: dict[str, Any], released: Released, cj_stored: dict[str, Any]) -> None:
    exp = vector["expected"]
    assert bytes.fromhex(exp["canonical_hex"]).decode("utf-8") == exp["canonical_text"], (
        "vector inconsistent: canonical_text is not the UTF-8 decoding of canonical_hex"
    )
    check_key_case(released, cj_stored, *cj_cases(vector))


# --------------------------------------------------------------------------------------------
# ordering_shard: released insert_job_compat in queue-storage mode, every width 1..=64
# --------------------------------------------------------------------------------------------

OS_PARAMS = params("ordering_shard")


@pytest.fixture(scope="session")
def os_observed(released: Released) -> dict[str, list[int]]:
    """vid -> [enqueue_shard at width 1, ..., width 64] as released SQL routes the key."""
    vids = [p.values[0]["id"] for p in OS_PARAMS]
    keys = [bytes.fromhex(p.values[0]["input"]["key_hex"]) for p in OS_PARAMS]
    observed: dict[str, list[int]] = {vid: [] for vid in vids}
    conn = released.conn
    for width in OS_WIDTHS:
        queue = f"xc_os_w{width}"
        with conn.transaction():
            # The documented width upsert (docs/released-awa.md R5.2).
            conn.execute(
                "INSERT INTO awa.queue_meta (queue, enqueue_shards) VALUES (%s, %s) "
                "ON CONFLICT (queue) DO UPDATE SET enqueue_shards = EXCLUDED.enqueue_shards",
                (queue, width),
            )
            rows = conn.execute(
                "SELECT k.ord, j.id FROM unnest(%s::bytea[]) WITH ORDINALITY AS k(key, ord) "
                "CROSS JOIN LATERAL awa.insert_job_compat(p_kind => 'xc.ordering_shard', "
                "p_queue => %s, p_ordering_key => k.key) AS j ORDER BY k.ord",
                (keys, queue),
            ).fetchall()
            ids = [job_id for _, job_id in rows]
            shard_of = dict(
                conn.execute(
                    "SELECT job_id, enqueue_shard FROM awa.ready_entries WHERE job_id = ANY(%s)", (ids,)
                ).fetchall()
            )
        for vid, job_id in zip(vids, ids, strict=True):
            observed[vid].append(shard_of.get(job_id, -1))
    return observed


@pytest.mark.parametrize("vector", OS_PARAMS)
def test_ordering_shard(vector: dict[str, Any], os_observed: dict[str, list[int]]) -> None:
    expected = vector["expected"]["shards"]
    assert len(expected) == 64, "vector must list 64 shards (widths 1..=64)"
    got = os_observed[vector["id"]]
    diffs = [f"width {w}: released {g}, vector {e}" for w, g, e in zip(OS_WIDTHS, got, expected) if g != e]
    assert not diffs, f"key_hex '{vector['input']['key_hex'][:64]}': " + "; ".join(diffs)


# --------------------------------------------------------------------------------------------
# partition: released awa.PartitionedQueue
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("vector", params("partition"))
def test_partition(vector: dict[str, Any]) -> None:
    inp, exp = vector["input"], vector["expected"]
    key = bytes.fromhex(inp["key_hex"])
    pq = awa.PartitionedQueue(inp["logical_queue"], inp["partitions"])
    assert pq.queue_for_key(key) == exp["physical_queue"]
    assert pq.physical_queues[exp["partition"]] == exp["physical_queue"]
    try:
        text = key.decode("utf-8")
    except UnicodeDecodeError:
        return
    # The SDK takes str keys as their UTF-8 bytes: same route.
    assert pq.queue_for_key(text) == exp["physical_queue"]
