package upstream

import (
	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// OnProgress sets f to receive the server's notifications/progress for
// calls begun with a progressToken (BeginWithProgress), each as the raw
// line the server wrote (without its newline; re-encoded by mcp-go for an
// HTTP server), while the call is in
// flight. Progress for any other token is dropped: a server cannot speak
// for a call it was not given. f runs on the connection's reader and must
// not block for long. Call OnProgress before Start.
func (c *Client) OnProgress(f func(line []byte)) { c.onProgress = f }

func (c *Client) watchProgress(pd *Pending) {
	c.progressMu.Lock()
	if c.progress == nil {
		c.progress = map[string]*Pending{}
	}
	c.progress[pd.progress] = pd
	c.progressMu.Unlock()
}

func (c *Client) unwatchProgress(pd *Pending) {
	c.progressMu.Lock()
	if c.progress[pd.progress] == pd {
		delete(c.progress, pd.progress)
	}
	c.progressMu.Unlock()
}

// progressLine handles a notifications/progress line from the server:
// it is relayed if its token is one of a call in flight on this client.
// The line is valid JSON (handle checked it).
func (c *Client) progressLine(line []byte) {
	if c.onProgress == nil {
		return
	}
	var token []byte
	rawjson.Members(line, func(k, v []byte) bool {
		if rawjson.KeyIs(k, "params") && rawjson.Kind(v) == '{' {
			rawjson.Members(v, func(k, v []byte) bool {
				if rawjson.KeyIs(k, "progressToken") {
					token = v
				}
				return true
			})
		}
		return true
	})
	if token == nil {
		return
	}
	c.progressMu.Lock()
	_, ok := c.progress[string(token)]
	c.progressMu.Unlock()
	if ok {
		c.onProgress(line)
	}
}
