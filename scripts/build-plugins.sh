#!/bin/sh
# Rebuild the first-party plugins (plugins/*.wasm) from source, reproducibly.
#
#   scripts/build-plugins.sh           rebuild plugins/*.wasm in place
#   scripts/build-plugins.sh --verify  build once in a scratch dir; require the committed files
#                                      to equal it (what `go test ./plugins` runs)
#   scripts/build-plugins.sh --check   build twice, the second time with empty build caches,
#                                      and require both builds to be byte-identical and equal
#                                      to the committed files (slow: rebuilds the standard library)
#
# trifecta, argguard and secrets are Rust (plugins/<name>/rust/lib.rs and the modules beside it, with
# pdk/rust); GO_PLUGINS would be Go guests (plugins/<name>/guest, with pdk/go). Each Rust plugin's
# Go package is its reference implementation. docs/RATIONALE.md ("First-party plugins are small
# modules") says why.
#
# Reproducibility:
# - Go: a pinned toolchain (GOTOOLCHAIN, downloaded by the go command when the local one
#   differs), -trimpath, -buildvcs=false, an empty build id, stripped symbols, no inherited
#   GOFLAGS, and the module's go.sum.
# - Rust: the pinned rustc release below (Debian's /usr/bin/rustc, with libstd-rust-dev-wasm32;
#   scripts/setup.sh installs it), plain rustc with fixed flags, paths remapped, symbols stripped.
#   opt-level=3, not s: a fifth bigger, and 15-30% less guest time per check
#   (docs/performance.md, "Guest cost").
# Exit 3 when a toolchain is missing.
set -eu

# The releases that produced the committed .wasm files. Bump them together with the files.
PLUGIN_GO=go1.26.8
PLUGIN_RUSTC=1.63.0
GO_PLUGINS=""
RUST_PLUGINS="trifecta argguard secrets"
PLUGINS="$RUST_PLUGINS $GO_PLUGINS"

cd "$(dirname "$0")/.."
root=$(pwd)
export GOTOOLCHAIN="$PLUGIN_GO" GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 GOFLAGS= GOWASM=

RUSTC=${RUSTC:-/usr/bin/rustc}
[ -x "$RUSTC" ] || RUSTC=$(command -v rustc || true)
[ -n "$RUSTC" ] || { echo "build-plugins: rustc not found (scripts/setup.sh installs Debian's rustc and libstd-rust-dev-wasm32)" >&2; exit 3; }
case "$("$RUSTC" --version)" in
"rustc $PLUGIN_RUSTC"*) ;;
*) echo "build-plugins: $RUSTC is $("$RUSTC" --version), the committed plugins were built with rustc $PLUGIN_RUSTC (set RUSTC)" >&2; exit 3 ;;
esac
[ -d "$("$RUSTC" --print sysroot)/lib/rustlib/wasm32-unknown-unknown" ] ||
	{ echo "build-plugins: $RUSTC has no wasm32-unknown-unknown standard library (install libstd-rust-dev-wasm32)" >&2; exit 3; }

build() { # build <outdir>
	tmp=$(mktemp -d)
	flags="--edition 2021 --target wasm32-unknown-unknown -C opt-level=3 -C panic=abort
		-C target-feature=+bulk-memory -C codegen-units=1 --remap-path-prefix=$root=."
	"$RUSTC" $flags --crate-type rlib --crate-name toolwarden_pdk --cfg 'feature="panic-handler"' \
		-o "$tmp/libtoolwarden_pdk.rlib" pdk/rust/src/lib.rs
	for p in $RUST_PLUGINS; do
		"$RUSTC" $flags --crate-type cdylib --crate-name "$p" -C lto -C strip=symbols \
			-C link-arg=-zstack-size=65536 --extern toolwarden_pdk="$tmp/libtoolwarden_pdk.rlib" \
			-o "$1/$p.wasm" "plugins/$p/rust/lib.rs"
	done
	rm -rf "$tmp"
	for p in $GO_PLUGINS; do
		go build -buildmode=c-shared -trimpath -buildvcs=false \
			-ldflags='-s -w -buildid=' -o "$1/$p.wasm" "./plugins/$p/guest"
	done
}

if [ "${1:-}" = "--check" ] || [ "${1:-}" = "--verify" ]; then
	a=$(mktemp -d) b=$(mktemp -d) cache=$(mktemp -d)
	trap 'chmod -R u+w "$cache"; rm -rf "$a" "$b" "$cache"' EXIT
	build "$a"
	status=0
	if [ "$1" = "--check" ]; then
		(export GOCACHE="$cache"; build "$b")
		for p in $PLUGINS; do
			if ! cmp -s "$a/$p.wasm" "$b/$p.wasm"; then
				echo "build-plugins: $p.wasm differs between two builds (not reproducible)" >&2
				status=1
			fi
		done
	fi
	for p in $PLUGINS; do
		if ! cmp -s "$a/$p.wasm" "plugins/$p.wasm"; then
			echo "build-plugins: plugins/$p.wasm is stale; run scripts/build-plugins.sh" >&2
			status=1
		fi
	done
	[ $status -eq 0 ] && echo "build-plugins: up to date ($(go version | cut -d' ' -f3), rustc $PLUGIN_RUSTC)"
	exit $status
fi

build plugins
for p in $PLUGINS; do
	echo "plugins/$p.wasm $(wc -c <"plugins/$p.wasm") bytes sha256 $(sha256sum "plugins/$p.wasm" | cut -c1-16)"
done
