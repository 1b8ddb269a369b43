package serve

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolwarden/toolwarden/internal/identity"
)

// rateLimitCode is the JSON-RPC error code of a request refused by the rate
// limit: in the implementation-defined server error range, beside the
// HTTP 429 that says the same to a client that reads statuses.
const rateLimitCode = -32029

// rateLimits holds one token bucket per principal, so that one caller's
// flood spends only its own tokens. A bucket left alone long enough to
// fill again is forgotten: a new full bucket behaves the same, so memory
// is bounded by the principals active within one refill time, whatever
// their total number.
type rateLimits struct {
	every rate.Limit
	burst int
	idle  time.Duration // time for an empty bucket to fill: past it, forgetting changes nothing

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	last time.Time // of the last request, under rateLimits.mu
}

// newRateLimits allows each principal perSecond requests a second with
// bursts of burst. perSecond <= 0 means no limit (nil).
func newRateLimits(perSecond float64, burst int) *rateLimits {
	if perSecond <= 0 {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	idle := time.Duration(float64(burst) / perSecond * float64(time.Second))
	return &rateLimits{every: rate.Limit(perSecond), burst: burst, idle: max(idle, time.Second), buckets: map[string]*bucket{}}
}

// allow spends one of principal's tokens at now. When none is left it
// spends nothing and says how long until one is.
func (l *rateLimits) allow(principal string, now time.Time) (ok bool, retryAfter time.Duration) {
	lim := l.bucketOf(principal, now)
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// bucketOf finds or makes principal's bucket, sweeping idle ones at most
// once per refill time.
func (l *rateLimits) bucketOf(principal string, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) > l.idle {
		l.sweep(now)
	}
	b := l.buckets[principal]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(l.every, l.burst)}
		l.buckets[principal] = b
	}
	b.last = now
	return b.lim
}

func (l *rateLimits) sweep(now time.Time) {
	l.lastSweep = now
	for name, b := range l.buckets {
		if now.Sub(b.last) > l.idle {
			delete(l.buckets, name)
		}
	}
}

// size is the number of buckets held.
func (l *rateLimits) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// limitRate refuses a principal's JSON-RPC requests over its rate with 429,
// Retry-After and a JSON-RPC error under the request's id. Responses and
// notifications pass (see classify), as do requests limitBody has not
// read (GET streams: one per session, long-lived). It runs after identity
// and keys on the principal identity put in the context; a request with
// none is keyed as "" and limited together.
func limitRate(l *rateLimits, next http.Handler) http.Handler {
	if l == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := bodyOf(r)
		if b == nil || !b.msg.request {
			next.ServeHTTP(w, r)
			return
		}
		p, _ := identity.FromContext(r.Context())
		if ok, wait := l.allow(p.Name, time.Now()); !ok {
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeRPCError(w, http.StatusTooManyRequests, b.msg.id, rateLimitCode,
				fmt.Sprintf("toolwarden: rate limit: %s may send %g requests a second (bursts of %d); retry in %d s, or raise calls_per_second or burst in [serve.rate_limit]",
					principalWord(p), float64(l.every), l.burst, secs))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func principalWord(p identity.Principal) string {
	if p.Name == "" {
		return "this caller"
	}
	return strconv.Quote(p.Name)
}
