#!/usr/bin/env bash
# Build the release wheel of awa-conformance (the runner command, the module, the embedded
# vectors and SQL) into OUTDIR: manylinux2014 (manylinux_2_17), stripped, built with zig.
#
# Usage: scripts/build-wheel.sh OUTDIR [--musl]
#   --musl   also build the musllinux_1_2 wheel (needs the x86_64-unknown-linux-musl Rust target)
# Env:   PYTHON  interpreter with maturin and ziglang (default: the project venv .venv, made by
#                scripts/install-deps.sh, else python3)
# Prints the path of each wheel it wrote, one per line, on stdout.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:?usage: scripts/build-wheel.sh OUTDIR [--musl]}"
musl=0
case "${2:-}" in
    "") ;;
    --musl) musl=1 ;;
    *) echo "build-wheel.sh: unknown option $2 (usage: scripts/build-wheel.sh OUTDIR [--musl])" >&2; exit 2 ;;
esac
mkdir -p "$out"
out="$(cd "$out" && pwd)"

PY="${PYTHON:-}"
if [ -z "$PY" ]; then
    if [ -x "$ROOT/.venv/bin/python" ]; then PY="$ROOT/.venv/bin/python"; else PY=python3; fi
fi
for mod in maturin ziglang; do
    if ! "$PY" -c "import $mod" 2>/dev/null; then
        echo "build-wheel.sh: $PY lacks $mod; run scripts/install-deps.sh (installs the pinned maturin and ziglang into .venv)" >&2
        exit 1
    fi
done
# maturin finds zig as `python -m ziglang` of the interpreter on PATH: put this one first.
PATH="$(dirname "$PY"):$PATH"
export PATH

arch="$(uname -m)"
build() {
    # --profile dist: no debug info, stripped (Cargo.toml). --zig links against glibc 2.17
    # (musl 1.2) whatever this machine's libc is, and maturin checks the tag is honest.
    (cd "$ROOT/bindings" && "$PY" -m maturin build --quiet --profile dist --zig \
        --target "$1" --compatibility "$2" --out "$out" >&2)
    ls -t "$out"/awa_conformance-*"$3"*.whl | head -n1
}
build "$arch-unknown-linux-gnu" manylinux2014 "manylinux_2_17_$arch"
if [ "$musl" -eq 1 ]; then
    build "$arch-unknown-linux-musl" musllinux_1_2 "musllinux_1_2_$arch"
fi
