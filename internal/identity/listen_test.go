package identity_test

import (
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/identity"
)

func TestListeningBeyondLoopbackWithoutAuthenticationIsRefused(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"", ":8080", "0.0.0.0:8080", "0.0.0.0", "[::]:8080", "::", "192.168.1.10:8080", "gateway.internal:8080", "localhost.evil.example:80", "127.0.0.1.nip.io:80", "[fe80::1%eth0]:80"} {
		err := identity.CheckListen(addr, false)
		if err == nil {
			t.Errorf("%q: allowed without authentication", addr)
			continue
		}
		if !strings.Contains(err.Error(), "[serve.auth] tokens_file") || !strings.Contains(err.Error(), "[serve.auth.oidc]") {
			t.Errorf("%q: error does not say which key to set: %v", addr, err)
		}
		if err := identity.CheckListen(addr, true); err != nil {
			t.Errorf("%q with authentication: %v", addr, err)
		}
	}
}

func TestLoopbackMayBeServedWithoutAuthentication(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"127.0.0.1:0", "127.0.0.1:8080", "127.9.9.9:1", "[::1]:8080", "localhost:8080", "LOCALHOST:1", "localhost.:1", "127.0.0.1", "[::ffff:127.0.0.1]:80"} {
		if err := identity.CheckListen(addr, false); err != nil {
			t.Errorf("%q: %v", addr, err)
		}
	}
}
