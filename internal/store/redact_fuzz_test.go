package store

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzRedactNeverShowsThePassword: whatever surrounds it, a password put
// in a store URL (its user part, a password= parameter, or a key=value
// connection string pasted in place of a URL) never appears in what
// Redact returns, nor in parseURL's error.
func FuzzRedactNeverShowsThePassword(f *testing.F) {
	f.Add("postgres", "tw", "127.0.0.1:5432", "/tw", "?sslmode=disable", 0)
	f.Add("postgresql", "", "db", "/x", "", 1)
	f.Add("postgres", "a@b", "[::1]:5", "", "?a=b&c=d", 2)
	f.Add("sqlite", "", "", "/var/lib/x.db", "", 3)
	f.Add("mysql", "u", "h", "/d", "#frag", 0)
	const secret = "Zq7SECRETpw"
	f.Fuzz(func(t *testing.T, scheme, user, host, path, tail string, form int) {
		var raw string
		switch form % 4 {
		case 0:
			raw = scheme + "://" + url.PathEscape(user) + ":" + secret + "@" + host + path + tail
		case 1:
			raw = scheme + "://" + host + path + "?password=" + secret + tail
		case 2:
			raw = scheme + "://" + url.UserPassword(user, secret).String() + "@" + host + path + tail
		default:
			raw = "host=" + host + " user=" + user + " password=" + secret + " " + tail
		}
		if strings.Contains(scheme+user+host+path+tail, secret) {
			return // the secret is also somewhere that is not a password
		}
		if got := Redact(raw); strings.Contains(got, secret) {
			t.Fatalf("Redact(%q) = %q shows the password", raw, got)
		}
		if _, err := parseURL(raw); err != nil && strings.Contains(err.Error(), secret) {
			t.Fatalf("parseURL(%q) error shows the password: %v", raw, err)
		}
	})
}
