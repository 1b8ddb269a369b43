#!/bin/sh
# Builds the AssemblyScript kit's helper-vectors test plugin:
# ./build.sh [OUT.wasm]. Exit 3 when the toolchain is missing.
set -eu
cd "$(dirname "$0")"
out=${1:-vectors.wasm}
ASC=${ASC:-../../../scripts/npm/node_modules/.bin/asc}
[ -x "$ASC" ] || ASC=$(command -v asc || true)
[ -n "$ASC" ] && command -v node >/dev/null 2>&1 || { echo "asc and node: not found (run scripts/setup.sh)" >&2; exit 3; }
"$ASC" index.ts -o "$out" -O3 --noAssert --runtime ../assembly/runtime --use abort=../assembly/index/toolwardenAbort
