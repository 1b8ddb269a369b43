package plugin

import (
	"encoding/json"
	"fmt"
	"strings"
)

// needs is the set of input parts a plugin reads (pdk/ABI.md section 14),
// one bit per part. The host builds list, check and observe envelopes with
// only those parts: building, copying and scanning what a plugin never
// looks at is most of the cost of a cheap plugin.
type needs uint32

const (
	needSessionID needs = 1 << iota
	needLabels
	needServerContext
	needCapabilities
	needHints
	needServer
	needApp
	needConnector
	needTool
	needArguments
	needBaseline
	needResult
	needTime
	needPluginName
	needConfig

	// needAll is a plugin that declared nothing: everything, as ABI v1.
	needAll = needConfig<<1 - 1

	needSession    = needSessionID | needLabels
	needCallParts  = needCapabilities | needHints | needServer | needApp | needConnector | needTool | needArguments
	needPluginPart = needPluginName | needConfig
	// needDefinition are the call's parts that depend only on the tool's
	// definition and the policy, not on the call (callblock.go).
	needDefinition = needCapabilities | needHints | needServer | needApp | needConnector | needTool
)

// needNames are the names of section 14, in bit order.
var needNames = [...]string{
	"session_id", "labels", "server_context", "capabilities", "hints", "server", "app",
	"connector", "tool", "arguments", "baseline", "result", "time", "plugin_name", "config",
}

// needShorthands name several parts at once.
var needShorthands = map[string]needs{
	"session": needSession,
	"call":    needCallParts,
	"plugin":  needPluginPart,
}

func (n needs) has(part needs) bool { return n&part != 0 }

// String lists the parts by name, for errors and tests.
func (n needs) String() string {
	var names []string
	for i, name := range needNames {
		if n&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return "[" + strings.Join(names, " ") + "]"
}

// parseNeeds reads a "needs" array; an unknown name is an error that lists
// the valid ones, so that a typo fails at load instead of starving the
// plugin of a part it reads.
func parseNeeds(names []string) (needs, error) {
	var n needs
	for _, name := range names {
		if part, ok := needShorthands[name]; ok {
			n |= part
			continue
		}
		found := false
		for i, known := range needNames {
			if name == known {
				n |= 1 << i
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("needs: unknown name %q (valid: %s, session, call, plugin)", name, strings.Join(needNames[:], ", "))
		}
	}
	return n, nil
}

// parseDescribeNeeds reads the optional "needs" key of describe's output:
// absent or null means everything (a v1 plugin).
func parseDescribeNeeds(out []byte) (needs, error) {
	var d struct {
		Needs json.RawMessage `json:"needs"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return 0, fmt.Errorf("needs: %v", err)
	}
	if len(d.Needs) == 0 || string(d.Needs) == "null" {
		return needAll, nil
	}
	var names []string
	if err := json.Unmarshal(d.Needs, &names); err != nil {
		return 0, fmt.Errorf("needs: want an array of strings, got %s", truncate(string(d.Needs), 40))
	}
	return parseNeeds(names)
}

// tailFor renders the envelope's closing `,"plugin":{...}}` with the parts
// of the plugin block the plugin needs, or just `}`.
func tailFor(name string, config []byte, n needs) []byte {
	if !n.has(needPluginPart) {
		return []byte("}")
	}
	b := []byte(`,"plugin":{`)
	if n.has(needPluginName) {
		b = append(b, `"name":`...)
		b = appendString(b, name)
		if n.has(needConfig) {
			b = append(b, ',')
		}
	}
	if n.has(needConfig) {
		b = append(b, `"config":`...)
		b = append(b, config...)
	}
	return append(b, "}}"...)
}

// needs are the parts the plugin's envelopes carry.
func (p *Plugin) needs() needs { return needAll &^ p.omit }

// closing is the end of the plugin's list, check and observe envelopes.
func (p *Plugin) closing() []byte {
	if p.evTail == nil {
		return p.tail
	}
	return p.evTail
}

// Needs lists the input parts the plugin declared in describe, or nil when
// it gets everything (it declared none, or all).
func (p *Plugin) Needs() []string {
	if p.evTail == nil {
		return nil
	}
	names := []string{}
	for i, name := range needNames {
		if p.needs()&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return names
}
