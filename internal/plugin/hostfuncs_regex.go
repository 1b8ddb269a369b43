package plugin

import (
	"context"
	"regexp"
	"regexp/syntax"
	"strconv"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"
)

// Regular expressions from the host (pdk/ABI.md section 16): a guest
// compiles a pattern with Go's regexp, once, and matches it by handle, so
// every kit matches exactly as Go does. Compiled patterns belong to the
// instance and go with it.

// Bounds on what one instance may compile (pdk/ABI.md section 16).
const (
	maxRegexes             = 256
	maxRegexPattern        = 4 << 10
	maxRegexProgram        = 1 << 16
	regexErrRefused  int32 = -1 // the pattern: its syntax, its length or its size
	regexErrTooMany  int32 = -2 // the instance holds maxRegexes already
	regexErrNoEvent  int32 = -3 // called outside toolwarden_handle
	regexErrBadRegex int32 = -1 // regex_match: no pattern has this handle
)

// regexDirectWork is the largest program size times subject length matched
// in one uninterruptible call; a bigger match reads its subject through a
// reader that looks at the deadline, so that a slow match on a big subject
// ends with the event's deadline instead of long after it.
var regexDirectWork = 1 << 22

// regexTable is one instance's compiled patterns; handle h is list[h-1].
type regexTable struct {
	list []*regexp.Regexp
	size []int  // each pattern's program size
	err  string // the text of the last refused regex_compile
}

func hostRegexCompile(ctx context.Context, mod api.Module, stack []uint64) {
	in := instanceFrom(ctx)
	ptr, n := uint32(stack[0]), uint32(stack[1])
	if in == nil || !in.inEvent {
		stack[0] = i32Result(regexErrNoEvent)
		return
	}
	mem := mod.Memory()
	b, ok := mem.Read(ptr, n)
	if !ok {
		oob(importRegexCompile, ptr, n, mem)
	}
	h, msg := in.rx.compile(b)
	if msg != "" {
		in.rx.err = msg
	}
	stack[0] = i32Result(h)
}

// i32Result is a signed i32 result as wazero holds it on the stack.
func i32Result(v int32) uint64 { return uint64(uint32(v)) }

// compile returns a handle, or a negative code and why.
func (t *regexTable) compile(b []byte) (int32, string) {
	switch {
	case len(t.list) >= maxRegexes:
		return regexErrTooMany, "regex_compile: this instance holds " + strconv.Itoa(maxRegexes) +
			" patterns already, the most it may (compile patterns once, at configure, and keep their handles)"
	case len(b) > maxRegexPattern:
		return regexErrRefused, "regex_compile: pattern of " + strconv.Itoa(len(b)) + " bytes, over the bound of " +
			strconv.Itoa(maxRegexPattern)
	}
	pattern := string(b)
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return regexErrRefused, err.Error() // Go's text: "error parsing regexp: ..."
	}
	size := progSize(parsed)
	if size > maxRegexProgram {
		return regexErrRefused, "regex_compile: pattern too large: its program would pass " + strconv.Itoa(maxRegexProgram) +
			" instructions (counted repeats such as {1000} are expanded)"
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return regexErrRefused, err.Error()
	}
	t.list = append(t.list, re)
	t.size = append(t.size, size)
	return int32(len(t.list)), ""
}

// progSize is an upper bound on the instructions of re's program, counted
// before compiling it (so that a refused pattern costs nothing): a
// counted repeat counts its body as many times as it may run. It stops
// counting past maxRegexProgram.
func progSize(re *syntax.Regexp) int {
	sub := func() int {
		n := 0
		for _, s := range re.Sub {
			n = min(n+progSize(s), maxRegexProgram+1)
		}
		return n
	}
	switch re.Op {
	case syntax.OpLiteral:
		return max(len(re.Rune), 1)
	case syntax.OpConcat:
		return sub()
	case syntax.OpAlternate:
		return min(sub()+len(re.Sub), maxRegexProgram+1)
	case syntax.OpCapture:
		return min(sub()+2, maxRegexProgram+1)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return min(sub()+1, maxRegexProgram+1)
	case syntax.OpRepeat:
		times := re.Max
		if times < 0 {
			times = re.Min + 1
		}
		body := sub() + 1
		if times > 0 && body > (maxRegexProgram+1)/times {
			return maxRegexProgram + 1
		}
		return max(body*times, 1)
	}
	return 1
}

func hostRegexMatch(ctx context.Context, mod api.Module, stack []uint64) {
	in := instanceFrom(ctx)
	h, ptr, n := int32(uint32(stack[0])), uint32(stack[1]), uint32(stack[2])
	if in == nil || !in.inEvent {
		stack[0] = i32Result(regexErrNoEvent)
		return
	}
	mem := mod.Memory()
	b, ok := mem.Read(ptr, n)
	if !ok {
		oob(importRegexMatch, ptr, n, mem)
	}
	if h <= 0 || int(h) > len(in.rx.list) {
		stack[0] = i32Result(regexErrBadRegex)
		return
	}
	re := in.rx.list[h-1]
	var m bool
	if in.rx.size[h-1]*len(b) <= regexDirectWork {
		m = re.Match(b)
	} else {
		m = re.MatchReader(&deadlineRunes{b: b, in: in})
	}
	stack[0] = 0
	if m {
		stack[0] = 1
	}
}

// deadlineRunes reads a subject as Go's regexp reads a []byte (an invalid
// byte is one U+FFFD) and traps once the event's deadline has fired, so a
// long match cannot hold the instance past its deadline. The guest's own
// checks cannot run while the host matches.
type deadlineRunes struct {
	b  []byte
	i  int
	n  int
	in *instance
}

func (r *deadlineRunes) ReadRune() (rune, int, error) {
	if r.i >= len(r.b) {
		return 0, 0, errEndOfSubject
	}
	if r.n++; r.n&1023 == 0 && r.in.fired.Load() {
		panic(&hostTrap{msg: importRegexMatch + ": the event's deadline passed during the match"})
	}
	c, size := rune(r.b[r.i]), 1
	if c >= utf8.RuneSelf {
		c, size = utf8.DecodeRune(r.b[r.i:])
	}
	r.i += size
	return c, size, nil
}

type endOfSubject struct{}

func (endOfSubject) Error() string { return "end of subject" }

var errEndOfSubject error = endOfSubject{}

func hostRegexError(ctx context.Context, mod api.Module, stack []uint64) {
	in := instanceFrom(ctx)
	dst, c := uint32(stack[0]), int32(uint32(stack[1]))
	if in == nil {
		stack[0] = 0
		return
	}
	msg := in.rx.err
	n := min(max(int(c), 0), len(msg))
	if n > 0 {
		mem := mod.Memory()
		if !mem.WriteString(dst, msg[:n]) {
			oob(importRegexError, dst, uint32(n), mem)
		}
	}
	stack[0] = uint64(uint32(len(msg)))
}
