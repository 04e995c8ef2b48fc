"""scripts/mutant-mode.sh, the rule that picks how much of the SQL kill matrix a test tier proves
(`exact` or `caught`), on throwaway git checkouts: full is always exact; db is exact when the
checkout changes what the matrix is about (committed against its upstream, or uncommitted) and
caught otherwise; without an upstream, exact. A wrong rule here silently turns the db tier's
proof into a weaker one, so each half is shown: the paths that must make it exact, and a change
elsewhere that must not."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "mutant-mode.sh"
# Every path pattern of the rule, and paths beside them that are not under it.
MATRIX_PATHS = ["schema/004_insert_job.sql", "runner/sql/x.sql", "runner/src/suites/db/function.rs",
                "runner/src/contract/judge/mod.rs", "tests/mutants/sql.json", "runner/tests/db_mutants.rs"]
OTHER_PATHS = ["docs/contract.md", "runner/src/producer/engine.rs", "tests/mutants/python/x.patch",
               "runner/tests/db_run.rs", "README.md", "myschema/x.sql"]


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                    "-c", "commit.gpgsign=false", *args], check=True, capture_output=True)


def mode(tier: str, repo: Path) -> str:
    out = subprocess.run(["bash", str(SCRIPT), tier, str(repo)], check=True, capture_output=True, text=True)
    return out.stdout.strip()


def write(repo: Path, rel: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{rel} {path.stat().st_size if path.exists() else 0}\n", encoding="utf-8")


@pytest.fixture()
def clone(tmp_path: Path) -> Path:
    """A checkout tracking an upstream branch, both at one commit holding every path above."""
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    for rel in MATRIX_PATHS + OTHER_PATHS:
        write(upstream, rel)
    git(upstream, "add", "-A")
    git(upstream, "commit", "-q", "-m", "base")
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(upstream), str(work)], check=True, capture_output=True)
    return work


def test_full_is_always_exact(clone: Path) -> None:
    assert mode("full", clone) == "exact"
    write(clone, "docs/contract.md")
    assert mode("full", clone) == "exact"


def test_db_without_a_change_is_caught(clone: Path) -> None:
    assert mode("db", clone) == "caught"


@pytest.mark.parametrize(("rel", "want"), [(p, "caught") for p in OTHER_PATHS] + [(p, "exact") for p in MATRIX_PATHS])
@pytest.mark.parametrize("committed", [False, True], ids=["uncommitted", "committed"])
def test_db_is_exact_only_for_a_change_the_matrix_is_about(clone: Path, rel: str, want: str, committed: bool) -> None:
    write(clone, rel)
    if committed:
        git(clone, "commit", "-q", "-am", "change")
    assert mode("db", clone) == want


def test_db_with_a_new_untracked_file_under_the_schema_is_exact(clone: Path) -> None:
    write(clone, "schema/009_new.sql")
    assert mode("db", clone) == "exact"


def test_db_without_an_upstream_is_exact(clone: Path) -> None:
    git(clone, "checkout", "-q", "-b", "local-only")
    assert mode("db", clone) == "exact"


def test_db_outside_git_is_exact(tmp_path: Path) -> None:
    assert mode("db", tmp_path) == "exact"


def test_an_unknown_tier_is_exact_and_no_tier_is_a_usage_error(clone: Path) -> None:
    assert mode("quick", clone) == "exact"
    out = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, check=False)
    assert out.returncode == 2 and "usage" in out.stderr
