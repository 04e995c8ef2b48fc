"""The version matrix (scripts/pg-matrix.sh) fails when the runner refuses a major it should
accept: it really runs each major it names, and reads its verdicts instead of trusting them.

Needs the fetched binaries' registry and a release runner (AWA_CONFORMANCE_BIN), as
scripts/test.sh's "postgres matrix" step provides; skipped without a runner."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNNER = os.environ.get("AWA_CONFORMANCE_BIN")


@pytest.mark.skipif(not RUNNER, reason="needs AWA_CONFORMANCE_BIN (a built runner)")
def test_a_runner_refusing_an_accepted_major_fails_the_matrix():
    env = dict(
        os.environ,
        AWA_CONFORMANCE_BIN=str(ROOT / "tests/matrix/refusing-runner"),
        AWA_REAL_RUNNER=RUNNER,
        AWA_REFUSE_MAJOR="16",
        PGPORT_MATRIX="55490",
    )
    env.pop("DATABASE_URL", None)
    out = subprocess.run([str(ROOT / "scripts/pg-matrix.sh"), "16"], env=env, capture_output=True,
                         text=True, timeout=600, check=False)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "FAILED: PostgreSQL 16" in out.stdout + out.stderr, out.stdout + out.stderr
    assert "PostgreSQL 16 is not supported (a deliberately wrong runner)" in out.stdout + out.stderr
    # The 13 refusal is the real runner's, and still holds.
    assert "PostgreSQL 13: refused (exit 4)" in out.stdout, out.stdout
