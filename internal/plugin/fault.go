package plugin

import (
	"strconv"
)

// FaultKind classifies why a plugin event failed.
type FaultKind uint8

const (
	// FaultLoad: the plugin could not be loaded (bad module, refused import,
	// trap in _initialize, describe failed). Every event then fails with it.
	FaultLoad FaultKind = iota + 1
	// FaultTimeout: the event ran past timeout_ms.
	FaultTimeout
	// FaultCanceled: the caller's context was done before or during the event.
	FaultCanceled
	// FaultTrap: the guest trapped (unreachable, out-of-bounds, a bad pointer
	// passed to a host import, ...).
	FaultTrap
	// FaultMemory: the guest hit memory_limit_mb and then failed.
	FaultMemory
	// FaultOutputTooLarge: output_write went past max_output_kb.
	FaultOutputTooLarge
	// FaultInputTooLarge: the input envelope is over the host's cap; the
	// guest was not called.
	FaultInputTooLarge
	// FaultErrorCode: toolwarden_handle returned a failure code.
	FaultErrorCode
	// FaultBadOutput: the output is not valid JSON or does not fit the ABI.
	FaultBadOutput
	// FaultExit: the guest called WASI proc_exit.
	FaultExit
	// FaultClosed: the runtime or plugin was closed.
	FaultClosed
)

var faultNames = [...]string{
	FaultLoad:           "load",
	FaultTimeout:        "timeout",
	FaultCanceled:       "canceled",
	FaultTrap:           "trap",
	FaultMemory:         "memory",
	FaultOutputTooLarge: "output_too_large",
	FaultInputTooLarge:  "input_too_large",
	FaultErrorCode:      "error_code",
	FaultBadOutput:      "bad_output",
	FaultExit:           "exit",
	FaultClosed:         "closed",
}

func (k FaultKind) String() string {
	if int(k) < len(faultNames) && faultNames[k] != "" {
		return faultNames[k]
	}
	return "fault(" + strconv.Itoa(int(k)) + ")"
}

// Fault is a plugin failure. Its message names the plugin and the fault,
// e.g. `plugin "argguard": timeout after 50ms`; the pipeline uses it as the
// reason of the plugin's on_error verdict.
type Fault struct {
	Plugin string
	Kind   FaultKind
	// Msg is the text after `plugin "<name>": `.
	Msg string
	// Code is the guest's return code for FaultErrorCode, the exit code for
	// FaultExit.
	Code uint32
	Err  error
}

func (f *Fault) Error() string { return "plugin " + strconv.Quote(f.Plugin) + ": " + f.Msg }

func (f *Fault) Unwrap() error { return f.Err }

func (p *Plugin) fault(kind FaultKind, msg string, err error) *Fault {
	if kind == FaultTrap && p.mod != nil && p.mod.isCommand() {
		msg += commandHint
	}
	return &Fault{Plugin: p.name, Kind: kind, Msg: msg, Err: err}
}

// commandHint ends the message of a trap in a WASI command module. Go
// builds one without -buildmode=c-shared; its runtime then traps in every
// export ("wasmexport function called before runtime initialization", in
// the plugin log only), and a bare "unreachable" says nothing of the fix.
const commandHint = " (the module is a WASI command: it exports _start, not _initialize, so its runtime never started; " +
	"build Go plugins with -buildmode=c-shared, C ones with -mexec-model=reactor)"

// isCommand reports a module that exports _start and no _initialize. The
// host runs only _initialize (ABI.md section 1).
func (m *module) isCommand() bool {
	if m.hasInit {
		return false
	}
	for _, e := range m.exports {
		if e.Name == "_start" && e.Kind == "func" {
			return true
		}
	}
	return false
}
