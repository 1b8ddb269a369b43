#!/usr/bin/env bash
# Statement coverage of the whole module, by every test: the unit tests and
# the e2e tests' runs of the real binary (built with -cover). Prints each
# package's figure and the total, and fails below the bar (first argument,
# default 80 percent). Needs what scripts/test.sh sets up.
set -euo pipefail
cd "$(dirname "$0")/.."
bar="${1:-80}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/unit" "$dir/e2e"
TOOLWARDEN_E2E_COVERDIR="$dir/e2e" go test -count=1 -timeout 40m -cover -coverpkg=./... ./... -args -test.gocoverdir="$dir/unit" >"$dir/log" 2>&1 || {
  cat "$dir/log"
  exit 1
}
go tool covdata percent -i="$dir/unit,$dir/e2e" | grep "coverage:" | sed "s/^[[:space:]]*//" | sort
go tool covdata textfmt -i="$dir/unit,$dir/e2e" -o "$dir/cover.out"
total="$(go tool cover -func="$dir/cover.out" | awk '/^total:/ { sub("%", "", $3); print $3 }')"
echo "total: ${total}% of statements (bar: ${bar}%)"
awk -v t="$total" -v b="$bar" 'BEGIN { exit !(t >= b) }' || {
  echo "coverage ${total}% is below the bar of ${bar}%" >&2
  exit 1
}
