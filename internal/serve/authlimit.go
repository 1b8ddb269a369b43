package serve

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/toolwarden/toolwarden/internal/identity"
)

// Refused credentials are limited per client address, before the
// per-principal limit can apply (a refused request has no principal):
// otherwise a flood of bad tokens costs a hash or a JWT signature check
// each with nothing to stop it. The address is the connection's peer
// (RemoteAddr) and nothing else: X-Forwarded-For is not read at all, since
// any client can write it. Behind a load balancer every caller then shares
// its address; that is why a token serve already knows is never slowed.

// The refusals an address may cause: a sustained rate and a burst, far
// above what a client that mistyped or let a token expire produces.
const (
	RefusalsPerSecond = 10
	RefusalBurst      = 20
	// maxRefusalAddrs bounds the addresses tracked; past it, new ones
	// share one bucket, so a flood from many addresses costs no memory.
	maxRefusalAddrs = 65536
)

// refusalLimits holds one token bucket per client address, spent by
// refused authentications only.
type refusalLimits struct{ *keyedBuckets }

func newRefusalLimits(perSecond float64, burst, maxAddrs int) *refusalLimits {
	return &refusalLimits{newKeyedBuckets(perSecond, burst, maxAddrs)}
}

// over says how long addr must wait before serve checks another of its
// tokens in full; 0 when it may now. It makes no bucket.
func (l *refusalLimits) over(addr string, now time.Time) time.Duration {
	lim := l.peek(addr)
	if lim == nil {
		return 0
	}
	tokens := lim.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(l.every) * float64(time.Second))
}

// refused spends one of addr's tokens.
func (l *refusalLimits) refused(addr string, now time.Time) {
	l.take(addr, now).AllowN(now, 1)
}

// clientAddr keys a request by its peer's IP: an IPv6 peer by its /64,
// the block one host is usually given.
func clientAddr(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip4 := ip.To4(); ip4 != nil {
		return ip4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// authenticate is identity.Middleware with refused credentials limited by
// address (l nil: not limited). While an address is over its limit, a
// request with a token is let through only when identity.Known vouches
// for it cheaply; any other gets 429 with Retry-After, unchecked. A
// request without a token still gets its cheap 401 challenge.
func authenticate(a identity.Authenticator, metadataURL string, l *refusalLimits, next http.Handler) http.Handler {
	if a == nil || l == nil {
		return identity.Middleware(a, metadataURL)(next)
	}
	counted := identity.Middleware(countRefusals{a, l}, metadataURL)(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wait := l.over(clientAddr(r.RemoteAddr), time.Now())
		if wait == 0 || r.Header.Get("Authorization") == "" || r.URL.Query().Has("access_token") {
			counted.ServeHTTP(w, r)
			return
		}
		if p, ok := identity.Known(a, r); ok {
			next.ServeHTTP(w, r.WithContext(identity.WithPrincipal(r.Context(), p)))
			return
		}
		refuseFlood(w, r, wait)
	})
}

func refuseFlood(w http.ResponseWriter, r *http.Request, wait time.Duration) {
	secs := int(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	var id []byte
	if b := bodyOf(r); b != nil {
		id = b.msg.id
	}
	writeRPCError(w, http.StatusTooManyRequests, id, rateLimitCode,
		fmt.Sprintf("toolwarden: too many refused credentials from this address (more than %d a second, bursts of %d): its tokens are not checked for %d s; fix the token, then retry",
			RefusalsPerSecond, RefusalBurst, secs))
}

// countRefusals counts each credential a refuses against the request's
// address. A request with no token at all costs nothing to refuse and
// is not counted.
type countRefusals struct {
	a identity.Authenticator
	l *refusalLimits
}

func (c countRefusals) Authenticate(r *http.Request) (identity.Principal, error) {
	p, err := c.a.Authenticate(r)
	if err != nil && !errors.Is(err, identity.ErrNoCredentials) {
		c.l.refused(clientAddr(r.RemoteAddr), time.Now())
	}
	return p, err
}
