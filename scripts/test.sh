#!/usr/bin/env bash
# The test command: sets up toolchains and npm packages, then lints (scripts/lint.sh: go vet,
# staticcheck, a complexity limit) and runs every test with the race detector. In CI (CI=true)
# a missing toolchain is a failure, not a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
if [ "${CI:-}" = "true" ]; then
  export TOOLWARDEN_REQUIRE_TOOLCHAINS=1
fi
./scripts/lint.sh
go test -race -count=1 -timeout 40m ./... "$@"
# The fallback build that lets wazero stop guests (docs/plugins.md, "Two ways to stop a guest").
go test -count=1 -tags toolwarden_wazero_interrupt -run 'Hostile|Deadline|Timeout|Spin|CallerContext|Interrupt|Close|StartSection|EachBuild|SteadyState' ./internal/plugin/
