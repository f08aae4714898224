package soak

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/durable-agents/agentloop/internal/harness/fleettest"
)

// fleet is the soak's worker processes: the real worker binary, all on one
// task queue and one content store. Worker i is a host of its own, with its
// own host id and tool journal, which survive its restarts (a pod that
// restarts in place); replace swaps it for a new host with a new identity
// and an empty journal, for good (a pod rescheduled elsewhere). The first
// drift workers lack the provider's environment (a pod started without its
// secret during a rollout).
type fleet struct {
	bin, address, queue, dir, store, modelURL string
	args                                      []string // extra worker flags (-sandbox=none)
	drift                                     int      // how many of the workers lack the provider

	mu    sync.Mutex
	hosts []*fleettest.Host
	gens  []int // each worker's generation: how often it was replaced
	gone  []*fleettest.Host
}

func (f *fleet) logPath(i int) string { return filepath.Join(f.dir, fmt.Sprintf("worker-%d.log", i)) }

// hostID is worker i's identity in generation gen.
func hostID(i, gen int) string {
	if gen == 0 {
		return fmt.Sprintf("soak-%d", i)
	}
	return fmt.Sprintf("soak-%d-g%d", i, gen)
}

// start starts worker i, logging to worker-i.log (appended across its
// restarts and replacements).
func (f *fleet) start(i int) error {
	f.mu.Lock()
	for len(f.hosts) <= i {
		f.hosts = append(f.hosts, nil)
		f.gens = append(f.gens, 0)
	}
	if f.hosts[i] == nil {
		f.hosts[i] = f.newHost(i, f.gens[i])
	}
	h := f.hosts[i]
	f.mu.Unlock()
	return h.Start()
}

// newHost makes worker i's host of generation gen; f.mu is held.
func (f *fleet) newHost(i, gen int) *fleettest.Host {
	id := hostID(i, gen)
	env := append(os.Environ(), "OPENAI_COMPATIBLE_BASE_URL="+f.modelURL, "OPENAI_COMPATIBLE_API=completions")
	if i < f.drift {
		env = slices.DeleteFunc(slices.Clone(os.Environ()), func(kv string) bool { return strings.HasPrefix(kv, "OPENAI_COMPATIBLE_") })
	}
	return &fleettest.Host{
		ID:  id,
		Bin: f.bin,
		Args: append([]string{"-address", f.address, "-task-queue", f.queue, "-store", f.store, "-host-id", id,
			"-tool-journal", filepath.Join(f.dir, "journal-"+id), "-workspace", f.dir, "-log-level", "info"}, f.args...),
		Env:     env,
		LogPath: f.logPath(i),
	}
}

// replace kills worker i for good with SIGKILL and starts a new host in
// its place: a new host id, so a new host queue, and an empty journal.
// Runs whose tools were on the old host must move off it.
func (f *fleet) replace(i int) (old, next string, err error) {
	f.mu.Lock()
	h := f.hosts[i]
	f.mu.Unlock()
	h.Kill()
	f.mu.Lock()
	f.gone = append(f.gone, h)
	f.gens[i]++
	f.hosts[i] = f.newHost(i, f.gens[i])
	n := f.hosts[i]
	f.mu.Unlock()
	return h.ID, n.ID, n.Start()
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

// starts counts the workers' starts, replaced hosts included.
func (f *fleet) starts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, h := range append(slices.Clone(f.hosts), f.gone...) {
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
