package serve

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// silentOnCancel streams (sse) or not, then, when its context ends,
// returns without answering, as mcp-go does for a request it takes the
// client to have left.
func silentOnCancel(sse bool, started chan<- struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"elicitation/create\",\"params\":{}}\n\n")
			w.(http.Flusher).Flush()
		}
		close(started)
		<-r.Context().Done()
	})
}

func TestACallCancelledAtTheEndOfTheGraceIsAnsweredWhyEvenWhenItsHandlerIsSilent(t *testing.T) {
	t.Parallel()
	for _, sse := range []bool{false, true} {
		name := map[bool]string{false: "json", true: "event stream"}[sse]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			started := make(chan struct{})
			f := startFront(t, silentOnCancel(sse, started), frontSetup{opts: FrontOptions{Grace: 300 * time.Millisecond}})
			answer := callAsync(t, &http.Client{Transport: &http.Transport{}}, f.url)
			<-started
			if err := f.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := <-answer
			if !strings.Contains(got, `"id":7`) || !strings.Contains(got, "shutdown grace period") {
				t.Errorf("the cancelled call's answer: %q", got)
			}
			if strings.Count(got, `"id":7`) != 1 {
				t.Errorf("the call was answered more than once: %q", got)
			}
		})
	}
}

func TestAnEventIsAResponseWhenResultOrErrorComesBeforeAnyMethod(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		`event: message` + "\ndata: " + `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"\"method\": x"}]}}`: true,
		`event: message` + "\ndata: " + `{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"m"}}`:                             true,
		`event: message` + "\ndata: " + `{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"result":1}}`:           false,
		`event: message` + "\ndata: " + `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`:                        false,
		`: ping`: false,
	}
	for ev, want := range cases {
		if got := isResponseEvent([]byte(ev)); got != want {
			t.Errorf("isResponseEvent(%s) = %v, want %v", ev, got, want)
		}
	}
}
