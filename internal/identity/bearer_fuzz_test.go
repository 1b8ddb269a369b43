package identity

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzBearerToken: whatever the header says, a token comes out only when
// the header is "Bearer" and one RFC 6750 token within the size bound.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer a.b.c", "Bearer ", "Basic x", "Bearer a b", "Bearer ===", "Bearer a=b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		r := &http.Request{Header: http.Header{"Authorization": {header}}}
		tok, err := BearerToken(r)
		if err != nil {
			return
		}
		scheme, _, _ := strings.Cut(strings.TrimSpace(header), " ")
		if !strings.EqualFold(scheme, "Bearer") || tok == "" || len(tok) > MaxTokenBytes || !isToken68(tok) || !strings.HasSuffix(strings.TrimSpace(header), tok) {
			t.Fatalf("header %q gave token %q", header, tok)
		}
	})
}
