#!/usr/bin/env bash
# Decides one tool call with OPA, cedar-go and host.Check (no plugins,
# trifecta, argguard, both, and in parallel) in interleaved rounds, and prints
# the medians of the same-round ratios. The benchmark is a module of its own
# (host/bench/peers) so that the product does not depend on OPA or Cedar.
#
#   scripts/bench-peers.sh [ROUNDS] [BENCHTIME]     (default: 6 rounds, 1s per engine)
set -euo pipefail
cd "$(dirname "$0")/../host/bench/peers"
rounds="${1:-6}"
benchtime="${2:-1s}"
TOOLWARDEN_PEERS_REPORT=1 TOOLWARDEN_PEERS_ROUNDS="$rounds" \
  go test -count=1 -run '^TestReport$' -v -timeout 60m -test.benchtime "$benchtime" . |
  sed -n '/interleaved rounds/,/parallel scaling/p' | sed 's/^ *//'
