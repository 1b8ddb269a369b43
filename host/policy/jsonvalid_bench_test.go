package policy

import (
	"fmt"
	"strings"
	"testing"
)

// benchArguments are call arguments as the host checks them on every
// decision: a typical small call, a large one, and one with many keys
// (the map path).
func benchArguments() []struct {
	name string
	raw  []byte
} {
	var many strings.Builder
	many.WriteString("{")
	for i := range 200 {
		fmt.Fprintf(&many, `"key%d":%d,`, i, i)
	}
	many.WriteString(`"last":0}`)
	large := `{"path":"/home/me/src/notes.txt","content":"` + strings.Repeat(`hello, world \"quoted\" é `, 400) + `","options":{"mode":"0644","tags":["a","b","c"],"nested":[{"x":1.5e3,"y":null,"z":true}]}}`
	return []struct {
		name string
		raw  []byte
	}{
		{"small", []byte(`{"path":"/home/me/src/notes.txt","content":"hello"}`)},
		{"large", []byte(large)},
		{"many_keys", []byte(many.String())},
	}
}

// BenchmarkCheckArguments measures CheckArguments ("validator") against
// the recursive validator it replaced ("baseline") in the same run.
func BenchmarkCheckArguments(b *testing.B) {
	for _, in := range benchArguments() {
		if baselineCheckArguments(in.raw) != nil || CheckArguments(in.raw) != nil {
			b.Fatalf("%s: refused", in.name)
		}
		for _, impl := range []struct {
			name  string
			check func([]byte) error
		}{{"baseline", baselineCheckArguments}, {"validator", CheckArguments}} {
			b.Run(in.name+"/"+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.raw)))
				b.ReportAllocs()
				for b.Loop() {
					if impl.check(in.raw) != nil {
						b.Fatal("refused")
					}
				}
			})
		}
	}
}
