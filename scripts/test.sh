#!/usr/bin/env bash
# The test command: sets up toolchains and npm packages, then vets, lints (staticcheck) and runs
# every test with the race detector. In CI (CI=true) a missing toolchain is a
# failure, not a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
if [ "${CI:-}" = "true" ]; then
  export TOOLWARDEN_REQUIRE_TOOLCHAINS=1
fi
go vet ./...
gobin="$(go env GOBIN)"
[ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
"$gobin/staticcheck" ./...
go test -race -count=1 ./... "$@"
