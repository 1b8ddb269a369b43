#!/bin/sh
# Builds the Rust kit's helper-vectors test plugin (src/lib.rs) with plain rustc:
# ./build.sh [OUT.wasm]. Exit 3 when the toolchain is missing.
set -eu
cd "$(dirname "$0")"
out=${1:-vectors.wasm}
RUSTC=${RUSTC:-/usr/bin/rustc}
[ -x "$RUSTC" ] || RUSTC=$(command -v rustc || true)
[ -n "$RUSTC" ] && [ -d "$("$RUSTC" --print sysroot)/lib/rustlib/wasm32-unknown-unknown" ] ||
	{ echo "rustc with the wasm32-unknown-unknown standard library: not found (install rustc and libstd-rust-dev-wasm32)" >&2; exit 3; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags="--edition 2021 --target wasm32-unknown-unknown -C opt-level=s -C panic=abort -C target-feature=+bulk-memory"
"$RUSTC" $flags --crate-type rlib --crate-name toolwarden_pdk --cfg 'feature="panic-handler"' -o "$tmp/libtoolwarden_pdk.rlib" ../src/lib.rs
"$RUSTC" $flags --crate-type cdylib --crate-name vectors -C lto -C strip=symbols -C link-arg=-zstack-size=65536 \
	--extern toolwarden_pdk="$tmp/libtoolwarden_pdk.rlib" -o "$out" src/lib.rs
