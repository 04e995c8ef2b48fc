"""The pytest plugin, run in subprocesses with pytester against the reference schema."""

from __future__ import annotations

import json

import pytest

import awa_conformance as ac
from awa_conformance.expected_failures import load_expected_failures
from conftest import PRODUCERS_DIR, disk_vectors

ROUTING = disk_vectors("routing_precedence")
UNIQUE = disk_vectors("unique_key")
ALL_IDS = [v["id"] for v in ac.vectors()]


@pytest.fixture
def plugin_env(database, pytester, monkeypatch):
    """A pytester dir holding the producer modules; the subprocess finds them via cwd."""
    monkeypatch.setenv("AWA_PRODUCER_DSN", database["dsn"])
    for name in ("psycopg_producer", "wrong_producers"):
        pytester.makepyfile(**{name: (PRODUCERS_DIR / f"{name}.py").read_text(encoding="utf-8")})
    return database


def run(pytester, db, producer, *extra):
    return pytester.runpytest_subprocess(
        "--awa-dsn", db["dsn"], "--awa-schema", db["schema"], "--awa-producer", producer,
        "-p", "no:cacheprovider", *extra,
    )


def write_expected(pytester, entries, name="xfail.json"):
    path = pytester.path / name
    path.write_text(json.dumps({"version": 1, "expected_failures": entries}), encoding="utf-8")
    return str(path)


def test_conforming_producer_passes_one_test_per_vector(pytester, plugin_env):
    result = run(pytester, plugin_env, "psycopg_producer:insert", "-v")
    result.assert_outcomes(passed=len(ROUTING) + len(UNIQUE))
    # Test IDs are the vector IDs.
    result.stdout.fnmatch_lines([f"*awa-conformance::{ROUTING[0]['id']} PASSED*"])


def test_wrong_shard_producer_fails(pytester, plugin_env):
    result = run(pytester, plugin_env, "wrong_producers:insert_wrong_shard", "--awa-families", "routing_precedence")
    bad = [v for v in ROUTING if v["input"]["width"] > 1 and v["expected"]["enqueue_shard"] is not None]
    result.assert_outcomes(passed=len(ROUTING) - len(bad), failed=len(bad))
    result.stdout.fnmatch_lines(["*enqueue_shard: stored *, vector expects *"])
    assert result.ret == 1


def test_wrong_key_producer_fails(pytester, plugin_env):
    result = run(pytester, plugin_env, "wrong_producers:insert_hex_keys", "-k", ROUTING[-1]["id"])
    assert ROUTING[-1]["input"]["ordering_key_hex"] or ROUTING[-1]["input"]["concurrency_key_hex"]
    result.assert_outcomes(failed=1)


def test_expected_failures_xfail_and_unexpected_pass_fails(pytester, plugin_env):
    bad = next(v for v in ROUTING if v["input"]["width"] > 1 and v["expected"]["enqueue_shard"] is not None)
    good = next(v for v in ROUTING if v["input"]["width"] == 1)
    path = write_expected(pytester, [{"id": bad["id"], "reason": "known shard bug"}, {"id": good["id"], "reason": "stale"}])
    result = run(
        pytester, plugin_env, "wrong_producers:insert_wrong_shard", "--awa-expected-failures", path,
        "-k", f"{bad['id']} or {good['id']}",
    )
    result.assert_outcomes(xfailed=1, failed=1)
    result.stdout.fnmatch_lines([f"*{good['id']} is listed as an expected failure*but passed*"])


def test_expected_failures_toml(pytester, plugin_env):
    bad = next(v for v in ROUTING if v["input"]["width"] > 1 and v["expected"]["enqueue_shard"] is not None)
    path = pytester.path / "xfail.toml"
    path.write_text(f'version = 1\n[[expected_failures]]\nid = "{bad["id"]}"\nreason = "known"\n', encoding="utf-8")
    result = run(pytester, plugin_env, "wrong_producers:insert_wrong_shard", "--awa-expected-failures", str(path), "-k", bad["id"])
    result.assert_outcomes(xfailed=1)


def test_unknown_expected_failure_id_is_a_usage_error(pytester, plugin_env):
    path = write_expected(pytester, [{"id": "rp-000000000000", "reason": "typo"}])
    result = run(pytester, plugin_env, "psycopg_producer:insert", "--awa-expected-failures", path)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown vector ID 'rp-000000000000'*"])


def test_bad_producer_spec_is_a_usage_error(pytester, plugin_env):
    result = run(pytester, plugin_env, "psycopg_producer")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*MODULE:FUNCTION*"])


def test_plugin_is_inert_without_producer(pytester):
    pytester.makepyfile("def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


# -- expected-failures file format (no database) ----------------------------------------------


@pytest.mark.parametrize(
    "doc, match",
    [
        ({"version": 2, "expected_failures": []}, "version"),
        ({"expected_failures": []}, "exactly"),
        ({"version": 1, "expected_failures": [{"id": ALL_IDS[0]}]}, "id and reason"),
        ({"version": 1, "expected_failures": [{"id": ALL_IDS[0], "reason": " "}]}, "non-empty"),
        ({"version": 1, "expected_failures": [{"id": "zz-1", "reason": "r"}]}, "unknown vector ID"),
        (
            {"version": 1, "expected_failures": [{"id": ALL_IDS[0], "reason": "r"}, {"id": ALL_IDS[0], "reason": "r"}]},
            "duplicate",
        ),
    ],
)
def test_expected_failures_file_errors(tmp_path, doc, match):
    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ac.ExpectedFailuresError, match=match):
        load_expected_failures(path, ALL_IDS)


def test_expected_failures_file_ok(tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"version": 1, "expected_failures": [{"id": ALL_IDS[1], "reason": "r"}]}))
    assert load_expected_failures(path, ALL_IDS) == {ALL_IDS[1]: "r"}
