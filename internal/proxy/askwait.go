package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
)

// keepAlive sends the client notifications/progress for the call's
// progress token every opts.askProgress while the call waits for a human,
// until stop is called: a client that resets its request timeout on
// progress (the TypeScript SDK's resetTimeoutOnProgress) then keeps
// waiting for the answer instead of giving up on the call. Without a token
// nothing is sent (progress for a token the client never gave is a
// protocol error). stop returns once no notification can follow, so none
// is written after the call's own progress or its response.
func (p *Proxy) keepAlive(req *callRequest, name string) (stop func()) {
	every := p.opts.askProgress
	if len(req.Progress) == 0 || every <= 0 {
		return func() {}
	}
	msg, _ := json.Marshal("waiting for the user's approval of " + name)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(every)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-t.C:
				line := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"message":%s}}`+"\n", req.Progress, n, msg)
				_, _ = p.out.Write(line)
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-exited }) }
}

// An ask outlives a client that gave up on its call (its request timed
// out, or it sent notifications/cancelled): the ask keeps waiting in its
// channels until the approval timeout, and an option chosen then is kept
// for as long again, for the identical retry of the call in this session
// (same server, tool, definition and canonical arguments). The first such
// retry takes it (an "allow once" allows that one retry); a retry while
// the ask still waits waits on it rather than asking twice. Declines,
// cancels, expiries and failures are not kept: the next call asks anew.

// maxLateAsks bounds the asks kept for a client that left: beyond it, an
// abandoned ask is withdrawn as it was before (a client cannot pile up
// waiting asks by cancelling calls).
const maxLateAsks = 64

// lateKey is what a kept ask is found by.
type lateKey struct {
	server, tool, definition, args string
}

// lateAsk is one ask run apart from the calls waiting on it.
type lateAsk struct {
	done    chan struct{} // closed when ans and err are set
	ans     channel.Answer
	err     error
	waiters int                // calls waiting on it now
	cancel  context.CancelFunc // withdraws the ask
	forget  *time.Timer        // drops a kept answer
}

// lateAsks are this proxy's asks that may outlive their call.
type lateAsks struct {
	mu      sync.Mutex
	m       map[lateKey]*lateAsk
	orphans int // asks still waiting with no call waiting on them
}

// lateKeyOf is the key of call's ask; ok is false when the arguments have
// no canonical form (a key twice): such an ask is never kept.
func lateKeyOf(call host.Call, d *host.Decision) (lateKey, bool) {
	args := channel.ArgumentsHashHex(call.Arguments)
	return lateKey{call.Server, call.Tool.Name, d.DefinitionHash, args}, args != ""
}

// askKept runs ask (the channels' Ask) for call so that it may outlive ctx,
// or takes the answer of an earlier identical call's ask, kept or still
// waiting, whose call gave up.
func (p *Proxy) askKept(ctx context.Context, call host.Call, d *host.Decision, ask func(context.Context) (channel.Answer, error)) (channel.Answer, error) {
	key, ok := lateKeyOf(call, d)
	if !ok {
		return ask(ctx)
	}
	l := &p.late
	l.mu.Lock()
	if l.m == nil {
		l.m = map[lateKey]*lateAsk{}
	}
	if la := l.m[key]; la != nil {
		if la.waiters > 0 {
			// An identical call is waiting on it: this one asks on its own.
			l.mu.Unlock()
			return ask(ctx)
		}
		la.waiters++
		if !closed(la.done) {
			l.orphans--
		}
		l.mu.Unlock()
		return p.awaitLate(ctx, key, la)
	}
	actx, cancel := context.WithCancel(p.runCtx)
	la := &lateAsk{done: make(chan struct{}), waiters: 1, cancel: cancel}
	l.m[key] = la
	l.mu.Unlock()
	go func() {
		ans, err := ask(actx)
		cancel()
		l.mu.Lock()
		la.ans, la.err = ans, err
		close(la.done)
		if la.waiters == 0 {
			l.orphans--
			p.keepOrForget(key, la)
		}
		l.mu.Unlock()
	}()
	return p.awaitLate(ctx, key, la)
}

// awaitLate waits for la's answer, which the call then takes, or for the
// call to give up, which leaves the ask to a retry.
func (p *Proxy) awaitLate(ctx context.Context, key lateKey, la *lateAsk) (channel.Answer, error) {
	l := &p.late
	select {
	case <-la.done:
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	la.waiters--
	if closed(la.done) && ctx.Err() == nil {
		// Answered while this call waits: it takes the answer.
		p.drop(key, la)
		return la.ans, la.err
	}
	if la.waiters > 0 {
		return channel.Answer{}, ctx.Err()
	}
	if closed(la.done) {
		p.keepOrForget(key, la)
	} else if l.orphans++; l.orphans > maxLateAsks {
		la.cancel() // its goroutine then counts it out and forgets it
	}
	return channel.Answer{}, ctx.Err()
}

// keepOrForget keeps la's answer, with no call to take it, for the
// approval timeout if an option was chosen, and forgets it otherwise.
// l.mu is held.
func (p *Proxy) keepOrForget(key lateKey, la *lateAsk) {
	if la.err != nil || la.ans.Ended != "" || la.ans.Option == "" {
		p.drop(key, la)
		return
	}
	if la.forget == nil {
		la.forget = time.AfterFunc(p.opts.approvalTimeout, func() {
			p.late.mu.Lock()
			defer p.late.mu.Unlock()
			p.drop(key, la)
		})
	}
}

// drop forgets la if it is still the ask kept under key. l.mu is held.
func (p *Proxy) drop(key lateKey, la *lateAsk) {
	if p.late.m[key] == la {
		delete(p.late.m, key)
	}
	if la.forget != nil {
		la.forget.Stop()
	}
}

// closed reports whether c is closed.
func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
