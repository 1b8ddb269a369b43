#!/bin/sh
# Builds the Rust example plugin with plain rustc (no cargo, no registry):
# the PDK as an rlib, then the plugin as a cdylib for wasm32-unknown-unknown.
#   ./build.sh [OUT.wasm]   (default rootguard.wasm)
# RUSTC picks the compiler (default /usr/bin/rustc, Debian's, which has the
# wasm32 standard library; rustup's needs `rustup target add
# wasm32-unknown-unknown`). With cargo instead:
#   cargo build --release --target wasm32-unknown-unknown
# Exit 3 when the toolchain is missing.
set -eu
cd "$(dirname "$0")"
out=${1:-rootguard.wasm}
RUSTC=${RUSTC:-/usr/bin/rustc}
[ -x "$RUSTC" ] || RUSTC=$(command -v rustc || true)
[ -n "$RUSTC" ] || { echo "rustc: not found (install rustc and libstd-rust-dev-wasm32)" >&2; exit 3; }
[ -d "$("$RUSTC" --print sysroot)/lib/rustlib/wasm32-unknown-unknown" ] ||
	{ echo "$RUSTC has no wasm32-unknown-unknown standard library (install libstd-rust-dev-wasm32, or rustup target add wasm32-unknown-unknown)" >&2; exit 3; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags="--edition 2021 --target wasm32-unknown-unknown -C opt-level=s -C panic=abort -C target-feature=+bulk-memory"
"$RUSTC" $flags --crate-type rlib --crate-name toolwarden_pdk --cfg 'feature="panic-handler"' \
	-o "$tmp/libtoolwarden_pdk.rlib" ../../../pdk/rust/src/lib.rs
"$RUSTC" $flags --crate-type cdylib --crate-name rootguard -C lto -C strip=symbols -C link-arg=-zstack-size=65536 \
	--extern toolwarden_pdk="$tmp/libtoolwarden_pdk.rlib" -o "$out" src/lib.rs
