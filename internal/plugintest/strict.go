package plugintest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/toolwarden/toolwarden/internal/config"
)

// A case file is checked key by key before it is decoded: encoding/json
// ignores an unknown key ("decison" would check nothing) and matches keys
// without regard to case, so a typo would pass silently.

// shape says which keys an object may hold.
type shape struct {
	keys map[string]*shape
	// elem is the shape of an array's elements (nil: anything).
	elem *shape
	// values is the shape of every member's value, for maps whose keys are
	// free (expand's markers).
	values *shape
	// open marks an input envelope part. The ABI tells plugins to ignore
	// keys they do not know, so tests send such keys on purpose ("future"):
	// an unknown key is an error only when it is a near miss of a key the
	// ABI defines ("argument" for "arguments").
	open bool
}

func obj(keys map[string]*shape) *shape { return &shape{keys: keys} }

func envelope(keys map[string]*shape) *shape { return &shape{keys: keys, open: true} }

// free is any value: free text, config, arguments, whole inputs.
var free = (*shape)(nil)

var hintsShape = envelope(map[string]*shape{
	"readOnlyHint": free, "destructiveHint": free, "idempotentHint": free, "openWorldHint": free,
	"sensitiveDataHint": free, "privilegedAccessHint": free, "reversibleHint": free,
	"slowExecutionHint": free, "resourceIntensiveHint": free, "aiProcessingHint": free,
	"reads_private_data": free, "sees_untrusted_content": free, "can_exfiltrate": free,
})

var callShape = envelope(map[string]*shape{
	"capabilities": envelope(map[string]*shape{"reads_private_data": free, "sees_untrusted_content": free, "can_exfiltrate": free}),
	"hints":        hintsShape,
	"server":       free, "app": free, "connector": free,
	"tool":      envelope(map[string]*shape{"name": free, "title": free, "definition_hash": free}),
	"arguments": free,
})

var stateShape = obj(map[string]*shape{"counters": free, "entries": free})

var expectShape = obj(map[string]*shape{
	"decision": free, "code": free, "remember": free, "reason_contains": free, "labels": free,
	"session_labels": free, "hide": free, "not_handled": free, "error": free,
	"reason": free, "arguments": free, "scopes": {elem: obj(map[string]*shape{"arg": free, "glob": free, "regex": free})},
	"state":    stateShape,
	"describe": obj(map[string]*shape{"name": free, "version": free, "events": free}),
})

// partShapes are the envelope parts a case or a step may give.
func partShapes() map[string]*shape {
	return map[string]*shape{
		"event":    free,
		"call":     callShape,
		"baseline": envelope(map[string]*shape{"decision": free, "mode": free, "rememberable": free}),
		"result":   envelope(map[string]*shape{"is_error": free, "text": free}),
		"server":   free,
		"app":      free,
		"tools": {elem: envelope(map[string]*shape{
			"name": free, "title": free, "definition_hash": free, "hints": hintsShape, "declared_hints": hintsShape,
		})},
		"time":   free,
		"extra":  free,
		"expect": expectShape,
	}
}

var fileShape = func() *shape {
	step := partShapes()
	step["name"] = free
	c := partShapes()
	for k, v := range map[string]*shape{
		"name": free, "input": free, "input_text": free,
		"session": envelope(map[string]*shape{"id": free, "labels": free}),
		"expand":  {values: obj(map[string]*shape{"repeat": free, "times": free})},
		"steps":   {elem: obj(step)},
		"state":   stateShape,
		"config":  free, "load_error": free,
	} {
		c[k] = v
	}
	return obj(map[string]*shape{
		"description": free,
		"plugin":      obj(map[string]*shape{"name": free, "config": free}),
		"cases":       {elem: obj(c)},
		"load_error":  free,
	})
}()

