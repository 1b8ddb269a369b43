// Package peers decides one MCP tool call with OPA, cedar-go and
// toolwarden's host.Check side by side, so the cost of a toolwarden decision
// can be read as a ratio to the policy engines people compare it with.
//
// It is a module of its own (see go.mod) so that the product never depends
// on OPA or Cedar. Run it with scripts/bench-peers.sh; docs/performance.md
// quotes its figures.
package peers
