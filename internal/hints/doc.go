// Package hints is toolwarden's model of MCP tool annotations.
//
// A tool's annotations are claims made by its server. This package parses
// them (the four MCP spec hints, SEP-1984's six proposed hints, and the three
// lethal-trifecta capabilities) as tri-state values, decides how many of them
// to believe according to the server's trust level, applies trusted
// overrides from config, and hashes the definition so that a later change
// (drift) can be detected.
//
//	tool, err := hints.ParseTool(raw)               // once per tools/list
//	eff, notes := hints.Effective(&tool.Declared, hints.Pinned, drifted, appOverrides)
//	if eff.IsDestructive() { ... }
package hints
