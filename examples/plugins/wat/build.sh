#!/bin/sh
# Builds the WAT example plugin: ./build.sh [OUT.wasm]   (default rootguard.wasm)
# Exit 3 when the toolchain (wabt's wat2wasm) is missing.
set -eu
cd "$(dirname "$0")"
out=${1:-rootguard.wasm}
command -v wat2wasm >/dev/null 2>&1 || { echo "wat2wasm: not found (install wabt)" >&2; exit 3; }
wat2wasm rootguard.wat -o "$out"
