"""The results page (`awa-conformance report html`) in a real browser: headless Debian
Chromium driven by playwright (no browser download; CHROMIUM, default /usr/bin/chromium).

Built by scripts/results-page.sh from CI's own reports (AWA_RESULTS_DIR, AWA_PAGE,
AWA_BADGE_DIR, AWA_SCREENSHOT); skipped when run without them. The counts are recomputed
here from the report files, independently of the kit, and compared with what the page shows.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from pathlib import Path

import pytest

PAGE = os.environ.get("AWA_PAGE")
RESULTS = os.environ.get("AWA_RESULTS_DIR")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
pytestmark = pytest.mark.skipif(not PAGE or not RESULTS, reason="needs AWA_PAGE and AWA_RESULTS_DIR (scripts/results-page.sh)")

LABEL = {"passed": "passed", "failed": "failed", "errored": "errored", "expected_failure": "xfail",
         "unexpected_pass": "unexpected pass", "not_applicable": "not applicable", "ignored": "ignored"}


def column(case: dict) -> str:
    parts = case["name"].split("::")
    if parts[0] in ("sql", "producer", "adapter") and len(parts) > 1:
        return "::".join(parts[:2])
    return f"core::{parts[0]}" if case.get("suite") == "offline" else parts[0]


def load(path: str) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        # No background connections (updates, sync, safe browsing): CI's network is closed, and
        # the page's own check is that nothing is fetched.
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        yield b
        b.close()


@pytest.fixture()
def page(browser):
    """The page, loaded and its data decoded; every console error and every request is kept,
    and each test fails on a console error or a request for anything but the page itself."""
    ctx = browser.new_context(viewport={"width": 1600, "height": 1200})
    pg = ctx.new_page()
    errors: list[str] = []
    requests: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("request", lambda r: requests.append(r.url))
    url = Path(PAGE).resolve().as_uri()
    pg.goto(url)
    pg.wait_for_selector("body[data-ready=true]", timeout=30_000)
    yield pg
    assert errors == [], f"console errors: {errors}"
    assert [r for r in requests if r != url] == [], f"the page fetched: {requests}"
    ctx.close()


def rows(pg) -> list[dict]:
    """Each matrix row: its name, the report it came from, its cells {column: {status: n}}."""
    return pg.evaluate("""() => [...document.querySelectorAll('#matrix tbody tr')].map(tr => ({
        name: tr.querySelector('.name').textContent,
        source: [...tr.querySelectorAll('dt')].find(d => d.textContent === 'report').nextElementSibling.textContent,
        cells: Object.fromEntries([...tr.querySelectorAll('td')].map(td => [td.dataset.column,
            Object.fromEntries([...td.querySelectorAll('.count')].map(s => [s.dataset.status, [Number(s.dataset.count), s.textContent]]))]))
    }))""")


def test_every_count_shown_equals_the_reports(page):
    shown = rows(page)
    assert len(shown) == len(list(Path(RESULTS).glob("*.json"))), [r["name"] for r in shown]
    for row in shown:
        report = load(row["source"])
        want: dict[str, Counter] = defaultdict(Counter)
        for case in report["cases"]:
            want[column(case)][case["status"]] += 1
        for col, cell in row["cells"].items():
            got = {s: n for s, (n, _) in cell.items()}
            assert got == dict(want.get(col, {})), f"{row['name']} {col}: page {got}, report {dict(want.get(col, {}))}"
            for status, (n, text) in cell.items():
                assert text == f"{n} {LABEL[status]}", f"{row['name']} {col}: {text!r}"
        assert set(want) <= set(row["cells"]), f"{row['name']}: columns missing {set(want) - set(row['cells'])}"
    if os.environ.get("AWA_SCREENSHOT"):
        page.screenshot(path=os.environ["AWA_SCREENSHOT"], full_page=False)


def test_each_row_names_the_features_its_report_checked(page):
    # The line the run printed (the report's own `checked`) is the line the page shows, for a
    # producer's or adapter's features and for a database's; a row without the section has no
    # such line. At least one row of CI's reports has each.
    shown = page.evaluate("""() => [...document.querySelectorAll('#matrix tbody tr')].map(tr => ({
        source: [...tr.querySelectorAll('dt')].find(d => d.textContent === 'report').nextElementSibling.textContent,
        features: tr.querySelector('.features:not(.database-features)')?.textContent ?? null,
        database: tr.querySelector('.database-features')?.textContent ?? null}))""")
    seen = Counter()
    for row in shown:
        report = load(row["source"])
        for key, prefix, got in (("features", "features: ", row["features"]),
                                 ("database_features", "database features: ", row["database"])):
            section = report.get(key)
            want = None if section is None else prefix + section["checked"]
            assert got == want, f"{row['source']} {key}: page {got!r}, report {want!r}"
            seen[key] += section is not None
    assert seen["features"] > 0 and seen["database_features"] > 0, seen


def first_case_with_values(shown: list[dict]) -> tuple[int, dict]:
    for i, row in enumerate(shown):
        for case in load(row["source"])["cases"]:
            if case["status"] in ("failed", "expected_failure", "errored") and case.get("expected") is not None \
                    and case.get("actual") is not None:
                return i, case
    pytest.fail("no report holds a failing or expected-failure case with expected and actual values")


def test_a_failing_case_expands_to_expected_and_actual(page):
    shown = rows(page)
    i, case = first_case_with_values(shown)
    page.select_option("#f-implementation", str(i))
    page.select_option("#f-column", column(case))
    item = page.locator("#case-list li", has_text=case["name"]).first
    item.locator("summary").first.click()
    body = item.locator(".case-body")
    body.wait_for()
    terms = body.locator("dt").all_text_contents()
    assert "expected" in terms and "actual" in terms, terms
    text = body.inner_text()
    assert case["message"] and case["message"][:60] in text, text[:500]
    # Values shown whole (or shortened with the whole one click away) hold the report's bytes.
    for button in body.locator("button.full").all():
        button.click()
    text = body.inner_text()
    for key in ("expected", "actual"):
        for leaf in json.dumps(case[key], sort_keys=True).split('"')[1::2][:3]:
            assert leaf in text, f"{key} part {leaf!r} not shown"


def test_filters_narrow_the_matrix_and_the_list(page):
    shown = rows(page)
    details = []
    for i, row in enumerate(shown):
        for case in load(row["source"])["cases"]:
            if case["status"] not in ("passed", "ignored"):
                details.append((i, column(case), case["status"]))
    assert page.locator("#shown").inner_text().endswith(f"of {len(details)} cases not passed.")
    status = Counter(s for _, _, s in details).most_common(1)[0][0]
    page.select_option("#f-status", status)
    want = sum(1 for _, _, s in details if s == status)
    assert page.locator("#shown").inner_text().endswith(f"of {want} cases not passed.")
    assert set(page.locator("#case-list li").evaluate_all("ls => ls.map(l => l.dataset.status)")) == {status}
    i, col, _ = next(d for d in details if d[2] == status)
    page.select_option("#f-implementation", str(i))
    page.select_option("#f-column", col)
    visible_rows = page.locator("#matrix tbody tr:not([hidden])")
    assert visible_rows.count() == 1
    assert page.locator("#matrix tbody tr:not([hidden]) td:not([hidden])").count() == 1
    want = sum(1 for d in details if d == (i, col, status))
    assert page.locator("#shown").inner_text().endswith(f"of {want} cases not passed.")
    page.click("#f-reset")
    assert page.locator("#matrix tbody tr:not([hidden])").count() == len(shown)


def test_the_badge_is_valid_svg_saying_the_reports_verdict():
    badge_dir = Path(os.environ["AWA_BADGE_DIR"])
    report = load(str(Path(RESULTS) / "python.json"))
    svg = ET.parse(badge_dir / "awa-conformance.svg").getroot()
    texts = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    endpoint = json.loads((badge_dir / "awa-conformance.json").read_text(encoding="utf-8"))
    assert texts == [endpoint["label"], endpoint["message"]]
    assert endpoint["schemaVersion"] == 1
    assert endpoint["message"].startswith(report["verdict"] + " · ")
    assert report["provenance"]["level"] in endpoint["message"]
    assert endpoint["label"] == f"awa contract v{report['provenance']['contract_version']}"
