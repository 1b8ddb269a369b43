package channel

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
)

func TestFlushWithinAbandonsAPostTheReceiverHoldsAndAuditsIt(t *testing.T) {
	t.Parallel()
	rec := &records{}
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer hang.Close()
	defer close(release)
	r := hooked(rendezvous(t), config.ChannelElicitation, hang.URL, rec)
	long := 60.0
	r.Webhook.TimeoutSec = &long
	r.Tell(prompt(0), Elicitation)
	start := time.Now()
	if n := r.FlushWithin(200 * time.Millisecond); n != 1 {
		t.Errorf("FlushWithin abandoned %d posts, want 1", n)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("FlushWithin(200ms) took %v while the receiver held the post", took)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.all) != 1 || rec.all[0].Outcome != "failed" || !strings.Contains(rec.all[0].Error, "abandoned") {
		t.Errorf("records %+v, want one failed post that says it was abandoned", rec.all)
	}
}

func TestTellPostsAnAskHandedToTheAgentsDialog(t *testing.T) {
	t.Parallel()
	rv := newReceiver(t, 0)
	r := hooked(rendezvous(t), config.ChannelElicitation, rv.URL, &records{})
	r.Tell(prompt(0), Elicitation)
	if n := r.FlushWithin(10 * time.Second); n != 0 {
		t.Fatalf("abandoned %d posts to a receiver that answers", n)
	}
	posts := rv.all()
	if len(posts) != 1 {
		t.Fatalf("%d posts, want the ask", len(posts))
	}
	var pl Payload
	if err := json.Unmarshal(posts[0].body, &pl); err != nil {
		t.Fatal(err)
	}
	if pl.Event != "ask" || pl.Tool != "write_file" || len(pl.Channels) != 1 || pl.Channels[0] != Elicitation || pl.Expires != nil || pl.AnswerURL != "" {
		t.Errorf("payload %s", posts[0].body)
	}
}

func TestTellUnderNonePostsNothing(t *testing.T) {
	t.Parallel()
	rv := newReceiver(t, 0)
	r := hooked(rendezvous(t), config.ChannelNone, rv.URL, &records{})
	r.Tell(prompt(0), Elicitation)
	r.Flush()
	if n := len(rv.all()); n != 0 {
		t.Errorf("%d posts under none", n)
	}
}
