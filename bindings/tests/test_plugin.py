"""The pytest plugin, run in subprocesses with pytester against the reference schema."""

from __future__ import annotations

import json

import pytest

import awa_conformance as ac
from awa_conformance.expected_failures import load_expected_failures
from awa_conformance.producer import trial_names
from conftest import PRODUCERS_DIR, disk_vectors

NAMES = trial_names()
PARTITION = [n for n in NAMES if n.split("::")[1] == "partition"]
# Routing cases a producer that drops the ordering key gets wrong, and ones it still passes.
ROUTING = {v["id"]: v for v in disk_vectors("routing_precedence")}
KEYED = [n for n in NAMES if n.split("::")[1] == "routing_precedence" and n.split("::")[2] in ROUTING
         and ROUTING[n.split("::")[2]]["input"]["ordering_key_hex"] is not None]
UNKEYED = [n for n in NAMES if n.split("::")[1] == "routing_precedence" and n.split("::")[2] in ROUTING
           and ROUTING[n.split("::")[2]]["input"]["ordering_key_hex"] is None
           and ROUTING[n.split("::")[2]]["input"]["concurrency_key_hex"] is None]


@pytest.fixture
def plugin_env(database, pytester, monkeypatch):
    """A pytester dir holding the producer modules; the subprocess finds them via cwd."""
    monkeypatch.setenv("AWA_PRODUCER_DSN", database["dsn"])
    for name in ("psycopg_producer", "wrong_producers"):
        pytester.makepyfile(**{name: (PRODUCERS_DIR / f"{name}.py").read_text(encoding="utf-8")})
    return database


def run(pytester, db, producer, *extra):
    return pytester.runpytest_subprocess(
        "--awa-dsn", db["dsn"], "--awa-schema", db["schema"], "--awa-producer-role", db["role"],
        "--awa-producer", producer,
        "-p", "no:cacheprovider", *extra,
    )


def write_expected(pytester, entries, name="xfail.json"):
    path = pytester.path / name
    path.write_text(json.dumps({"version": 1, "expected_failures": entries}), encoding="utf-8")
    return str(path)


def test_conforming_producer_passes_one_test_per_case(pytester, plugin_env):
    result = run(pytester, plugin_env, "psycopg_producer:insert", "-v", "--awa-families", "partition,refusal")
    refusal = [n for n in NAMES if n.split("::")[1] == "refusal"]
    result.assert_outcomes(passed=len(PARTITION) + len(refusal))
    # Test IDs are the case names.
    result.stdout.fnmatch_lines([f"*awa-conformance::{PARTITION[0]} PASSED*"])


def test_protocol_3_sends_every_job_field(pytester, plugin_env):
    # The callable stores metadata and max_attempts: with --awa-protocol 3 it is asked for them
    # and judged on them; with the default 2 those cases are skipped, naming the protocol.
    picked = ("-v", "-rs", "--awa-families", "payload", "-k", "metadata or max_attempts")
    result = run(pytester, plugin_env, "psycopg_producer:insert", "--awa-protocol", "3", *picked)
    result.assert_outcomes(passed=2)
    result = run(pytester, plugin_env, "psycopg_producer:insert", *picked)
    result.assert_outcomes(skipped=2)
    assert "protocol 3" in result.stdout.str() + result.stderr.str()


def test_wrong_producer_fails(pytester, plugin_env):
    result = run(pytester, plugin_env, "wrong_producers:insert_without_ordering_key",
                 "--awa-families", "routing_precedence", "-k", f"{KEYED[0]} or {UNKEYED[0]}")
    result.assert_outcomes(passed=1, failed=1)
    assert result.ret == 1


def test_expected_failures_xfail_and_unexpected_pass_fails(pytester, plugin_env):
    bad, good = KEYED[0], UNKEYED[0]
    # The runner's matcher: a whole-segment suffix (here the vector id and width) names a case.
    path = write_expected(pytester, [{"id": bad.split("::", 2)[2], "reason": "known ordering bug"},
                                     {"id": good, "reason": "stale"}])
    result = run(
        pytester, plugin_env, "wrong_producers:insert_without_ordering_key", "--awa-expected-failures", path,
        "-k", f"{bad} or {good}",
    )
    result.assert_outcomes(xfailed=1, failed=1)
    result.stdout.fnmatch_lines([f"*{good} is listed as an expected failure but passed*"])


