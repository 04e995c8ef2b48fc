#!/usr/bin/env python3
"""Materialises "example X with mutant M": a copy of the example with one mutant patch applied.

The examples under examples/ are model code that producer authors copy, so they hold no switch
for deliberate mistakes. Each mistake (a mutant) is a patch instead,
tests/mutants/<example>/<mutant>.patch (listed in tests/mutants/README.md); the tests apply it
to a copy of the example and run the copy through the runner, which must fail it.

Copies live in one cache directory ($AWA_MUTANTS_DIR, default target/mutants), one per
(example, mutant, content of the example and the patch): a copy is made once, its build (npm,
go, Maven, cargo) is reused by later runs, and an edited example or patch gets a fresh copy.
A copy keeps the example's place in the tree (examples/.../<example>) beside a link to vectors/,
so the relative paths of the example's own tests still resolve.

Usage (from anywhere):
  materialise.py EXAMPLE MUTANT             print the command that starts the patched copy
  materialise.py --dir EXAMPLE MUTANT       print the copy's example directory instead
  materialise.py --exec EXAMPLE MUTANT      become that command (stdin/stdout are the protocol's),
                                            for a shell command string such as the runner's
                                            --adapter "python3 tests/mutants/materialise.py --exec adapter-python separators"
  materialise.py --build ...                also build the copy first (run --build, go build)
  materialise.py --check                    dry-run every patch against its example: exit 1 if one
                                            no longer applies exactly (fuzz 0)
  materialise.py --list                     print "EXAMPLE MUTANT" for every patch
Nothing but the command or directory goes to stdout: build output goes to stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# example -> (its directory under the repository, the command that starts it, relative to
# that directory; a leading "python" is this interpreter, so a venv's packages are found).
EXAMPLES: dict[str, tuple[str, list[str]]] = {
    "node": ("examples/producers/node", ["run"]),
    "go": ("examples/producers/go", ["run"]),
    "java": ("examples/producers/java", ["run"]),
    "python": ("examples/producers/python", ["run"]),
    "awa-pg": ("examples/producers/awa-pg", ["python", "run"]),
    "awa-rs": ("examples/producers/awa-rs", ["run"]),
    "adapter-python": ("examples/adapters/python", ["python", "adapter.py"]),
    "adapter-go": ("examples/adapters/go", [".build/adapter"]),
}
# Build output and caches: never copied, never part of the content hash.
SKIP = {"node_modules", ".build", "target", ".venv", "__pycache__", ".pytest_cache", ".build.lock"}
# Links beside the copy, so that paths like ../../../vectors resolve as in the repository.
SHARED = ("vectors", "docs")


class MaterialiseError(Exception):
    """A patch that does not apply, a missing patch, a failed build."""


def patch_path(example: str, mutant: str) -> Path:
    return HERE / example / f"{mutant}.patch"


def all_patches() -> list[tuple[str, str]]:
    return sorted((p.parent.name, p.stem) for p in HERE.glob("*/*.patch"))


def _files(src: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP)
        out += [Path(dirpath) / f for f in sorted(filenames) if f not in SKIP]
    return out


def _digest(src: Path, patch: Path) -> str:
    h = hashlib.sha256(patch.read_bytes())
    for f in _files(src):
        h.update(str(f.relative_to(src)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _patch(args: list[str], cwd: Path, patch: Path) -> subprocess.CompletedProcess[str]:
    # --batch/--forward: never ask; -F0: the context must match exactly, so a drifted example
    # fails here instead of being patched somewhere else.
    with patch.open("rb") as f:
        return subprocess.run(["patch", "--batch", "--forward", "-F0", "-p1", *args], cwd=cwd, stdin=f,
                              capture_output=True, text=True, check=False)


def check(example: str, mutant: str) -> str | None:
    """Why the patch does not apply to the example as it is now, or None when it does."""
    if example not in EXAMPLES:
        return f"{example}: no such example (EXAMPLES in {Path(__file__).name})"
    done = _patch(["--dry-run", "--silent"], ROOT / EXAMPLES[example][0], patch_path(example, mutant))
    return None if done.returncode == 0 else (done.stdout + done.stderr).strip()


def materialise(example: str, mutant: str, build: bool = False) -> Path:
    """The directory of the example's copy with the patch applied (made once, then reused)."""
    rel, _ = EXAMPLES[example]
    src, patch = ROOT / rel, patch_path(example, mutant)
    if not patch.is_file():
        raise MaterialiseError(f"materialise: no patch {patch}")
    cache = Path(os.environ.get("AWA_MUTANTS_DIR", ROOT / "target" / "mutants"))
    top = cache / f"{example}-{mutant}-{_digest(src, patch)}"
    if not top.is_dir():
        # Made under a temporary name and renamed when complete: a concurrent caller either
        # sees no copy or a whole one.
        cache.mkdir(parents=True, exist_ok=True)
        tmp = cache / f".{top.name}.{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(src, tmp / rel, symlinks=True, ignore=lambda _d, names: [n for n in names if n in SKIP])
        for name in SHARED:
            (tmp / name).symlink_to(ROOT / name)
        if (src / "node_modules").is_dir():
            # The patches never touch package.json: the installed dependencies are the same.
            (tmp / rel / "node_modules").symlink_to(src / "node_modules")
        if example == "awa-rs" and (src / "target" / "release").is_dir():
            # A copy of the example's cargo build: only the patched crate recompiles, not the
            # crate's dependency tree (minutes on a small machine).
            shutil.copytree(src / "target", tmp / rel / "target", symlinks=True,
                            ignore=shutil.ignore_patterns(".build-lock"))
        done = _patch(["--silent", "--no-backup-if-mismatch"], tmp / rel, patch)
        if done.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise MaterialiseError(f"materialise: {patch} does not apply to {rel}:\n{done.stdout}{done.stderr}")
        try:
            tmp.rename(top)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)  # another caller finished first: same content
    copy = top / rel
    if example == "adapter-go" and not (copy / ".build" / "adapter").exists():
        # No run script: the adapter is a binary, built once per copy (under a temporary name,
        # so a concurrent caller never starts a half-written binary).
        tmp_bin = f".build/adapter.{os.getpid()}"
        _build(["go", "build", "-o", tmp_bin, "."], copy)
        os.replace(copy / tmp_bin, copy / ".build" / "adapter")
    elif build and (copy / "run").exists() and example not in ("python", "awa-pg"):
        _build([str(copy / "run"), "--build"], copy)
    return copy


