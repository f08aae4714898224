package soak

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/durable-agents/agentloop/internal/fleettest"
)

// fleet is the soak's worker processes: the real worker binary, each with
// a tool journal of its own, all on one task queue and one content store.
type fleet struct {
	bin, address, queue, dir, store, modelURL string
	args                                      []string // extra worker flags (-sandbox=none)

	mu    sync.Mutex
	hosts []*fleettest.Host
}

func (f *fleet) journal(i int) string { return filepath.Join(f.dir, fmt.Sprintf("journal-%d", i)) }
func (f *fleet) logPath(i int) string { return filepath.Join(f.dir, fmt.Sprintf("worker-%d.log", i)) }

// start starts worker i, logging to worker-i.log (appended across its
// restarts).
func (f *fleet) start(i int) error {
	f.mu.Lock()
	for len(f.hosts) <= i {
		f.hosts = append(f.hosts, nil)
	}
	if f.hosts[i] == nil {
		f.hosts[i] = &fleettest.Host{
			ID:  fmt.Sprintf("worker-%d", i),
			Bin: f.bin,
			Args: append([]string{"-address", f.address, "-task-queue", f.queue, "-store", f.store,
				"-tool-journal", f.journal(i), "-workspace", f.dir, "-log-level", "info"}, f.args...),
			Env:     append(os.Environ(), "OPENAI_COMPATIBLE_BASE_URL="+f.modelURL, "OPENAI_COMPATIBLE_API=completions"),
			LogPath: f.logPath(i),
		}
	}
	h := f.hosts[i]
	f.mu.Unlock()
	return h.Start()
}

// stop sends sig to worker i and waits for it to exit: a SIGTERM'd worker
// gets grace to finish (then SIGKILL), as an orchestrator gives it.
func (f *fleet) stop(i int, sig syscall.Signal, grace time.Duration) (pid int, took time.Duration) {
	f.mu.Lock()
	h := f.hosts[i]
	f.mu.Unlock()
	if h == nil {
		return 0, 0
	}
	return h.Stop(sig, grace)
}

// stopAll stops every worker with SIGTERM.
func (f *fleet) stopAll() {
	f.mu.Lock()
	n := len(f.hosts)
	f.mu.Unlock()
	for i := 0; i < n; i++ {
		f.stop(i, syscall.SIGTERM, 30*time.Second)
	}
}

// starts counts the workers' starts.
func (f *fleet) starts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, h := range f.hosts {
		if h != nil {
			n += h.Starts()
		}
	}
	return n
}

// exited says which workers exited without being stopped.
func (f *fleet) exited() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for i, h := range f.hosts {
		if h != nil && h.Exited() {
			out = append(out, i)
		}
	}
	return out
}
