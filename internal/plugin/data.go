package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/toolwarden/toolwarden/internal/config"
)

// Policy data files (pdk/ABI.md section 13): [policies.<name>] data =
// "hosts.json" is read once per load of the plugin (and again at a
// reload), and handed to each instance once, in the init event, before its
// first other event. Allow-lists and host lists then cost nothing per
// event and are not bound by the 1 MiB cap of event inputs.

// DataError is a policy data file that cannot be used: missing, too big,
// or not JSON. Line and Col point into the data file when the JSON is bad.
type DataError struct {
	Path      string
	Line, Col int
	Msg       string
}

func (e *DataError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("data file %s:%d:%d: %s", e.Path, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("data file %s: %s", e.Path, e.Msg)
}

// ReadData reads and checks a policy's data file: at most
// config.MaxPolicyData bytes of valid JSON. It returns nil for no file.
func ReadData(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &DataError{Path: path, Msg: "no such file: create it, or remove the policy's data key"}
		}
		return nil, &DataError{Path: path, Msg: err.Error()}
	}
	defer f.Close()
	b := make([]byte, 0, 4096)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if len(b) > config.MaxPolicyData {
			return nil, &DataError{Path: path, Msg: "over " + strconv.Itoa(config.MaxPolicyData>>20) + " MiB: a data file is read into every instance; keep it small"}
		}
		if err != nil {
			break
		}
	}
	if err := json.Unmarshal(b, new(json.RawMessage)); err != nil {
		de := &DataError{Path: path, Msg: "not JSON: " + err.Error()}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Offset counts the offending byte: point at it.
			de.Line, de.Col = lineCol(b, max(int(se.Offset)-1, 0))
		} else {
			de.Line, de.Col = lineCol(b, len(b))
		}
		return nil, de
	}
	return bytes.TrimSpace(b), nil
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(b []byte, off int) (int, int) {
	off = min(off, len(b))
	line := 1 + bytes.Count(b[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(b[:off], '\n')
	return line, max(col, 1)
}

// wantsInit reports whether instances get the init event: the plugin
// listed "init" in describe.
func (p *Plugin) wantsInit() bool { return p.events&(1<<EventInit) != 0 }

// initInstance sends the init event (the data file, or null) to a fresh
// instance, under the init deadline.
func (in *instance) initInstance(ctx context.Context) error {
	p := in.p
	b := append(in.buf[:0], p.head[EventInit]...)
	b = append(b, `,"data":`...)
	if p.data == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, p.data...)
	}
	in.buf = append(b, p.tail...)
	p.inits.Add(1)
	out, code, f := in.callWithin(ctx, EventInit, in.buf, p.initTimeout)
	if f != nil {
		return fmt.Errorf("init: %s", f.Msg)
	}
	if code != CodeOK && code != CodeNotHandled {
		return fmt.Errorf("init: %s", codeMessage(code, out))
	}
	return nil
}

// inputLimit is the largest input of an event: init carries the data file.
func inputLimit(ev Event) int {
	if ev == EventInit {
		return maxInput + config.MaxPolicyData
	}
	return maxInput
}
