"""The browser test (test_results_page.py) is not a test that cannot fail: run on deliberately
broken copies of the page, it fails, each time in the tests that own the fault and only there.

- a count off by one in the matrix: test_every_count_shown_equals_the_reports;
- a drill-down that shows no expected/actual values: test_a_failing_case_expands_...;
- a page that fetches something (an image from elsewhere, with the page's CSP taken out):
  every test that opens the page, through the request check.

A tamper that edits the page's script also rewrites the script's hash in the page's
Content-Security-Policy: otherwise the browser blocks the whole script, the page never gets
ready, and every test fails on that (after its 30 s wait) whatever the tamper meant to break.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = os.environ.get("AWA_PAGE")
HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.skipif(not PAGE or not os.environ.get("AWA_RESULTS_DIR"),
                                reason="needs AWA_PAGE and AWA_RESULTS_DIR (scripts/results-page.sh)")

PAGE_TESTS = {"test_every_count_shown_equals_the_reports", "test_a_failing_case_expands_to_expected_and_actual",
              "test_filters_narrow_the_matrix_and_the_list", "test_each_row_names_the_features_its_report_checked"}


def with_script_hash(html: str) -> str:
    """The page with its CSP's script hash recomputed from its (edited) inline script."""
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert len(scripts) == 1, f"the page has {len(scripts)} inline scripts, the tamper expects one"
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode("utf-8")).digest()).decode("ascii")
    out, n = re.subn(r"script-src 'sha256-[A-Za-z0-9+/=]+'", f"script-src 'sha256-{digest}'", html)
    assert n == 1, "no script hash in the page's Content-Security-Policy"
    return out


def count_off_by_one(html: str) -> str:
    m = re.search(r'data-count="(\d+)">(\d+) ', html)
    assert m, "no count in the page"
    n = int(m.group(1)) + 1
    return html[:m.start()] + f'data-count="{n}">{n} ' + html[m.end():]


def empty_drill_down(html: str) -> str:
    assert "if (d.expected !== null" in html and "if (d.actual !== null" in html
    return with_script_hash(html.replace("if (d.expected !== null", "if (false && d.expected !== null").replace(
        "if (d.actual !== null", "if (false && d.actual !== null"))


def database_features_hidden(html: str) -> str:
    # A row's database features line no longer marked as one: the page says less than the report.
    assert 'class="meta features database-features"' in html, "no database features line in the page"
    return html.replace('class="meta features database-features"', 'class="meta"', 1)


def fetches(html: str) -> str:
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    return html.replace("<main>", '<main><img alt="" src="http://127.0.0.1:9/tracker.png">', 1)


@pytest.mark.parametrize(("tamper", "failing"), [
    (count_off_by_one, {"test_every_count_shown_equals_the_reports"}),
    (empty_drill_down, {"test_a_failing_case_expands_to_expected_and_actual"}),
    (database_features_hidden, {"test_each_row_names_the_features_its_report_checked"}),
    (fetches, PAGE_TESTS),
], ids=["count-off", "empty-drill-down", "database-features-hidden", "fetches"])
def test_the_browser_test_fails_on_a_broken_page(tmp_path: Path, tamper, failing: set[str]) -> None:
    broken = tmp_path / "index.html"
    broken.write_text(tamper(Path(PAGE).read_text(encoding="utf-8")), encoding="utf-8")
    env = {**os.environ, "AWA_PAGE": str(broken)}
    env.pop("AWA_SCREENSHOT", None)
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
                          str(HERE / "test_results_page.py")], env=env, capture_output=True, text=True,
                         timeout=300, check=False)
    assert out.returncode == 1, out.stdout[-3000:]
    got = set(re.findall(r"^(?:FAILED|ERROR) \S*test_results_page.py::(\w+)", out.stdout, re.M))
    assert got == failing, f"failed {sorted(got)}, the tamper owns {sorted(failing)}\n{out.stdout[-3000:]}"
