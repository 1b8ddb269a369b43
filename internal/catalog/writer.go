package catalog

import "sync"

// Writer writes entries in the background, so that whoever lists tools
// (the proxy, on its list path) never waits for the disk. Entries put
// while one is being written replace each other: only the newest entry of
// a server (one name, one identity) is written next.
type Writer struct {
	dir string

	mu      sync.Mutex
	pending map[string]put
	running map[string]bool
	idle    sync.WaitGroup
}

type put struct {
	e     *Entry
	onErr func(error)
}

// NewWriter returns a writer into dir.
func NewWriter(dir string) *Writer {
	return &Writer{dir: dir, pending: map[string]put{}, running: map[string]bool{}}
}

// Dir is the folder written to.
func (w *Writer) Dir() string { return w.dir }

// Put schedules e to be written and returns at once. onErr, if not nil,
// hears of a failed write (a catalog that cannot be written costs hooks
// their annotations, never a call).
func (w *Writer) Put(e *Entry, onErr func(error)) {
	key := FileName(e.Server, e.Identity)
	w.mu.Lock()
	w.pending[key] = put{e, onErr}
	if w.running[key] {
		w.mu.Unlock()
		return
	}
	w.running[key] = true
	w.idle.Add(1)
	w.mu.Unlock()
	go w.drain(key)
}

// drain writes key's newest pending entry until none is left.
func (w *Writer) drain(key string) {
	defer w.idle.Done()
	for {
		w.mu.Lock()
		next, ok := w.pending[key]
		delete(w.pending, key)
		if !ok {
			w.running[key] = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		if err := Write(w.dir, next.e); err != nil && next.onErr != nil {
			next.onErr(err)
		}
	}
}

// Flush waits until every entry put so far is written.
func (w *Writer) Flush() { w.idle.Wait() }
