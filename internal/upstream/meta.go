package upstream

import (
	"context"
	"sort"
)

type metaKey struct{}

// WithMeta returns ctx carrying members for the params._meta of a
// tools/call that Call makes with it: `serve` passes its CLIENT span's
// trace context (traceparent, tracestate) this way, so the upstream's own
// span joins the caller's trace. The members are encoded once, here; a
// member Call sets itself (progressToken) is never overridden.
func WithMeta(ctx context.Context, members map[string]string) context.Context {
	if len(members) == 0 {
		return ctx
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		if k != "progressToken" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b []byte
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, members[k])
	}
	return context.WithValue(ctx, metaKey{}, string(b))
}

// metaFrom is the encoded members WithMeta put in ctx, or "".
func metaFrom(ctx context.Context) string {
	s, _ := ctx.Value(metaKey{}).(string)
	return s
}

// metaObject is the _meta object of a call: the progress token (raw JSON)
// and the encoded extra members; nil when there are neither.
func metaObject(progressToken, extra string) []byte {
	if progressToken == "" && extra == "" {
		return nil
	}
	return appendMeta([]byte{}, progressToken, extra)
}

// appendMeta appends `{"progressToken":...,extra}`.
func appendMeta(b []byte, progressToken, extra string) []byte {
	b = append(b, '{')
	if progressToken != "" {
		b = append(b, `"progressToken":`...)
		b = append(b, progressToken...)
		if extra != "" {
			b = append(b, ',')
		}
	}
	b = append(b, extra...)
	return append(b, '}')
}
