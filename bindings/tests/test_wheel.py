"""The release wheel itself (AWA_WHEEL, set by bindings/run-tests.sh): size, platform tag,
metadata, licence files, the console script, and no OpenSSL or debug info in its ELF files."""

from __future__ import annotations

import email.parser
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

WHEEL_ENV = os.environ.get("AWA_WHEEL", "")
# 6.0 MiB with the producer engine, fuzz, compat and bulk suites (2026-11-30); 7.1 MiB with the
# results page (minijinja, pulldown-cmark, flate2 and its templates, 2026-12-03). Debug info
# would add tens of MiB, which is what this bound is for.
MAX_BYTES = 8 * 1024 * 1024

if not WHEEL_ENV:
    if os.environ.get("CI") or os.environ.get("AWA_REQUIRE_DB"):
        raise pytest.UsageError("AWA_WHEEL is not set: run the Python tests through bindings/run-tests.sh")
    pytest.skip("AWA_WHEEL is not set (bindings/run-tests.sh sets it)", allow_module_level=True)

WHEEL = Path(WHEEL_ENV)


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("wheel")
    with zipfile.ZipFile(WHEEL) as z:
        z.extractall(dest)
    return dest


def _dist_info(root: Path) -> Path:
    (d,) = root.glob("awa_conformance-*.dist-info")
    return d


def _metadata(root: Path) -> email.message.Message:
    return email.parser.Parser().parsestr((_dist_info(root) / "METADATA").read_text(encoding="utf-8"))


def test_wheel_is_at_most_8_mib():
    size = WHEEL.stat().st_size
    assert size <= MAX_BYTES, f"{WHEEL.name} is {size / 2**20:.2f} MiB (> 8 MiB): debug info back?"


def test_wheel_is_tagged_manylinux2014_abi3(unpacked):
    platforms = WHEEL.name.removesuffix(".whl").split("-")[-1].split(".")
    assert "manylinux_2_17_x86_64" in platforms, WHEEL.name
    assert WHEEL.name.split("-")[2:4] == ["cp310", "abi3"], WHEEL.name
    wheel_file = (_dist_info(unpacked) / "WHEEL").read_text(encoding="utf-8")
    assert "Tag: cp310-abi3-manylinux_2_17_x86_64" in wheel_file, wheel_file


def _elf_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and p.read_bytes()[:4] == b"\x7fELF"]


def _readelf(*args: str) -> str:
    readelf = shutil.which("readelf")
    assert readelf, "readelf (binutils) is needed to inspect the wheel's ELF files"
    return subprocess.run([readelf, "--wide", *args], capture_output=True, text=True, check=True).stdout


def test_no_shared_object_links_openssl(unpacked):
    elves = _elf_files(unpacked)
    assert elves, "the wheel holds no native code"
    for elf in elves:
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", _readelf("--dynamic", str(elf)))
        bad = [lib for lib in needed if re.match(r"lib(ssl|crypto)\.so", lib)]
        assert not bad, f"{elf.name} links {bad}: TLS must not depend on OpenSSL at run time"
    bundled = [p.name for p in unpacked.rglob("lib*.so*") if re.match(r"lib(ssl|crypto)", p.name)]
    assert not bundled, f"the wheel bundles OpenSSL: {bundled}"


def test_native_code_is_stripped_and_needs_glibc_2_17_at_most(unpacked):
    for elf in _elf_files(unpacked):
        sections = _readelf("--section-headers", str(elf))
        assert ".debug_info" not in sections, f"{elf.name} keeps debug info (release builds use --profile dist)"
        assert ".symtab" not in sections, f"{elf.name} is not stripped"
        versions = re.findall(r"GLIBC_(\d+)\.(\d+)", _readelf("--version-info", str(elf)))
        newest = max((int(a), int(b)) for a, b in versions)
        assert newest <= (2, 17), f"{elf.name} needs GLIBC_{newest[0]}.{newest[1]}: the manylinux_2_17 tag would lie"


def test_licences_readme_and_project_metadata(unpacked):
    licenses = _dist_info(unpacked) / "licenses"
    for name in ("LICENSE-MIT", "LICENSE-APACHE"):
        text = (licenses / name).read_text(encoding="utf-8")
        assert ("MIT License" if name == "LICENSE-MIT" else "Apache License") in text
    meta = _metadata(unpacked)
    assert meta["License-Expression"] == "MIT OR Apache-2.0"
    assert meta["Description-Content-Type"].startswith("text/markdown")
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    assert meta.get_payload().strip() == readme.strip(), "bindings/README.md is not the long description"
    assert meta["Author"] or meta["Author-email"]
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL", []))
    assert {"Homepage", "Repository", "Issues", "Changelog"} <= set(urls), urls
    classifiers = meta.get_all("Classifier", [])
    assert "Environment :: Console" in classifiers and "Topic :: Software Development :: Testing" in classifiers


def test_no_unconditional_runtime_dependency(unpacked):
    # Expected-failures files are JSON, read by the runner's loader: nothing (tomli included)
    # is needed at run time; optional extras (e.g. psycopg for producers) carry `extra ==`.
    requires = _metadata(unpacked).get_all("Requires-Dist", [])
    assert all("extra ==" in r for r in requires), requires


def test_console_script_entry_point(unpacked):
    entry_points = (_dist_info(unpacked) / "entry_points.txt").read_text(encoding="utf-8")
    assert re.search(r"^\[console_scripts\]\s*\nawa-conformance\s*=\s*awa_conformance\._cli:main", entry_points, re.M), entry_points


def test_python_3_10_reads_expected_failures(tmp_path):
    """The abi3 wheel works on 3.10, the oldest Python it declares: it installs with no
    dependency and loads an expected-failures file through the runner's one loader (JSON,
    the only format since the Python layer reuses the runner's)."""
    candidates = [str(p) for p in sorted(Path.home().glob(".pyenv/versions/3.10*/bin/python3.10"))]
    candidates += [c for c in [shutil.which("python3.10")] if c]
    # A pyenv shim exists even when no 3.10 is active: take the first interpreter that runs.
    py310 = next(
        (c for c in candidates if subprocess.run([c, "-c", ""], capture_output=True, check=False).returncode == 0),
        None,
    )
    if py310 is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs a python3.10 to check the wheel on the oldest Python it declares")
        pytest.skip("no python3.10 on this machine")
    venv = tmp_path / "py310"
    subprocess.run([py310, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(WHEEL)],
        check=True, timeout=300,
    )
    xfail = tmp_path / "xfail.json"
    xfail.write_text(
        '{"version": 1, "expected_failures": [{"id": "rp-x", "reason": "tracked"}]}\n', encoding="utf-8"
    )
    code = (
        "import sys; from awa_conformance.expected_failures import load_expected_failures as f;"
        "print(f(sys.argv[1], ['rp-x']))"
    )
    p = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code, str(xfail)], capture_output=True, text=True, timeout=60, check=False
    )
    assert p.returncode == 0, p.stderr
    assert "rp-x" in p.stdout and "tracked" in p.stdout, p.stdout
