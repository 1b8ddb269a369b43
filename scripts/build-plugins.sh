#!/bin/sh
# Rebuild the first-party plugins (plugins/*.wasm) from source, reproducibly.
#
#   scripts/build-plugins.sh           rebuild plugins/*.wasm in place
#   scripts/build-plugins.sh --verify  build once in a scratch dir; require the committed files
#                                      to equal it (what `go test ./plugins` runs)
#   scripts/build-plugins.sh --check   build twice, the second time with an empty build cache,
#                                      and require both builds to be byte-identical and equal
#                                      to the committed files (slow: rebuilds the standard library)
#
# CI runs the first form, then `git diff --exit-code plugins/`.
#
# Reproducibility: a pinned Go toolchain (GOTOOLCHAIN, downloaded by the go command when the
# local one differs), -trimpath (no local paths), -buildvcs=false (no VCS stamp), an empty
# build id and stripped symbols, no inherited GOFLAGS, and the module's go.sum.
set -eu

PLUGINS="trifecta argguard"
# The Go release that produced the committed .wasm files. Bump it together with them.
PLUGIN_GO=go1.26.8

cd "$(dirname "$0")/.."
export GOTOOLCHAIN="$PLUGIN_GO" GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 GOFLAGS= GOWASM=

build() { # build <outdir>
	for p in $PLUGINS; do
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
	[ $status -eq 0 ] && echo "build-plugins: up to date ($(go version | cut -d' ' -f3))"
	exit $status
fi

build plugins
for p in $PLUGINS; do
	echo "plugins/$p.wasm $(wc -c <"plugins/$p.wasm") bytes sha256 $(sha256sum "plugins/$p.wasm" | cut -c1-16)"
done
