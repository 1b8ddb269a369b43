package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
)

// A client cannot pile up waiting asks by cancelling calls: past
// maxLateAsks abandoned asks, the next one is withdrawn as it was before
// asks outlived their calls, and only that one.
func TestAClientCannotPileUpAbandonedAsksPastTheBound(t *testing.T) {
	p := &Proxy{runCtx: context.Background()}
	p.opts.approvalTimeout = time.Minute
	withdrawn := make(chan int, maxLateAsks+1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // every call's client has already given up
	for i := 0; i <= maxLateAsks; i++ {
		call := host.Call{Server: "s", Tool: &host.Tool{Name: "write"}, Arguments: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}
		_, err := p.askKept(ctx, call, &host.Decision{DefinitionHash: "d"}, func(actx context.Context) (channel.Answer, error) {
			<-actx.Done()
			withdrawn <- i
			return channel.Answer{}, actx.Err()
		})
		if err == nil {
			t.Fatalf("call %d: an abandoned call got an answer", i)
		}
	}
	select {
	case i := <-withdrawn:
		if i != maxLateAsks {
			t.Errorf("ask %d was withdrawn; want only the one past the bound (%d)", i, maxLateAsks)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%d abandoned asks, none withdrawn", maxLateAsks+1)
	}
	select {
	case i := <-withdrawn:
		t.Errorf("ask %d was withdrawn too", i)
	case <-time.After(200 * time.Millisecond):
	}
	p.late.mu.Lock()
	defer p.late.mu.Unlock()
	if p.late.orphans != maxLateAsks {
		t.Errorf("%d asks counted as abandoned, want %d", p.late.orphans, maxLateAsks)
	}
}