def _build(argv: list[str], cwd: Path) -> None:
    done = subprocess.run(argv, cwd=cwd, stdout=sys.stderr, check=False)
    if done.returncode != 0:
        raise MaterialiseError(f"materialise: {' '.join(argv)} failed in {cwd} (exit {done.returncode})")


def command(example: str, mutant: str, build: bool = False) -> list[str]:
    """The argv that starts the patched copy (for --producer/--adapter, shlex.join it)."""
    copy = materialise(example, mutant, build)
    argv = EXAMPLES[example][1]
    return [sys.executable if a == "python" else str(copy / a) for a in argv]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--dir", action="store_true", help="print the copy's directory")
    mode.add_argument("--exec", action="store_true", help="become the patched example's command")
    mode.add_argument("--check", action="store_true", help="dry-run every patch; exit 1 if one does not apply")
    mode.add_argument("--list", action="store_true", help="list every (example, mutant)")
    ap.add_argument("--build", action="store_true", help="build the copy first")
    ap.add_argument("example", nargs="?", choices=sorted(EXAMPLES))
    ap.add_argument("mutant", nargs="?")
    a = ap.parse_args()
    try:
        return _main(a, ap)
    except MaterialiseError as e:
        print(e, file=sys.stderr)
        return 2


def _main(a: argparse.Namespace, ap: argparse.ArgumentParser) -> int:
    if a.list:
        for example, mutant in all_patches():
            print(example, mutant)
        return 0
    if a.check:
        bad = [(e, m, why) for e, m in all_patches() if (why := check(e, m))]
        for e, m, why in bad:
            print(f"{e}/{m}.patch does not apply: {why}", file=sys.stderr)
        return 1 if bad else 0
    if not a.example or not a.mutant:
        ap.error("EXAMPLE and MUTANT are required")
    if a.dir:
        print(materialise(a.example, a.mutant, a.build))
        return 0
    argv = command(a.example, a.mutant, a.build)
    if a.exec:
        sys.stdout.flush()
        os.execv(argv[0], argv)
    print(shlex.join(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
