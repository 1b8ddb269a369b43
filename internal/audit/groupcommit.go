package audit

import "sync"

// commitQueue writes the records that arrive while a write is in flight
// together, with one write, in the order they arrived: under load (serve
// writes two records a call) the lock, the descriptor check and the write
// are paid once a batch instead of once a record. There is no timer: a
// record waits for the write in flight, if any, then for its own batch's.
type commitQueue struct {
	write func([]byte) error

	mu   sync.Mutex
	busy bool   // a write is in flight
	next *batch // records queued behind it; nil when none
}

// batch is records queued behind the write in flight. Its first record's
// writer writes it when the write in flight hands over (lead); the others
// wait for it to be written (done).
type batch struct {
	buf  []byte
	lead chan struct{}
	done chan struct{}
	err  error
}

// commit writes p, one whole record, and returns the write's error.
func (q *commitQueue) commit(p []byte) error {
	q.mu.Lock()
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		err := q.write(p)
		q.handOff()
		return err
	}
	b, first := q.next, q.next == nil
	if first {
		b = &batch{lead: make(chan struct{}), done: make(chan struct{})}
		q.next = b
	}
	b.buf = append(b.buf, p...) // copied: the caller may reuse p
	q.mu.Unlock()
	if !first {
		<-b.done
		return b.err
	}
	<-b.lead
	b.err = q.write(b.buf)
	close(b.done)
	q.handOff()
	return b.err
}

// handOff passes the writing on to the batch queued meanwhile (no more
// records join it once it is taken off the queue), or ends it.
func (q *commitQueue) handOff() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if b := q.next; b != nil {
		q.next = nil
		close(b.lead) // busy stays set: b's first writer writes next
		return
	}
	q.busy = false
}
