#!/bin/sh
# Builds the C kit's helper-vectors test plugin: ./build.sh [OUT.wasm].
# Exit 3 when the toolchain is missing.
set -eu
cd "$(dirname "$0")"
out=${1:-vectors.wasm}
CC=${CC:-clang}
command -v "$CC" >/dev/null 2>&1 || { echo "$CC: not found (install clang and lld)" >&2; exit 3; }
"$CC" --target=wasm32 -Os -mbulk-memory -nostdlib -Wall -Wextra -Werror -Wl,--no-entry -Wl,--strip-debug -o "$out" vectors.c
