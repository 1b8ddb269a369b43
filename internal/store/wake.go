package store

import "sync"

// wakes hands out, per topic, a channel closed at the topic's next
// wake-up. One channel per topic and generation, shared by every waiter,
// so a waiter that gives up leaks nothing.
type wakes struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

func newWakes() *wakes { return &wakes{ch: map[string]chan struct{}{}} }

func (w *wakes) get(topic string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.ch[topic]
	if !ok {
		c = make(chan struct{})
		w.ch[topic] = c
	}
	return c
}

func (w *wakes) fire(topic string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.ch[topic]; ok {
		close(c)
		delete(w.ch, topic)
	}
}

// fireAll wakes every topic: after a reconnect, when notifications may
// have been lost, every waiter must look again.
func (w *wakes) fireAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for topic, c := range w.ch {
		close(c)
		delete(w.ch, topic)
	}
}

// wake returns a channel closed at topic's next wake-up: a commit in this
// process that notified topic, a Postgres notification from any replica,
// or the listener reconnecting (when notifications sent meanwhile were
// lost). Take it BEFORE reading the state it guards, then wait on it;
// after it fires, call wake again. A wake-up is a hint: waiters also poll
// every Options.Poll, since on SQLite other processes' writes never wake.
func (s *Store) wake(topic string) <-chan struct{} { return s.wakes.get(topic) }
