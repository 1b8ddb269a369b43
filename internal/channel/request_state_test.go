package channel

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

func binding() Binding {
	return Binding{
		Session:        "s1",
		Server:         "fs",
		Tool:           "write_file",
		DefinitionHash: strings.Repeat("ab", 32),
		Arguments:      json.RawMessage(`{"path":"/tmp/x","content":"hi"}`),
	}
}

func TestRedeem(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(b *Binding, state *string)
		want   error
	}{
		{"the exact binding is accepted", func(*Binding, *string) {}, nil},
		{"arguments re-serialized with other spacing and key order are the same arguments",
			func(b *Binding, _ *string) { b.Arguments = json.RawMessage(` { "content" : "hi", "path":"/tmp/x" } `) }, nil},
		{"other arguments are refused", func(b *Binding, _ *string) { b.Arguments = json.RawMessage(`{"path":"/etc/passwd","content":"hi"}`) }, ErrArgumentsChanged},
		{"arguments that are not JSON are refused", func(b *Binding, _ *string) { b.Arguments = json.RawMessage(`{"path":`) }, ErrArgumentsChanged},
		{"another tool is refused", func(b *Binding, _ *string) { b.Tool = "edit_file" }, ErrDefinitionChanged},
		{"another server is refused", func(b *Binding, _ *string) { b.Server = "other" }, ErrDefinitionChanged},
		{"a changed definition is refused", func(b *Binding, _ *string) { b.DefinitionHash = strings.Repeat("cd", 32) }, ErrDefinitionChanged},
		{"another session is refused", func(b *Binding, _ *string) { b.Session = "s2" }, ErrWrongSession},
		{"an empty state is forged", func(_ *Binding, s *string) { *s = "" }, ErrForged},
		{"a state in another format is forged", func(_ *Binding, s *string) { *s = "eyJhbGciOiJub25lIn0.e30." }, ErrForged},
		{"a tampered MAC is forged", func(_ *Binding, s *string) { *s = flipLast(*s) }, ErrForged},
		{"a tampered payload is forged", func(_ *Binding, s *string) {
			i := len(prefix) + 3
			*s = (*s)[:i] + flip((*s)[i]) + (*s)[i+1:]
		}, ErrForged},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := NewSigner(time.Minute, 16)
			state, err := s.Mint(binding())
			if err != nil {
				t.Fatal(err)
			}
			b := binding()
			tc.change(&b, &state)
			if err := s.Redeem(state, b); !errors.Is(err, tc.want) {
				t.Fatalf("Redeem: got %v, want %v", err, tc.want)
			}
			if s.Outstanding() != 0 && tc.want != ErrForged {
				t.Fatalf("%d states still outstanding after an attempt", s.Outstanding())
			}
		})
	}
}

func TestRedeemIsSingleUse(t *testing.T) {
	t.Parallel()
	s := NewSigner(time.Minute, 16)
	state, _ := s.Mint(binding())
	if err := s.Redeem(state, binding()); err != nil {
		t.Fatal(err)
	}
	if err := s.Redeem(state, binding()); !errors.Is(err, ErrReplayed) {
		t.Fatalf("replay: got %v, want ErrReplayed", err)
	}
	// A failed attempt with a known state consumes it too.
	state, _ = s.Mint(binding())
	other := binding()
	other.Arguments = json.RawMessage(`{}`)
	_ = s.Redeem(state, other)
	if err := s.Redeem(state, binding()); !errors.Is(err, ErrReplayed) {
		t.Fatalf("after a failed attempt: got %v, want ErrReplayed", err)
	}
}

func TestRedeemExpired(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	s := NewSigner(time.Minute, 16)
	s.now = func() time.Time { return now }
	state, _ := s.Mint(binding())
	now = now.Add(time.Minute)
	if err := s.Redeem(state, binding()); !errors.Is(err, ErrExpired) {
		t.Fatalf("got %v, want ErrExpired", err)
	}
}

func TestStatesFromAnotherSignerAreForged(t *testing.T) {
	t.Parallel()
	a, b := NewSigner(time.Minute, 16), NewSigner(time.Minute, 16)
	state, _ := a.Mint(binding())
	if err := b.Redeem(state, binding()); !errors.Is(err, ErrForged) {
		t.Fatalf("got %v, want ErrForged", err)
	}
}

func TestOutstandingStatesAreBounded(t *testing.T) {
	t.Parallel()
	s := NewSigner(time.Minute, 4)
	first, _ := s.Mint(binding())
	for range 10 {
		_, _ = s.Mint(binding())
	}
	if n := s.Outstanding(); n > 4 {
		t.Fatalf("%d outstanding, cap 4", n)
	}
	if err := s.Redeem(first, binding()); !errors.Is(err, ErrReplayed) {
		t.Fatalf("evicted state: got %v, want ErrReplayed", err)
	}
}

