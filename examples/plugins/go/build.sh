#!/bin/sh
# Builds the Go example plugin: ./build.sh [OUT.wasm]   (default rootguard.wasm)
# Exit 3 when the toolchain is missing.
set -eu
cd "$(dirname "$0")"
out=${1:-rootguard.wasm}
command -v go >/dev/null 2>&1 || { echo "go: not found (install Go 1.24+)" >&2; exit 3; }
GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o "$out" .
