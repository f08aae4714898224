package soak

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// fleet is the soak's worker processes: the real worker binary, each with
// a tool journal of its own, all on one task queue and one content store.
type fleet struct {
	bin, address, queue, dir, store, modelURL string
	args                                      []string // extra worker flags (-sandbox=none)

	mu     sync.Mutex
	procs  []*workerProc
	starts int
}

type workerProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func (f *fleet) journal(i int) string { return filepath.Join(f.dir, fmt.Sprintf("journal-%d", i)) }
func (f *fleet) logPath(i int) string { return filepath.Join(f.dir, fmt.Sprintf("worker-%d.log", i)) }

// start starts worker i, logging to worker-i.log (appended across its
// restarts).
func (f *fleet) start(i int) error {
	log, err := os.OpenFile(f.logPath(i), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "==== soak: worker %d starting at %s\n", i, time.Now().Format(time.RFC3339Nano))
	args := append([]string{"-address", f.address, "-task-queue", f.queue, "-store", f.store,
		"-tool-journal", f.journal(i), "-workspace", f.dir, "-log-level", "info"}, f.args...)
	cmd := exec.Command(f.bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "OPENAI_COMPATIBLE_BASE_URL="+f.modelURL, "OPENAI_COMPATIBLE_API=completions")
	if err := cmd.Start(); err != nil {
		log.Close()
		return err
	}
	p := &workerProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.procs) <= i {
		f.procs = append(f.procs, nil)
	}
	f.procs[i] = p
	f.starts++
	return nil
}

// stop sends sig to worker i and waits for it to exit: a SIGTERM'd worker
// gets grace to finish (then SIGKILL), as an orchestrator gives it.
func (f *fleet) stop(i int, sig syscall.Signal, grace time.Duration) (pid int, took time.Duration) {
	f.mu.Lock()
	p := f.procs[i]
	f.mu.Unlock()
	if p == nil {
		return 0, 0
	}
	start := time.Now()
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return p.cmd.Process.Pid, time.Since(start)
}

// stopAll stops every worker with SIGTERM.
func (f *fleet) stopAll() {
	f.mu.Lock()
	n := len(f.procs)
	f.mu.Unlock()
	for i := 0; i < n; i++ {
		f.stop(i, syscall.SIGTERM, 30*time.Second)
	}
}

// exited says which workers exited without being stopped.
func (f *fleet) exited() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for i, p := range f.procs {
		select {
		case <-p.done:
			out = append(out, i)
		default:
		}
	}
	return out
}
