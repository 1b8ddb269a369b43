#!/bin/sh
# Builds the C example plugin against wasi-libc, as a reactor (the same
# source; toolwarden.h then uses malloc for its arena):
#   ./build-wasi.sh [OUT.wasm]   (default rootguard-wasi.wasm)
# Exit 3 when the toolchain is missing.
set -eu
cd "$(dirname "$0")"
out=${1:-rootguard-wasi.wasm}
CC=${CC:-clang}
command -v "$CC" >/dev/null 2>&1 || { echo "$CC: not found (install clang and lld)" >&2; exit 3; }
echo 'int x;' | "$CC" --target=wasm32-wasi -mexec-model=reactor -x c -o /dev/null - 2>/dev/null ||
	{ echo "wasi-libc or the wasm32 compiler-rt builtins are missing (install wasi-libc and libclang-rt-14-dev-wasm32)" >&2; exit 3; }
"$CC" --target=wasm32-wasi -mexec-model=reactor -Os -mbulk-memory -Wall -Wextra -Werror -I../../../pdk/c \
	-Wl,--strip-debug -o "$out" rootguard.c
if command -v wasm-strip >/dev/null 2>&1; then wasm-strip "$out"; fi
