package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// What a prompt shows of a call's arguments. Every value gets a line
// (nested values by their path, "options/url"), flagged ones first; long
// values are cut one by one, never the whole block, so no key can push
// another out of sight. The bounds keep a prompt readable and its size
// finite; when they would hide a key or cut a flagged value, the view says
// so (Incomplete) and the prompt gives up remembering.
const (
	// MaxValueShown bounds the bytes shown of one value nobody flagged.
	MaxValueShown = 256
	// MaxFlaggedValueShown bounds the bytes shown of one flagged value.
	MaxFlaggedValueShown = 2048
	// MaxPathShown bounds the bytes shown of one value's path.
	MaxPathShown = 512
	// MaxLinesShown bounds the lines of values nobody flagged. Top-level
	// keys always get one: nested values give way to them first.
	MaxLinesShown = 120
	// MaxFlaggedLinesShown bounds the lines of flagged values.
	MaxFlaggedLinesShown = 64
)

// ArgumentLine is one value as a prompt shows it.
type ArgumentLine struct {
	// Path names the value: a top-level key, or keys and array indexes
	// joined by '/'. A key that is not plain ASCII ([A-Za-z0-9_.-]+) is
	// quoted, escaped like Value.
	Path string
	// Value is the value as JSON would spell it, on one line: every
	// character that is not printable (newlines, bidi controls, lone
	// surrogates) is shown as its escape. A cut string lacks its closing
	// quote and ends in "…". "(absent)" marks a flagged argument the call
	// does not have; "(N values not shown)" stands for values left out.
	Value string
	// Cut is how many bytes of the value (as sent) are not shown.
	Cut int
	// Flagged says a plugin's verdict named this value (or a container
	// holding it).
	Flagged bool
}

// ArgumentsView is a call's arguments as a prompt shows them. Build one
// with ViewArguments.
type ArgumentsView struct {
	Lines []ArgumentLine
	// Bytes is the size of the arguments as sent.
	Bytes int
	// Digest is the SHA-256 of the arguments exactly as sent (and as
	// forwarded), in lower-case hex.
	Digest string
	// Cut is the bytes cut over all values, CutValues how many values were.
	Cut, CutValues int
	// Hidden counts values (leaves: scalars and empty containers) with no
	// line of their own.
	Hidden int
	// Incomplete says why the view cannot show what a decision on it
	// decides on: a key hidden, a flagged value or a path cut, arguments
	// that are not a JSON object. Empty when it can. Cutting a value nobody
	// flagged leaves a view complete: its key and its start are shown, and
	// the digest names the whole.
	Incomplete string
}

// ViewArguments renders raw arguments for a prompt, flagged arguments (top
// level names or JSON pointers, as in Decision.Flagged) first. It accepts
// anything; what CheckArguments refuses is shown as one cut raw line and
// the view is incomplete.
func ViewArguments(raw []byte, flagged []string) ArgumentsView {
	v := ArgumentsView{Bytes: len(raw)}
	sum := sha256.Sum256(raw)
	v.Digest = hex.EncodeToString(sum[:])
	w := viewer{raw: raw, build: true, v: &v}
	if err := CheckArguments(raw); err != nil {
		buf, stop := appendText(nil, string(raw), MaxValueShown)
		cut := len(raw) - stop
		v.Lines = []ArgumentLine{{Path: "(raw)", Value: string(buf) + ellipsisIf(cut > 0), Cut: cut}}
		if cut > 0 {
			v.Cut, v.CutValues = cut, 1
		}
		v.Incomplete = "the arguments cannot be read as keys and values (" + err.Error() + ")"
		return v
	}
	w.run(flagged)
	return v
}

// argumentsIncomplete is ViewArguments(raw, flagged).Incomplete for
// arguments that passed CheckArguments, without building any text: the
// pipeline asks it on every ask.
func argumentsIncomplete(raw []byte, flagged []string) string {
	if len(raw) <= smallArguments {
		return ""
	}
	var v ArgumentsView
	w := viewer{raw: raw, v: &v}
	w.run(flagged)
	return v.Incomplete
}

// smallArguments is a size no valid arguments object can exceed a bound
// within: a value shows as at most 4 bytes per byte sent (an escaped
// character), so 64 bytes stay under MaxValueShown, MaxPathShown and
// MaxLinesShown. Most calls are this small; they skip the walk.
const smallArguments = MaxValueShown / 4