// KeyError is an unknown or repeated key in a case file.
type KeyError struct {
	File      string
	Line, Col int
	// Path is where the object sits: `cases[2].expect`.
	Path string
	Key  string
	// Suggest is the known key it is closest to, if any.
	Suggest string
	// Duplicate is set for a key given twice in one object.
	Duplicate bool
}

func (e *KeyError) Error() string {
	where := fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Path)
	if e.Duplicate {
		return fmt.Sprintf("%s: key %q given twice (only one would count)", where, e.Key)
	}
	msg := fmt.Sprintf("%s: unknown key %q", where, e.Key)
	if e.Suggest != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", e.Suggest)
	}
	return msg
}

// checkKeys walks a case file and returns every unknown or repeated key,
// with its line and column.
func checkKeys(file string, raw []byte) error {
	w := walker{file: file, raw: raw, dec: json.NewDecoder(bytes.NewReader(raw))}
	w.dec.UseNumber()
	if err := w.value(fileShape, ""); err != nil {
		return err
	}
	return errors.Join(w.errs...)
}

type walker struct {
	file string
	raw  []byte
	dec  *json.Decoder
	errs []error
}

// value reads one value of the given shape.
func (w *walker) value(s *shape, path string) error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		return w.object(s, path)
	case json.Delim('['):
		var elem *shape
		if s != nil {
			elem = s.elem
		}
		for i := 0; w.dec.More(); i++ {
			if err := w.value(elem, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		_, err := w.dec.Token() // ]
		return err
	}
	return nil
}

func (w *walker) object(s *shape, path string) error {
	seen := map[string]bool{}
	for w.dec.More() {
		at := w.keyStart(w.dec.InputOffset())
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var sub *shape
		known := true
		if s != nil {
			switch {
			case s.values != nil:
				sub = s.values
			case s.keys != nil:
				sub, known = s.keys[key]
			}
		}
		child := key
		if path != "" {
			child = path + "." + key
		}
		if s != nil && (s.keys != nil || s.values != nil) {
			if seen[key] {
				w.report(at, path, key, "", true)
			}
			seen[key] = true
		}
		if !known {
			hint := closest(key, s.keys)
			if !s.open || hint != "" {
				w.report(at, path, key, hint, false)
			}
		}
		if err := w.value(sub, child); err != nil {
			return err
		}
	}
	_, err := w.dec.Token() // }
	return err
}

// keyStart finds the opening quote of the key after off (the decoder's
// offset sits before the separator and white space).
func (w *walker) keyStart(off int64) int {
	i := int(off)
	for i < len(w.raw) && strings.IndexByte(" \t\r\n,{", w.raw[i]) >= 0 {
		i++
	}
	return i
}

func (w *walker) report(at int, path, key, hint string, dup bool) {
	line, col := position(w.raw, at)
	if path == "" {
		path = "(top level)"
	}
	w.errs = append(w.errs, &KeyError{File: w.file, Line: line, Col: col, Path: path, Key: key, Suggest: hint, Duplicate: dup})
}

// position is the 1-based line and column (in bytes) of offset at.
func position(raw []byte, at int) (line, col int) {
	at = max(0, min(at, len(raw)))
	before := raw[:at]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = at - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// closest is the known key that key most likely misspells, or "": the
// did-you-mean of config diagnostics, so both name a near miss alike.
func closest(key string, known map[string]*shape) string {
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	sort.Strings(names)
	return config.Suggest(key, names)
}

// checkSyntax checks that raw is one JSON value and nothing else. Text
// after the value is an error at its position.
func checkSyntax(file string, raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	off := int(dec.InputOffset())
	for off < len(raw) && strings.IndexByte(" \t\r\n", raw[off]) >= 0 {
		off++
	}
	if off < len(raw) {
		line, col := position(raw, off)
		return fmt.Errorf("%s:%d:%d: text after the top-level object", file, line, col)
	}
	return nil
}

// decodeStrict decodes a checked file into v, rejecting what is left over.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("text after the top-level object")
	}
	return nil
}
