package plugin

import (
	"errors"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// Guest output is read with rawjson's pull reader, nested at most
// maxDepth deep, and checked whole with rawjson.Validate at the same depth.

const maxDepth = 256

var errNotJSON = errors.New("not valid JSON")

// newReader reads one output document.
func newReader(out []byte) rawjson.Reader { return rawjson.NewReader(out, maxDepth) }

// validJSON reports whether b is exactly one valid JSON value, nested no
// deeper than the reader reads (maxDepth).
func validJSON(b []byte) bool { return rawjson.Validate(b, outputRules) == nil }

var outputRules = rawjson.Rules{MaxDepth: maxDepth}
