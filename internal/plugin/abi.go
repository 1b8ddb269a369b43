package plugin

import (
	"strconv"

	"github.com/tetratelabs/wazero/api"
)

// Event is what a plugin is called for; the number is the first argument of
// toolwarden_handle (pdk/ABI.md section 3).
type Event uint32

const (
	EventDescribe Event = 0
	EventList     Event = 1
	EventCheck    Event = 2
	EventObserve  Event = 3
	// EventInit hands a fresh instance its policy data file, once, before
	// any other event but describe (data.go). Only plugins that list
	// "init" in describe get it.
	EventInit Event = 4
)

var eventNames = [...]string{"describe", "list", "check", "observe", "init"}

func (e Event) String() string {
	if int(e) < len(eventNames) {
		return eventNames[e]
	}
	return "event(" + strconv.FormatUint(uint64(e), 10) + ")"
}

// ParseEvent reads an event name.
func ParseEvent(s string) (Event, bool) {
	for i, n := range eventNames {
		if n == s {
			return Event(i), true
		}
	}
	return 0, false
}

// Return codes of toolwarden_handle (pdk/ABI.md section 3.1).
const (
	CodeOK         = 0
	CodeNotHandled = 1
	CodeBadInput   = 2
	CodeInternal   = 3
	CodeBadConfig  = 4
)

// Status codes returned by the output_write import.
const (
	writeOK       = 0
	writeTooLarge = 1
	writeNoEvent  = 2
)

// ABI names.
const (
	hostModule   = "toolwarden"
	wasiModule   = "wasi_snapshot_preview1"
	markerV1     = "toolwarden_abi_v1"
	handleExport = "toolwarden_handle"
	initExport   = "_initialize"
	memoryExport = "memory"
	markerPrefix = "toolwarden_abi_v"
	importRead   = "input_read"
	importWrite  = "output_write"
	importLog    = "log"
	// The optional regex imports (pdk/ABI.md section 16).
	importRegexCompile = "regex_compile"
	importRegexMatch   = "regex_match"
	importRegexError   = "regex_error"
	grantedImport      = "toolwarden.input_read, toolwarden.output_write, toolwarden.log, toolwarden.regex_compile, toolwarden.regex_match, toolwarden.regex_error, wasi_snapshot_preview1.*"
)

var (
	i32 = api.ValueTypeI32

	sigHandle = signature{params: []api.ValueType{i32, i32}, results: []api.ValueType{i32}}
	sigVoid   = signature{}

	// hostSigs are the exact signatures of the toolwarden imports.
	hostSigs = map[string]signature{
		importRead:  {params: []api.ValueType{i32, i32}, results: []api.ValueType{i32}},
		importWrite: {params: []api.ValueType{i32, i32}, results: []api.ValueType{i32}},
		importLog:   {params: []api.ValueType{i32, i32, i32}},

		importRegexCompile: {params: []api.ValueType{i32, i32}, results: []api.ValueType{i32}},
		importRegexMatch:   {params: []api.ValueType{i32, i32, i32}, results: []api.ValueType{i32}},
		importRegexError:   {params: []api.ValueType{i32, i32}, results: []api.ValueType{i32}},
	}
)

// signature is a function type.
type signature struct {
	params, results []api.ValueType
}

func sigOf(d api.FunctionDefinition) signature {
	return signature{params: d.ParamTypes(), results: d.ResultTypes()}
}

func (s signature) equal(o signature) bool {
	if len(s.params) != len(o.params) || len(s.results) != len(o.results) {
		return false
	}
	for i := range s.params {
		if s.params[i] != o.params[i] {
			return false
		}
	}
	for i := range s.results {
		if s.results[i] != o.results[i] {
			return false
		}
	}
	return true
}

func (s signature) String() string {
	b := []byte{'('}
	for i, t := range s.params {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, api.ValueTypeName(t)...)
	}
	b = append(b, ") -> "...)
	switch len(s.results) {
	case 0:
		b = append(b, "()"...)
	case 1:
		b = append(b, api.ValueTypeName(s.results[0])...)
	default:
		b = append(b, '(')
		for i, t := range s.results {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, api.ValueTypeName(t)...)
		}
		b = append(b, ')')
	}
	return string(b)
}