def test_unknown_expected_failure_id_is_a_usage_error(pytester, plugin_env):
    path = write_expected(pytester, [{"id": "rp-000000000000", "reason": "typo"}])
    result = run(pytester, plugin_env, "psycopg_producer:insert", "--awa-expected-failures", path)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*rp-000000000000 names no trial*"])


def test_bad_producer_spec_is_a_usage_error(pytester, plugin_env):
    result = run(pytester, plugin_env, "psycopg_producer")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*MODULE:FUNCTION*"])


def test_a_database_it_cannot_reach_is_one_error_not_a_failure_per_case(pytester, plugin_env):
    # Nothing listens on port 1: the engine cannot start, so no case may show as failed.
    dsn = "postgresql://awa:secret-pw@127.0.0.1:1/nowhere?connect_timeout=2"
    result = pytester.runpytest_subprocess(
        "--awa-dsn", dsn, "--awa-producer", "psycopg_producer:insert",
        "--awa-families", "partition,refusal", "-p", "no:cacheprovider",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    out = result.stdout.str() + result.stderr.str()
    assert "no case was checked" in out and "cannot connect" in out.lower(), out
    assert "secret-pw" not in out
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes.get("passed", 0) == 0, outcomes


def test_plugin_is_inert_without_producer(pytester):
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


# -- expected-failures file format (no database): the runner's loader and matcher -----------------


@pytest.mark.parametrize(
    "doc, match",
    [
        ({"version": 2, "expected_failures": []}, "version"),
        ({"expected_failures": []}, "version"),
        ({"version": 1}, "expected_failures"),
        ({"version": 1, "expected_failures": [{"id": NAMES[0]}]}, "reason"),
        ({"version": 1, "expected_failures": [{"id": NAMES[0], "reason": " "}]}, "reason"),
        ({"version": 1, "expected_failures": [{"id": "zz-1", "reason": "r"}]}, "names no trial"),
        ({"version": 1, "expected_failures": [{"id": NAMES[0], "reason": "r"}, {"id": NAMES[0], "reason": "r"}]},
         "repeats"),
        ({"version": 1, "expected_failures": [], "extra": 1}, "unknown field"),
    ],
)
def test_expected_failures_file_errors(tmp_path, doc, match):
    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ac.ExpectedFailuresError, match=match):
        load_expected_failures(path, NAMES)


def test_expected_failures_file_ok(tmp_path):
    path = tmp_path / "x.json"
    suffix = NAMES[1].split("::", 2)[2]  # whole trailing segments: the vector id and its width
    path.write_text(json.dumps({"version": 1, "expected_failures": [
        {"id": NAMES[0], "reason": "r"}, {"id": suffix, "reason": "a suffix"}]}))
    assert load_expected_failures(path, NAMES) == {NAMES[0]: "r", suffix: "a suffix"}


def test_toml_is_not_an_expected_failures_format(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text(f'version = 1\n[[expected_failures]]\nid = "{NAMES[0]}"\nreason = "r"\n', encoding="utf-8")
    with pytest.raises(ac.ExpectedFailuresError, match="not a valid expected-failures file"):
        load_expected_failures(path, NAMES)


def test_the_callable_under_the_callers_settings_and_the_plain_switch(pytester, plugin_env, monkeypatch):
    # The callable connects with session_dsn: a run_at bound as a naive timestamp fails the
    # payload cases that ask for one; --awa-plain-sessions only concerns the engine's own calls.
    monkeypatch.setenv("AWA_PRODUCER_DSN", ac.session_dsn(plugin_env["dsn"]))
    picked = ("--awa-protocol", "3", "--awa-families", "payload", "-k", "run_at")
    result = run(pytester, plugin_env, "wrong_producers:insert_naive_run_at", *picked)
    assert result.parseoutcomes().get("failed", 0) >= 1, result.stdout.str()
    result = run(pytester, plugin_env, "psycopg_producer:insert", "--awa-plain-sessions", *picked)
    assert result.ret == 0 and result.parseoutcomes().get("passed", 0) >= 1, result.stdout.str()
