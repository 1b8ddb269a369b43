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

// keyedBuckets holds one token bucket per key (a principal, a client
// address). A bucket left alone long enough to fill again is forgotten: a
// new full bucket behaves the same, so memory is bounded by the keys
// active within one refill time, whatever their total number. With max
// set, keys past it share one overflow bucket, so a flood of new keys
// costs no memory either.
type keyedBuckets struct {
	every rate.Limit
	burst int
	idle  time.Duration // time for an empty bucket to fill: past it, forgetting changes nothing
	max   int           // 0: no bound

	mu        sync.Mutex
	buckets   map[string]*bucket
	overflow  *rate.Limiter
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	last time.Time // of the last take, under keyedBuckets.mu
}

func newKeyedBuckets(perSecond float64, burst, maxKeys int) *keyedBuckets {
	idle := time.Duration(float64(burst) / perSecond * float64(time.Second))
	return &keyedBuckets{every: rate.Limit(perSecond), burst: burst, idle: max(idle, time.Second), max: maxKeys,
		buckets: map[string]*bucket{}, overflow: rate.NewLimiter(rate.Limit(perSecond), burst)}
}

// take finds or makes key's bucket (the overflow one once max keys are
// held) and marks key active at now, sweeping idle buckets at most once
// per refill time.
func (k *keyedBuckets) take(key string, now time.Time) *rate.Limiter {
	k.mu.Lock()
	defer k.mu.Unlock()
	if now.Sub(k.lastSweep) > k.idle {
		k.lastSweep = now
		for name, b := range k.buckets {
			if now.Sub(b.last) > k.idle {
				delete(k.buckets, name)
			}
		}
	}
	b := k.buckets[key]
	if b == nil {
		if k.max > 0 && len(k.buckets) >= k.max {
			return k.overflow
		}
		b = &bucket{lim: rate.NewLimiter(k.every, k.burst)}
		k.buckets[key] = b
	}
	b.last = now
	return b.lim
}

// peek is key's bucket as take would find it, without making one or
// marking key active: nil when key has none and there is room for one.
func (k *keyedBuckets) peek(key string) *rate.Limiter {
	k.mu.Lock()
	defer k.mu.Unlock()
	if b := k.buckets[key]; b != nil {
		return b.lim
	}
	if k.max > 0 && len(k.buckets) >= k.max {
		return k.overflow
	}
	return nil
}

// size is the number of buckets held.
func (k *keyedBuckets) size() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.buckets)
}

// rateLimits holds one token bucket per principal, so that one caller's
// flood spends only its own tokens.
type rateLimits struct{ *keyedBuckets }

// newRateLimits allows each principal perSecond requests a second with
// bursts of burst. perSecond <= 0 means no limit (nil).
func newRateLimits(perSecond float64, burst int) *rateLimits {
	if perSecond <= 0 {
		return nil
	}
	return &rateLimits{newKeyedBuckets(perSecond, max(burst, 1), 0)}
}

// allow spends one of principal's tokens at now. When none is left it
// spends nothing and says how long until one is.
func (l *rateLimits) allow(principal string, now time.Time) (ok bool, retryAfter time.Duration) {
	r := l.take(principal, now).ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
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
