package upstream

import "net/http"

// sharedTransport carries every streamable HTTP upstream's requests. Go's
// default transport keeps two idle connections per host, so a gateway
// with more calls in flight to one upstream than that dials (and then
// closes) a TCP connection for almost every call; this one keeps an idle
// connection per call in flight, up to maxIdlePerHost per host.
var sharedTransport = pooledTransport()

// maxIdlePerHost bounds the idle connections kept to one upstream host.
const maxIdlePerHost = 1024

func pooledTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0 // no bound across hosts; each host has its own
	t.MaxIdleConnsPerHost = maxIdlePerHost
	return t
}

// pooledHTTP is a client of its own (mcp-go may set its timeout) on the
// shared transport.
func pooledHTTP() *http.Client { return &http.Client{Transport: sharedTransport} }
