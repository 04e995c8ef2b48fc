"""The installed wheel's `awa-conformance` console script is the Rust runner, and check_producer's
missing-schema error names the bundled `schema install`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import awa_conformance as ac
from awa_conformance import ConformanceError

# The console script pip wrote next to this interpreter (the wheel is installed in this venv).
SCRIPT = Path(sys.executable).with_name("awa-conformance")


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, timeout=120, env=env, check=False
    )


def test_console_script_is_installed_and_runs_the_runner():
    assert SCRIPT.is_file(), f"pip did not install the awa-conformance script at {SCRIPT}"
    p = run("--help")
    assert p.returncode == 0, p.stderr
    for word in ("--dsn", "--junit", "schema", "vectors", "completions", "Exit codes:"):
        assert word in p.stdout, f"--help lacks {word}"


def test_usage_error_exit_code_is_the_documented_3():
    p = run("--no-such-flag")
    assert p.returncode == 3, (p.returncode, p.stderr)


def test_vectors_verify_from_the_wheel():
    p = run("vectors", "verify")
    assert p.returncode == 0, p.stderr
    assert ac.manifest()["root_sha256"] in p.stdout


def test_schema_print_uses_the_embedded_sql():
    p = run("schema", "print", "--schema", "awa_wheel_probe")
    assert p.returncode == 0, p.stderr
    assert "insert_job" in p.stdout
    assert "awa_wheel_probe" in p.stdout
    assert "@schema@" not in p.stdout


def test_offline_run_without_database_checks_vectors(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL" and not k.startswith("PG")}
    report = tmp_path / "r.json"
    p = run("--no-embedded", "-q", "unique_key::", "--report-json", str(report), env=env)
    assert p.returncode == 0, p.stderr
    assert report.stat().st_size > 0


def test_python_dash_m_is_the_same_command():
    p = subprocess.run(
        [sys.executable, "-m", "awa_conformance", "--no-such-flag"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert p.returncode == 3, p.stderr


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completions_subcommand(shell):
    p = run("completions", shell)
    assert p.returncode == 0, p.stderr
    assert "awa-conformance" in p.stdout and "dsn" in p.stdout and "junit" in p.stdout


def test_man_subcommand():
    p = run("man")
    assert p.returncode == 0, p.stderr
    assert ".TH awa-conformance" in p.stdout


def test_missing_schema_error_names_the_bundled_command(database):
    with pytest.raises(ConformanceError) as info:
        ac.check_producer(database["dsn"], insert=lambda request: 0, schema="awa_no_such_schema")
    msg = str(info.value)
    assert "awa-conformance schema install" in msg
    assert "schema/*.sql" not in msg
