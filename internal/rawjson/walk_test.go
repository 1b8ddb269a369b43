package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestIterGivesEachKeyAndValueStartAndTheContainersEnd(t *testing.T) {
	t.Parallel()
	doc := []byte(` { "a" : [1, {"x":"]"}] , "b\u0022":"}" ,"c":{} } tail`)
	open := SkipSpace(doc, 0)
	var keys, vals []string
	it := Walk(doc, open)
	for it.Next() {
		keys = append(keys, string(doc[it.KeyStart:it.KeyEnd]))
		vals = append(vals, string(doc[it.Value:Skip(doc, it.Value)]))
	}
	if got := strings.Join(keys, "|"); got != `a|b\u0022|c` {
		t.Errorf("keys %s", got)
	}
	if got := strings.Join(vals, "|"); got != `[1, {"x":"]"}]|"}"|{}` {
		t.Errorf("values %s", got)
	}
	if end := it.End(); string(doc[end:]) != " tail" {
		t.Errorf("End = %d, leaves %q after the object", end, doc[end:])
	}
	if it.Next() {
		t.Error("a finished Iter stepped again")
	}
}

func TestIterResumesWhereTheCallerSaysTheValueEnded(t *testing.T) {
	t.Parallel()
	doc := []byte(`[ [1,2] , "s", 3 ]`)
	var idx []int
	it := Walk(doc, 0)
	for it.Next() {
		if !it.Array {
			t.Fatal("an array walked as an object")
		}
		idx = append(idx, it.Index)
		if doc[it.Value] == '[' {
			// Read the inner array through, as a renderer would.
			inner := Walk(doc, it.Value)
			for inner.Next() {
			}
			it.Resume(inner.End())
		}
	}
	if len(idx) != 3 || idx[2] != 2 || it.End() != len(doc) {
		t.Errorf("indexes %v, end %d of %d", idx, it.End(), len(doc))
	}
}

// FuzzIterAgreesWithEncodingJSON: over any valid document, walking every
// container with Iter (resuming after each container it reads through)
// finds the members and elements encoding/json finds, in order.
func FuzzIterAgreesWithEncodingJSON(f *testing.F) {
	for _, c := range corpus {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		i := SkipSpace(b, 0)
		end := walkAll(t, b, i)
		if SkipSpace(b, end) != len(b) || end != Skip(b, i) {
			t.Fatalf("walk of %q ends at %d, Skip at %d", b, end, Skip(b, i))
		}
	})
}

// walkAll checks the value at b[i] against encoding/json and returns its
// end, walking containers with Iter.
func walkAll(t *testing.T, b []byte, i int) int {
	if b[i] != '{' && b[i] != '[' {
		return Skip(b, i)
	}
	var want []json.RawMessage
	var wantKeys []string
	if b[i] == '[' {
		if err := json.Unmarshal(b[i:Skip(b, i)], &want); err != nil {
			t.Fatal(err)
		}
	} else {
		dec := json.NewDecoder(strings.NewReader(string(b[i:Skip(b, i)])))
		dec.Token()
		for dec.More() {
			k, _ := dec.Token()
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			wantKeys = append(wantKeys, k.(string))
			want = append(want, v)
		}
	}
	it := Walk(b, i)
	n := 0
	for it.Next() {
		if n >= len(want) {
			t.Fatalf("%q: more than %d members", b[i:], len(want))
		}
		if !it.Array {
			if k, ok := String(b[it.KeyStart-1 : it.KeyEnd+1]); !ok || k != wantKeys[n] {
				t.Fatalf("%q: key %d is %q, want %q", b[i:], n, b[it.KeyStart:it.KeyEnd], wantKeys[n])
			}
		}
		end := walkAll(t, b, it.Value)
		if string(b[it.Value:end]) != string(want[n]) {
			t.Fatalf("%q: member %d is %q, want %q", b[i:], n, b[it.Value:end], want[n])
		}
		it.Resume(end)
		n++
	}
	if n != len(want) {
		t.Fatalf("%q: %d members, want %d", b[i:], n, len(want))
	}
	return it.End()
}

// Strings are stepped over byte by byte while short and by searching for
// quotes after; an escaped quote or backslash on either side of the
// switch, or straddling it, must not end the string early.
func TestSkipStepsOverEscapesOnEitherSideOfTheLongStringSwitch(t *testing.T) {
	t.Parallel()
	for n := range 140 {
		for _, esc := range []string{`\"`, `\\`, `\\\"`, `\\\\`, `\u0022`} {
			s := `"` + strings.Repeat("x", n) + esc + strings.Repeat("y", n%7) + `\"` + `"`
			doc := []byte(`[` + s + `,1]`)
			if !json.Valid(doc) {
				t.Fatalf("test input %s is not JSON", doc)
			}
			if end := Skip(doc, 1); end != 1+len(s) {
				t.Fatalf("Skip(%s) = %d, want %d", s, end, 1+len(s))
			}
		}
	}
}
