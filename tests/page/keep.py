"""Keep a run's JSON report for CI's results page (scripts/results-page.sh).

The runs that show an implementation green (each example producer, each released SDK path)
already write a report; when AWA_RESULTS_DIR is set (scripts/test.sh sets it), the report is
copied there under a fixed name, so the page and docs/compatibility.md are built from the very
runs CI judged, not from runs of their own."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def keep_for_page(report: Path, name: str) -> None:
    dest = os.environ.get("AWA_RESULTS_DIR")
    if dest and report.is_file():
        shutil.copyfile(report, Path(dest) / f"{name}.json")
