package policy

import (
	"errors"
	"fmt"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// CodeInvalidArguments is the reason code for arguments that are refused
// before any rule runs.
const CodeInvalidArguments = "invalid_arguments"

// maxArgDepth bounds nesting in call arguments.
const maxArgDepth = 256

// CheckArguments validates a call's raw arguments: a JSON object (or
// nothing), well-formed, valid UTF-8 with no lone surrogate escape, nested
// at most maxArgDepth deep, and with no key twice in any object, nor two
// keys that differ only in case. Each of these is something readers
// disagree on, and the policy must read the call the server runs:
//
//   - a key twice: a plugin that takes the first "path" and a server that
//     takes the last would see different calls;
//   - keys that differ only in case ("path" and "PATH"): encoding/json
//     folds case when it decodes into a struct (Go plugins, mcp-go
//     servers), JavaScript and Python do not;
//   - a lone surrogate ("\ud800"): Go decodes it, and every invalid byte,
//     as U+FFFD, JavaScript keeps it, Rust's serde_json refuses it.
//
// Keys are compared after unescaping, so "a" and "\u0061" are the same key.
// The checks are rawjson.Validate's Strict rules; this adds that the
// arguments are an object (or nothing) and names them in the error.
func CheckArguments(raw []byte) error {
	i := rawjson.SkipSpace(raw, 0)
	if i == len(raw) {
		return nil // no arguments
	}
	if raw[i] != '{' {
		if len(raw)-i >= 4 && string(raw[i:i+4]) == "null" && rawjson.SkipSpace(raw, i+4) == len(raw) {
			return nil
		}
		return errors.New("arguments must be a JSON object")
	}
	end, err := rawjson.ValidateValue(raw, i, argRules)
	if err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	if j := rawjson.SkipSpace(raw, end); j != len(raw) {
		return fmt.Errorf("arguments: %w", &rawjson.Error{Offset: j, Msg: "unexpected data after the arguments object"})
	}
	return nil
}

// argRules are the rules for call arguments.
var argRules = rawjson.Rules{MaxDepth: maxArgDepth, Strict: true}