// ShortDigest is the first 16 hex digits of the digest, as prompts show it.
func (v *ArgumentsView) ShortDigest() string {
	if len(v.Digest) < 16 {
		return v.Digest
	}
	return v.Digest[:16]
}

// Text renders the view as a block: a header with the size, the digest and
// what was cut, then one line per value, flagged ones first and marked
// with "*".
func (v *ArgumentsView) Text() string {
	var b strings.Builder
	b.WriteString("Arguments (")
	b.WriteString(strconv.Itoa(v.Bytes))
	b.WriteString(" bytes, sha256 ")
	b.WriteString(v.ShortDigest())
	if v.CutValues > 0 {
		b.WriteString("; ")
		b.WriteString(strconv.Itoa(v.Cut))
		b.WriteString(" bytes cut from ")
		b.WriteString(plural(v.CutValues, "value"))
	}
	if v.Hidden > 0 {
		b.WriteString("; ")
		b.WriteString(plural(v.Hidden, "value"))
		b.WriteString(" not shown")
	}
	flagged := false
	for i := range v.Lines {
		flagged = flagged || v.Lines[i].Flagged
	}
	if flagged {
		b.WriteString("; * = flagged by a policy, shown first")
	}
	b.WriteString(")")
	if len(v.Lines) == 0 {
		b.WriteString(": none")
	} else {
		b.WriteString(":")
	}
	for _, l := range v.Lines {
		if l.Flagged {
			b.WriteString("\n  * ")
		} else {
			b.WriteString("\n    ")
		}
		b.WriteString(l.Path)
		b.WriteString(" = ")
		b.WriteString(l.Value)
		if l.Cut > 0 {
			b.WriteString(" [")
			b.WriteString(strconv.Itoa(l.Cut))
			b.WriteString(" more bytes not shown]")
		}
	}
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func ellipsisIf(b bool) string {
	if b {
		return "…"
	}
	return ""
}

// OneLine escapes s for a one-line field of a prompt: every character that
// is not printable (newlines included) is shown as its escape, so text
// from a server or a plugin cannot start a line of its own.
func OneLine(s string) string {
	clean := true
	for _, r := range s {
		if r == '\\' || r == utf8.RuneError || !printable(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	b, _ := appendText(nil, s, len(s)*12)
	return string(b)
}

// viewer walks validated arguments once for the flagged values and once in
// document order, counting lines against the bounds.
type viewer struct {
	raw   []byte
	build bool // make lines (ViewArguments) or only count (the pipeline)
	v     *ArgumentsView

	path []pathSeg
	// flaggedAt are the start offsets of flagged values already shown:
	// the document walk skips them, and so does a flagged container that
	// holds one.
	flaggedAt []int
	shown     []string // flagged pointers handled

	docLines, flagLines int
	pendingTop          int  // top-level keys after the current one still owed a line
	topOnly             bool // more top-level keys than lines: no nested lines at all
	flaggedCut          string
	pathCut             bool
	scratch             []byte
}

// pathSeg is one step of a value's path: an object key (its span inside
// the quotes) or an array index.
type pathSeg struct {
	a, b  int
	index int // -1 for a key
	name  string
	named bool // a flagged pointer's segment that is not in the arguments
}

// stepSeg is the path step of the member or element it is at.
func stepSeg(it *rawjson.Iter) pathSeg {
	if it.Array {
		return pathSeg{index: it.Index}
	}
	return pathSeg{a: it.KeyStart, b: it.KeyEnd, index: -1}
}

// subtree is the state of rendering one top-level or flagged value.
type subtree struct {
	flagged   bool
	collapsed bool // out of lines: the rest is counted, not shown
	hidden    int
	depth     int // path length at the subtree's root
}

func (w *viewer) run(flagged []string) {
	i := w.ws(0)
	if i == len(w.raw) || w.raw[i] != '{' {
		return // no arguments (or null): nothing to show
	}
	for _, f := range flagged {
		w.flag(i, f)
	}
	w.document(i)
	w.finish()
}

func (w *viewer) finish() {
	var why []string
	if w.flaggedCut != "" {
		why = append(why, "the flagged argument "+w.flaggedCut+" is too long to show in full")
	}
	if w.v.Hidden > 0 {
		why = append(why, plural(w.v.Hidden, "value")+" not shown (too many keys)")
	}
	if w.pathCut {
		why = append(why, "a key path is too long to show in full")
	}
	w.v.Incomplete = strings.Join(why, "; ")
}

// flag shows one flagged argument, unless an earlier one covered it.
func (w *viewer) flag(root int, name string) {
	ptr := ArgumentPointer(name)
	for _, s := range w.shown {
		if s == ptr {
			return
		}
	}
	w.shown = append(w.shown, ptr)
	segs := pointerSegments(ptr)
	w.path = w.path[:0]
	at, ok := w.resolve(root, segs)
	if !ok {
		w.path = w.path[:0]
		for _, s := range segs {
			w.path = append(w.path, pathSeg{index: -1, name: s, named: true})
		}
		// Nothing of the call is hidden by cutting a name it lacks.
		cut := w.pathCut
		w.line(-1, -1, "(absent)", true)
		w.pathCut = cut
		return
	}
	for _, f := range w.flaggedAt {
		if f <= at && at < w.skip(f) {
			return // inside a flagged value already shown
		}
	}
	w.flaggedAt = append(w.flaggedAt, at)
	st := subtree{flagged: true, depth: len(w.path)}
	w.value(at, &st)
	w.close(&st)
}

// resolve finds the value a pointer names, leaving its path in w.path.
func (w *viewer) resolve(i int, segs []string) (int, bool) {
	for _, seg := range segs {
		i = w.ws(i)
		switch w.raw[i] {
		case '{':
			found := false
			for it := rawjson.Walk(w.raw, i); it.Next(); {
				if rawjson.KeyIs(w.raw[it.KeyStart:it.KeyEnd], seg) {
					w.path = append(w.path, stepSeg(&it))
					i, found = it.Value, true
					break
				}
			}
			if !found {
				return 0, false
			}
		case '[':
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || strconv.Itoa(n) != seg {
				return 0, false
			}
			found := false
			for it := rawjson.Walk(w.raw, i); it.Next(); {
				if it.Index == n {
					w.path = append(w.path, stepSeg(&it))
					i, found = it.Value, true
					break
				}
			}
			if !found {
				return 0, false
			}
		default:
			return 0, false
		}
	}
	return w.ws(i), true
}

// document shows every value not shown as flagged, in the caller's order.
func (w *viewer) document(root int) {
	for it := rawjson.Walk(w.raw, root); it.Next(); {
		if !w.isFlagged(it.Value) {
			w.pendingTop++
		}
	}
	w.topOnly = w.pendingTop > MaxLinesShown
	hiddenTop := 0
	for it := rawjson.Walk(w.raw, root); it.Next(); {
		if w.isFlagged(it.Value) {
			continue
		}
		w.pendingTop--
		if w.topOnly && w.docLines >= MaxLinesShown-1 {
			hiddenTop++
			n, end := w.leaves(it.Value)
			it.Resume(end)
			w.v.Hidden += n
			continue
		}
		w.path = append(w.path[:0], stepSeg(&it))
		st := subtree{depth: 1}
		it.Resume(w.value(it.Value, &st))
		w.close(&st)
	}
	if hiddenTop > 0 {
		w.path = append(w.path[:0], pathSeg{index: -1, name: "…", named: true})
		w.line(-1, -1, "("+plural(hiddenTop, "more top-level key")+" not shown)", false)
	}
}

// value shows the value at i, under w.path, and returns its end. Each
// byte is read once however deep it sits: a walk that skipped each
// subtree again after showing it would cost a call's size times its depth.
func (w *viewer) value(i int, st *subtree) int {
	i = w.ws(i)
	c := w.raw[i]
	if c != '{' && c != '[' || w.empty(i) {
		if st.collapsed || len(w.path) > st.depth && !w.allow(st) {
			st.collapsed = true
			st.hidden++
			return w.skip(i)
		}
		return w.leaf(i, st.flagged)
	}
	it := rawjson.Walk(w.raw, i)
	for it.Next() {
		switch {
		case w.isFlagged(it.Value): // shown among the flagged; Next skips it
		case st.collapsed:
			n, end := w.leaves(it.Value)
			it.Resume(end)
			st.hidden += n
		default:
			w.path = append(w.path, stepSeg(&it))
			it.Resume(w.value(it.Value, st))
			w.path = w.path[:len(w.path)-1]
		}
	}
	return it.End()
}

// allow says whether one more nested line fits, keeping a line for the
// subtree's summary and one for every top-level key still to come.
func (w *viewer) allow(st *subtree) bool {
	if st.flagged {
		return w.flagLines+2 <= MaxFlaggedLinesShown
	}
	return !w.topOnly && w.docLines+2+w.pendingTop <= MaxLinesShown
}

// close ends a subtree: what did not fit becomes one summary line under
// its root's path.
func (w *viewer) close(st *subtree) {
	if st.hidden == 0 {
		return
	}
	w.v.Hidden += st.hidden
	w.path = w.path[:st.depth]
	w.line(-1, -1, "("+plural(st.hidden, "value")+" not shown)", st.flagged)
}

// leaf shows one scalar or empty container and returns its end.
func (w *viewer) leaf(i int, flagged bool) int {
	budget := MaxValueShown
	if flagged {
		budget = MaxFlaggedValueShown
	}
	buf := w.scratch[:0]
	cut, next := 0, 0
	switch w.raw[i] {
	case '"':
		next = rawjson.Skip(w.raw, i)
		end := next - 1 // the closing quote
		buf = append(buf, '"')
		var stop int
		buf, stop = appendJSONString(buf, w.raw, i+1, end, budget)
		if cut = end - stop; cut > 0 {
			buf = append(buf, "…"...)
		} else {
			buf = append(buf, '"')
		}
	case '{', '[':
		buf = append(buf, w.raw[i])
		buf = append(buf, w.raw[i]+2) // '}' and ']' follow their openers by 2
		next = w.skip(i)
	default:
		next = rawjson.Skip(w.raw, i)
		n := min(next-i, budget)
		buf = append(buf, w.raw[i:i+n]...)
		if cut = next - i - n; cut > 0 {
			buf = append(buf, "…"...)
		}
	}
	w.scratch = buf
	if cut > 0 {
		w.v.Cut += cut
		w.v.CutValues++
		if flagged && w.flaggedCut == "" {
			w.flaggedCut = w.pointer()
		}
	}
	w.line(i, cut, "", flagged)
	return next
}

// line adds a line for w.path: the value just rendered into w.scratch, or
// text.
func (w *viewer) line(i, cut int, text string, flagged bool) {
	if flagged {
		w.flagLines++
	} else {
		w.docLines++
	}
	value := text
	if i >= 0 && w.build {
		value = string(w.scratch)
	}
	path, ok := w.pathText()
	if !ok {
		w.pathCut = true
	}
	if w.build {
		w.v.Lines = append(w.v.Lines, ArgumentLine{Path: path, Value: value, Cut: max(cut, 0), Flagged: flagged})
	}
}

// pathText renders w.path, cut at MaxPathShown; ok is false when cut.
func (w *viewer) pathText() (string, bool) {
	var buf []byte
	if w.build {
		buf = make([]byte, 0, 32)
	} else {
		buf = w.scratch[:0]
	}
	ok := true
	for n, s := range w.path {
		if n > 0 {
			buf = append(buf, '/')
		}
		start := len(buf)
		whole := true
		switch {
		case s.named:
			var stop int
			buf, stop = appendText(buf, s.name, MaxPathShown)
			whole = stop == len(s.name)
		case s.index >= 0:
			buf = strconv.AppendInt(buf, int64(s.index), 10)
		default:
			var stop int
			buf, stop = appendJSONString(buf, w.raw, s.a, s.b, MaxPathShown)
			whole = stop == s.b
		}
		if !plain(buf[start:]) && !(s.named && s.name == "…") {
			buf = append(buf[:start], append([]byte{'"'}, append(buf[start:], '"')...)...)
		}
		if !whole || len(buf) > MaxPathShown {
			ok = false
			buf = append(buf[:min(len(buf), MaxPathShown)], "…"...)
			break
		}
	}
	if !w.build {
		w.scratch = buf[:0]
		return "", ok
	}
	return string(buf), ok
}

// pointer is w.path as a JSON pointer, for the reason a view is incomplete.
func (w *viewer) pointer() string {
	var b strings.Builder
	for _, s := range w.path {
		b.WriteByte('/')
		switch {
		case s.named:
			b.WriteString(pointerEscaper.Replace(s.name))
		case s.index >= 0:
			b.WriteString(strconv.Itoa(s.index))
		default:
			k, ok := rawjson.String(w.raw[s.a-1 : s.b+1])
			if !ok {
				k = string(w.raw[s.a:s.b])
			}
			b.WriteString(pointerEscaper.Replace(k))
		}
	}
	return OneLine(b.String())
}

func plain(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

func (w *viewer) isFlagged(i int) bool {
	i = w.ws(i)
	for _, f := range w.flaggedAt {
		if f == i {
			return true
		}
	}
	return false
}

func (w *viewer) ws(i int) int { return rawjson.SkipSpace(w.raw, i) }

func (w *viewer) empty(i int) bool {
	j := w.ws(i + 1)
	return j < len(w.raw) && (w.raw[j] == '}' || w.raw[j] == ']')
}

// skip returns the end of the value at i (white space skipped).
func (w *viewer) skip(i int) int {
	if i = w.ws(i); i >= len(w.raw) {
		return i
	}
	return rawjson.Skip(w.raw, i)
}

// leaves counts the scalars and empty containers in the value at i, and
// returns its end.
func (w *viewer) leaves(i int) (n, end int) {
	i = w.ws(i)
	if c := w.raw[i]; c != '{' && c != '[' || w.empty(i) {
		return 1, w.skip(i)
	}
	it := rawjson.Walk(w.raw, i)
	for it.Next() {
		k, end := w.leaves(it.Value)
		it.Resume(end)
		n += k
	}
	return n, it.End()
}

// appendJSONString appends the display form of the JSON string whose
// content (inside the quotes) is raw[a:b]: escapes decoded, then anything
// not printable escaped again, so that the text stays on one line and two
// different strings never look the same (a lone surrogate stays "\ud800").
// It stops before going over budget bytes and returns where in raw it
// stopped (b when it showed everything).
func appendJSONString(dst, raw []byte, a, b, budget int) ([]byte, int) {
	start := len(dst)
	var tmp [16]byte
	for i := a; i < b; {
		room := budget - (len(dst) - start)
		if j := plainRun(raw, i, min(b, i+room+1)); j > i { // printable ASCII shows as sent
			if j-i > room {
				return append(dst, raw[i:i+room]...), i + room
			}
			dst = append(dst, raw[i:j]...)
			i = j
			continue
		}
		t := tmp[:0]
		u, n := rawjson.DecodeUnit(raw[:b], i)
		switch {
		case u.Malformed: // not in valid JSON: show the byte, go on
			u.R, n = rune(raw[i]), 1
			t = appendRune(t, u.R)
		case u.Invalid:
			t = append(t, '\\', 'x', hexDigit[u.R>>4], hexDigit[u.R&15])
		case u.R >= 0xD800 && u.R < 0xE000: // lone surrogate: show the escape as sent, in one spelling
			t = appendU(t, u.R)
		default:
			t = appendRune(t, u.R)
		}
		if len(dst)-start+len(t) > budget {
			return dst, i
		}
		dst = append(dst, t...)
		i += n
	}
	return dst, b
}

// plainRun is the end of the run of printable ASCII other than '"' and
// '\\' that starts at i.
func plainRun(raw []byte, i, b int) int {
	for i < b {
		if c := raw[i]; c < ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return i
		}
		i++
	}
	return i
}

// appendText is appendJSONString for a Go string (no JSON escapes).
func appendText(dst []byte, s string, budget int) ([]byte, int) {
	start := len(dst)
	var tmp [16]byte
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		t := tmp[:0]
		if r == utf8.RuneError && n == 1 {
			t = append(t, '\\', 'x', hexDigit[s[i]>>4], hexDigit[s[i]&15])
		} else {
			t = appendRune(t, r)
		}
		if len(dst)-start+len(t) > budget {
			return dst, i
		}
		dst = append(dst, t...)
		i += n
	}
	return dst, len(s)
}

const hexDigit = "0123456789abcdef"

func printable(r rune) bool {
	return r >= ' ' && r < 0x7f || r >= 0x80 && unicode.IsPrint(r)
}

// appendRune appends r as a prompt shows it.
func appendRune(t []byte, r rune) []byte {
	switch r {
	case '"':
		return append(t, '\\', '"')
	case '\\':
		return append(t, '\\', '\\')
	case '\n':
		return append(t, '\\', 'n')
	case '\r':
		return append(t, '\\', 'r')
	case '\t':
		return append(t, '\\', 't')
	}
	if printable(r) {
		return utf8.AppendRune(t, r)
	}
	if r < 0x10000 {
		return appendU(t, r)
	}
	r1, r2 := utf16.EncodeRune(r)
	return appendU(appendU(t, r1), r2)
}

func appendU(t []byte, r rune) []byte {
	return append(t, '\\', 'u', hexDigit[r>>12&15], hexDigit[r>>8&15], hexDigit[r>>4&15], hexDigit[r&15])
}
