"""The browser test (test_results_page.py) is not a test that cannot fail: run on deliberately
broken copies of the page, it fails, each time in the test that owns the fault.

- a count off by one in the matrix: test_every_count_shown_equals_the_reports;
- a drill-down that shows no expected/actual values: test_a_failing_case_expands_...;
- a page that fetches something (an image from elsewhere, with the page's CSP taken out):
  every test, through the request check.
"""

from __future__ import annotations

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


def count_off_by_one(html: str) -> str:
    m = re.search(r'data-count="(\d+)">(\d+) ', html)
    assert m, "no count in the page"
    n = int(m.group(1)) + 1
    return html[:m.start()] + f'data-count="{n}">{n} ' + html[m.end():]


def empty_drill_down(html: str) -> str:
    assert "if (d.expected !== null" in html and "if (d.actual !== null" in html
    return html.replace("if (d.expected !== null", "if (false && d.expected !== null").replace(
        "if (d.actual !== null", "if (false && d.actual !== null")


def fetches(html: str) -> str:
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    return html.replace("<main>", '<main><img alt="" src="http://127.0.0.1:9/tracker.png">', 1)


@pytest.mark.parametrize(("tamper", "failing"), [
    (count_off_by_one, "test_every_count_shown_equals_the_reports"),
    (empty_drill_down, "test_a_failing_case_expands_to_expected_and_actual"),
    (fetches, "test_every_count_shown_equals_the_reports"),
], ids=["count-off", "empty-drill-down", "fetches"])
def test_the_browser_test_fails_on_a_broken_page(tmp_path: Path, tamper, failing: str) -> None:
    broken = tmp_path / "index.html"
    broken.write_text(tamper(Path(PAGE).read_text(encoding="utf-8")), encoding="utf-8")
    env = {**os.environ, "AWA_PAGE": str(broken)}
    env.pop("AWA_SCREENSHOT", None)
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
                          str(HERE / "test_results_page.py")], env=env, capture_output=True, text=True,
                         timeout=300, check=False)
    assert out.returncode == 1, out.stdout[-3000:]
    assert re.search(rf"(FAILED|ERROR) \S*test_results_page.py::{failing}", out.stdout), out.stdout[-3000:]
