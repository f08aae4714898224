package activities

import (
	"context"
	"sync"
	"time"
)

// running tracks the tools this worker process is executing, by workflow
// run, so that a tool aborting its run cancels its siblings here at once,
// as pi's shared abort signal does; siblings on other workers learn of the
// abort from their run's history (cancelfeed.go).
type running struct {
	mu    sync.Mutex
	next  int
	byRun map[string]map[int]context.CancelFunc
	// aborted remembers runs a tool here aborted, so that a sibling that
	// starts a moment later starts cancelled.
	aborted map[string]time.Time
}

// abortMemory is how long a run a tool aborted stays known as aborted.
const abortMemory = 10 * time.Minute

// add registers a tool's cancel func and returns its removal. A tool of a
// run a tool here already aborted is cancelled at once.
func (r *running) add(run string, cancel context.CancelFunc) (remove func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.aborted[run]; ok {
		cancel()
	}
	if r.byRun == nil {
		r.byRun = map[string]map[int]context.CancelFunc{}
	}
	if r.byRun[run] == nil {
		r.byRun[run] = map[int]context.CancelFunc{}
	}
	r.next++
	id := r.next
	r.byRun[run][id] = cancel
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.byRun[run], id)
		if len(r.byRun[run]) == 0 {
			delete(r.byRun, run)
		}
	}
}

// cancel cancels every tool of a run running here, and those that start
// here soon after.
func (r *running) cancel(run string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.aborted == nil {
		r.aborted = map[string]time.Time{}
	}
	for k, at := range r.aborted {
		if now.Sub(at) > abortMemory {
			delete(r.aborted, k)
		}
	}
	r.aborted[run] = now
	for _, c := range r.byRun[run] {
		c()
	}
}
