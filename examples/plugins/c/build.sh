#!/bin/sh
# Builds the C example plugin, freestanding (no libc, no WASI imports):
#   ./build.sh [OUT.wasm]   (default rootguard.wasm)
# Exit 3 when the toolchain is missing.
set -eu
cd "$(dirname "$0")"
out=${1:-rootguard.wasm}
CC=${CC:-clang}
command -v "$CC" >/dev/null 2>&1 || { echo "$CC: not found (install clang and lld)" >&2; exit 3; }
command -v wasm-ld >/dev/null 2>&1 || command -v wasm-ld-14 >/dev/null 2>&1 || { echo "wasm-ld: not found (install lld)" >&2; exit 3; }
"$CC" --target=wasm32 -Os -mbulk-memory -nostdlib -Wall -Wextra -Werror -I../../../pdk/c \
	-Wl,--no-entry -Wl,--strip-debug -o "$out" rootguard.c
# (Not --strip-all at link: clang 14 runs binaryen's wasm-opt when it is on
# PATH, and wasm-opt needs the target_features section to accept
# memory.copy.) Drop the names section afterwards, when wabt is here.
if command -v wasm-strip >/dev/null 2>&1; then wasm-strip "$out"; fi
