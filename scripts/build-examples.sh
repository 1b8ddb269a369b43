#!/bin/sh
# Builds the example plugins of examples/plugins, one per language, with
# each example's own build.sh (the one command its README gives), and each
# plugin kit's ABI conformance plugin (pdk/<kit>/example).
#
#   scripts/build-examples.sh                 build all, each next to its source
#   scripts/build-examples.sh -o DIR [NAME..] build into DIR/<NAME>.wasm
#
# NAME is go, rust, c, c-wasi (the C example against wasi-libc),
# assemblyscript, wat (the rootguard examples), or pdk-c, pdk-rust,
# pdk-assemblyscript (the kits' plugins for pdk/testdata/conformance/
# cases.json). Exit status: 0 built, 1 a build failed, 3 a toolchain is
# missing (the message names it; scripts/setup.sh installs them all).
# Tests skip on 3 unless TOOLWARDEN_REQUIRE_TOOLCHAINS=1.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
outdir=
if [ "${1:-}" = "-o" ]; then
	[ $# -ge 2 ] || { echo "usage: $0 [-o DIR] [LANG...]" >&2; exit 2; }
	mkdir -p "$2"
	outdir=$(cd "$2" && pwd)
	shift 2
fi
[ $# -gt 0 ] || set -- go rust c c-wasi assemblyscript wat pdk-c pdk-rust pdk-assemblyscript

status=0
for lang in "$@"; do
	case $lang in
	c-wasi) dir=examples/plugins/c script=build-wasi.sh file=rootguard-wasi.wasm ;;
	go | rust | c | assemblyscript | wat) dir=examples/plugins/$lang script=build.sh file=rootguard.wasm ;;
	pdk-c | pdk-rust | pdk-assemblyscript) dir=pdk/${lang#pdk-}/example script=build.sh file=example.wasm ;;
	*) echo "build-examples: unknown name $lang" >&2; exit 2 ;;
	esac
	if [ -n "$outdir" ]; then out=$outdir/$lang.wasm; else out=$root/$dir/$file; fi
	rc=0
	"$root/$dir/$script" "$out" || rc=$?
	case $rc in
	0) echo "build-examples: $lang: $out ($(wc -c <"$out") bytes)" ;;
	3) echo "build-examples: $lang: toolchain missing (run scripts/setup.sh)" >&2; [ $status -ne 0 ] || status=3 ;;
	*) echo "build-examples: $lang: build failed" >&2; status=1 ;;
	esac
done
exit $status
