#!/usr/bin/env bash
# The lint configuration, one line per check; scripts/test.sh runs it and
# scripts/setup.sh installs the tools (pinned). Every check must be clean.
set -euo pipefail
cd "$(dirname "$0")/.."
gobin="$(go env GOBIN)"
[ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"

go vet ./...
# staticcheck's default checks over the whole module; a deliberate use of
# something deprecated says why in a //lint:ignore comment.
"$gobin/staticcheck" ./...
# Cyclomatic complexity at most 25 per function, tests excluded: a test's
# count is mostly its assertions (each `if got != want { t.Fatal }` is a
# branch), so a scenario that reads straight down scores high, and splitting
# it would hide the scenario (docs/RATIONALE.md, "A complexity limit").
if ! "$gobin/gocyclo" -over 25 -ignore '_test\.go$|/node_modules/|/testdata/' .; then
  echo "lint: the functions above are over complexity 25: split them into steps with names" >&2
  exit 1
fi
