#!/bin/sh
# Builds the AssemblyScript example plugin with asc, using the PDK's arena
# runtime and its abort handler (the host refuses the default env.abort):
#   ./build.sh [OUT.wasm]   (default rootguard.wasm)
# ASC picks the compiler (default: the repo's pinned one in scripts/npm,
# installed by scripts/setup.sh; or asc on PATH).
# Exit 3 when the toolchain is missing.
set -eu
cd "$(dirname "$0")"
out=${1:-rootguard.wasm}
pdk=../../../pdk/assemblyscript/assembly
ASC=${ASC:-../../../scripts/npm/node_modules/.bin/asc}
[ -x "$ASC" ] || ASC=$(command -v asc || true)
[ -n "$ASC" ] || { echo "asc: not found (run scripts/setup.sh, or npm install assemblyscript)" >&2; exit 3; }
command -v node >/dev/null 2>&1 || { echo "node: not found (install Node.js 18+)" >&2; exit 3; }
"$ASC" assembly/index.ts -o "$out" -O3 --noAssert \
	--runtime "$pdk/runtime" --use "abort=$pdk/index/toolwardenAbort"
