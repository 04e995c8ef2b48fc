"""Runs each example producer (examples/producers/<lang>) and each of its mutants through the runner.

A correct example must pass at least 100 `producer::` cases with nothing failed or errored;
every mutant (a copy of the example with tests/mutants/<lang>/<mutant>.patch applied, made by
tests/mutants/materialise.py; table in tests/mutants/README.md) must make the run fail (exit 1)
in at least one case family (a skip mutant in producer::coverage alone). Which families catch which mutant is the kill matrix in
docs/producer-kill-matrix.md: test_kill_matrix.py (collected after this file) checks it
against what these runs saw (AWA_UPDATE_KILL_MATRIX=1 rewrites it).

A mutant's run covers the families its row of that matrix names (the others are passed to
`--skip`), so each claimed kill is checked again at a fraction of a full run's cost; a family
the matrix does not know yet always runs. The skip mutants, whose only finding is the
whole-producer `producer::coverage`, run in full, and so does every mutant when the matrix is
being rewritten (AWA_UPDATE_KILL_MATRIX=1): a family that starts catching a mutant shows up
there, not in these runs.

Needs DATABASE_URL (a superuser DSN: the schema is installed into its own schema and removed
afterwards) and a runner with `--producer` (AWA_CONFORMANCE_BIN, default
target/release/awa-conformance). With AWA_REQUIRE_DB=1 (CI) a missing one fails instead of skipping.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "mutants"))
import materialise  # noqa: E402  (tests/mutants/materialise.py)
sys.path.insert(0, str(ROOT / "tests" / "page"))
from keep import keep_for_page  # noqa: E402  (tests/page/keep.py)

RUNNER = Path(os.environ.get("AWA_CONFORMANCE_BIN", ROOT / "target" / "release" / "awa-conformance"))
LANGS = ("go", "java", "node")
MUTANTS = (
    "separators",
    "escaping",
    "utf16_sort",
    "native_floats",
    "nan_token",
    "big_endian_bucket",
    "drop_ordering_key",
    "no_concurrency_fallback",
    "drop_concurrency_key",
    "bit8_cast",
    "latin1_keys",
    "text_keys",
    "drop_tags",
    "drop_metadata",
    "skip_refusals",
)
# Mutants that store nothing wrong but skip what their hello declares: the only case they may
# fail is the whole-producer producer::coverage.
SKIP_MUTANTS = {"skip_refusals"}
SCHEMA = "awa_example_producers"
ROLE = "awa_example_producers_producer"
MATRIX_DOC = ROOT / "docs" / "producer-kill-matrix.md"
BEGIN, END = "<!-- kill-matrix:begin -->", "<!-- kill-matrix:end -->"
# Bounds every runner call: a hung producer must fail the test, not hang CI.
RUN_TIMEOUT = 600

# Mutant runs of one example at a time: the runs wait on the database, not the CPU, and the
# runner serializes the cases that share global unique keys across concurrent runs.
PARALLEL = 3
# A JVM's hello can take seconds on a loaded machine; still a bound.
ADAPTER_TIMEOUT = "120"

# (lang, mutant) -> the case families with a failed case; filled by the mutant tests.
KILLS: dict[tuple[str, str], set[str]] = {}
# Every case family the runs saw (the kill matrix's columns).
FAMILIES: set[str] = set()


def _unavailable(why: str) -> None:
    if os.environ.get("AWA_REQUIRE_DB") == "1":
        pytest.fail(why + " (AWA_REQUIRE_DB=1: this must run)")
    pytest.skip(why)


@pytest.fixture(scope="module")
def dsn() -> str:
    url = os.environ.get("DATABASE_URL")
    if not url:
        _unavailable("DATABASE_URL is not set")
    if not RUNNER.is_file():
        _unavailable(f"no runner at {RUNNER}: build it (cargo build --release -p awa-conformance)")
    help_text = subprocess.run([RUNNER, "--help"], capture_output=True, text=True, timeout=60).stdout
    if "--producer" not in help_text:
        _unavailable(f"{RUNNER} has no --producer option (the producer engine)")
    target = ["--dsn", url, "--schema", SCHEMA, "--producer-role", ROLE]
    subprocess.run([RUNNER, "schema", "install", *target], check=True, timeout=120)
    yield url
    subprocess.run([RUNNER, "schema", "uninstall", *target], check=True, timeout=120)


@pytest.fixture(scope="module", params=LANGS)
def lang(request) -> str:
    """Builds the example once (its run script caches the build) before any run uses it."""
    run = ROOT / "examples" / "producers" / request.param / "run"
    built = subprocess.run([run, "--build"], capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, f"building {request.param} failed:\n{built.stderr[-4000:]}"
    return request.param


def matrix_rows() -> tuple[list[str], dict[str, dict[str, set[str]]]]:
    """The kill matrix as documented: its family columns, and per mutant, per family, the
    examples the family catches it in."""
    table = MATRIX_DOC.read_text(encoding="utf-8").split(BEGIN, 1)[1].split(END, 1)[0]
    lines = [line.strip() for line in table.strip().splitlines()]
    families = [c.strip() for c in lines[0].strip("|").split("|")][1:]
    rows: dict[str, dict[str, set[str]]] = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = {
            fam: {lang.strip() for lang in cell.split(",")} - {"—"}
            for fam, cell in zip(families, cells[1:])
        }
    return families, rows


def skips(lang: str, mutant: str) -> list[str]:
    """`--skip` arguments for the families the documented matrix says do not catch `mutant` in
    `lang` (none for a skip mutant, an undocumented mutant, or while the matrix is rewritten)."""
    if mutant in SKIP_MUTANTS or os.environ.get("AWA_UPDATE_KILL_MATRIX") == "1":
        return []
    families, rows = matrix_rows()
    row = rows.get(mutant)
    if not row or not any(lang in who for who in row.values()):
        return []
    out: list[str] = []
    for fam in families:
        if lang not in row.get(fam, set()):
            # producer::coverage is one case; every other family is producer::<family>::<id>…
            out += ["--skip", "producer::coverage" if fam == "coverage" else f"producer::{fam}::"]
    return out


def producer_command(lang: str, mutant: str | None) -> str:
    """The example's run script, or a built copy of it with the mutant's patch applied."""
    if not mutant:
        return f"examples/producers/{lang}/run"
    return shlex.join(materialise.command(lang, mutant, build=True))


def run_producer(dsn: str, lang: str, tmp_path: Path, mutant: str | None = None) -> tuple[int, list[dict], str]:
    report = tmp_path / f"{lang}-{mutant or 'correct'}.json"
    cmd = [RUNNER, "--dsn", dsn, "--schema", SCHEMA, "--producer-role", ROLE,
           "--producer", producer_command(lang, mutant), "--report-json", str(report),
           "--adapter-timeout", ADAPTER_TIMEOUT, "-q", *(skips(lang, mutant) if mutant else []), "producer::"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    cases = json.loads(report.read_text(encoding="utf-8"))["cases"] if report.exists() else []
    return done.returncode, cases, done.stdout[-3000:] + done.stderr[-3000:]


def family(case: dict) -> str:
    return case["name"].split("::")[1]  # producer::<family>::<id>[::w<width>][::<step>]


def test_example_is_green(dsn: str, lang: str, tmp_path: Path) -> None:
    rc, cases, log = run_producer(dsn, lang, tmp_path)
    keep_for_page(tmp_path / f"{lang}-correct.json", lang)
    FAMILIES.update(family(c) for c in cases)
    statuses = defaultdict(int)
    for case in cases:
        statuses[case["status"]] += 1
    bad = [c["name"] for c in cases if c["status"] in ("failed", "errored")]
    assert rc == 0 and not bad, f"{lang}: exit {rc}, not passed: {bad[:20]}\n{log}"
    assert statuses["passed"] >= 100, f"{lang}: only {dict(statuses)} producer cases\n{log}"


@pytest.fixture(scope="module")
def mutant_runs(dsn: str, lang: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Every mutant of one example through the runner, PARALLEL at a time."""
    tmp = tmp_path_factory.mktemp(f"mutants-{lang}")
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        futures = {m: pool.submit(run_producer, dsn, lang, tmp, m) for m in MUTANTS}
        return {m: f.result() for m, f in futures.items()}


@pytest.mark.parametrize("mutant", MUTANTS)
def test_mutant_is_caught(mutant_runs: dict, lang: str, mutant: str) -> None:
    rc, cases, log = mutant_runs[mutant]
    FAMILIES.update(family(c) for c in cases)
    killed = {family(c) for c in cases if c["status"] == "failed"}
    KILLS[(lang, mutant)] = killed
    assert rc == 1 and killed, f"{lang} with mutant {mutant}: exit {rc}, no failed case\n{log}"
    if mutant in SKIP_MUTANTS:
        failed = [c["name"] for c in cases if c["status"] == "failed"]
        assert failed == ["producer::coverage"], f"{lang} with mutant {mutant}: failed {failed[:20]}\n{log}"
