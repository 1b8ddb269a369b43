package plugin

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"
)

// The three functions of the "toolwarden" host module (pdk/ABI.md section 2).
// They find the instance they serve through the context: during an event it
// is the instance's own *callCtx; during instantiation a context value.

type stateKey struct{}

func instanceFrom(ctx context.Context) *instance {
	if c, ok := ctx.(*callCtx); ok {
		return c.in
	}
	in, _ := ctx.Value(stateKey{}).(*instance)
	return in
}

// hostTrap is raised (as a panic, which wazero turns into a trap) when a
// guest passes a pointer outside its memory.
type hostTrap struct{ msg string }

func (t *hostTrap) Error() string { return t.msg }

func oob(fn string, ptr, n uint32, mem api.Memory) {
	panic(&hostTrap{msg: fn + ": [" + strconv.FormatUint(uint64(ptr), 10) + ", +" +
		strconv.FormatUint(uint64(n), 10) + ") is outside guest memory (" +
		strconv.FormatUint(uint64(mem.Size()), 10) + " bytes)"})
}

func hostInputRead(ctx context.Context, mod api.Module, stack []uint64) {
	in := instanceFrom(ctx)
	dst, n := uint32(stack[0]), int32(uint32(stack[1]))
	if in == nil || !in.inEvent || n <= 0 {
		stack[0] = 0
		return
	}
	rem := len(in.input) - in.cursor
	if int(n) > rem {
		n = int32(rem)
	}
	if n == 0 {
		stack[0] = 0
		return
	}
	mem := mod.Memory()
	if !mem.Write(dst, in.input[in.cursor:in.cursor+int(n)]) {
		oob(importRead, dst, uint32(n), mem)
	}
	in.cursor += int(n)
	stack[0] = uint64(uint32(n))
}

func hostOutputWrite(ctx context.Context, mod api.Module, stack []uint64) {
	in := instanceFrom(ctx)
	src, n := uint32(stack[0]), uint32(stack[1])
	if in == nil || !in.inEvent {
		stack[0] = writeNoEvent
		return
	}
	mem := mod.Memory()
	b, ok := mem.Read(src, n)
	if !ok {
		oob(importWrite, src, n, mem)
	}
	if in.tooLarge || uint64(len(in.out))+uint64(n) > uint64(in.p.maxOutput) {
		in.tooLarge = true
		stack[0] = writeTooLarge
		return
	}
	// Read returns a view of guest memory; append copies it.
	in.out = append(in.out, b...)
	stack[0] = writeOK
}

func hostLog(ctx context.Context, mod api.Module, stack []uint64) {
	in := instanceFrom(ctx)
	level, ptr, n := int32(uint32(stack[0])), uint32(stack[1]), uint32(stack[2])
	mem := mod.Memory()
	b, ok := mem.Read(ptr, n)
	if !ok {
		oob(importLog, ptr, n, mem)
	}
	if in != nil {
		in.logMsg(level, b)
	}
}

// Log caps (pdk/ABI.md section 2.3).
const (
	maxLogMsg   = 1024
	maxLogCount = 32
)

var logLevels = [...]slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}

func (in *instance) logMsg(level int32, b []byte) {
	in.logs++
	if in.logs > maxLogCount {
		in.dropped++
		return
	}
	if level < 0 {
		level = 0
	}
	if level > 3 {
		level = 3
	}
	if len(b) > maxLogMsg {
		b = b[:maxLogMsg]
	}
	msg := string(b)
	if !utf8.ValidString(msg) {
		msg = strings.ToValidUTF8(msg, "\uFFFD")
	}
	in.p.log.Log(context.Background(), logLevels[level], msg, "plugin", in.p.name)
}

// flushLogs reports dropped messages and resets the per-event counters.
func (in *instance) flushLogs() {
	if in.dropped > 0 {
		in.p.log.Warn("plugin log messages dropped", "plugin", in.p.name, "dropped", in.dropped)
	}
	in.logs, in.dropped = 0, 0
}

// lineWriter turns a WASI stdout or stderr stream into capped log lines.
type lineWriter struct {
	in    *instance
	level int32
	buf   []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := maxLogMsg - len(w.buf)
			if room > 0 {
				w.buf = append(w.buf, p[:min(room, len(p))]...)
			}
			break
		}
		w.buf = append(w.buf, p[:min(i, max(0, maxLogMsg-len(w.buf)))]...)
		w.in.logMsg(w.level, w.buf)
		w.buf = w.buf[:0]
		p = p[i+1:]
	}
	return n, nil
}
