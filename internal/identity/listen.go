package identity

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// CheckListen refuses to serve beyond loopback without authentication:
// with no [serve.auth], every caller would be the same trusted "local"
// principal, so only this machine may be a caller. A listen address is
// loopback when its host is "localhost" or a loopback IP; an empty host,
// ":8080", "0.0.0.0", "[::]" and every other name listen further.
func CheckListen(addr string, authConfigured bool) error {
	if authConfigured || IsLoopback(addr) {
		return nil
	}
	return fmt.Errorf("toolwarden serve: refusing to listen on %q without authentication: that address is reachable from other machines, and every caller would act as the local user. Set [serve.auth] tokens_file or [serve.auth.oidc] issuer and audience in the config, or listen on 127.0.0.1", addr)
}

// IsLoopback reports whether a listen address (host:port, or a bare host)
// binds only the loopback interface. Names other than localhost are not
// resolved: what a name resolves to can change after the check.
func IsLoopback(addr string) bool {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback() && ip.Zone() == ""
}