func TestArgumentsHashIsCanonical(t *testing.T) {
	t.Parallel()
	same := []string{`{"a":1,"b":[1,2]}`, `{ "b" : [1, 2], "a" : 1 }`}
	h0, _ := ArgumentsHash(json.RawMessage(same[0]))
	h1, _ := ArgumentsHash(json.RawMessage(same[1]))
	if h0 != h1 {
		t.Fatal("reordered keys hash differently")
	}
	// Numbers are compared as written: 1 and 1.0 are different arguments.
	h2, _ := ArgumentsHash(json.RawMessage(`{"a":1.0,"b":[1,2]}`))
	if h0 == h2 {
		t.Fatal("1 and 1.0 hash the same")
	}
	empty, _ := ArgumentsHash(nil)
	null, _ := ArgumentsHash(json.RawMessage("null"))
	obj, _ := ArgumentsHash(json.RawMessage("{}"))
	if empty != obj || null != obj {
		t.Fatal("absent, null and {} arguments should hash alike")
	}
}

func TestAStateIsRedeemedOnlyForTheExactArguments(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, minted, redeemed string }{
		{"one lone surrogate for another", `{"p":"\ud800"}`, `{"p":"\udfff"}`},
		{"a lone surrogate for the replacement character", `{"p":"\ud800"}`, `{"p":"\ufffd"}`},
		{"a lone surrogate for the replacement character, raw", `{"p":"\udc00"}`, `{"p":"�"}`},
		{"one invalid byte for another", "{\"p\":\"\xff\"}", "{\"p\":\"\xfe\"}"},
		{"surrogates swapped", `{"p":"\udc00\ud800"}`, `{"p":"\ud800\udc00"}`},
		{"a lone surrogate in a key", `{"\ud800":1}`, `{"\udbff":1}`},
	}
	for _, tc := range cases {
		s := NewSigner(time.Minute, 16)
		b := binding()
		b.Arguments = json.RawMessage(tc.minted)
		state, err := s.Mint(b)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b.Arguments = json.RawMessage(tc.redeemed)
		if err := s.Redeem(state, b); !errors.Is(err, ErrArgumentsChanged) {
			t.Errorf("%s: minted for %s, redeemed for %s: got %v, want ErrArgumentsChanged", tc.name, tc.minted, tc.redeemed, err)
		}
	}
	// The same arguments, spelled another way, are the same arguments.
	s := NewSigner(time.Minute, 16)
	b := binding()
	b.Arguments = json.RawMessage(`{"p":"\ud800","q":"\u00e9"}`)
	state, _ := s.Mint(b)
	b.Arguments = json.RawMessage(`{ "q" : "é", "p" : "\uD800" }`)
	if err := s.Redeem(state, b); err != nil {
		t.Fatalf("a re-serialized retry: %v", err)
	}
}

// Arguments hash alike exactly when they are one value (rawjson.Canonical
// is fuzzed for that); here: hashing never panics, and two spellings the
// canonical form tells apart never hash alike.
func FuzzArgumentsHash(f *testing.F) {
	f.Add([]byte(`{"p":"\ud800"}`), []byte(`{"p":"\udfff"}`))
	f.Add([]byte(`{"a":1,"b":[1,2]}`), []byte(`{ "b" : [1, 2], "a" : 1 }`))
	f.Add([]byte(`{"a":1.0}`), []byte(`{"a":1}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ha, errA := ArgumentsHash(a)
		hb, errB := ArgumentsHash(b)
		if errA != nil || errB != nil {
			return
		}
		ca, _ := canonicalArgs(a)
		cb, _ := canonicalArgs(b)
		if (ha == hb) != bytes.Equal(ca, cb) {
			t.Fatalf("%q and %q: hashes equal %v, canonical forms %q %q", a, b, ha == hb, ca, cb)
		}
	})
}

func canonicalArgs(b []byte) ([]byte, error) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || string(t) == "null" {
		t = []byte("{}")
	}
	return rawjson.Canonical(t)
}

// No string a client can send is accepted for a binding it was not minted
// for, and none panics.
func FuzzRedeem(f *testing.F) {
	s := NewSigner(time.Minute, 16)
	valid, _ := s.Mint(binding())
	f.Add(valid)
	f.Add("")
	f.Add(prefix)
	f.Add(prefix + "." + ".")
	f.Add(flipLast(valid))
	f.Fuzz(func(t *testing.T, state string) {
		fresh := NewSigner(time.Minute, 16)
		if err := fresh.Redeem(state, binding()); err == nil {
			t.Fatalf("a signer accepted a state it never minted: %q", state)
		}
	})
}

func flipLast(s string) string { return s[:len(s)-1] + flip(s[len(s)-1]) }

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}
